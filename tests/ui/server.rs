//! `spur ui` as a child of the test, on a free port; killed when dropped.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use crate::common::{bin, isolate, Spur};

pub struct UiServer {
    child: Child,
    pub addr: SocketAddr,
    /// With `--token`: the one-time login URL's path.
    pub login_path: Option<String>,
}

impl UiServer {
    /// `spur ui --listen 127.0.0.1:0 EXTRA…` in `project`, with its home.
    pub fn start(project: &Spur, extra: &[&str]) -> UiServer {
        let mut command = Command::new(bin());
        command
            .args(["ui", "--listen", "127.0.0.1:0"])
            .args(extra)
            .current_dir(project.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        isolate(&mut command, project.home());
        let mut child = command.spawn().expect("start spur ui");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("spur ui's first line");
        // "spur ui: DIR at http://ADDR/[ — open this URL once to log in: http://ADDR/login/N]"
        let after = line
            .split(" at http://")
            .nth(1)
            .unwrap_or_else(|| panic!("no address in {line:?}"));
        let addr: SocketAddr = after
            .split('/')
            .next()
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no address in {line:?}"));
        let login_path = line
            .split("log in: http://")
            .nth(1)
            .and_then(|u| u.trim().split_once('/').map(|(_, p)| format!("/{p}")));
        UiServer {
            child,
            addr,
            login_path,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for UiServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
