//! A Restate server for the fleet tests, provisioned by the tests themselves: the binary
//! named by `SPUR_RESTATE_SERVER`, else `restate-server` on PATH, else the pinned npm
//! package installed into `target/restate/` (`npm install --ignore-scripts`). Without
//! npm the tests FAIL saying what to install; they never skip.
//!
//! Each server listens on loopback ports of its own, keeps its data in a temp dir and is
//! killed when its handle drops; the shared one ([`shared`]) when the test process ends
//! (a watchdog shell kills it once the test process's end of its stdin closes).

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};

use super::{bin, eventually, isolate};

/// The server version the tests pin (book: *Running a fleet*).
pub const VERSION: &str = "1.7.12";

/// The server binary, installed first if need be.
pub fn server_binary() -> PathBuf {
    static FOUND: OnceLock<PathBuf> = OnceLock::new();
    FOUND.get_or_init(find_or_install).clone()
}

fn find_or_install() -> PathBuf {
    if let Some(path) = std::env::var_os("SPUR_RESTATE_SERVER") {
        return PathBuf::from(path);
    }
    if let Some(path) = on_path("restate-server") {
        return path;
    }
    let prefix = target_dir().join("restate");
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    let platform = format!("{}-{arch}", std::env::consts::OS);
    let installed = prefix.join(format!(
        "node_modules/@restatedev/restate-server-{platform}/bin/restate-server"
    ));
    if installed.exists() {
        return installed;
    }
    let package = format!("@restatedev/restate-server@{VERSION}");
    let status = Command::new("npm")
        .args([
            "install",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--prefix",
        ])
        .arg(&prefix)
        .arg(&package)
        .stdout(Stdio::null())
        .status();
    let how = format!(
        "the fleet tests need the Restate server {VERSION}: install Node.js with npm (e.g. \
         `apt-get install npm`) so the tests can run `npm install --ignore-scripts --prefix \
         target/restate {package}` themselves, or put `restate-server` on PATH, or set \
         SPUR_RESTATE_SERVER to its path"
    );
    match status {
        Ok(s) if s.success() && installed.exists() => installed,
        Ok(s) => panic!("npm install {package} failed ({s}); {how}"),
        Err(e) => panic!("cannot run npm ({e}); {how}"),
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// `target/`: two levels up from the spur binary under test.
fn target_dir() -> PathBuf {
    let bin = bin();
    bin.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"))
}

/// A free loopback port below the ephemeral range (so no outgoing connection takes it
/// between this check and the server's bind); the listener is dropped at once.
pub fn free_port() -> u16 {
    use std::hash::{BuildHasher, Hasher};
    for _ in 0..1000 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        let port = 20_000 + (h.finish() % 12_000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port in 20000-32000")
}

/// One Restate server.
pub struct Server {
    base: tempfile::TempDir,
    ports: [u16; 3],
    watchdog: Option<(Child, ChildStdin)>,
    pid: u32,
}

impl Server {
    /// Start a server of its own (for tests that kill it).
    pub fn start() -> Self {
        let base = tempfile::tempdir().expect("server temp dir");
        let ports = [free_port(), free_port(), free_port()];
        let mut server = Self {
            base,
            ports,
            watchdog: None,
            pid: 0,
        };
        // A port taken between the check and the bind: again with other ports.
        for _ in 0..3 {
            if server.launch() {
                return server;
            }
            server.stop_watchdog();
            server.ports = [free_port(), free_port(), free_port()];
        }
        server.launch_or_panic();
        server
    }

    fn config(&self) -> String {
        let [node, ingress, admin] = self.ports;
        format!(
            r#"default-num-partitions = 2
rocksdb-total-memory-size = "256 MiB"
disable-telemetry = true
bind-address = "127.0.0.1:{node}"
advertised-address = "http://127.0.0.1:{node}"

[admin]
bind-address = "127.0.0.1:{admin}"

[admin.query-engine]
memory-size = "128 MiB"

[ingress]
bind-address = "127.0.0.1:{ingress}"

[default-retry-policy]
type = "exponential"
initial-interval = "100ms"
factor = 2.0
max-interval = "1s"
"#
        )
    }

    /// Start the server; whether it became healthy (false: a port was taken).
    fn launch(&mut self) -> bool {
        let config = self.base.path().join("restate.toml");
        std::fs::write(&config, self.config()).expect("write server config");
        let log = self.base.path().join("server.log");
        // Read for this start only.
        let _ = std::fs::remove_file(&log);
        // The shell prints the server's pid, then waits for its stdin to close (this
        // handle dropped, or the test process gone) and kills the server.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"s="$1"; shift; "$s" "$@" </dev/null >>"$LOG" 2>&1 & echo $!; read _; kill -9 $! 2>/dev/null"#)
            .arg("sh")
            .arg(server_binary())
            .arg("--config-file")
            .arg(&config)
            .arg("--base-dir")
            .arg(self.base.path().join("data"))
            .args(["--listen-mode", "tcp", "--node-name", "spur-test"])
            .env("LOG", &log)
            .env("DO_NOT_TRACK", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the Restate server's watchdog shell");
        let stdin = child.stdin.take().expect("watchdog stdin");
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            BufReader::new(out)
                .read_line(&mut line)
                .expect("server pid");
        }
        self.pid = line.trim().parse().expect("server pid");
        self.watchdog = Some((child, stdin));
        let health = format!("{}/restate/health", self.ingress());
        let admin = format!("{}/health", self.admin());
        let healthy = eventually(|| ok(&health) && ok(&admin) || self.bind_failed());
        healthy && !self.bind_failed()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.base.path().join("server.log")).unwrap_or_default()
    }

    fn bind_failed(&self) -> bool {
        self.log().contains("Address in use")
    }

    fn launch_or_panic(&mut self) {
        assert!(
            self.launch(),
            "the Restate server did not become healthy; its log:\n{}",
            self.log()
        );
    }

    /// The ingress URL (runs).
    pub fn ingress(&self) -> String {
        format!("http://127.0.0.1:{}", self.ports[1])
    }

    /// The admin URL (registration).
    pub fn admin(&self) -> String {
        format!("http://127.0.0.1:{}", self.ports[2])
    }

    /// kill -9 the server (its data stays).
    pub fn kill9(&mut self) {
        let _ = Command::new("kill")
            .args(["-9", &self.pid.to_string()])
            .status();
        assert!(
            eventually(|| !super::process_is_running(&self.pid.to_string())),
            "the server did not die"
        );
        self.stop_watchdog();
    }

    /// Start the server again on the same data (and node port).
    /// Its ingress and admin take new ports: the old ones may be held a while by the
    /// killed server's closed connections (TIME_WAIT), and the server binds without
    /// `SO_REUSEADDR`.
    pub fn restart(&mut self) {
        for attempt in 0..3 {
            // The node's own port changes only when it was the one taken.
            let node = if attempt == 0 {
                self.ports[0]
            } else {
                free_port()
            };
            self.ports = [node, free_port(), free_port()];
            if self.launch() {
                return;
            }
            self.stop_watchdog();
        }
        self.launch_or_panic();
    }

    fn stop_watchdog(&mut self) {
        if let Some((mut child, stdin)) = self.watchdog.take() {
            drop(stdin);
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop_watchdog();
    }
}

/// Whether `GET url` (plain http, loopback) answers 200.
fn ok(url: &str) -> bool {
    use std::io::{Read, Write};
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let Ok(mut stream) = std::net::TcpStream::connect(host) else {
        return false;
    };
    let request = format!("GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.ends_with(b" 200")
}

/// The test binary's one shared server, and the lock a test holds while its workers are
/// the ones registered (the server sends a service's new runs to the deployment
/// registered last, so tests on it take turns).
pub fn shared() -> (&'static Server, MutexGuard<'static, ()>) {
    static SERVER: OnceLock<Server> = OnceLock::new();
    static TURN: Mutex<()> = Mutex::new(());
    let turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    (SERVER.get_or_init(Server::start), turn)
}

/// Workers of one project sharing one address (`SO_REUSEPORT`), registered with a server.
pub struct Fleet {
    pub addr: String,
    workers: Vec<Child>,
}

impl Fleet {
    /// Start `n` workers in `project` (with `home` as HOME) and register their address.
    pub fn start(server: &Server, project: &Path, home: &Path, n: usize) -> Self {
        Self::start_with(server, project, home, n, &[])
    }

    /// [`Fleet::start`], the workers' environment with `envs` too.
    pub fn start_with(
        server: &Server,
        project: &Path,
        home: &Path,
        n: usize,
        envs: &[(&str, &str)],
    ) -> Self {
        let addr = format!("127.0.0.1:{}", free_port());
        let workers = (0..n).map(|_| worker(&addr, project, home, envs)).collect();
        let fleet = Self { addr, workers };
        // The endpoint speaks HTTP/2 only: that it accepts connections is enough here.
        assert!(
            eventually(|| std::net::TcpStream::connect(&fleet.addr).is_ok()),
            "the workers did not listen"
        );
        let registered = Command::new(bin())
            .current_dir(project)
            .args([
                "engine",
                "register",
                "--admin",
                &server.admin(),
                &fleet.addr,
            ])
            .output()
            .expect("run spur engine register");
        assert!(
            registered.status.success(),
            "spur engine register failed: {}",
            String::from_utf8_lossy(&registered.stderr)
        );
        fleet
    }

    /// One more worker at the fleet's address, in `project` with `home` as HOME and
    /// `envs` (another checkout, another machine's local state).
    pub fn add_worker(&mut self, project: &Path, home: &Path, envs: &[(&str, &str)]) {
        self.workers.push(worker(&self.addr, project, home, envs));
    }

    /// The workers' pids.
    pub fn pids(&self) -> Vec<u32> {
        self.workers.iter().map(Child::id).collect()
    }
}

/// `spur worker --listen addr` in `project`, isolated in `home`, with `envs`.
fn worker(addr: &str, project: &Path, home: &Path, envs: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(bin());
    cmd.current_dir(project)
        .args(["worker", "--listen", addr])
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    isolate(&mut cmd, home);
    for (name, value) in envs {
        cmd.env(name, value);
    }
    cmd.spawn().expect("start a worker")
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for worker in &mut self.workers {
            let _ = worker.kill();
            let _ = worker.wait();
        }
    }
}
