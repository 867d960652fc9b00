//! Finding feature files: `<id>_<slug>.md` in every `docs/features*/` folder of the
//! project (the reference's phase folders), sorted by id.

use std::fs;
use std::path::{Path, PathBuf};

use super::error::FeatureError;
use super::id::is_feature_id;

/// A feature file found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureFile {
    /// Its id, from the file name.
    pub id: String,
    /// The file.
    pub path: PathBuf,
}

fn feature_dirs(project_root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(project_root.join("docs"))
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("features"))
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// The folder new features go into: `docs/features` (or the first `docs/features*`).
pub fn features_dir(project_root: &Path) -> PathBuf {
    let default = project_root.join("docs").join("features");
    if default.is_dir() {
        return default;
    }
    feature_dirs(project_root)
        .into_iter()
        .next()
        .unwrap_or(default)
}

/// Every feature file of the project, sorted by id then path.
pub fn list_features(project_root: &Path) -> Vec<FeatureFile> {
    let mut found = Vec::new();
    for dir in feature_dirs(project_root) {
        let Ok(files) = fs::read_dir(&dir) else {
            continue;
        };
        for file in files.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            let Some((id, rest)) = name.split_once('_') else {
                continue;
            };
            if is_feature_id(id) && rest.ends_with(".md") && file.path().is_file() {
                found.push(FeatureFile {
                    id: id.to_owned(),
                    path: file.path(),
                });
            }
        }
    }
    found.sort_by(|a, b| (&a.id, &a.path).cmp(&(&b.id, &b.path)));
    found
}

/// The file of feature `id`.
pub fn locate_feature(project_root: &Path, id: &str) -> Result<PathBuf, FeatureError> {
    if !is_feature_id(id) {
        return Err(FeatureError::InvalidId(id.to_owned()));
    }
    let mut found: Vec<PathBuf> = list_features(project_root)
        .into_iter()
        .filter(|f| f.id == id)
        .map(|f| f.path)
        .collect();
    match found.len() {
        0 => Err(FeatureError::NotFound { id: id.to_owned() }),
        1 => Ok(found.remove(0)),
        _ => Err(FeatureError::Ambiguous {
            id: id.to_owned(),
            candidates: found
                .iter()
                .map(|p| {
                    p.strip_prefix(project_root)
                        .unwrap_or(p)
                        .display()
                        .to_string()
                })
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}
