//! The last lines of an action's log, for the run page. The log's name comes from the
//! journal, a file a step can write: it must be a plain relative path under the run's
//! directory (no `..`, not absolute), and it is opened as the engine opens files it did not
//! create (a regular file, checked on the open descriptor), then only its end is read.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path};

use spur_engine::store::bounded_read::{ensure_regular, open_regular};

/// Most bytes of a log's end shown.
pub(crate) const TAIL_BYTES: u64 = 4096;

/// The end of the log `name` (relative to `run_dir`): at most [`TAIL_BYTES`], from a line
/// start when it was cut. `Err` says why nothing is shown.
pub(crate) fn tail(run_dir: &Path, name: &str) -> Result<String, String> {
    let relative = Path::new(name);
    if relative.as_os_str().is_empty()
        || !relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
    {
        return Err("not a path under the run's directory".into());
    }
    let path = run_dir.join(relative);
    let mut file = open_regular(&path).map_err(|e| e.to_string())?;
    let size = ensure_regular(&file).map_err(|e| e.to_string())?;
    let start = size.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start))
        .map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(TAIL_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if start > 0 {
        if let Some((_, rest)) = text.split_once('\n') {
            return Ok(format!("…\n{rest}"));
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::tail;

    #[test]
    fn a_log_name_leaving_the_run_directory_is_refused() {
        let dir = std::env::temp_dir();
        assert!(tail(&dir, "../etc/passwd").is_err());
        assert!(tail(&dir, "/etc/passwd").is_err());
        assert!(tail(&dir, "").is_err());
    }
}
