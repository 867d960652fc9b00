//! `spur ui`: a local web app over a state directory. The runs, one run (its transition
//! graph with the path it took, its journal as a timeline, its actions' log tails, its
//! guards and done-gate decisions), the tasks as a board, the audit log with its chain's
//! status, and a paused run's question with its choices as buttons.
//!
//! Reading goes through the engine's bounded, validating readers (journals through
//! `run::runs_list`, task checks through `store::certification`); with a Restate engine
//! configured, the runs are the server's, read as `spur runs` and `spur trace` read them
//! (`spur_restate::fleet_runs`); the task list and the
//! audit log are the CLI's own `--json` output. The only write is an answer, which is
//! `spur continue RUN --answer A --answered-by WHO` run as a child: the same code path as
//! the command line, in a process of its own.
//!
//! ```no_run
//! use spur_engine::store::state_dir::StateDir;
//! let config = spur_ui::UiConfig {
//!     listen: "127.0.0.1:7878".parse().unwrap(),
//!     state_dir: StateDir::resolve(None, std::path::Path::new(".")),
//!     engine: spur_ui::Engine::Local,
//!     spur_exe: "spur".into(),
//!     token: false,
//! };
//! let ui = spur_ui::Ui::bind(config).unwrap();
//! println!("http://{}/", ui.address());
//! ui.run();
//! ```

#![forbid(unsafe_code)]

mod access;
mod age;
mod answer;
mod audit_page;
mod cli_json;
mod events;
mod form;
mod html;
mod log_tail;
mod run_page;
mod runs_page;
mod server;
mod source;
mod tasks_page;

pub use runs_page::{render_runs_page, RunFilter};
pub use server::{Ui, UiConfig, UiError};
pub use source::Engine;
