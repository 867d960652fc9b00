//! The one way spur reads a file it did not create: opened non-blocking, checked on the open
//! descriptor to be a regular file, and read up to a cap. It lives in this, the lowest,
//! crate so that the guards (a jq guard's `file`) and the process layer (action logs) open
//! files the way the engine does; the engine re-exports it as `store::bounded_read`.
//!
//! A pipeline step can put anything under a name spur will read: a FIFO (an open or a read
//! that never returns), a symbolic link to `/dev/zero` (endless bytes; `st_size` is 0 for a
//! device, so a size check before the read proves nothing) or a file swapped in between a
//! check and an open. Checking the descriptor that is then read closes all three.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::Path;

/// Why a bounded read gave no content.
#[derive(Debug)]
pub enum ReadError {
    /// Nothing exists at the path (or a component of it is missing).
    Missing,
    /// Something exists but is not a regular file: a directory, FIFO, socket or device.
    NotRegular {
        /// What it is, in words (`a directory`, `a FIFO`, …).
        kind: &'static str,
    },
    /// The file holds more than the cap allows; `size` is its size when that was known
    /// before reading (a regular file's), in which case nothing was read.
    TooLarge {
        /// The cap, in bytes.
        cap: u64,
        /// The file's size, when known before reading.
        size: Option<u64>,
    },
    /// The content is not UTF-8 (`read_string` only); `offset` is the first bad byte.
    NotUtf8 {
        /// The offset of the first byte that is not UTF-8.
        offset: usize,
    },
    /// Any other failure to open or read, with the operating system's reason.
    Io(io::Error),
}

impl ReadError {
    /// Whether the file simply does not exist (callers often treat that as "absent").
    pub fn is_missing(&self) -> bool {
        matches!(self, ReadError::Missing)
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Missing => f.write_str("it does not exist"),
            ReadError::NotRegular { kind } => write!(f, "it is {kind}, not a regular file"),
            ReadError::TooLarge {
                cap,
                size: Some(size),
            } => write!(f, "it is {size} bytes, larger than the {cap}-byte limit"),
            ReadError::TooLarge { cap, size: None } => {
                write!(f, "it is larger than the {cap}-byte limit")
            }
            ReadError::NotUtf8 { offset } => write!(f, "it is not UTF-8 (at byte {offset})"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::NotFound {
            ReadError::Missing
        } else {
            ReadError::Io(e)
        }
    }
}

/// For callers whose errors carry an `io::Error`: the operating system's error as it was,
/// the refusals of this module as errors of a fitting kind worded as above.
impl From<ReadError> for io::Error {
    fn from(e: ReadError) -> Self {
        let kind = match e {
            ReadError::Io(inner) => return inner,
            ReadError::Missing => io::ErrorKind::NotFound,
            ReadError::NotRegular { .. } => io::ErrorKind::InvalidInput,
            ReadError::TooLarge { .. } => io::ErrorKind::FileTooLarge,
            ReadError::NotUtf8 { .. } => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, e.to_string())
    }
}

/// Read all of `path`, at most `cap` bytes, refusing anything but a regular file. A file
/// whose size is already above the cap is refused without being read.
pub fn read_bounded(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let (file, size) = open_sized(path)?;
    if size > cap {
        return Err(ReadError::TooLarge {
            cap,
            size: Some(size),
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    check_cap(&bytes, cap)?;
    Ok(bytes)
}

/// [`read_bounded`], then require UTF-8.
pub fn read_string(path: &Path, cap: u64) -> Result<String, ReadError> {
    utf8(read_bounded(path, cap)?)
}

/// Read at most `cap` bytes from `reader`: a descriptor `ensure_regular` checked, or a
/// stream spur reads whatever it is (standard input). Bytes past the cap are an error.
pub fn read_capped(reader: impl Read, cap: u64) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    reader.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    check_cap(&bytes, cap)?;
    Ok(bytes)
}

fn check_cap(bytes: &[u8], cap: u64) -> Result<(), ReadError> {
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > cap {
        return Err(ReadError::TooLarge { cap, size: None });
    }
    Ok(())
}

fn utf8(bytes: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|e| ReadError::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })
}

/// Open `path` for reading without blocking on a FIFO, and check the open descriptor.
pub fn open_regular(path: &Path) -> Result<File, ReadError> {
    open_sized(path).map(|(file, _)| file)
}

/// [`open_regular`] that also refuses a symbolic link at `path` itself (`O_NOFOLLOW`: a
/// link swapped in after a walk saw a file), and returns the descriptor's metadata.
pub fn open_regular_no_follow(path: &Path) -> Result<(File, std::fs::Metadata), ReadError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                ReadError::NotRegular {
                    kind: "a symbolic link",
                }
            } else {
                ReadError::from(e)
            }
        })?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        ensure_regular(&file)?;
    }
    Ok((file, metadata))
}

/// Open `path` with `options` (for writing or appending: a lock, a log, a record file)
/// without blocking on a FIFO, and check the open descriptor is a regular file. A FIFO
/// nobody reads makes a non-blocking write-only open fail (`ENXIO`); that is refused as
/// what the path names, not as the operating system's "no such device or address".
pub fn open_regular_as(path: &Path, mut options: OpenOptions) -> Result<File, ReadError> {
    let file = options
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ENXIO) {
                // Only for the wording: the open already failed, nothing is read.
                let kind = std::fs::metadata(path).map_or("a FIFO or socket", |m| {
                    if m.file_type().is_socket() {
                        "a socket"
                    } else {
                        "a FIFO"
                    }
                });
                ReadError::NotRegular { kind }
            } else {
                ReadError::from(e)
            }
        })?;
    ensure_regular(&file)?;
    Ok(file)
}

/// Open the log file of a child process at `path` for appending (created, with its
/// directory, if missing), refusing a FIFO or device a step put there; the error says why,
/// naming the path.
pub fn open_log(path: &Path) -> Result<File, String> {
    let opened = (|| {
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        open_regular_as(path, options)
    })();
    opened.map_err(|e| format!("cannot open log file {}: {e}", path.display()))
}

/// Open the directory `path` (to `fsync` it after a rename), refusing anything else
/// without blocking: `O_DIRECTORY` fails on a FIFO put where the directory was.
pub fn open_directory(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK)
        .open(path)
}

fn open_sized(path: &Path) -> Result<(File, u64), ReadError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let size = ensure_regular(&file)?;
    Ok((file, size))
}

/// Check that an open descriptor is a regular file (not what its path named when it was
/// looked at earlier); returns its size.
pub fn ensure_regular(file: &File) -> Result<u64, ReadError> {
    let metadata = file.metadata()?;
    let kind = metadata.file_type();
    if kind.is_file() {
        return Ok(metadata.len());
    }
    let kind = if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "not a file"
    };
    Err(ReadError::NotRegular { kind })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_regular_file_up_to_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"abc").unwrap();
        assert_eq!(read_bounded(&path, 3).unwrap(), b"abc");
        assert!(matches!(
            read_bounded(&path, 2),
            Err(ReadError::TooLarge {
                cap: 2,
                size: Some(3)
            })
        ));
    }

    #[test]
    fn a_stream_is_read_up_to_its_cap() {
        assert_eq!(read_capped(&b"abc"[..], 3).unwrap(), b"abc");
        let err = read_capped(std::io::repeat(0), 1 << 20).unwrap_err();
        assert_eq!(err.to_string(), "it is larger than the 1048576-byte limit");
    }

    #[test]
    fn refusals_become_io_errors_of_a_fitting_kind() {
        let err: std::io::Error = ReadError::NotRegular { kind: "a FIFO" }.into();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(err.to_string(), "it is a FIFO, not a regular file");
        let err: std::io::Error = ReadError::Missing.into();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        let os = std::io::Error::from_raw_os_error(libc::EACCES);
        let err: std::io::Error = ReadError::Io(os).into();
        assert_eq!(err.raw_os_error(), Some(libc::EACCES));
    }

    #[test]
    fn a_missing_file_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_bounded(&dir.path().join("nope"), 10)
            .unwrap_err()
            .is_missing());
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        let err = read_bounded(&path, 10).unwrap_err();
        assert!(
            matches!(err, ReadError::NotRegular { kind: "a FIFO" }),
            "{err}"
        );
    }

    #[test]
    fn a_symlink_to_dev_zero_is_refused_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let err = read_bounded(&path, 1 << 30).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is a character device, not a regular file"
        );
    }

    fn mkfifo(path: &Path) {
        let status = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    }

    #[test]
    fn a_fifo_is_refused_for_writing_without_waiting_for_a_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo");
        mkfifo(&path);
        let mut append = OpenOptions::new();
        append.append(true).create(true);
        let err = open_regular_as(&path, append.clone()).unwrap_err();
        assert_eq!(err.to_string(), "it is a FIFO, not a regular file");
        // With a reader present the open succeeds; the descriptor check still refuses.
        let _reader = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .unwrap();
        let err = open_regular_as(&path, append.clone()).unwrap_err();
        assert_eq!(err.to_string(), "it is a FIFO, not a regular file");
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = open_regular_as(&zero, append.clone()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is a character device, not a regular file"
        );
        let file = dir.path().join("file");
        open_regular_as(&file, append).unwrap();
        assert!(file.is_file());
    }

    #[test]
    fn a_fifo_in_place_of_a_directory_is_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo");
        mkfifo(&path);
        assert!(open_directory(&path).is_err());
        assert!(open_directory(dir.path()).is_ok());
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_bounded(dir.path(), 10).unwrap_err();
        assert!(matches!(
            err,
            ReadError::NotRegular {
                kind: "a directory"
            }
        ));
    }

    #[test]
    fn read_string_names_the_first_bad_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"ok\xff").unwrap();
        assert!(matches!(
            read_string(&path, 10),
            Err(ReadError::NotUtf8 { offset: 2 })
        ));
    }
}
