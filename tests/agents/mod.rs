//! Agents through the binary: `spur agent doctor`, the `doctor.probe` action, the presets'
//! exact invocations, and `spur init`. The agent CLIs are stand-ins of the same names
//! (`claude`, `codex`, …) on a PATH of the test's own: shell scripts that answer
//! `--version` and their login-status command as the test says, and record the argv and
//! stdin of any other invocation.

mod doctor;
mod doctor_probe;
mod init;
mod presets;

use crate::common::Spur;
use crate::run::make_executable;

/// The stand-in agent CLI. `--version` prints `NAME 9.9.9 (stub)` unless
/// `bin/NAME.version-fails` exists; the login-status commands print `bin/NAME.login` (else
/// `Logged in (stub)`) and exit with `bin/NAME.login-exit` (else 0); anything else is
/// recorded under `calls/` (argv NUL-separated, stdin, cwd) and answered on stdout.
const AGENT_CLI: &str = r#"#!/bin/sh
name=$(basename "$0")
dir=$(dirname "$0")
case "$1 $2" in
  "--version ")
    if [ -f "$dir/$name.version-fails" ]; then echo "$name: cannot load its runtime" >&2; exit 3; fi
    echo "$name 9.9.9 (stub)"; exit 0;;
  "auth status"|"login status"|"auth list")
    if [ -f "$dir/$name.login" ]; then cat "$dir/$name.login"; else echo "Logged in (stub)"; fi
    exit "$(cat "$dir/$name.login-exit" 2>/dev/null || echo 0)";;
esac
mkdir -p "$dir/../calls"
for a in "$@"; do printf '%s\0' "$a"; done > "$dir/../calls/$name.argv"
cat > "$dir/../calls/$name.stdin"
printf '%s\n' "$PWD" > "$dir/../calls/$name.cwd"
echo "$name did it"
"#;

/// Put the stand-in CLI `name` in the project's `bin/`.
fn agent_cli(p: &Spur, name: &str) {
    p.file(&format!("bin/{name}"), AGENT_CLI);
    make_executable(&p.join(&format!("bin/{name}")));
}

/// The project's `bin/` first, then the system's (for `sh`, `mkdir`, `cat`).
fn path(p: &Spur) -> String {
    format!("{}:/usr/bin:/bin", p.join("bin").display())
}

/// The argv the stand-in `name` was last started with (its program name not included).
fn argv(p: &Spur, name: &str) -> Vec<String> {
    let raw = p.read(&format!("calls/{name}.argv"));
    raw.split_terminator('\0').map(str::to_owned).collect()
}
