//! The child's pipes as the waiting thread sees them: an output stream kept up to a cap
//! (and appended to the log as it arrives), and stdin fed without blocking.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;

/// Bytes read per `read`.
const CHUNK: usize = 16 * 1024;

/// One output pipe and what was kept of it.
pub(crate) struct Stream {
    pub(crate) pipe: Option<io::PipeReader>,
    limit: usize,
    kept: Vec<u8>,
    truncated: bool,
    buffer: Vec<u8>,
}

impl Stream {
    pub(crate) fn new(pipe: io::PipeReader, limit: usize) -> Self {
        Self {
            pipe: Some(pipe),
            limit,
            kept: Vec::new(),
            truncated: false,
            buffer: Vec::new(),
        }
    }

    pub(crate) fn is_open(&self) -> bool {
        self.pipe.is_some()
    }

    /// Poll said the pipe is ready: one read (it will not block); end of file, or an
    /// error other than EINTR, closes the stream. Returns the bytes read.
    pub(crate) fn read_once(&mut self, log: Option<&File>) -> &[u8] {
        let Some(pipe) = &mut self.pipe else {
            return &[];
        };
        if self.buffer.is_empty() {
            self.buffer = vec![0; CHUNK];
        }
        let n = match pipe.read(&mut self.buffer) {
            Ok(0) => {
                self.pipe = None;
                return &[];
            }
            Ok(n) => n,
            Err(e) => {
                if e.kind() != io::ErrorKind::Interrupted {
                    self.pipe = None;
                }
                return &[];
            }
        };
        let bytes = self.buffer.get(..n).unwrap_or_default();
        if let Some(mut log) = log {
            // A full disk must not kill the child's output capture; the log is best effort.
            let _ = log.write_all(bytes);
        }
        let room = self.limit.saturating_sub(self.kept.len());
        self.kept
            .extend_from_slice(bytes.get(..room.min(n)).unwrap_or_default());
        if n > room {
            self.truncated = true;
        }
        self.buffer.get(..n).unwrap_or_default()
    }

    pub(crate) fn take(&mut self) -> (Vec<u8>, bool) {
        (std::mem::take(&mut self.kept), self.truncated)
    }
}

/// The child's stdin and the bytes still to write to it (non-blocking, as poll allows).
pub(crate) struct Feed<'a> {
    pub(crate) pipe: io::PipeWriter,
    rest: &'a [u8],
}

impl<'a> Feed<'a> {
    pub(crate) fn new(pipe: io::PipeWriter, bytes: &'a [u8]) -> Self {
        // Without O_NONBLOCK a write larger than the pipe's room would block the thread
        // that also reads the child's output.
        let _ = rustix::io::ioctl_fionbio(pipe.as_fd(), true);
        Self { pipe, rest: bytes }
    }

    /// Write what the pipe takes; `true` once everything is written or the child stopped
    /// reading (EPIPE is not our failure), after which stdin is closed.
    pub(crate) fn write_some(&mut self) -> bool {
        while !self.rest.is_empty() {
            match self.pipe.write(self.rest) {
                Ok(n) => self.rest = self.rest.get(n..).unwrap_or_default(),
                Err(e) => {
                    return !matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    )
                }
            }
        }
        true
    }
}
