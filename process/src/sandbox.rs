//! The sandbox of spur's children (ARCHITECTURE.md, *Sandbox*): once [`confine_children`]
//! has installed a [`Confinement`], every child this crate starts (unless its spec says
//! [`ProcessSpec::unconfined`](crate::ProcessSpec::unconfined)) runs under a Landlock
//! ruleset that handles only writes: reading and executing stay free, and writing,
//! creating, removing, renaming and truncating are allowed only beneath the writable
//! paths, never beneath a protected one.
//!
//! Landlock grants whole hierarchies and has no deny rule, so a writable path that holds a
//! protected one is granted entry by entry around it ([`Confinement::new`]): its other
//! entries whole, itself not at all (nothing new can be made directly in it).
//!
//! A Landlock domain belongs to a thread and is inherited by what it starts, so children
//! are spawned from threads that restricted themselves once: spur's other threads keep
//! their rights, std keeps `posix_spawn` (no `pre_exec`), and the ruleset is built once,
//! in the parent.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex, OnceLock};

use landlock::{
    AccessFs, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetStatus, ABI,
};

/// The ABI whose write rights the ruleset handles (truncate and refer included); an older
/// kernel enforces what it knows (best effort), which [`Confinement::partial`] reports.
const RULESET_ABI: ABI = ABI::V4;

/// The ruleset children run under, built once.
pub struct Confinement {
    ruleset: RulesetCreated,
    partial: bool,
    writable: Vec<PathBuf>,
    protected: Vec<PathBuf>,
}

impl fmt::Debug for Confinement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Confinement")
            .field("partial", &self.partial)
            .field("writable", &self.writable)
            .field("protected", &self.protected)
            .finish()
    }
}

/// Why children cannot be confined: the caller falls back to detection and says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unconfined {
    /// The kernel has no Landlock (or it is disabled at boot).
    NoLandlock,
    /// A writable path lies inside a protected one (or is one): no ruleset can grant the
    /// first and keep the second.
    Overlap {
        /// The writable path.
        writable: PathBuf,
        /// The protected path holding it.
        protected: PathBuf,
    },
    /// Building or testing the ruleset failed.
    Failed(String),
}

impl fmt::Display for Unconfined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unconfined::NoLandlock => f.write_str("the kernel offers no Landlock"),
            Unconfined::Overlap {
                writable,
                protected,
            } => write!(
                f,
                "{} must stay writable and lies inside the protected {}",
                writable.display(),
                protected.display()
            ),
            Unconfined::Failed(why) => write!(f, "the Landlock ruleset failed: {why}"),
        }
    }
}

impl Confinement {
    /// A ruleset under which everything beneath `writable` can be written except what is
    /// beneath `protected`. Paths that do not exist are left out (a protected path must
    /// exist: make it first, so its place is known). Checked by restricting a throwaway
    /// thread: a kernel without Landlock is [`Unconfined::NoLandlock`].
    pub fn new(writable: &[PathBuf], protected: &[PathBuf]) -> Result<Self, Unconfined> {
        let protected: Vec<PathBuf> = protected
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        let mut granted: Vec<PathBuf> = Vec::new();
        for path in writable {
            let Ok(path) = std::fs::canonicalize(path) else {
                continue;
            };
            if let Some(holder) = protected.iter().find(|p| path.starts_with(p)) {
                return Err(Unconfined::Overlap {
                    writable: path,
                    protected: holder.clone(),
                });
            }
            grant_around(&path, &protected, &mut granted);
        }
        granted.sort();
        granted.dedup();

        let access = AccessFs::from_write(RULESET_ABI);
        let failed = |e: &dyn fmt::Display| Unconfined::Failed(e.to_string());
        let mut ruleset = Ruleset::default()
            .handle_access(access)
            .map_err(|e| failed(&e))?
            .create()
            .map_err(|e| failed(&e))?;
        for path in &granted {
            // A path that vanished since it was listed is not granted.
            let Ok(fd) = PathFd::new(path) else {
                continue;
            };
            let rights = if path.is_dir() {
                access
            } else {
                access & file_rights()
            };
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, rights))
                .map_err(|e| failed(&e))?;
        }
        let probe = ruleset.try_clone().map_err(|e| failed(&e))?;
        let status = std::thread::spawn(move || probe.restrict_self().map(|s| s.ruleset))
            .join()
            .map_err(|_| Unconfined::Failed("the probe thread panicked".into()))?
            .map_err(|e| failed(&e))?;
        let partial = match status {
            RulesetStatus::NotEnforced => return Err(Unconfined::NoLandlock),
            RulesetStatus::PartiallyEnforced => true,
            RulesetStatus::FullyEnforced => false,
        };
        Ok(Self {
            ruleset,
            partial,
            writable: granted,
            protected,
        })
    }

    /// Whether the kernel enforces only part of the rights (an ABI before 3: truncation
    /// and cross-directory renames not handled).
    pub fn partial(&self) -> bool {
        self.partial
    }

    /// The protected paths, resolved.
    pub fn protected(&self) -> &[PathBuf] {
        &self.protected
    }
}

/// The rights Landlock accepts on a file that is not a directory.
fn file_rights() -> BitFlags<AccessFs> {
    AccessFs::from_file(RULESET_ABI)
}

/// Grant `path` whole when no protected path lies beneath it; else each of its entries
/// the same way, and `path` itself not at all. Symbolic links are never granted: one
/// could name a protected place.
fn grant_around(path: &Path, protected: &[PathBuf], granted: &mut Vec<PathBuf>) {
    if protected.iter().any(|p| p == path) {
        return;
    }
    if !protected.iter().any(|p| p.starts_with(path)) {
        granted.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        if !is_link {
            grant_around(&entry.path(), protected, granted);
        }
    }
}

static CONFINEMENT: OnceLock<Confined> = OnceLock::new();

/// The installed confinement and the threads that spawn under it: one for children held
/// before `exec` (actions), one for the rest. A held spawn waits for its start hook, and
/// a plain spawn is made while its caller holds the live-groups lock the hook needs: one
/// queue for both could deadlock. Each thread is started by the first spawn of its kind,
/// so a run that starts no child (all guards in process) pays for neither.
struct Confined {
    confinement: Confinement,
    held: OnceLock<Result<Mutex<mpsc::Sender<Job>>, String>>,
    plain: OnceLock<Result<Mutex<mpsc::Sender<Job>>, String>>,
}

type Job = Box<dyn FnOnce() + Send>;

/// Confine every child started from now on (see the module docs): the first spawn of
/// each kind starts a spawner thread that restricts itself, and lives as long as spur,
/// since `PR_SET_PDEATHSIG` (which a held action's child sets) fires when the thread that
/// started the child ends. A spawner that cannot start or restrict itself fails that
/// spawn and every later one of its kind: no child then starts unconfined. Once per
/// process: a later call keeps the first confinement.
pub fn confine_children(confinement: Confinement) {
    let _ = CONFINEMENT.set(Confined {
        confinement,
        held: OnceLock::new(),
        plain: OnceLock::new(),
    });
}

/// A thread that restricts itself under `confinement`, then runs the jobs sent to it for
/// as long as spur lives.
fn spawner(confinement: &Confinement, name: &str) -> Result<mpsc::Sender<Job>, String> {
    let (jobs, inbox) = mpsc::channel::<Job>();
    let (ready, restricted) = mpsc::sync_channel::<Result<(), String>>(1);
    let rules = confinement
        .ruleset
        .try_clone()
        .map_err(|e| format!("cannot copy the ruleset: {e}"))?;
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let entered = rules.restrict_self().map(|_| ()).map_err(|e| e.to_string());
            let ok = entered.is_ok();
            let _ = ready.send(entered);
            if ok {
                for job in inbox {
                    job();
                }
            }
        })
        .map_err(|e| format!("cannot start the spawner thread: {e}"))?;
    restricted
        .recv()
        .map_err(|_| "the spawner thread ended".to_owned())??;
    Ok(jobs)
}

/// The confinement children run under, if any.
pub fn current() -> Option<&'static Confinement> {
    CONFINEMENT.get().map(|c| &c.confinement)
}

/// How a child is spawned: held before `exec` for its start hook, or plainly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpawnKind {
    Held,
    Plain,
}

/// Run `spawn` on the confined spawner thread of its kind (or here, with no confinement,
/// or when `unconfined`). Nothing is started when the spawner is gone.
pub(crate) fn spawn_confined<T: Send + 'static>(
    kind: SpawnKind,
    unconfined: bool,
    spawn: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let Some(confined) = CONFINEMENT.get().filter(|_| !unconfined) else {
        return spawn();
    };
    let (reply, answer) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _ = reply.send(spawn());
    });
    let (slot, name) = match kind {
        SpawnKind::Held => (&confined.held, "spur-confined-held"),
        SpawnKind::Plain => (&confined.plain, "spur-confined-spawner"),
    };
    let jobs = slot
        .get_or_init(|| spawner(&confined.confinement, name).map(Mutex::new))
        .as_ref()
        .map_err(|why| format!("cannot start it in the sandbox: {why}"))?;
    jobs.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .send(job)
        .map_err(|_| "cannot start it in the sandbox: the spawner thread ended".to_owned())?;
    answer
        .recv()
        .unwrap_or_else(|_| Err("the sandbox's spawner thread failed".into()))
}
