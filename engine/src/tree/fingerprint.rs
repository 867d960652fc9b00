//! The tree fingerprint: one sha256 over the project's working tree as git would see it,
//! worked out without trusting anything a pipeline step could have rewritten to hide a
//! change. No `.git/index`, no `git ls-files`, no `.git/info/exclude`, no global excludes
//! and no `.gitignore` above the project root: the tree is walked here, honouring only the
//! `.gitignore` files inside it — which are themselves part of the fingerprint, so ignoring
//! a file after verify changes it.
//!
//! What is hashed, for every entry in byte order of its path relative to the root: the path,
//! the kind (file, symbolic link, other), for a file its permission bits and the sha256 of
//! its content (for a task or feature file, of [`kept_text`](super::task_sections)), for a
//! link its target as read (never followed). Directories count through what is in them (git
//! has no empty directories either). Left out: `.git`, the state directory except its
//! `config.yaml` (which says which gates verify runs), and what `exclude` matches.
//!
//! Files are opened through the bounded reader's regular-file check (non-blocking, no
//! following a link swapped in after the walk) and streamed into the hash; the walk and the
//! hashing run on every core (`ignore`'s parallel walker).

use std::ffi::OsStr;
use std::fs::{File, FileType, Metadata};
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{FileTypeExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use sha2::{Digest, Sha256};

use super::task_sections::{is_task_or_feature_file, kept_text};
use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::bounded_read::{open_regular_no_follow, read_capped, ReadError};

/// The most of a task or feature file that is read to filter its sections; a larger one is
/// hashed whole (every edit then counts).
const MAX_TASK_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The file in the state directory that is part of the tree: it names the gates.
const CONFIG_FILE: &str = "config.yaml";

/// A tree fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    /// Lowercase hex sha256.
    pub hex: String,
    /// How many entries (files, links, others) it covers.
    pub entries: usize,
}

/// Why the tree could not be fingerprinted. The fingerprint fails closed: a file it cannot
/// read is an error, never a placeholder.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    /// A file or directory of the tree could not be read.
    #[error("cannot read {} for the tree fingerprint: {source}", path.display())]
    Unreadable {
        /// The path, relative to the project root when it is under it.
        path: PathBuf,
        /// Why.
        source: ReadError,
    },
    /// A `doneGate.fingerprintExclude` glob does not parse.
    #[error("doneGate.fingerprintExclude: `{glob}` is not a valid glob: {reason}")]
    InvalidExclude {
        /// The glob as written.
        glob: String,
        /// The glob parser's reason.
        reason: String,
    },
}

coded_diagnostic! {
    TreeError {
        Self::Unreadable { .. } => Code::TreeUnreadable,
            help("every file of the tree must be readable to fingerprint it; fix its permissions, or leave it out with doneGate.fingerprintExclude in .spur/config.yaml");
        Self::InvalidExclude { .. } => Code::TreeInvalidExclude,
            help("fingerprintExclude takes .gitignore patterns relative to the project root, e.g. `build/` or `docs/generated/**`");
    }
}

/// Globs (in `.gitignore` syntax, relative to the project root) to leave out.
#[derive(Debug, Clone)]
pub struct Excludes(Option<Arc<Gitignore>>);

impl Excludes {
    /// Nothing left out.
    pub fn none() -> Self {
        Self(None)
    }

    /// Compile `globs`; the first that does not parse is an error.
    pub fn new(root: &Path, globs: &[String]) -> Result<Self, TreeError> {
        if globs.is_empty() {
            return Ok(Self::none());
        }
        let mut builder = GitignoreBuilder::new(root);
        for glob in globs {
            builder
                .add_line(None, glob)
                .map_err(|e| TreeError::InvalidExclude {
                    glob: glob.clone(),
                    reason: e.to_string(),
                })?;
        }
        let matcher = builder.build().map_err(|e| TreeError::InvalidExclude {
            glob: globs.join(", "),
            reason: e.to_string(),
        })?;
        Ok(Self(Some(Arc::new(matcher))))
    }

    fn matches(&self, path: &Path, is_dir: bool) -> bool {
        self.0
            .as_ref()
            .is_some_and(|m| m.matched(path, is_dir).is_ignore())
    }
}

/// Fingerprint the tree under `root`, leaving out `.git`, `state_dir` (but for its
/// `config.yaml`) and what `excludes` matches.
pub fn fingerprint(
    root: &Path,
    state_dir: &Path,
    excludes: &Excludes,
) -> Result<Fingerprint, TreeError> {
    let walk_state = state_dir.to_path_buf();
    let walk_excludes = excludes.clone();
    let walk_root = root.to_path_buf();
    let mut walker = WalkBuilder::new(root);
    walker
        .standard_filters(false)
        .git_ignore(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            if entry.depth() == 0 {
                return true;
            }
            let path = entry.path();
            if entry.file_name() == OsStr::new(".git") || path == walk_state {
                return false;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let rel = path.strip_prefix(&walk_root).unwrap_or(path);
            !walk_excludes.matches(rel, is_dir)
        });
    let sink = Sink {
        root,
        entries: Mutex::new(Vec::new()),
        error: Mutex::new(None),
    };
    walker.build_parallel().visit(&mut SinkBuilder(&sink));
    if let Some(error) = sink
        .error
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        return Err(error);
    }
    let mut entries = sink
        .entries
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    let config = state_dir.join(CONFIG_FILE);
    match std::fs::symlink_metadata(&config) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        _ if excludes.matches(relative(root, &config), false) => {}
        _ => {
            let mut buffer = vec![0; 64 * 1024];
            let rel = relative(root, &config).to_path_buf();
            let kind = std::fs::symlink_metadata(&config)
                .map_err(|e| TreeError::Unreadable {
                    path: rel.clone(),
                    source: e.into(),
                })?
                .file_type();
            let digest = entry_digest(&config, kind, &rel, &mut buffer)?;
            entries.push((rel, digest));
        }
    }
    entries.sort_unstable_by(|a, b| a.0.as_os_str().as_bytes().cmp(b.0.as_os_str().as_bytes()));
    let mut hasher = Sha256::new();
    for (rel, digest) in &entries {
        hasher.update(rel.as_os_str().as_bytes());
        hasher.update([0]);
        hasher.update(digest);
    }
    Ok(Fingerprint {
        hex: crate::store::digest::hex(&hasher.finalize()),
        entries: entries.len(),
    })
}

fn relative<'p>(root: &Path, path: &'p Path) -> &'p Path {
    path.strip_prefix(root).unwrap_or(path)
}

/// What the walk found, shared by the walker's threads.
struct Sink<'a> {
    root: &'a Path,
    entries: Mutex<Vec<(PathBuf, [u8; 32])>>,
    error: Mutex<Option<TreeError>>,
}

struct SinkBuilder<'s, 'a>(&'s Sink<'a>);

impl<'s> ParallelVisitorBuilder<'s> for SinkBuilder<'s, '_> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            sink: self.0,
            entries: Vec::new(),
            buffer: vec![0; 64 * 1024],
        })
    }
}

/// One walker thread: its entries and read buffer, handed to the sink when it is done.
struct Visitor<'s, 'a> {
    sink: &'s Sink<'a>,
    entries: Vec<(PathBuf, [u8; 32])>,
    buffer: Vec<u8>,
}

impl Visitor<'_, '_> {
    fn fail(&self, error: TreeError) -> WalkState {
        let mut slot = self
            .sink
            .error
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        slot.get_or_insert(error);
        WalkState::Quit
    }

    fn entry(&mut self, entry: &DirEntry) -> Result<(), TreeError> {
        if entry.depth() == 0 || entry.file_type().is_some_and(|t| t.is_dir()) {
            return Ok(());
        }
        let rel = relative(self.sink.root, entry.path()).to_path_buf();
        let Some(kind) = entry.file_type() else {
            return Ok(());
        };
        let digest = entry_digest(entry.path(), kind, &rel, &mut self.buffer)?;
        self.entries.push((rel, digest));
        Ok(())
    }
}

impl ParallelVisitor for Visitor<'_, '_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        match entry {
            Ok(entry) => match self.entry(&entry) {
                Ok(()) => WalkState::Continue,
                Err(error) => self.fail(error),
            },
            // A directory that cannot be listed fails the fingerprint; a `.gitignore` line
            // that does not parse is skipped, as git skips it (the file is hashed anyway).
            Err(error) => match walk_io_error(&error) {
                Some((path, source)) => self.fail(TreeError::Unreadable {
                    path: relative(self.sink.root, &path).to_path_buf(),
                    source: ReadError::from(source),
                }),
                None => WalkState::Continue,
            },
        }
    }
}

impl Drop for Visitor<'_, '_> {
    fn drop(&mut self) {
        let mut entries = self
            .sink
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        entries.append(&mut self.entries);
    }
}

/// The path and I/O error of a walk error that is one, looking through the wrappers.
fn walk_io_error(error: &ignore::Error) -> Option<(PathBuf, io::Error)> {
    let mut path = PathBuf::new();
    let mut current = error;
    loop {
        match current {
            ignore::Error::WithPath { path: p, err } => {
                path.clone_from(p);
                current = err;
            }
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                current = err;
            }
            ignore::Error::Partial(_) => return None,
            ignore::Error::Io(e) if path.as_os_str().is_empty() => {
                return Some((PathBuf::from("."), io::Error::new(e.kind(), e.to_string())))
            }
            ignore::Error::Io(e) => {
                // An error reading a `.gitignore` is the file's own read's business: the
                // file is hashed like any other and fails there if it must.
                if path.file_name() == Some(OsStr::new(".gitignore")) {
                    return None;
                }
                return Some((path, io::Error::new(e.kind(), e.to_string())));
            }
            _ => return None,
        }
    }
}

/// The digest of one entry: its kind and what of it counts.
/// `kind` is what the walk saw (without a system call); a file is then checked on its open
/// descriptor, so one swapped for something else since is refused, not read.
fn entry_digest(
    path: &Path,
    kind: FileType,
    rel: &Path,
    buffer: &mut [u8],
) -> Result<[u8; 32], TreeError> {
    let unreadable = |source: ReadError| TreeError::Unreadable {
        path: rel.to_path_buf(),
        source,
    };
    let mut hasher = Sha256::new();
    if kind.is_symlink() {
        let target = std::fs::read_link(path).map_err(|e| unreadable(e.into()))?;
        hasher.update(b"link\0");
        hasher.update(target.as_os_str().as_bytes());
    } else if kind.is_file() {
        let (file, metadata) = open_regular_no_follow(path).map_err(unreadable)?;
        hasher.update(b"file\0");
        hasher.update(mode_bits(&metadata).to_be_bytes());
        let content = if is_task_or_feature_file(rel) {
            task_file_digest(file, buffer)
        } else {
            stream_digest(file, buffer)
        };
        hasher.update(content.map_err(|e| unreadable(e.into()))?);
    } else {
        // A FIFO, socket or device: never opened; its kind is what counts.
        let name = if kind.is_fifo() {
            "fifo"
        } else if kind.is_socket() {
            "socket"
        } else {
            "device"
        };
        hasher.update(b"other\0");
        hasher.update(name.as_bytes());
    }
    Ok(hasher.finalize().into())
}

fn mode_bits(metadata: &Metadata) -> u16 {
    u16::try_from(metadata.permissions().mode() & 0o7777).unwrap_or(u16::MAX)
}

/// The sha256 of a file's content, read in chunks through `buffer`.
fn stream_digest(mut file: File, buffer: &mut [u8]) -> io::Result<[u8; 32]> {
    let mut hasher = Sha256::new();
    loop {
        let n = match file.read(buffer) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            read => read?,
        };
        let Some(chunk) = buffer.get(..n).filter(|c| !c.is_empty()) else {
            break;
        };
        hasher.update(chunk);
    }
    Ok(hasher.finalize().into())
}

/// A task or feature file: the sha256 of its kept text when it is UTF-8 and not too large
/// (prefixed, so it never equals the digest of some other file's bytes), else of all of it.
fn task_file_digest(file: File, buffer: &mut [u8]) -> io::Result<[u8; 32]> {
    let mut file = file;
    let bytes = match read_capped(&mut file, MAX_TASK_FILE_BYTES) {
        Ok(bytes) => bytes,
        Err(ReadError::TooLarge { .. }) => {
            use std::io::Seek as _;
            file.rewind()?;
            return stream_digest(file, buffer);
        }
        Err(e) => return Err(e.into()),
    };
    Ok(match String::from_utf8(bytes) {
        Ok(text) => {
            let mut hasher = Sha256::new();
            hasher.update(b"task-file-sections\0");
            hasher.update(kept_text(&text).as_bytes());
            hasher.finalize().into()
        }
        Err(e) => Sha256::digest(e.as_bytes()).into(),
    })
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::{symlink, PermissionsExt as _};
    use std::process::Command;

    use proptest::prelude::*;

    use super::*;

    struct Tree {
        dir: tempfile::TempDir,
    }

    impl Tree {
        fn new(files: &[(&str, &str)]) -> Self {
            let tree = Self {
                dir: tempfile::tempdir().unwrap(),
            };
            for (path, text) in files {
                tree.write(path, text);
            }
            tree
        }

        fn root(&self) -> &Path {
            self.dir.path()
        }

        fn write(&self, rel: &str, text: &str) {
            let path = self.root().join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }

        fn print(&self) -> String {
            self.print_excluding(&[])
        }

        fn print_excluding(&self, globs: &[&str]) -> String {
            let globs: Vec<String> = globs.iter().map(|g| (*g).to_owned()).collect();
            let excludes = Excludes::new(self.root(), &globs).unwrap();
            fingerprint(self.root(), &self.root().join(".spur"), &excludes)
                .unwrap()
                .hex
        }
    }

    fn sample() -> Tree {
        Tree::new(&[
            ("src/main.rs", "fn main() {}"),
            ("src/lib/a.rs", "pub fn a() {}"),
            ("README.md", "# hi"),
        ])
    }

    #[test]
    fn the_same_tree_has_the_same_fingerprint_and_counts_its_entries() {
        let tree = sample();
        let other = sample();
        assert_eq!(tree.print(), other.print());
        let print =
            fingerprint(tree.root(), &tree.root().join(".spur"), &Excludes::none()).unwrap();
        assert_eq!(print.entries, 3);
        assert_eq!(print.hex.len(), 64);
    }

    #[test]
    fn adding_removing_editing_and_renaming_a_file_change_it() {
        let tree = sample();
        let base = tree.print();
        tree.write("src/new.rs", "");
        assert_ne!(tree.print(), base, "added");
        fs::remove_file(tree.root().join("src/new.rs")).unwrap();
        assert_eq!(tree.print(), base);
        tree.write("src/main.rs", "fn main() { todo!() }");
        assert_ne!(tree.print(), base, "edited");
        tree.write("src/main.rs", "fn main() {}");
        fs::rename(
            tree.root().join("src/main.rs"),
            tree.root().join("src/mainx.rs"),
        )
        .unwrap();
        assert_ne!(tree.print(), base, "renamed");
        fs::rename(
            tree.root().join("src/mainx.rs"),
            tree.root().join("src/main.rs"),
        )
        .unwrap();
        fs::remove_file(tree.root().join("README.md")).unwrap();
        assert_ne!(tree.print(), base, "removed");
    }

    #[test]
    fn chmod_changes_it() {
        let tree = sample();
        let base = tree.print();
        let path = tree.root().join("src/main.rs");
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode | 0o111)).unwrap();
        assert_ne!(tree.print(), base);
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        assert_eq!(tree.print(), base);
    }

    #[test]
    fn a_symlink_counts_by_its_target_never_followed() {
        let tree = sample();
        symlink("src/main.rs", tree.root().join("link")).unwrap();
        let base = tree.print();
        // The target's content is not the link's: editing it changes the tree once (the
        // file), and the link's own entry is the same.
        fs::remove_file(tree.root().join("link")).unwrap();
        symlink("src/lib/a.rs", tree.root().join("link")).unwrap();
        assert_ne!(tree.print(), base, "retargeted");
        fs::remove_file(tree.root().join("link")).unwrap();
        symlink("src/main.rs", tree.root().join("link")).unwrap();
        assert_eq!(tree.print(), base);
        // A link to a directory is not walked; a dangling link still counts.
        symlink("/", tree.root().join("root-link")).unwrap();
        symlink("nowhere", tree.root().join("dangling")).unwrap();
        assert_ne!(tree.print(), base);
        // A file and a link with the same "content" differ.
        let a = Tree::new(&[("x", "y")]);
        let b = Tree::new(&[]);
        symlink("y", b.root().join("x")).unwrap();
        assert_ne!(a.print(), b.print());
    }

    #[test]
    fn the_state_dir_and_git_do_not_count_but_the_config_does() {
        let tree = sample();
        let base = tree.print();
        tree.write(".spur/runs/r/journal.jsonl", "{}");
        tree.write(".git/index", "junk");
        tree.write("sub/.git", "gitdir: elsewhere");
        assert_eq!(tree.print(), base);
        tree.write(".spur/config.yaml", "verify: {}");
        assert_ne!(tree.print(), base);
    }

    #[test]
    fn only_gitignore_files_in_the_tree_are_honoured() {
        let tree = sample();
        tree.write(".gitignore", "target/\n");
        tree.write("target/debug/x", "1");
        let base = tree.print();
        tree.write("target/debug/x", "2");
        assert_eq!(tree.print(), base, "ignored by the tree's .gitignore");
        // What git would take from outside the tree is not trusted.
        tree.write(".git/info/exclude", "src/\n");
        tree.write("src/main.rs", "changed");
        assert_ne!(tree.print(), base, ".git/info/exclude is not honoured");
    }

    #[test]
    fn a_real_git_index_or_exclude_cannot_hide_a_change() {
        let tree = sample();
        let git = |args: &[&str]| {
            Command::new("git")
                .args(args)
                .current_dir(tree.root())
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !git(&["init", "-q"]) {
            return; // no git here: the test above covers the walk
        }
        git(&["add", "-A"]);
        let base = tree.print();
        tree.write("src/main.rs", "fn main() { evil() }");
        fs::write(tree.root().join(".git/info/exclude"), "src/main.rs\n").unwrap();
        git(&["rm", "-q", "--cached", "src/main.rs"]);
        assert_ne!(tree.print(), base);
    }

    #[test]
    fn excludes_leave_out_what_they_match() {
        let tree = sample();
        tree.write("docs/generated/api.md", "v1");
        tree.write("notes.log", "a");
        let globs = ["docs/generated/", "*.log"];
        let base = tree.print_excluding(&globs);
        tree.write("docs/generated/api.md", "v2");
        tree.write("notes.log", "b");
        tree.write("sub/more.log", "c");
        assert_eq!(tree.print_excluding(&globs), base);
        tree.write("docs/other.md", "x");
        assert_ne!(tree.print_excluding(&globs), base);
        assert!(matches!(
            Excludes::new(tree.root(), &["a{".to_owned()]),
            Err(TreeError::InvalidExclude { .. })
        ));
    }

    #[test]
    fn a_task_file_counts_without_what_spur_writes_after_verify() {
        let task = "---\nstatus: todo\n---\n## Requirements\n\n- R1. greet\n\n## Solution\n\nTBD\n";
        let tree = Tree::new(&[("docs/tasks/0592_greet.md", task), ("a.rs", "")]);
        let base = tree.print();
        tree.write(
            "docs/tasks/0592_greet.md",
            &task.replace("TBD", "done it").replace("todo", "done"),
        );
        assert_eq!(tree.print(), base, "Solution and frontmatter");
        tree.write("docs/tasks/0592_greet.md", &task.replace("greet", "wave"));
        assert_ne!(tree.print(), base, "Requirements");
        // Outside docs/tasks*/ the same file counts whole.
        let other = Tree::new(&[("notes/0592_greet.md", task), ("a.rs", "")]);
        let before = other.print();
        other.write("notes/0592_greet.md", &task.replace("TBD", "done it"));
        assert_ne!(other.print(), before);
    }

    #[test]
    fn a_fifo_counts_by_kind_and_is_never_opened() {
        let tree = sample();
        let base = tree.print();
        let made = Command::new("mkfifo")
            .arg(tree.root().join("pipe"))
            .status()
            .is_ok_and(|s| s.success());
        if made {
            assert_ne!(tree.print(), base); // and it returned: the FIFO was not opened
        }
    }

    #[test]
    fn an_unlistable_directory_fails_closed() {
        let tree = sample();
        let dir = tree.root().join("locked");
        fs::create_dir(&dir).unwrap();
        tree.write("locked/x", "1");
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o000)).unwrap();
        let listable = fs::read_dir(&dir).is_ok(); // root reads anything
        let result = fingerprint(tree.root(), &tree.root().join(".spur"), &Excludes::none());
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        if !listable {
            assert!(
                matches!(result, Err(TreeError::Unreadable { .. })),
                "{result:?}"
            );
        }
    }

    /// One edit of a small tree of files `f0`…`f4` under `d/`.
    #[derive(Debug, Clone)]
    enum Edit {
        Write(usize, String),
        Remove(usize),
        Rename(usize),
        Chmod(usize),
        Link(usize, usize),
    }

    fn edit() -> impl Strategy<Value = Edit> {
        prop_oneof![
            (0..5usize, "[a-z]{0,8}").prop_map(|(i, s)| Edit::Write(i, s)),
            (0..5usize).prop_map(Edit::Remove),
            (0..5usize).prop_map(Edit::Rename),
            (0..5usize).prop_map(Edit::Chmod),
            (0..5usize, 0..5usize).prop_map(|(i, j)| Edit::Link(i, j)),
        ]
    }

    /// Apply `edit`; whether it changed anything (the oracle: the test's own model).
    fn apply(root: &Path, edit: &Edit) -> bool {
        let path = |i: usize| root.join(format!("d/f{i}"));
        let exists = |p: &Path| fs::symlink_metadata(p).is_ok();
        match edit {
            Edit::Write(i, text) => {
                let p = path(*i);
                let same = fs::symlink_metadata(&p).is_ok_and(|m| m.is_file())
                    && fs::read_to_string(&p).is_ok_and(|t| t == *text);
                if fs::symlink_metadata(&p).is_ok_and(|m| !m.is_file()) {
                    fs::remove_file(&p).unwrap();
                }
                fs::write(&p, text).unwrap();
                !same
            }
            Edit::Remove(i) => {
                let p = path(*i);
                let existed = exists(&p);
                if existed {
                    fs::remove_file(&p).unwrap();
                }
                existed
            }
            Edit::Rename(i) => {
                let (p, q) = (path(*i), root.join(format!("d/r{i}")));
                if !exists(&p) || exists(&q) {
                    return false;
                }
                fs::rename(&p, &q).unwrap();
                true
            }
            Edit::Chmod(i) => {
                let p = path(*i);
                if !fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
                    return false;
                }
                let mode = fs::metadata(&p).unwrap().permissions().mode();
                fs::set_permissions(&p, fs::Permissions::from_mode(mode ^ 0o100)).unwrap();
                true
            }
            Edit::Link(i, j) => {
                let p = path(*i);
                let target = format!("f{j}");
                let same = fs::read_link(&p).is_ok_and(|t| t == Path::new(&target));
                if exists(&p) {
                    fs::remove_file(&p).unwrap();
                }
                symlink(&target, &p).unwrap();
                !same
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Every edit that changes the tree changes the fingerprint; one that does not,
        /// does not.
        #[test]
        fn the_fingerprint_changes_exactly_when_the_tree_does(
            edits in proptest::collection::vec(edit(), 1..8)
        ) {
            let tree = Tree::new(&[("d/f0", "a"), ("d/f1", "b"), ("d/f2", "")]);
            let mut print = tree.print();
            for edit in &edits {
                let changed = apply(tree.root(), edit);
                let now = tree.print();
                prop_assert_eq!(now != print, changed, "{:?}", edit);
                print = now;
            }
        }
    }
}
