//! The key of spur's chains (ARCHITECTURE.md, *Keyed chains*): 32 random bytes in a file
//! outside the project, with which every record of a task ledger, the audit log and a run
//! journal is sealed (HMAC-SHA256, `store::seal`). A step can rewrite a file and recompute
//! a sha256 chain; it cannot compute a seal without the key.
//!
//! Where the key lives is one value, [`KeyFile`], carried by the
//! [`StateDir`](crate::store::state_dir::StateDir): `SPUR_KEY_FILE`, else
//! `$XDG_STATE_HOME/spur/key`, else `$HOME/.local/state/spur/key`. Another home for it (a
//! directory a sandbox keeps steps out of) is another `KeyFile`.
//!
//! The key is made once, on the first keyed write when no sealed record exists anywhere
//! spur looks ([`key_for_writing`]), with `O_EXCL` and mode 0600; a key file that others
//! can read, that is not a regular file or not the user's, is refused. A missing key is
//! never made again over sealed records: they would all become unverifiable.

use std::ffi::OsString;
use std::fs::{DirBuilder, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::diagnostic::{coded_diagnostic, Code};
use crate::store::bounded_read::{open_directory, open_regular_as, read_capped, ReadError};
use crate::store::digest::{hex, sha256_hex};
use crate::store::state_dir::StateDir;

/// The environment variable that names the key file.
pub const KEY_FILE_VAR: &str = "SPUR_KEY_FILE";

/// Bytes of key material.
const KEY_BYTES: usize = 32;

/// Hex digits of a key id: enough to tell keys apart, too few to matter.
const KEY_ID_HEX: usize = 16;

/// Where the key lives, and what chose the place (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFile {
    path: Option<PathBuf>,
    origin: KeyOrigin,
}

/// What chose the key file's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyOrigin {
    /// `SPUR_KEY_FILE`.
    Variable,
    /// `$XDG_STATE_HOME/spur/key`.
    XdgStateHome,
    /// `$HOME/.local/state/spur/key`.
    Home,
    /// Given by the embedder (a test, another home for protected state).
    Given,
    /// Nothing: no variable names a place.
    Nowhere,
}

impl KeyFile {
    /// The place the environment names: `SPUR_KEY_FILE`, else `$XDG_STATE_HOME/spur/key`
    /// (an absolute path only, as the XDG spec says), else `$HOME/.local/state/spur/key`.
    pub fn from_env() -> Self {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// [`KeyFile::from_env`] over any source of variables.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Self {
        let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(path) = set(KEY_FILE_VAR) {
            return Self {
                path: Some(path),
                origin: KeyOrigin::Variable,
            };
        }
        if let Some(dir) = set("XDG_STATE_HOME").filter(|d| d.is_absolute()) {
            return Self {
                path: Some(dir.join("spur").join("key")),
                origin: KeyOrigin::XdgStateHome,
            };
        }
        match set("HOME") {
            Some(home) => Self {
                path: Some(home.join(".local").join("state").join("spur").join("key")),
                origin: KeyOrigin::Home,
            },
            None => Self {
                path: None,
                origin: KeyOrigin::Nowhere,
            },
        }
    }

    /// The key file at `path`.
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self {
            path: Some(path.into()),
            origin: KeyOrigin::Given,
        }
    }

    /// The file, when some variable names one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The file and what chose it, for messages: `/home/ada/.local/state/spur/key (from
    /// HOME)`.
    pub fn describe(&self) -> String {
        let Some(path) = &self.path else {
            return format!("no key file ({KEY_FILE_VAR}, XDG_STATE_HOME and HOME are unset)");
        };
        let origin = match self.origin {
            KeyOrigin::Variable => format!(" (from {KEY_FILE_VAR})"),
            KeyOrigin::XdgStateHome => " (from XDG_STATE_HOME)".to_owned(),
            KeyOrigin::Home => " (from HOME)".to_owned(),
            KeyOrigin::Given | KeyOrigin::Nowhere => String::new(),
        };
        format!("{}{origin}", path.display())
    }

    fn require_path(&self) -> Result<&Path, KeyError> {
        self.path.as_deref().ok_or(KeyError::NoPlace)
    }

    /// The key in the file; `None` when there is no file. A file others can read, that is
    /// not a regular file, not the user's, or not a key, is an error.
    pub fn load(&self) -> Result<Option<ChainKey>, KeyError> {
        let path = self.require_path()?;
        let shown = || path.display().to_string();
        let file = match open_regular_as(path, read_only()) {
            Ok(file) => file,
            Err(ReadError::Missing) => return Ok(None),
            Err(ReadError::NotRegular { kind }) => {
                return Err(KeyError::NotRegular {
                    path: shown(),
                    kind,
                })
            }
            Err(e) => {
                return Err(KeyError::Unreadable {
                    path: shown(),
                    source: e.into(),
                })
            }
        };
        let meta = file.metadata().map_err(|source| KeyError::Unreadable {
            path: shown(),
            source,
        })?;
        let mode = meta.mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(KeyError::Exposed {
                path: shown(),
                mode,
            });
        }
        let uid = rustix::process::geteuid().as_raw();
        if meta.uid() != uid {
            return Err(KeyError::NotOwned {
                path: shown(),
                owner: meta.uid(),
                uid,
            });
        }
        let bytes = read_capped(&file, 256).map_err(|e| KeyError::Unreadable {
            path: shown(),
            source: e.into(),
        })?;
        ChainKey::from_text(&bytes)
            .map(Some)
            .ok_or(KeyError::Malformed { path: shown() })
    }

    /// Make a new key in the file: its directory made (mode 0700) if needed, the file
    /// created with `O_EXCL` and mode 0600, written and fsync'd. When another process made
    /// it first, that key is the key.
    pub fn create(&self) -> Result<ChainKey, KeyError> {
        let path = self.require_path()?;
        let failed = |source| KeyError::Create {
            path: path.display().to_string(),
            source,
        };
        let mut secret = [0u8; KEY_BYTES];
        getrandom::fill(&mut secret).map_err(|e| failed(io::Error::other(e.to_string())))?;
        let key = ChainKey::new(secret);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(failed)?;
        }
        let created = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path);
        let mut file = match created {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return self
                    .load()?
                    .ok_or_else(|| failed(io::Error::other("it vanished while it was made")))
            }
            Err(e) => return Err(failed(e)),
        };
        file.write_all(format!("{}\n", hex(&key.secret)).as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(failed)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            open_directory(dir)
                .and_then(|d| d.sync_all())
                .map_err(failed)?;
        }
        Ok(key)
    }
}

fn read_only() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true);
    options
}

/// The key: its secret and its id (a short hash of it, which records name).
#[derive(Clone, PartialEq, Eq)]
pub struct ChainKey {
    id: String,
    secret: [u8; KEY_BYTES],
}

/// Never prints the secret.
impl std::fmt::Debug for ChainKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ChainKey({})", self.id)
    }
}

impl ChainKey {
    fn new(secret: [u8; KEY_BYTES]) -> Self {
        let mut named = b"spur chain key id\0".to_vec();
        named.extend_from_slice(&secret);
        let id = sha256_hex(&named)
            .get(..KEY_ID_HEX)
            .unwrap_or_default()
            .to_owned();
        Self { id, secret }
    }

    /// A key file's text: 64 hex digits, surrounding whitespace ignored.
    fn from_text(bytes: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(bytes).ok()?.trim();
        if text.len() != KEY_BYTES * 2 {
            return None;
        }
        let mut secret = [0u8; KEY_BYTES];
        for (i, byte) in secret.iter_mut().enumerate() {
            *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(Self::new(secret))
    }

    /// The key's id: 16 hex digits of a sha256 of it. Records name the key they were
    /// sealed with by this id, never by the key.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn hmac(&self) -> Hmac<Sha256> {
        // HMAC takes a key of any length; 32 bytes is never refused.
        <Hmac<Sha256> as KeyInit>::new_from_slice(&self.secret)
            .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"))
    }

    /// HMAC-SHA256 of `bytes` under this key, as lowercase hex.
    pub fn mac_hex(&self, bytes: &[u8]) -> String {
        let mut mac = self.hmac();
        mac.update(bytes);
        hex(&mac.finalize().into_bytes())
    }

    /// Whether `mac_hex` is the HMAC of `bytes` under this key (compared in constant time).
    pub(crate) fn verifies(&self, bytes: &[u8], mac_hex: &str) -> bool {
        let Some(expected) = unhex(mac_hex) else {
            return false;
        };
        let mut mac = self.hmac();
        mac.update(bytes);
        mac.verify_slice(&expected).is_ok()
    }
}

#[cfg(test)]
impl ChainKey {
    /// A key of `byte`s, for tests that need one without a file.
    pub(crate) fn fixed(byte: u8) -> Self {
        Self::new([byte; KEY_BYTES])
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// What a reader has to check seals with: the key, or why there is none. A reader never
/// makes a key.
#[derive(Debug, Clone)]
pub enum KeyAtHand {
    /// The key.
    Key(ChainKey),
    /// No key file where the key should be.
    Missing {
        /// The key file, described.
        file: String,
    },
    /// The key file cannot be used (why, as a sentence).
    Unusable {
        /// What is wrong with it.
        why: String,
    },
}

impl KeyAtHand {
    /// Why a seal of key `key_id` cannot be checked with what is at hand; `None` when it
    /// can (the key is here and its id is `key_id`).
    pub(crate) fn cannot_check(&self, key_id: &str) -> Option<String> {
        match self {
            KeyAtHand::Key(key) if key.id() == key_id => None,
            KeyAtHand::Key(key) => Some(format!(
                "it was sealed with key {key_id}, and the key file holds key {}",
                key.id()
            )),
            KeyAtHand::Missing { file } => Some(format!(
                "it was sealed with key {key_id}, and there is no key file: {file}"
            )),
            KeyAtHand::Unusable { why } => Some(format!(
                "it was sealed with key {key_id}, and the key cannot be used: {why}"
            )),
        }
    }
}

/// Why the key cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// No variable names a place for the key.
    #[error(
        "spur has no place for its key: {KEY_FILE_VAR}, XDG_STATE_HOME and HOME are all unset"
    )]
    NoPlace,
    /// The key file cannot be read.
    #[error("cannot read the key file {path}: {source}")]
    Unreadable {
        /// The key file.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Something other than a regular file is at the key's place.
    #[error("the key file {path} is {kind}, not a regular file")]
    NotRegular {
        /// The key file.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// The key file can be read by others.
    #[error("the key file {path} has mode {mode:04o}: others than you can read it (chmod 600 it)")]
    Exposed {
        /// The key file.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
    /// The key file belongs to someone else.
    #[error("the key file {path} belongs to user {owner}, not to you (user {uid})")]
    NotOwned {
        /// The key file.
        path: String,
        /// Its owner.
        owner: u32,
        /// The current user.
        uid: u32,
    },
    /// The file does not hold a key.
    #[error("the key file {path} does not hold a spur key (64 hex digits)")]
    Malformed {
        /// The key file.
        path: String,
    },
    /// A new key could not be made.
    #[error("cannot make the key file {path}: {source}")]
    Create {
        /// The key file.
        path: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The key is missing, and records sealed with a key exist: a new key is not made
    /// over them.
    #[error("the key file {file} is missing, and {record} was sealed with key {key_id}: spur does not make a new key over records sealed with one")]
    Missing {
        /// The key file, described.
        file: String,
        /// A sealed record found.
        record: String,
        /// The key it names.
        key_id: String,
    },
}

coded_diagnostic! {
    KeyError {
        Self::NoPlace => Code::KeyNoPlace,
            help("set SPUR_KEY_FILE to the file spur keeps its key in (outside the project)");
        Self::Unreadable { .. } => Code::KeyUnreadable;
        Self::NotRegular { .. } => Code::KeyRefused,
            help("put spur's key file back (a regular file, mode 0600), or point SPUR_KEY_FILE at it");
        Self::Exposed { path, .. } => Code::KeyRefused,
            help("the key seals spur's records; keep it to yourself: chmod 600 {path}");
        Self::NotOwned { .. } => Code::KeyRefused,
            help("use a key file of your own (SPUR_KEY_FILE)");
        Self::Malformed { .. } => Code::KeyRefused,
            help("restore the key file from your backup; `spur key show` says where spur looks");
        Self::Create { .. } => Code::KeyCreateFailed,
            help("make the key's directory writable, or point SPUR_KEY_FILE elsewhere");
        Self::Missing { .. } => Code::KeyMissing,
            help("restore the key file from your backup (or point SPUR_KEY_FILE at it). If the key is lost, \
                  `spur key init` makes a new one: records sealed with the old key stay unverifiable \
                  (book: Keys)");
    }
}

/// The key for checking seals: what the state directory's key file holds, never made.
pub fn key_for_reading(state_dir: &StateDir) -> KeyAtHand {
    let file = state_dir.key_file();
    match file.load() {
        Ok(Some(key)) => KeyAtHand::Key(key),
        Ok(None) => KeyAtHand::Missing {
            file: file.describe(),
        },
        Err(e) => KeyAtHand::Unusable { why: e.to_string() },
    }
}

/// The key for sealing a record: the key file's, or, when there is none and no sealed
/// record exists in the state directory (task ledgers, the audit log, run journals, the
/// approved policy), a new key. A missing key with sealed records around is an error:
/// making a new one would leave them unverifiable without a word.
pub fn key_for_writing(state_dir: &StateDir) -> Result<ChainKey, KeyError> {
    let file = state_dir.key_file();
    if let Some(key) = file.load()? {
        return Ok(key);
    }
    if let Some((record, key_id)) = first_sealed_record(state_dir) {
        return Err(KeyError::Missing {
            file: file.describe(),
            record,
            key_id,
        });
    }
    file.create()
}

/// The first sealed record of the state directory, as "`<file>` line N", with its key id.
pub fn first_sealed_record(state_dir: &StateDir) -> Option<(String, String)> {
    let mut files = vec![state_dir.audit_path(), state_dir.approved_policy_path()];
    for dir in [state_dir.task_ledgers_dir(), state_dir.runs_dir()] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .map(|p| {
                if p.is_dir() {
                    p.join("journal.jsonl")
                } else {
                    p
                }
            })
            .collect();
        found.sort();
        files.extend(found);
    }
    files.into_iter().find_map(|path| {
        let bytes = crate::store::bounded_read::read_bounded(&path, 256 * 1024 * 1024).ok()?;
        bytes
            .split(|b| *b == b'\n')
            .enumerate()
            .find_map(|(i, line)| {
                let seal = crate::store::seal::find_seal(line)?;
                Some((
                    format!("{} line {}", path.display(), i + 1),
                    seal.key_id.to_owned(),
                ))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn vars<'a>(set: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            set.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_place_is_the_variable_then_xdg_state_home_then_home() {
        let all = [
            (KEY_FILE_VAR, "/k/key"),
            ("XDG_STATE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(
            KeyFile::from_vars(vars(&all)).path(),
            Some(Path::new("/k/key"))
        );
        assert_eq!(
            KeyFile::from_vars(vars(&all[1..])).path(),
            Some(Path::new("/x/spur/key"))
        );
        assert_eq!(
            KeyFile::from_vars(vars(&[("XDG_STATE_HOME", "relative"), ("HOME", "/h")])).path(),
            Some(Path::new("/h/.local/state/spur/key"))
        );
        let nowhere = KeyFile::from_vars(vars(&[(KEY_FILE_VAR, "")]));
        assert_eq!(nowhere.path(), None);
        assert!(matches!(nowhere.load(), Err(KeyError::NoPlace)));
        assert!(KeyFile::from_vars(vars(&all[2..]))
            .describe()
            .ends_with("(from HOME)"));
    }

    #[test]
    fn a_new_key_is_private_and_reads_back_with_its_id() {
        let dir = tempfile::tempdir().unwrap();
        let file = KeyFile::at(dir.path().join("state/spur/key"));
        assert_eq!(file.load().unwrap(), None);
        let key = file.create().unwrap();
        assert_eq!(key.id().len(), 16);
        let meta = std::fs::metadata(file.path().unwrap()).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let parent = std::fs::metadata(dir.path().join("state/spur")).unwrap();
        assert_eq!(parent.permissions().mode() & 0o777, 0o700);
        assert_eq!(file.load().unwrap(), Some(key.clone()));
        // Made again, the file is not replaced: the key in it is the key.
        assert_eq!(file.create().unwrap(), key);
        assert!(!format!("{key:?}").contains(&hex(&key.secret)));
    }

    #[test]
    fn macs_verify_only_under_their_key() {
        let a = ChainKey::new([1; KEY_BYTES]);
        let b = ChainKey::new([2; KEY_BYTES]);
        let mac = a.mac_hex(b"line");
        assert!(a.verifies(b"line", &mac));
        assert!(!a.verifies(b"linE", &mac));
        assert!(!b.verifies(b"line", &mac));
        assert!(!a.verifies(b"line", "zz"));
        assert_ne!(a.id(), b.id());
    }

    #[test]
    fn a_key_file_others_can_read_or_that_is_not_a_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        let file = KeyFile::at(&path);
        file.create().unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = file.load().unwrap_err();
        assert!(
            matches!(err, KeyError::Exposed { mode: 0o644, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("mode 0644"), "{err}");
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        let err = file.load().unwrap_err();
        assert!(err.to_string().contains("a directory"), "{err}");
        std::fs::remove_dir(&path).unwrap();
        std::fs::write(&path, "not a key\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(matches!(file.load(), Err(KeyError::Malformed { .. })));
    }
}
