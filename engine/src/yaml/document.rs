//! A configuration document (`.spur/config.yaml`): one YAML document, parsed under the
//! same limits as a pipeline, with merge keys resolved. Each reader of the file types the
//! part it owns from the same tree.

use crate::yaml::merge::resolve_merge_keys;
use crate::yaml::{parse, Limits, Node, ParseError};

/// What one configuration document may build (as for a pipeline).
pub(crate) const CONFIG_LIMITS: Limits = Limits {
    max_nodes: 200_000,
    max_depth: 48,
    max_aliases: 1_000,
};

/// The root node of a configuration text; `None` when it holds no document (empty, or
/// only comments).
pub(crate) fn parse_config(text: &str) -> Result<Option<Node>, ParseError> {
    let mut root = parse(text, CONFIG_LIMITS)?;
    if let Some(root) = &mut root {
        resolve_merge_keys(root);
    }
    Ok(root)
}
