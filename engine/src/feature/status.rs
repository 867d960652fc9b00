//! The feature statuses of the reference's `feature-lifecycle.yaml` and the spellings
//! accepted for them (any case; `in-progress` is active, `completed` done).

/// The canonical feature statuses, in lifecycle order.
pub const FEATURE_STATUSES: &[&str] = &[
    "backlog",
    "active",
    "verifying",
    "blocked",
    "done",
    "cancelled",
];

const ALIASES: &[(&str, &str)] = &[
    ("in-progress", "active"),
    ("in progress", "active"),
    ("in_progress", "active"),
    ("wip", "active"),
    ("completed", "done"),
    ("complete", "done"),
    ("canceled", "cancelled"),
    ("todo", "backlog"),
];

/// The canonical feature status `raw` names, if any.
pub fn canonical_feature_status(raw: &str) -> Option<&'static str> {
    let key = raw.trim().trim_matches(['"', '\'']).to_lowercase();
    FEATURE_STATUSES
        .iter()
        .copied()
        .find(|s| *s == key)
        .or_else(|| ALIASES.iter().find(|(a, _)| *a == key).map(|(_, s)| *s))
}
