//! The policy's `doneGate.fingerprintExclude` (read with the rest of `doneGate:` by
//! [`VerifyConfig`]), compiled for the tree fingerprint.

use crate::policy::{PolicyError, PolicySource};
use crate::store::state_dir::StateDir;
use crate::verify::config::VerifyConfig;
use crate::verify::config_error::VerifyConfigErrors;

use super::fingerprint::{Excludes, TreeError};

/// The excludes of `config`, compiled against the project root; a glob that does not parse
/// is the error.
pub(crate) fn config_excludes(
    state_dir: &StateDir,
    config: &VerifyConfig,
) -> Result<Excludes, TreeError> {
    Excludes::new(
        state_dir.project_root(),
        &config.done_gate.fingerprint_exclude,
    )
}

/// The excludes of the policy `source` names (the project's config, or a run's pinned
/// policy), compiled.
pub fn policy_excludes(
    state_dir: &StateDir,
    source: &PolicySource,
) -> Result<Excludes, ExcludesError> {
    let config = source.resolve(state_dir)?.config?;
    Ok(config_excludes(state_dir, &config)?)
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
    Glob(#[from] TreeError),
    /// The policy cannot be read (a run's pinned one cannot be found).
    #[error(transparent)]
    #[diagnostic(transparent)]
    Policy(#[from] PolicyError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excludes(text: &str) -> Result<Vec<String>, VerifyConfigErrors> {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        std::fs::create_dir_all(state.root()).unwrap();
        std::fs::write(state.config_path(), text).unwrap();
        let config = VerifyConfig::load(&state)?;
        assert!(config.warnings.is_empty(), "{:?}", config.warnings);
        Ok(config.done_gate.fingerprint_exclude)
    }

    #[test]
    fn reads_the_globs_next_to_the_rest_of_done_gate() {
        assert_eq!(
            excludes("verify: {}\ndoneGate:\n  externalVerdicts: allow\n  fingerprintExclude: [\"gen/\", \"*.log\"]\n").unwrap(),
            vec!["gen/".to_owned(), "*.log".to_owned()]
        );
        assert!(excludes("agents: {}\n").unwrap().is_empty());
        assert!(excludes("doneGate:\n  fingerprintExclude:\n")
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_wrong_type_is_an_error_and_a_bad_glob_is_one_when_compiled() {
        let error = excludes("doneGate:\n  fingerprintExclude: 3\n").unwrap_err();
        assert!(error.to_string().contains("1 error"), "{error}");
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::at(dir.path().join(".spur"));
        std::fs::create_dir_all(state.root()).unwrap();
        std::fs::write(
            state.config_path(),
            "doneGate:\n  fingerprintExclude: [\"a{\"]\n",
        )
        .unwrap();
        assert!(matches!(
            policy_excludes(&state, &PolicySource::Project),
            Err(ExcludesError::Glob(TreeError::InvalidExclude { .. }))
        ));
    }
}
