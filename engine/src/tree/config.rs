//! `doneGate.fingerprintExclude` in `.spur/config.yaml`: `.gitignore` patterns (relative to
//! the project root) the tree fingerprint leaves out — generated files a gate rewrites on
//! every run, say. Read here with the YAML typer; the rest of the `doneGate` section and
//! the warnings about keys it does not know belong to the done gate's own reader.

use crate::source::SourceFile;
use crate::store::bounded_read::read_string;
use crate::store::state_dir::{StateDir, MAX_CONFIG_BYTES};
use crate::verify::config_error::{ConfigProblems, VerifyConfigErrors, CODES};
use crate::yaml::{parse_config, Loader, NodeValue, UnknownKeys};

use super::fingerprint::Excludes;

/// The keys of `doneGate` (the others are its reader's business).
const DONE_GATE_KEYS: &[&str] = &["externalVerdicts", "fingerprintExclude"];

/// The `doneGate.fingerprintExclude` globs of the project, as written (none when the file or
/// the key is missing).
pub fn fingerprint_exclude(state_dir: &StateDir) -> Result<Vec<String>, VerifyConfigErrors> {
    let path = state_dir.config_path();
    let text = match read_string(&path, MAX_CONFIG_BYTES) {
        Ok(text) => text,
        Err(e) if e.is_missing() => return Ok(Vec::new()),
        Err(e) => {
            return Err(VerifyConfigErrors::Unreadable {
                path,
                source: e.into(),
            })
        }
    };
    let source = SourceFile::new(&path, text.as_str());
    let problems = ConfigProblems { source: &source };
    let fail = |errors| VerifyConfigErrors::Invalid {
        path: path.clone(),
        errors,
    };
    let root = match parse_config(&text) {
        Ok(Some(root)) => root,
        Ok(None) => return Ok(Vec::new()),
        Err(e) => return Err(fail(vec![problems.parse_error(&e)])),
    };
    let mut cx = Loader::new(&source, CODES);
    let globs = (|| {
        let top = cx.fields_with(
            &root,
            "the configuration file",
            &["doneGate"],
            UnknownKeys::Ignore,
        )?;
        let section = top.get("doneGate").filter(|n| n.value != NodeValue::Null)?;
        let fields = cx.fields_with(section, "`doneGate`", DONE_GATE_KEYS, UnknownKeys::Ignore)?;
        let node = fields.get("fingerprintExclude")?;
        cx.read::<Vec<String>>(node, "`doneGate.fingerprintExclude`")
    })();
    let errors: Vec<_> = cx.diagnostics.into_iter().collect();
    if !errors.is_empty() {
        return Err(fail(errors));
    }
    Ok(globs.unwrap_or_default())
}

/// The project's excludes, compiled; a glob that does not parse is the error.
pub fn project_excludes(state_dir: &StateDir) -> Result<Excludes, ExcludesError> {
    let globs = fingerprint_exclude(state_dir)?;
    Ok(Excludes::new(state_dir.project_root(), &globs)?)
}

/// Why the project's excludes could not be read.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum ExcludesError {
    /// The configuration file could not be read or has errors.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Config(#[from] VerifyConfigErrors),
    /// A glob does not parse.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Glob(#[from] super::fingerprint::TreeError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<String>, VerifyConfigErrors> {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        std::fs::create_dir_all(state.root()).unwrap();
        std::fs::write(state.config_path(), text).unwrap();
        fingerprint_exclude(&state)
    }

    #[test]
    fn reads_the_globs_and_ignores_everything_else() {
        assert_eq!(
            read("verify: {}\ndoneGate:\n  externalVerdicts: allow\n  fingerprintExclude: [\"gen/\", \"*.log\"]\n").unwrap(),
            vec!["gen/".to_owned(), "*.log".to_owned()]
        );
        assert!(read("agents: {}\n").unwrap().is_empty());
        assert!(read("doneGate:\n").unwrap().is_empty());
    }

    #[test]
    fn a_wrong_type_is_an_error() {
        let error = read("doneGate:\n  fingerprintExclude: 3\n").unwrap_err();
        assert!(error.to_string().contains("1 error"), "{error}");
    }
}
