//! Each criterion's short id: its first declared alias (`AC-1`, a checklist token), else a
//! slug of its title, made unique with `-2`, `-3`, …. An id is a valid gate-name segment
//! (ASCII letters, digits, `.`, `_`, `-`, starting with a letter or digit), so
//! `evidence-command:<id>` names a verify gate and its evidence files.

use std::collections::HashMap;
use std::path::Path;

use super::{TaskAc, TaskFileError};
use crate::answer::ac_label::strip_scenario_prefix;

/// The longest slug, in bytes.
const MAX_SLUG: usize = 48;
/// The longest alias used as an id, in bytes.
const MAX_ID: usize = 64;

/// Give every criterion its id. Two criteria declaring the same alias are an error.
pub(super) fn assign_ids(path: &Path, criteria: &mut [TaskAc]) -> Result<(), TaskFileError> {
    let mut taken: HashMap<String, usize> = HashMap::new();
    for ac in criteria.iter_mut() {
        // A token too long for a file name is no id: the slug stands in (the alias still
        // names the criterion in answers).
        let Some(alias) = ac.parts.aliases.first().filter(|a| a.len() <= MAX_ID) else {
            continue;
        };
        if let Some(&first) = taken.get(alias) {
            return Err(TaskFileError::DuplicateCriterion {
                path: path.to_path_buf(),
                id: alias.clone(),
                line: ac.line,
                first,
            });
        }
        taken.insert(alias.clone(), ac.line);
        ac.id = alias.clone();
    }
    for (index, ac) in criteria.iter_mut().enumerate() {
        if !ac.id.is_empty() {
            continue;
        }
        let title = strip_scenario_prefix(&ac.parts.title).unwrap_or(&ac.parts.title);
        let mut base = slug(title);
        if base.is_empty() {
            base = format!("ac-{}", index + 1);
        }
        let mut id = base.clone();
        let mut n = 2;
        while taken.contains_key(&id) {
            id = format!("{base}-{n}");
            n += 1;
        }
        taken.insert(id.clone(), ac.line);
        ac.id = id;
    }
    Ok(())
}

/// `R1 — Status toggle is right-aligned` → `r1-status-toggle-is-right-aligned`.
fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= MAX_SLUG {
            break;
        }
    }
    out.trim_end_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_token_alias_gives_way_to_the_slug() {
        let token = "a".repeat(300);
        let task = crate::task_file::parse_task_file(
            Path::new("t.md"),
            &format!(
                "## Requirements\n- R1 x\n## Acceptance Criteria\n- [ ] `{token}`: it works\n"
            ),
        )
        .unwrap();
        assert_eq!(task.acceptance[0].parts.aliases, [token]);
        assert_eq!(task.acceptance[0].id, "it-works");
    }

    #[test]
    fn slugs_are_short_lowercase_and_path_safe() {
        assert_eq!(
            slug("R1 — status toggle group is right-aligned"),
            "r1-status-toggle-group-is-right-aligned"
        );
        assert_eq!(slug("`./check` passes"), "check-passes");
        assert_eq!(slug("éé"), "");
        let long = slug(&"word ".repeat(40));
        assert!(long.len() <= MAX_SLUG && !long.ends_with('-'), "{long}");
        assert!(crate::wbs::Wbs::parse(&long).is_ok());
    }
}
