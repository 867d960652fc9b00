//! A worker: the HTTP endpoint serving the `SpurRun` workflow, which the Restate server
//! calls once the endpoint is registered (`spur engine register`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use restate_sdk::prelude::*;
use spur_engine::run::StepJournal;

use crate::protocol::{RunReply, RunRequest};
use crate::workflow::SpurRun;

/// How a worker runs one run: synchronously, every host call through `journal`.
pub trait Worker: Send + Sync + 'static {
    /// Run `request` as run `run_id` and answer how it ended.
    fn run(&self, run_id: &str, request: RunRequest, journal: &mut dyn StepJournal) -> RunReply;
}

/// How long a run may go without a journaled step before the server aborts and retries it
/// elsewhere: the longest action a run may hold, and a margin for its kill and for
/// committing and pushing its tree (`fleet_tree`).
const INACTIVITY: Duration =
    Duration::from_secs(spur_engine::run::LONGEST_ACTION.as_secs() + 15 * 60);

/// A listener on `addr` that other workers may share (`SO_REUSEPORT`): the kernel spreads
/// the server's connections over the workers listening there, and a dead worker's share
/// goes to the others. (Workers on other machines sit behind a load balancer instead.)
/// Its connections send at once (`TCP_NODELAY`, inherited from the listener): a journaled
/// step's small write otherwise waits for the server's delayed ACK, ~20 ms a step
/// (`scripts/fleet-bench floor-nodelay`).
fn listener(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.set_reuseport(true)?;
    socket.set_nodelay(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// Serve `worker` on `listen` until the process ends.
pub fn serve(listen: SocketAddr, worker: Arc<dyn Worker>) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = listener(listen)?;
        let options = ServiceOptions::new()
            .inactivity_timeout(INACTIVITY)
            .abort_timeout(Duration::from_secs(60))
            .retry_policy_initial_interval(Duration::from_millis(100))
            .retry_policy_max_interval(Duration::from_secs(2));
        let endpoint = Endpoint::builder()
            .bind(
                SpurRun { worker }
                    .into_service_definition()
                    .options(options),
            )
            .bind(crate::runs::Runs.into_service_definition())
            .bind(crate::task::Task.into_service_definition())
            .bind(crate::audit::Audit.into_service_definition())
            .build();
        HttpServer::new(endpoint).serve(listener).await;
        Ok(())
    })
}
