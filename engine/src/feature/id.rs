//! Feature ids encode the tree: a group letter `A`–`Z`, then one digit `1`–`9` per level
//! (`A`, `A1`, `A12`). The parent drops the last character.

/// Whether `id` is a feature id (`^[A-Z][1-9]*$`).
pub fn is_feature_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase()) && chars.all(|c| ('1'..='9').contains(&c))
}

/// The parent of `id` (`A1` → `A`); `None` for a group.
pub fn parent_of(id: &str) -> Option<&str> {
    (id.len() > 1).then(|| id.get(..id.len() - 1)).flatten()
}

/// The next free id: a group letter with no parent, else the parent and the lowest free
/// digit. `None` when the level is full.
pub(crate) fn next_id(existing: &[String], parent: Option<&str>) -> Option<String> {
    match parent {
        None => ('A'..='Z')
            .map(String::from)
            .find(|letter| !existing.iter().any(|e| e == letter)),
        Some(parent) => ('1'..='9')
            .map(|d| format!("{parent}{d}"))
            .find(|child| !existing.iter().any(|e| e == child)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parents_and_allocation_follow_the_tree() {
        for ok in ["A", "F3", "H83", "Z999"] {
            assert!(is_feature_id(ok), "{ok}");
        }
        for bad in ["", "a", "A0", "AB", "1", "A-1", "F3 "] {
            assert!(!is_feature_id(bad), "{bad}");
        }
        assert_eq!(parent_of("A12"), Some("A1"));
        assert_eq!(parent_of("A"), None);
        let existing = vec![
            "A".to_owned(),
            "A1".to_owned(),
            "A2".to_owned(),
            "B".to_owned(),
        ];
        assert_eq!(next_id(&existing, None).as_deref(), Some("C"));
        assert_eq!(next_id(&existing, Some("A")).as_deref(), Some("A3"));
        let full: Vec<String> = (1..=9).map(|d| format!("A{d}")).collect();
        assert_eq!(next_id(&full, Some("A")), None);
    }
}
