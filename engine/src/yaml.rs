//! YAML as spur reads it: text → a tree of nodes with byte spans, built straight from the
//! parser's events under limits, then typed through [`FromNode`] with every finding
//! collected in one pass. Pipelines and `.spur/config.yaml` are both read through here.

mod core_schema;
mod document;
mod error;
mod fields;
mod from_node;
mod loose;
mod merge;
mod node;
mod parse;

pub(crate) use document::{parse_config, CONFIG_LIMITS};
pub(crate) use error::ParseError;
pub(crate) use fields::{Fields, UnknownKeys};
pub(crate) use from_node::{Codes, FromNode, Loader};
pub(crate) use loose::Loose;
pub(crate) use node::{Node, NodeValue};
pub(crate) use parse::{parse, Limits};
