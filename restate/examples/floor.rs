//! The floor of a run on Restate (book: *Performance*, `scripts/fleet-floor`): Restate's
//! own minimal workflow, written with `restate-sdk` directly, that does nothing but `STEPS`
//! journaled `ctx.run` steps (two by default, the two steps of one spur action), with no
//! spur code in it. It is invoked the way `spur run --engine restate` invokes `SpurRun`:
//! `POST /Floor/ID/run/send`, then `GET /restate/workflow/Floor/ID/attach` for the reply.
//!
//! ```sh
//! floor serve 127.0.0.1:9080 [nodelay]   # the endpoint (register it with the admin API)
//! floor call http://127.0.0.1:8080 [STEPS]   # one run, waits for its reply
//! floor call http://127.0.0.1:8080 STEPS thread   # each step's value made on a thread
//! ```
//!
//! A benchmark's tool, not part of spur.

// The workflow macro writes undocumented methods of its own.
#![allow(missing_docs)]

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use restate_sdk::prelude::*;

/// The workflow: `steps` journaled steps, each returning its index.
struct Floor;

#[restate_sdk::workflow]
impl Floor {
    #[handler]
    async fn run(&self, ctx: WorkflowContext<'_>, steps: u32) -> HandlerResult<u32> {
        let mut sum = 0;
        for i in 0..steps {
            sum += ctx
                .run(|| async move { Ok(i) })
                .name(format!("step {i}"))
                .await?;
        }
        Ok(sum)
    }
}

/// The same, each step's value made on a blocking thread and handed back through a
/// channel, as `SpurRun` hands a step to spur's synchronous runner: what that hand-over
/// costs on top of the floor.
struct FloorThread;

#[restate_sdk::workflow]
impl FloorThread {
    #[handler]
    async fn run(&self, ctx: WorkflowContext<'_>, steps: u32) -> HandlerResult<u32> {
        let mut sum = 0;
        for i in 0..steps {
            sum += ctx
                .run(|| async move {
                    let (tx, rx) = tokio::sync::oneshot::channel();
                    std::thread::spawn(move || tx.send(i));
                    rx.await
                        .map_err(|_| HandlerError::from("the thread stopped"))
                })
                .name(format!("step {i}"))
                .await?;
        }
        Ok(sum)
    }
}

/// Serve both workflows on `listen`; with `nodelay`, the accepted connections send each
/// write at once (TCP_NODELAY, set on the listener: Linux hands it to accepted sockets).
fn serve(listen: SocketAddr, nodelay: bool) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let endpoint = Endpoint::builder()
            .bind(Floor.into_service_definition())
            .bind(FloorThread.into_service_definition())
            .build();
        let socket = if listen.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        socket.set_nodelay(nodelay)?;
        socket.bind(listen)?;
        HttpServer::new(endpoint).serve(socket.listen(1024)?).await;
        Ok(())
    })
}

/// One run of `service` (`Floor` or `FloorThread`) with `steps` steps: send it, then
/// attach to its reply.
fn call(ingress: &str, service: &str, steps: u32) -> Result<String, String> {
    let ingress = ingress.trim_end_matches('/');
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| e.to_string())?;
    let key = format!("floor-{}-{}", now.as_nanos(), std::process::id());
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(true)
        .build()
        .into();
    agent
        .post(&format!("{ingress}/{service}/{key}/run/send"))
        .header("content-type", "application/json")
        .send(steps.to_string())
        .map_err(|e| format!("send: {e}"))?;
    agent
        .get(&format!(
            "{ingress}/restate/workflow/{service}/{key}/attach"
        ))
        .call()
        .map_err(|e| format!("attach: {e}"))?
        .body_mut()
        .read_to_string()
        .map_err(|e| format!("attach: {e}"))
}

fn steps_of(text: &str) -> Result<u32, String> {
    text.parse().map_err(|e| format!("{text}: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["serve", addr] | ["serve", addr, "nodelay"] => match addr.parse() {
            Ok(a) => serve(a, args.len() == 3).map_err(|e| e.to_string()),
            Err(e) => Err(format!("{addr}: {e}")),
        },
        ["call", ingress] => call(ingress, "Floor", 2).map(|_| ()),
        ["call", ingress, steps] => {
            steps_of(steps).and_then(|n| call(ingress, "Floor", n).map(|_| ()))
        }
        ["call", ingress, steps, "thread"] => {
            steps_of(steps).and_then(|n| call(ingress, "FloorThread", n).map(|_| ()))
        }
        _ => Err("usage: floor serve ADDR | floor call INGRESS [STEPS [thread]]".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("floor: {e}");
            ExitCode::FAILURE
        }
    }
}
