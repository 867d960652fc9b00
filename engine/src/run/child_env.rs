//! What the processes of a run see: every var as an environment variable, `SPUR_*` for the
//! run's place (id, directory, state, iteration, workflow, state directory, the spur
//! binary), and PATH with the run's prefix first (e.g. the embedded-jq shim).

use std::path::Path;

use super::run_id::RunId;
use super::runner::{Facts, RunSettings};
use super::vars::Vars;
use crate::pipeline::Pipeline;

/// Environment for processes at `state` in `iteration`.
pub(super) fn process_env(
    facts: &Facts<'_>,
    vars: &Vars,
    state: &str,
    iteration: u32,
) -> Vec<(String, String)> {
    step_env(
        facts.settings,
        &StepPlace {
            run_id: facts.run_id.as_str(),
            run_dir: &facts.run_dir,
            workflow: &facts.pipeline.name.value,
            state,
            iteration,
        },
        vars,
    )
}

/// Where a step runs: the run (or lifecycle instance) and its place in it.
pub(crate) struct StepPlace<'a> {
    pub(crate) run_id: &'a str,
    pub(crate) run_dir: &'a Path,
    pub(crate) workflow: &'a str,
    pub(crate) state: &'a str,
    pub(crate) iteration: u32,
}

/// Environment for the processes of a step at `place`: every var, `SPUR_*`, and PATH with
/// the settings' prefix first.
pub(crate) fn step_env(
    settings: &RunSettings,
    place: &StepPlace<'_>,
    vars: &Vars,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    env.push(("SPUR_RUN_ID".into(), place.run_id.to_owned()));
    env.push(("SPUR_RUN_DIR".into(), place.run_dir.display().to_string()));
    env.push(("SPUR_STATE".into(), place.state.to_owned()));
    env.push(("SPUR_ITERATION".into(), place.iteration.to_string()));
    env.push(("SPUR_WORKFLOW".into(), place.workflow.to_owned()));
    env.push(("SPUR_RUNTIME".into(), super::render::RUNTIME.to_owned()));
    env.push((
        "SPUR_STATE_DIR".into(),
        settings.state_dir.root().display().to_string(),
    ));
    if let Some(socket) = &settings.run_socket {
        env.push((
            super::nested_call::RUN_SOCKET_VAR.into(),
            socket.path_for_steps().display().to_string(),
        ));
    }
    if let Some(bin) = &settings.spur_bin {
        env.push(("SPUR_BIN".into(), bin.display().to_string()));
    }
    if let Some(prefix) = &settings.path_prefix {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![prefix.clone()];
        dirs.extend(std::env::split_paths(&path));
        if let Ok(joined) = std::env::join_paths(dirs) {
            env.push(("PATH".into(), joined.to_string_lossy().into_owned()));
        }
    }
    env
}

/// The most bytes one environment entry (`NAME=value` and its NUL) may have: Linux refuses
/// to start a process with a longer one (`MAX_ARG_STRLEN`, 32 pages of 4 KiB: E2BIG).
pub(crate) const MAX_ENV_ENTRY: usize = 128 * 1024;

/// The first entry of `env` too large to export, as a coded message for the step that
/// would have failed with E2BIG; `None` when all fit.
pub(crate) fn too_large_to_export(env: &[(String, String)]) -> Option<String> {
    let (name, value) = env
        .iter()
        .find(|(name, value)| name.len() + value.len() + 2 > MAX_ENV_ENTRY)?;
    Some(super::actions::coded(
        crate::diagnostic::Code::RunVarTooLarge,
        format!(
            "var `{name}` is {} bytes, too large to export: every var is in the environment of a step's process, and one variable may hold at most {} bytes",
            value.len(),
            MAX_ENV_ENTRY - name.len() - 2
        ),
        "write the value to a file and pass its path in the var instead",
    ))
}

/// Vars spur provides: `__runId` and `spurBin` when the pipeline declares them and the
/// run left them empty / at their default.
pub(super) fn inject_builtin_vars(
    pipeline: &Pipeline,
    vars: &mut Vars,
    run_id: &RunId,
    settings: &RunSettings,
) {
    inject_vars_for(pipeline, vars, run_id.as_str(), settings);
}

/// [`inject_builtin_vars`] for any run id (a lifecycle instance's too).
pub(crate) fn inject_vars_for(
    pipeline: &Pipeline,
    vars: &mut Vars,
    run_id: &str,
    settings: &RunSettings,
) {
    if pipeline.var_default("__runId").is_some() && vars.get("__runId").is_none_or(String::is_empty)
    {
        vars.insert("__runId".into(), run_id.to_owned());
    }
    if let Some(bin) = &settings.spur_bin {
        let default = pipeline.var_default("spurBin");
        if default.is_some() && vars.get("spurBin").map(String::as_str) == default {
            vars.insert("spurBin".into(), bin.display().to_string());
        }
    }
}
