//! The task statuses of the reference's lifecycle and the spellings it accepts for them:
//! input is case-insensitive and alias-tolerant (`Done`, `DONE`, `completed` → `done`;
//! `in-progress` → `wip`), output is always the lower-case canonical name.

/// The canonical task statuses, in lifecycle order.
pub const TASK_STATUSES: &[&str] = &[
    "backlog",
    "todo",
    "wip",
    "testing",
    "blocked",
    "done",
    "cancelled",
];

/// Every accepted spelling (lower case, trimmed) and the status it names.
const ALIASES: &[(&str, &str)] = &[
    ("completed", "done"),
    ("complete", "done"),
    ("in-progress", "wip"),
    ("in progress", "wip"),
    ("in_progress", "wip"),
    ("dropped", "cancelled"),
    ("cancel", "cancelled"),
    ("canceled", "cancelled"),
    ("new", "backlog"),
    ("pending", "backlog"),
];

/// The canonical status `raw` names (any case, an alias, surrounding blanks), if any.
pub fn canonical_status(raw: &str) -> Option<&'static str> {
    let key = raw.trim().to_lowercase();
    TASK_STATUSES
        .iter()
        .copied()
        .find(|s| *s == key)
        .or_else(|| ALIASES.iter().find(|(a, _)| *a == key).map(|(_, s)| *s))
}

/// The emoji the reference shows beside a status (presentation only; `""` for others).
pub fn status_icon(status: &str) -> &'static str {
    match status {
        "backlog" => "📋",
        "todo" => "🔲",
        "wip" => "🚧",
        "testing" => "🧪",
        "blocked" => "🚫",
        "done" => "✅",
        "cancelled" => "⛔",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_resolve_to_canonical_statuses() {
        for (raw, canonical) in [
            ("Done", "done"),
            ("DONE", "done"),
            (" completed ", "done"),
            ("In Progress", "wip"),
            ("in-progress", "wip"),
            ("Canceled", "cancelled"),
            ("pending", "backlog"),
            ("testing", "testing"),
        ] {
            assert_eq!(canonical_status(raw), Some(canonical), "{raw}");
        }
        for raw in ["review", "", "doneish", "wip!"] {
            assert_eq!(canonical_status(raw), None, "{raw}");
        }
    }
}
