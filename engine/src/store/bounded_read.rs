//! The one bounded reader (non-blocking open, `fstat` on the open descriptor, regular files
//! only, capped), defined in `spur-guards` so that the guards and the process layer use it
//! too; see [`spur_guards::bounded_read`].

pub use spur_guards::bounded_read::*;
