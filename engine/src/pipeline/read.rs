//! Reading a pipeline file: through the shared bounded reader (a regular file only, at most
//! [`MAX_FILE_BYTES`]), then UTF-8. Each way it can fail is one [`LoadFailure`] with no
//! source text to point at.

use std::path::Path;

use crate::diagnostic::Code;
use crate::pipeline::load_failure::LoadFailure;
use crate::source::SourceFile;
use crate::store::bounded_read::{read_bounded, ReadError};

/// Largest pipeline file spur reads: 8 MiB (the largest real pipeline is ~40 KiB).
pub(crate) const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Read a pipeline file: a regular file of at most `MAX_FILE_BYTES`, valid UTF-8.
pub fn read_source(path: &Path) -> Result<SourceFile, LoadFailure> {
    let unreadable = |code, message: String, help: Option<&str>| LoadFailure::Unreadable {
        code,
        path: path.to_owned(),
        message,
        help: help.map(str::to_owned),
    };
    let bytes = read_bounded(path, MAX_FILE_BYTES).map_err(|e| match e {
        ReadError::TooLarge { .. } => {
            // The reader stops at the cap; the message names the file's real size.
            let size = std::fs::metadata(path)
                .map(|m| m.len())
                .ok()
                .filter(|size| *size > MAX_FILE_BYTES)
                .unwrap_or(MAX_FILE_BYTES + 1);
            unreadable(
                Code::LoadTooLarge,
                format!(
                    "the pipeline is too large ({size} bytes; the limit is {MAX_FILE_BYTES} bytes)"
                ),
                Some("a pipeline is a small YAML file; split it or check that this is the right file"),
            )
        }
        ReadError::NotRegular { kind: "a directory" } => unreadable(
            Code::LoadUnreadable,
            "cannot read the pipeline: it is a directory".into(),
            Some("pass a pipeline file (.yaml)"),
        ),
        ReadError::NotRegular { .. } => unreadable(
            Code::LoadUnreadable,
            format!("cannot read the pipeline: {e}"),
            Some("pass a pipeline file (.yaml)"),
        ),
        // The operating system's own words, as for any other failure to open.
        ReadError::Missing => unreadable(
            Code::LoadUnreadable,
            format!(
                "cannot read the pipeline: {}",
                std::io::Error::from_raw_os_error(libc::ENOENT)
            ),
            None,
        ),
        // `NotUtf8` comes only from reading a string, which this does not ask for.
        ReadError::Io(_) | ReadError::NotUtf8 { .. } => unreadable(
            Code::LoadUnreadable,
            format!("cannot read the pipeline: {e}"),
            None,
        ),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let before = e.as_bytes().get(..offset).unwrap_or(&[]);
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        unreadable(
            Code::LoadNotUtf8,
            format!(
                "the pipeline is not valid UTF-8 (invalid byte at offset {offset}, line {line})"
            ),
            Some("save the file as UTF-8"),
        )
    })?;
    Ok(SourceFile::new(path, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(path: &Path) -> (Code, String) {
        let failure = read_source(path).unwrap_err();
        (failure.code(), failure.to_string())
    }

    #[test]
    fn names_what_is_wrong_with_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (code, text) = message(&dir.path().join("nope.yaml"));
        assert_eq!(code, Code::LoadUnreadable);
        assert!(
            text.ends_with("cannot read the pipeline: No such file or directory (os error 2)"),
            "{text}"
        );
        let (code, text) = message(dir.path());
        assert_eq!(code, Code::LoadUnreadable);
        assert!(text.ends_with("it is a directory"), "{text}");
        let fifo = dir.path().join("fifo.yaml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let (code, text) = message(&fifo);
            assert_eq!(code, Code::LoadUnreadable);
            assert!(text.ends_with("it is a FIFO, not a regular file"), "{text}");
        }
    }

    #[test]
    fn a_file_over_the_cap_names_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.yaml");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_FILE_BYTES + 10).unwrap();
        let (code, text) = message(&path);
        assert_eq!(code, Code::LoadTooLarge);
        assert!(
            text.contains(&format!("({} bytes;", MAX_FILE_BYTES + 10)),
            "{text}"
        );
    }
}
