//! What spur and its jq worker say to each other over the worker's stdin and stdout: frames
//! of a 4-byte little-endian length and that many bytes of JSON. An evaluation is two frames
//! (the [`Request`], then the input value); the reply is one frame (a [`Reply`]). The worker
//! says [`Reply::Ready`] once when it has started.

use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::program::JqEvalError;

/// The largest frame either side reads: the 16 MiB input cap with room for the vars.
pub(crate) const MAX_FRAME: usize = 64 << 20;

/// One evaluation.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Request {
    /// The filter's text and its variable names (the worker compiles and caches it).
    pub(crate) expr: String,
    pub(crate) vars: Vec<String>,
    /// The variables' values, in the order of `vars`.
    pub(crate) values: Vec<Value>,
    /// Stop after this many outputs.
    pub(crate) take: usize,
    pub(crate) max_outputs: usize,
    pub(crate) max_output_depth: usize,
    /// The evaluation's deadline, in ms: the worker bounds its own CPU time by it too.
    pub(crate) timeout_ms: u64,
    pub(crate) max_input_bytes: usize,
}

/// The worker's answer.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Reply {
    /// Started, waiting for requests.
    Ready,
    Outputs(Vec<Value>),
    Failed(JqEvalError),
}

/// Write one frame and flush.
pub(crate) fn write_frame(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    let len = u32::try_from(bytes.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(bytes)?;
    out.flush()
}

/// Read one frame; `None` at a clean end of stream (between frames).
pub(crate) fn read_frame(input: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < len.len() {
        let Some(rest) = len.get_mut(got..) else {
            break;
        };
        match input.read(rest) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a frame of {len} bytes is over the {MAX_FRAME}-byte limit"),
        ));
    }
    let mut bytes = vec![0u8; len];
    input.read_exact(&mut bytes)?;
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_a_clean_end_is_none() {
        let mut buf = Vec::new();
        write_frame(&mut buf, b"{\"a\":1}").unwrap();
        write_frame(&mut buf, b"").unwrap();
        let mut r = buf.as_slice();
        assert_eq!(read_frame(&mut r).unwrap().unwrap(), b"{\"a\":1}");
        assert_eq!(read_frame(&mut r).unwrap().unwrap(), b"");
        assert!(read_frame(&mut r).unwrap().is_none());
    }

    #[test]
    fn a_truncated_or_oversized_frame_is_an_error() {
        let mut r: &[u8] = &[5, 0, 0, 0, b'x'];
        assert!(read_frame(&mut r).is_err());
        let mut r: &[u8] = &[1, 0];
        assert!(read_frame(&mut r).is_err());
        let huge = (MAX_FRAME as u32 + 1).to_le_bytes();
        let mut r: &[u8] = &huge;
        assert!(read_frame(&mut r).is_err());
    }
}
