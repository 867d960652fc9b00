//! `Spur`: a temp project directory and one invocation of the `spur` binary in it, built up
//! the way a test reads, and `Output`: what the run printed, with chainable assertions.
//!
//! ```ignore
//! let out = Spur::new()
//!     .pipeline(YAML)
//!     .var("x", "1")
//!     .json()
//!     .run()
//!     .success()
//!     .stdout_json();
//! ```
//!
//! Every builder method takes `&self` and returns a new `Spur` that shares the project
//! directory, so one project serves several commands in a row:
//!
//! ```ignore
//! let project = Spur::new().fixture("examples/run/approve.yaml", "approve.yaml");
//! let paused = project.args(["run", "approve.yaml"]).json().run().code(3).stdout_json();
//! project.args(["continue", id, "--answer", "yes"]).run().success();
//! ```
//!
//! Files written with `file`/`pipeline`/`fixture` land in the shared directory at once;
//! arguments, environment and stdin belong to the returned `Spur` only.
//!
//! Every spur a test starts has a home of its own, outside the project: `HOME` and
//! `XDG_STATE_HOME` point into a temp directory of the test, and `SPUR_KEY_FILE` is unset,
//! so the key of its chains is made and read in `[HOME]/state/spur/key` (see
//! [`Spur::key_path`]) and never in the home of whoever runs the tests.

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::rc::Rc;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

/// The file `Spur::pipeline` writes.
const PIPELINE: &str = "pipeline.yaml";

#[derive(Clone)]
pub struct Spur {
    project: Rc<tempfile::TempDir>,
    /// The home of every spur this test starts (the key lives under it).
    home: Rc<tempfile::TempDir>,
    args: Vec<OsString>,
    /// `None` removes the variable.
    env: Vec<(OsString, Option<OsString>)>,
    stdin: Option<Vec<u8>>,
    /// Relative to the project.
    cwd: Option<PathBuf>,
    /// Kill spur and fail the test when it has not exited by then.
    deadline: Option<Duration>,
}

impl Default for Spur {
    fn default() -> Self {
        Self::new()
    }
}

impl Spur {
    /// A fresh, empty project directory; no arguments yet.
    pub fn new() -> Self {
        Self {
            project: Rc::new(tempfile::tempdir().expect("create temp dir")),
            // Outside /tmp, where the project is: a step's sandbox grants /tmp whole, and
            // the protected state under this home must not be beneath it.
            home: Rc::new(
                tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("create temp dir"),
            ),
            args: Vec::new(),
            env: Vec::new(),
            stdin: None,
            cwd: None,
            deadline: None,
        }
    }

    // ---- the project ------------------------------------------------------------------------

    /// Write `contents` to `rel` in the project (parents created).
    pub fn file(&self, rel: &str, contents: impl AsRef<[u8]>) -> Self {
        let path = self.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent");
        }
        std::fs::write(&path, contents).expect("write file");
        self.clone()
    }

    /// Write `yaml` to `pipeline.yaml` and make the command `spur run pipeline.yaml`; later
    /// `args`, `var` and `json` add to it.
    pub fn pipeline(&self, yaml: &str) -> Self {
        assert!(
            self.args.is_empty(),
            "pipeline() sets the command: call it before args()"
        );
        self.file(PIPELINE, yaml).args(["run", PIPELINE])
    }

    /// Copy the repository's file or directory `repo_rel` (e.g. `examples/run/crash.yaml`)
    /// to `to` in the project (`.` for the project root).
    pub fn fixture(&self, repo_rel: &str, to: &str) -> Self {
        copy(&repo_path(repo_rel), &self.join(to));
        self.clone()
    }

    pub fn path(&self) -> &Path {
        self.project.path()
    }

    /// `rel` in the project; the protected state is named by the place it had in
    /// `.spur/` (`.spur/ledger/…`, `.spur/audit.jsonl`, `.spur/runs/…`, `.spur/policies/…`,
    /// `.spur/lifecycles/…`) and found where spur keeps it now ([`Spur::protected`]).
    pub fn join(&self, rel: &str) -> PathBuf {
        match protected_rel(rel) {
            Some(inside) => self.protected().join(inside),
            None => self.path().join(rel),
        }
    }

    /// The text of `rel` in the project (the protected state as in [`Spur::join`]).
    /// `spur task verdict WBS --from-answer ANSWER`, which must succeed: a verdict derived
    /// through spur, as a task's done needs it.
    pub fn verdict_from_answer(&self, wbs: &str, answer: &str) {
        self.args(["task", "verdict", wbs, "--from-answer", answer])
            .run()
            .success();
    }

    pub fn read(&self, rel: &str) -> String {
        let path = self.join(rel);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    }

    /// `git ARGS` in the project, as a fixed committer with signing off; fails the test
    /// when git fails (or is not installed).
    pub fn git(&self, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(self.path())
            .status()
            .expect("git is needed by these tests (install git)");
        assert!(status.success(), "git {args:?}");
    }

    /// Whether `rel` exists (the protected state as in [`Spur::join`]).
    pub fn exists(&self, rel: &str) -> bool {
        self.join(rel).exists()
    }

    /// `text` with the project's path replaced by `[PROJECT]`, the home's by `[HOME]`.
    pub fn redact(&self, text: &str) -> String {
        redact(self.path(), self.home(), text)
    }

    /// The home spur runs with (`HOME`; `XDG_STATE_HOME` is its `state/`).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Where spur keeps the key of its chains for this test: `$XDG_STATE_HOME/spur/key`.
    pub fn key_path(&self) -> PathBuf {
        self.home().join("state").join("spur").join("key")
    }

    /// Where spur keeps this project's protected state (ledgers, journals, audit log,
    /// policy snapshots): `$XDG_STATE_HOME/spur/projects/<name>-<hash>/`.
    pub fn protected(&self) -> PathBuf {
        self.protected_of(&self.join(".spur"))
    }

    /// The protected state of the state directory at `state_dir` (`--state-dir`).
    pub fn protected_of(&self, state_dir: &Path) -> PathBuf {
        spur_engine::store::state_dir::protected_dir_in(Some(&self.home().join("state")), state_dir)
    }

    /// `rel` in the project's protected state (`ledger/tasks/W.jsonl`, `audit.jsonl`,
    /// `runs/<id>/journal.jsonl`).
    pub fn protected_path(&self, rel: &str) -> PathBuf {
        self.protected().join(rel)
    }

    /// `open` (a record's text without its closing brace) sealed with this test's key, as
    /// spur seals a line: what a forger who read the key file writes.
    pub fn sealed_by_forger(&self, open: &str) -> String {
        let key = spur_engine::store::chain_key::KeyFile::at(self.key_path())
            .load()
            .expect("the key reads")
            .expect("spur made a key");
        spur_engine::store::seal::seal(open, &key)
    }

    // ---- the invocation ---------------------------------------------------------------------

    pub fn arg(&self, arg: impl AsRef<OsStr>) -> Self {
        self.args([arg])
    }

    pub fn args<I, S>(&self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut next = self.clone();
        next.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        next
    }

    /// `--var NAME=VALUE`.
    pub fn var(&self, name: &str, value: &str) -> Self {
        self.args(["--var", &format!("{name}={value}")])
    }

    /// `--json`.
    pub fn json(&self) -> Self {
        self.arg("--json")
    }

    pub fn env(&self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        let mut next = self.clone();
        next.env
            .push((name.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        next
    }

    pub fn env_remove(&self, name: impl AsRef<OsStr>) -> Self {
        let mut next = self.clone();
        next.env.push((name.as_ref().to_owned(), None));
        next
    }

    pub fn stdin(&self, bytes: impl Into<Vec<u8>>) -> Self {
        let mut next = self.clone();
        next.stdin = Some(bytes.into());
        next
    }

    /// Run in `rel` (a directory of the project) instead of the project root.
    pub fn current_dir(&self, rel: &str) -> Self {
        let mut next = self.clone();
        next.cwd = Some(rel.into());
        next
    }

    /// Fail the test (killing spur) when spur has not exited within `limit`: for tests of
    /// what must not hang, so that a regression fails instead of stalling the suite. The
    /// wait is on the process (`waitpid`), not a sleep.
    pub fn within(&self, limit: Duration) -> Self {
        let mut next = self.clone();
        next.deadline = Some(limit);
        next
    }

    /// Run `spur` with the arguments so far, in a clean, colourless environment with a
    /// home of its own.
    pub fn run(&self) -> Output {
        let mut cmd = Command::new(bin());
        cmd.current_dir(
            self.path()
                .join(self.cwd.as_deref().unwrap_or(Path::new(""))),
        )
        .args(&self.args)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("FORCE_COLOR")
        .env("HOME", self.home())
        .env("XDG_STATE_HOME", self.home().join("state"))
        .env("TMPDIR", temp_dir_in(self.home()))
        // For a test's step that forges the protected state (with `SPUR_SANDBOX=off`).
        .env("SPUR_TEST_PROTECTED", self.protected())
        .env_remove("SPUR_KEY_FILE");
        for (name, value) in &self.env {
            match value {
                Some(value) => cmd.env(name, value),
                None => cmd.env_remove(name),
            };
        }
        if let Some(bytes) = &self.stdin {
            cmd.write_stdin(bytes.clone());
        }
        if let Some(limit) = self.deadline {
            cmd.timeout(limit);
        }
        let output = cmd.output().expect("run spur");
        if let Some(limit) = self.deadline {
            // assert_cmd kills a child still running at the deadline with SIGKILL.
            if std::os::unix::process::ExitStatusExt::signal(&output.status) == Some(9) {
                panic!(
                    "`{}` did not finish within {limit:?} (killed)\n--- stderr\n{}",
                    self.command_line(),
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        }
        Output {
            project: Rc::clone(&self.project),
            home: Rc::clone(&self.home),
            command: self.command_line(),
            status: output.status,
            stdout: output.stdout,
            stderr: output.stderr,
        }
    }

    fn command_line(&self) -> String {
        let mut line = String::from("spur");
        for arg in &self.args {
            write!(line, " {}", arg.to_string_lossy()).unwrap();
        }
        line
    }
}

/// What one run of `spur` did. The assertions panic with the command line and both
/// streams, so a failure shows what spur said.
pub struct Output {
    project: Rc<tempfile::TempDir>,
    home: Rc<tempfile::TempDir>,
    command: String,
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Output {
    /// Exit code 0.
    #[track_caller]
    pub fn success(self) -> Self {
        self.code(0)
    }

    /// Exited (not killed) with `expected`.
    #[track_caller]
    pub fn code(self, expected: i32) -> Self {
        if self.status.code() != Some(expected) {
            self.fail(&format!("expected exit code {expected}"));
        }
        self
    }

    /// Ended by a signal, without an exit code.
    #[track_caller]
    pub fn killed(self) -> Self {
        if self.status.code().is_some() {
            self.fail("expected to be killed by a signal");
        }
        self
    }

    /// The exit code; `None` when a signal ended spur.
    pub fn exit_code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Stdout, which must be UTF-8.
    #[track_caller]
    pub fn stdout(&self) -> &str {
        std::str::from_utf8(&self.stdout).unwrap_or_else(|e| self.fail(&format!("stdout: {e}")))
    }

    /// Stderr, which must be UTF-8.
    #[track_caller]
    pub fn stderr(&self) -> &str {
        std::str::from_utf8(&self.stderr).unwrap_or_else(|e| self.fail(&format!("stderr: {e}")))
    }

    /// Stdout parsed as one JSON document.
    #[track_caller]
    pub fn stdout_json(&self) -> Value {
        serde_json::from_slice(&self.stdout)
            .unwrap_or_else(|e| self.fail(&format!("stdout is not one JSON document: {e}")))
    }

    /// Stdout with the project's path replaced by `[PROJECT]`, the home's by `[HOME]`.
    pub fn stdout_redacted(&self) -> String {
        redact(self.project.path(), self.home.path(), self.stdout())
    }

    /// Stderr with the project's path replaced by `[PROJECT]`, the home's by `[HOME]`.
    pub fn stderr_redacted(&self) -> String {
        redact(self.project.path(), self.home.path(), self.stderr())
    }

    #[track_caller]
    pub fn stdout_is(self, expected: &str) -> Self {
        if self.stdout() != expected {
            self.fail(&format!("expected stdout {expected:?}"));
        }
        self
    }

    #[track_caller]
    pub fn stderr_is(self, expected: &str) -> Self {
        if self.stderr() != expected {
            self.fail(&format!("expected stderr {expected:?}"));
        }
        self
    }

    #[track_caller]
    pub fn stdout_contains(self, part: &str) -> Self {
        if !self.stdout().contains(part) {
            self.fail(&format!("expected stdout to contain {part:?}"));
        }
        self
    }

    #[track_caller]
    pub fn stderr_contains(self, part: &str) -> Self {
        if !self.stderr().contains(part) {
            self.fail(&format!("expected stderr to contain {part:?}"));
        }
        self
    }

    /// The text of `rel` in the project the run used (the protected state as in
    /// [`Spur::join`]).
    pub fn read(&self, rel: &str) -> String {
        let path = match protected_rel(rel) {
            Some(inside) => spur_engine::store::state_dir::protected_dir_in(
                Some(&self.home.path().join("state")),
                &self.project.path().join(".spur"),
            )
            .join(inside),
            None => self.project.path().join(rel),
        };
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    }

    #[track_caller]
    fn fail(&self, what: &str) -> ! {
        panic!(
            "`{}`: {what}; it ended with {}\n--- stdout\n{}\n--- stderr\n{}",
            self.command,
            self.status,
            String::from_utf8_lossy(&self.stdout),
            String::from_utf8_lossy(&self.stderr),
        )
    }
}

/// The `spur` binary under test.
/// The `spur` under test: the one cargo built, or `SPUR_TEST_BIN` (to show that a test
/// fails against another build, e.g. main's).
pub fn bin() -> PathBuf {
    std::env::var_os("SPUR_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_spur")))
}

/// Path of a file in the repository (for fixtures in `examples/`, `pipelines/`).
pub fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn copy(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).expect("create dir");
        for entry in std::fs::read_dir(from).expect("read dir") {
            let entry = entry.expect("dir entry");
            copy(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).expect("create parent");
        }
        std::fs::copy(from, to)
            .unwrap_or_else(|e| panic!("copy {} to {}: {e}", from.display(), to.display()));
    }
}

/// `home/tmp`, made: the temporary directory of the steps a test's spur runs. When the
/// target directory (and so the home) lies under `/tmp`, the sandbox cannot grant `/tmp`
/// itself, which holds the protected state; the home's `tmp/` it grants whole.
fn temp_dir_in(home: &Path) -> PathBuf {
    let dir = home.join("tmp");
    std::fs::create_dir_all(&dir).expect("make the home's tmp");
    dir
}

/// The part of `rel` inside the protected state, when `rel` names it by its old place in
/// `.spur/`.
fn protected_rel(rel: &str) -> Option<&str> {
    let inside = rel.strip_prefix(".spur/")?;
    ["ledger", "audit.jsonl", "runs", "policies", "lifecycles"]
        .iter()
        .any(|name| inside == *name || inside.starts_with(&format!("{name}/")))
        .then_some(inside)
}

/// Give a spur process `home` as its home: `HOME`, `XDG_STATE_HOME` (`home/state`), and
/// no `SPUR_KEY_FILE` from the environment of the tests, as [`Spur::run`] does: a test that
/// spawns spur itself calls it.
pub fn isolate(cmd: &mut std::process::Command, home: &Path) {
    cmd.env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("TMPDIR", temp_dir_in(home))
        .env_remove("SPUR_KEY_FILE");
}

/// `text` with a protected state directory under `home` replaced by `[PROTECTED]`, `root`
/// (as given and canonicalised) by `[PROJECT]`, `home` by `[HOME]`.
fn redact(root: &Path, home: &Path, text: &str) -> String {
    let mut text = text.to_owned();
    let projects = home.join("state").join("spur").join("projects");
    let prefix = format!("{}/", projects.display());
    while let Some(start) = text.find(&prefix) {
        let rest = text.get(start + prefix.len()..).unwrap_or("");
        let id_len = rest
            .find(|c: char| c == '/' || c.is_whitespace() || c == '"' || c == '`' || c == '\'')
            .unwrap_or(rest.len());
        text.replace_range(start..start + prefix.len() + id_len, "[PROTECTED]");
    }
    for (dir, name) in [(root, "[PROJECT]"), (home, "[HOME]")] {
        let given = dir.to_string_lossy().into_owned();
        let canonical = dir
            .canonicalize()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| given.clone());
        text = text.replace(&canonical, name).replace(&given, name);
    }
    text
}
