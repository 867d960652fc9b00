//! Why a feature verb could not do what it was asked (a failing check is a report, not an
//! error).

use std::path::PathBuf;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::task_file::TaskFileError;

/// A feature that cannot be found, read or created.
#[derive(Debug, thiserror::Error)]
pub enum FeatureError {
    /// Not a feature id.
    #[error("{0:?} is not a feature id")]
    InvalidId(String),
    /// No file for the id.
    #[error("feature {id} not found (docs/features*/{id}_*.md)")]
    NotFound {
        /// The id.
        id: String,
    },
    /// Two files for the id.
    #[error("feature {id} has several files: {candidates}")]
    Ambiguous {
        /// The id.
        id: String,
        /// The files.
        candidates: String,
    },
    /// No free id under the parent.
    #[error("no free feature id {0}")]
    Exhausted(String),
    /// The parent does not exist.
    #[error("parent feature {0} not found")]
    NoParent(String),
    /// The file cannot be read or written.
    #[error(transparent)]
    File(#[from] TaskFileError),
    /// The new file cannot be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

coded_diagnostic! {
    FeatureError {
        forward { File }
        Self::InvalidId(..) => Code::FeatureInvalid,
            help("a feature id is a capital letter and digits 1–9 (F, F4, H83)");
        Self::NotFound { .. } => Code::FeatureNotFound,
            help("`spur feature list` lists the features; `spur feature create NAME` makes one");
        Self::Ambiguous { .. } => Code::FeatureNotFound,
            help("keep one file per feature id");
        Self::Exhausted(..) => Code::FeatureInvalid,
            help("a level holds at most 9 children (1–9) and 26 groups (A–Z)");
        Self::NoParent(..) => Code::FeatureNotFound,
            help("create the parent first, or leave out --parent");
        Self::Io { .. } => Code::FeatureWrite,
            help("the file was written to a temporary file and renamed: check the directory's permissions and free space");
    }
}
