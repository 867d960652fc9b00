//! Action kinds: the built-in ones with their typed options, and any other name, which is
//! the plugin `spur-action-<name>`. An option the loader reports as missing is a field
//! without `Option`; one the action itself insists on at run time is an `Option` here.

use std::fmt;
use std::time::Duration;

use crate::pipeline::load::option_reader::OptionReader;
use crate::pipeline::templated::{EnvVars, ShellText, Templated};
use crate::source::Located;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ActionKind {
    Shell(ShellOptions),
    Note(NoteOptions),
    FileReadIntoVar(FileReadOptions),
    HitlConfirm(HitlConfirmOptions),
    HitlSelect(HitlSelectOptions),
    AgentRun(AgentRunOptions),
    ProofFingerprint(FingerprintOptions),
    RunArtifact(ArtifactOptions),
    CommandGate(CommandGateOptions),
    JsonUpdate(JsonUpdateOptions),
    VerdictDerive(VerdictDeriveOptions),
    VerifyRun(VerifyRunOptions),
    DoctorProbe(DoctorProbeOptions),
    FileExists(FileExistsActionOptions),
    FileRead(FileReadTextOptions),
    HitlInput(HitlInputOptions),
    EventEmit(EventEmitOptions),
    RuleCheck(RuleCheckOptions),
    ResponseValidate(ResponseValidateOptions),
    HttpRequest(HttpRequestOptions),
    /// Any other kind: the plugin `spur-action-<name>`, given the options as JSON.
    Plugin(String),
}

/// `shell`: `sh -c command`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ShellOptions {
    pub(crate) command: Templated<ShellText>,
    pub(crate) cwd: Option<Templated<String>>,
    pub(crate) timeout_ms: Option<Templated<Duration>>,
    pub(crate) env: Option<Templated<EnvVars>>,
}

/// `note`: a message for the run's log.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NoteOptions {
    pub(crate) message: Option<Templated<String>>,
}

/// `file.read.into-var`: a file's text into a var.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FileReadOptions {
    pub(crate) path: Templated<String>,
    pub(crate) var: Templated<String>,
    /// `allowOutside: true` lets `path` name a file outside the project root.
    pub(crate) allow_outside: Option<Templated<bool>>,
}

/// `hitl.confirm`: yes / no / cancel, into `var` too.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HitlConfirmOptions {
    pub(crate) prompt: Option<Templated<String>>,
    pub(crate) var: Option<Templated<String>>,
    pub(crate) decision: Option<DecisionOptions>,
}

/// `hitl.select`: one of `options`, into `var` too.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HitlSelectOptions {
    pub(crate) prompt: Option<Templated<String>>,
    /// Written `options:`.
    pub(crate) choices: Option<Templated<Vec<String>>>,
    pub(crate) var: Option<Templated<String>>,
    pub(crate) decision: Option<DecisionOptions>,
}

/// `hitl.input`: free text, into `var` (default `__hitlInput`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HitlInputOptions {
    pub(crate) prompt: Option<Templated<String>>,
    pub(crate) var: Option<Templated<String>>,
}

/// `file.exists`: ok when `path` exists (when it does not, with `negate: true`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FileExistsActionOptions {
    pub(crate) path: Templated<String>,
    pub(crate) negate: Option<Templated<bool>>,
}

/// `file.read`: a file's text, checked (size, UTF-8, inside the project), into `var` when
/// one is named.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FileReadTextOptions {
    pub(crate) path: Templated<String>,
    pub(crate) max_size: Option<Templated<u64>>,
    pub(crate) var: Option<Templated<String>>,
    pub(crate) allow_outside: Option<Templated<bool>>,
}

/// `event.emit`: a named event with a payload, recorded in the run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EventEmitOptions {
    pub(crate) name: Templated<String>,
    pub(crate) payload: Option<Templated<serde_json::Value>>,
}

/// `rule.check`: the rules of a preset (`.spur/rules/<preset>.yaml`), failing on findings
/// at or above `failOn`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RuleCheckOptions {
    pub(crate) preset: Option<Templated<String>>,
    pub(crate) rule: Option<Templated<String>>,
    pub(crate) fail_on: Option<Templated<String>>,
    pub(crate) cwd: Option<Templated<String>>,
}

/// `response.validate`: a response's `file:line` citations checked against the tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResponseValidateOptions {
    pub(crate) text: Option<Templated<String>>,
}

/// `http.request`: one request to an origin or host that `http.allow` of
/// `.spur/config.yaml` lists (run/actions/http_request.rs).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HttpRequestOptions {
    pub(crate) url: Templated<String>,
    pub(crate) method: Option<Templated<String>>,
    pub(crate) headers: Option<Templated<serde_json::Value>>,
    pub(crate) body: Option<Templated<String>>,
    pub(crate) fail_on_status: Option<Templated<serde_json::Value>>,
    pub(crate) timeout_ms: Option<Templated<Duration>>,
    pub(crate) max_response_bytes: Option<Templated<u64>>,
    pub(crate) redirect: Option<Templated<String>>,
    pub(crate) body_var: Option<Templated<String>>,
    pub(crate) status_var: Option<Templated<String>>,
    pub(crate) headers_var: Option<Templated<String>>,
}

/// `decision:` of an hitl action: who may answer it. The reference lets a DecisionMaker
/// (a model) answer from recorded evidence; spur has none, so `never` asks the operator (as
/// without the option) and `evidence` defers (see `run/actions/hitl.rs`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DecisionOptions {
    pub(crate) mode: Option<Templated<String>>,
    pub(crate) status_var: Option<Templated<String>>,
    pub(crate) evidence_nodes: Option<Templated<Vec<String>>>,
    pub(crate) summary_artifact: Option<Templated<String>>,
}

impl DecisionOptions {
    fn read(r: &mut OptionReader<'_>) -> Option<Self> {
        let mut d = r.map("decision")?;
        let options = Self {
            mode: d.optional("mode"),
            status_var: d.optional("statusVar"),
            evidence_nodes: d.optional("evidenceNodes"),
            summary_artifact: d.optional("summaryArtifact"),
        };
        d.finish();
        Some(options)
    }

    /// `mode: evidence`, as written.
    pub(crate) fn is_evidence(&self) -> bool {
        self.mode
            .as_ref()
            .and_then(Templated::written_str)
            .is_some_and(|m| m.value == "evidence")
    }
}

/// `agent.run`: the command `.spur/config.yaml` maps `agent` (else `defaults.agent`) to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AgentRunOptions {
    pub(crate) agent: Option<Templated<String>>,
    pub(crate) input: Option<Templated<String>>,
    pub(crate) role: Option<Templated<String>>,
    pub(crate) timeout_ms: Option<Templated<Duration>>,
    pub(crate) answer_file: Option<Templated<String>>,
    pub(crate) expect_file: Option<Templated<String>>,
    pub(crate) require_diff: Option<Templated<bool>>,
    /// `capture: true`: the agent's answer (its stdout, bounded) is kept in the run's record.
    pub(crate) capture: Option<Templated<bool>>,
    /// `mode: text | json`: the output the agent is asked for (`$SPUR_AGENT_MODE`).
    pub(crate) mode: Option<Templated<String>>,
}

/// `proof.fingerprint`: the tree's fingerprint into `var`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FingerprintOptions {
    pub(crate) var: Templated<String>,
    pub(crate) task_file: Option<Templated<String>>,
    pub(crate) expect: Option<Templated<String>>,
}

/// `run.artifact`: a path recorded in the run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ArtifactOptions {
    pub(crate) path: Option<Templated<String>>,
    pub(crate) artifact_kind: Option<Templated<String>>,
    /// The older spelling of `artifactKind`.
    pub(crate) kind: Option<Templated<String>>,
}

/// `command.gate`: `executable` with `args`, retried, PASS/FAIL into `resultFile`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CommandGateOptions {
    pub(crate) executable: Templated<String>,
    pub(crate) args: Option<Templated<Vec<String>>>,
    pub(crate) timeout_ms: Option<Templated<Duration>>,
    pub(crate) retry: Option<RetryOptions>,
    pub(crate) result_file: Option<Templated<String>>,
    pub(crate) soft_fail: Option<Templated<bool>>,
}

/// `retry:` of a command gate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RetryOptions {
    pub(crate) max_attempts: Option<Templated<u64>>,
    pub(crate) delay_ms: Option<Templated<u64>>,
    /// Retry only when the output contains one of these.
    pub(crate) on: Option<Templated<Vec<String>>>,
    /// `on` as YAML 1.1 spells a bare `on:` key: `true`.
    pub(crate) on_as_true: Option<Templated<Vec<String>>>,
}

/// `json.update`: a JSON file rewritten by a jq expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JsonUpdateOptions {
    pub(crate) path: Templated<String>,
    pub(crate) expr: Templated<String>,
}

/// `verdict.derive`: the verifier's answer file into the verdict artifact.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VerdictDeriveOptions {
    pub(crate) answer: Option<Templated<String>>,
    pub(crate) task: Option<Templated<String>>,
    pub(crate) wbs: Option<Templated<String>>,
}

/// `verify.run`: the verify gates of `.spur/config.yaml`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VerifyRunOptions {
    pub(crate) gate: Option<Templated<String>>,
    pub(crate) wbs: Option<Templated<String>>,
    pub(crate) soft_fail: Option<Templated<bool>>,
}

/// `doctor.probe`: `spur agent doctor`'s check of the run's agents, PASS/FAIL into
/// `resultFile`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DoctorProbeOptions {
    pub(crate) result_file: Option<Templated<String>>,
    pub(crate) agent: Option<Templated<String>>,
    /// Checked too when it differs from `agent` (the reference's implement executor).
    pub(crate) implement_agent: Option<Templated<String>>,
    /// More agents to check (spur's addition: a pipeline with a reviewer and a verifier).
    pub(crate) agents: Option<Templated<Vec<String>>>,
}

impl ActionKind {
    /// The built-in kinds, as written.
    pub(crate) const NAMES: [&'static str; 20] = [
        "shell",
        "note",
        "file.read.into-var",
        "hitl.confirm",
        "hitl.select",
        "agent.run",
        "proof.fingerprint",
        "run.artifact",
        "command.gate",
        "json.update",
        "verdict.derive",
        "verify.run",
        "doctor.probe",
        "file.exists",
        "file.read",
        "hitl.input",
        "event.emit",
        "rule.check",
        "response.validate",
        "http.request",
    ];

    /// The kind as written.
    pub(crate) fn name(&self) -> &str {
        match self {
            ActionKind::Shell(_) => "shell",
            ActionKind::Note(_) => "note",
            ActionKind::FileReadIntoVar(_) => "file.read.into-var",
            ActionKind::HitlConfirm(_) => "hitl.confirm",
            ActionKind::HitlSelect(_) => "hitl.select",
            ActionKind::AgentRun(_) => "agent.run",
            ActionKind::ProofFingerprint(_) => "proof.fingerprint",
            ActionKind::RunArtifact(_) => "run.artifact",
            ActionKind::CommandGate(_) => "command.gate",
            ActionKind::JsonUpdate(_) => "json.update",
            ActionKind::VerdictDerive(_) => "verdict.derive",
            ActionKind::VerifyRun(_) => "verify.run",
            ActionKind::DoctorProbe(_) => "doctor.probe",
            ActionKind::FileExists(_) => "file.exists",
            ActionKind::FileRead(_) => "file.read",
            ActionKind::HitlInput(_) => "hitl.input",
            ActionKind::EventEmit(_) => "event.emit",
            ActionKind::RuleCheck(_) => "rule.check",
            ActionKind::ResponseValidate(_) => "response.validate",
            ActionKind::HttpRequest(_) => "http.request",
            ActionKind::Plugin(name) => name,
        }
    }

    /// The vars the action sets besides `__hitlAnswer`, as written: the `var` of
    /// `file.read.into-var`, `proof.fingerprint` and the hitl kinds, an evidence
    /// decision's `statusVar`, and `http.request`'s `bodyVar`, `statusVar`, `headersVar`.
    /// Templated names are not among them.
    pub(crate) fn vars_set(&self) -> Vec<&Located<String>> {
        if let ActionKind::HttpRequest(o) = self {
            return [&o.body_var, &o.status_var, &o.headers_var]
                .into_iter()
                .flatten()
                .filter_map(Templated::written_str)
                .filter(|v| !v.value.contains("${"))
                .collect();
        }
        let (var, decision) = match self {
            ActionKind::FileReadIntoVar(o) => (Some(&o.var), None),
            ActionKind::ProofFingerprint(o) => (Some(&o.var), None),
            ActionKind::HitlConfirm(o) => (o.var.as_ref(), o.decision.as_ref()),
            ActionKind::HitlSelect(o) => (o.var.as_ref(), o.decision.as_ref()),
            ActionKind::HitlInput(o) => (o.var.as_ref(), None),
            ActionKind::FileRead(o) => (o.var.as_ref(), None),
            _ => (None, None),
        };
        let status = decision
            .filter(|d| d.is_evidence())
            .and_then(|d| d.status_var.as_ref());
        var.into_iter()
            .chain(status)
            .filter_map(Templated::written_str)
            .filter(|v| !v.value.contains("${"))
            .collect()
    }

    /// The kind `name` with its options read from `r`. Options a pipeline of the corpus
    /// writes that spur has no use for are accepted without a warning.
    pub(crate) fn read(name: &str, r: &mut OptionReader<'_>) -> ActionKind {
        match name {
            "shell" => ActionKind::Shell(ShellOptions {
                command: r.required("command"),
                cwd: r.optional("cwd"),
                timeout_ms: r.optional("timeoutMs"),
                env: r.optional("env"),
            }),
            "note" => ActionKind::Note(NoteOptions {
                message: r.optional("message"),
            }),
            "file.read.into-var" => ActionKind::FileReadIntoVar(FileReadOptions {
                path: r.required("path"),
                var: r.required("var"),
                allow_outside: r.optional("allowOutside"),
            }),
            "hitl.confirm" => ActionKind::HitlConfirm(HitlConfirmOptions {
                prompt: r.optional("prompt"),
                var: r.optional("var"),
                decision: DecisionOptions::read(r),
            }),
            "hitl.select" => ActionKind::HitlSelect(HitlSelectOptions {
                prompt: r.optional("prompt"),
                choices: r.optional("options"),
                var: r.optional("var"),
                decision: DecisionOptions::read(r),
            }),
            "agent.run" => ActionKind::AgentRun(AgentRunOptions {
                agent: r.optional("agent"),
                input: r.optional("input"),
                role: r.optional("role"),
                timeout_ms: r.optional("timeoutMs"),
                answer_file: r.optional("answerFile"),
                expect_file: r.optional("expectFile"),
                require_diff: r.optional("requireDiff"),
                capture: r.optional("capture"),
                mode: r.optional("mode"),
            }),
            "proof.fingerprint" => ActionKind::ProofFingerprint(FingerprintOptions {
                var: r.required("var"),
                task_file: r.optional("taskFile"),
                expect: r.optional("expect"),
            }),
            "run.artifact" => ActionKind::RunArtifact(ArtifactOptions {
                path: r.optional("path"),
                artifact_kind: r.optional("artifactKind"),
                kind: r.unlisted("kind"),
            }),
            "command.gate" => {
                r.ignore(&["id"]);
                ActionKind::CommandGate(CommandGateOptions {
                    executable: r.required("executable"),
                    args: r.optional("args"),
                    timeout_ms: r.optional("timeoutMs"),
                    retry: r.map("retry").map(|mut retry| {
                        let options = RetryOptions {
                            max_attempts: retry.optional("maxAttempts"),
                            delay_ms: retry.optional("delayMs"),
                            on: retry.optional("on"),
                            on_as_true: retry.unlisted("true"),
                        };
                        retry.finish();
                        options
                    }),
                    result_file: r.optional("resultFile"),
                    soft_fail: r.optional("softFail"),
                })
            }
            "json.update" => ActionKind::JsonUpdate(JsonUpdateOptions {
                path: r.required("path"),
                expr: r.required("expr"),
            }),
            "verdict.derive" => ActionKind::VerdictDerive(VerdictDeriveOptions {
                answer: r.optional("answer"),
                task: r.optional("task"),
                wbs: r.optional("wbs"),
            }),
            "verify.run" => ActionKind::VerifyRun(VerifyRunOptions {
                gate: r.optional("gate"),
                wbs: r.optional("wbs"),
                soft_fail: r.optional("softFail"),
            }),
            "doctor.probe" => {
                // spur checks in process: it does not start `spurBin agent doctor`.
                r.ignore(&["spurBin"]);
                ActionKind::DoctorProbe(DoctorProbeOptions {
                    result_file: r.optional("resultFile"),
                    agent: r.optional("agent"),
                    implement_agent: r.optional("implementAgent"),
                    agents: r.optional("agents"),
                })
            }
            "file.exists" => ActionKind::FileExists(FileExistsActionOptions {
                path: r.required("path"),
                negate: r.optional("negate"),
            }),
            "file.read" => ActionKind::FileRead(FileReadTextOptions {
                path: r.required("path"),
                max_size: r.optional("maxSize"),
                var: r.optional("var"),
                allow_outside: r.optional("allowOutside"),
            }),
            "hitl.input" => ActionKind::HitlInput(HitlInputOptions {
                prompt: r.optional("prompt"),
                var: r.optional("var"),
            }),
            "event.emit" => ActionKind::EventEmit(EventEmitOptions {
                name: r.required("name"),
                payload: r.optional("payload"),
            }),
            "rule.check" => ActionKind::RuleCheck(RuleCheckOptions {
                preset: r.optional("preset"),
                rule: r.optional("rule"),
                fail_on: r.optional("failOn"),
                cwd: r.optional("cwd"),
            }),
            "response.validate" => ActionKind::ResponseValidate(ResponseValidateOptions {
                text: r.optional("text"),
            }),
            "http.request" => ActionKind::HttpRequest(HttpRequestOptions {
                url: r.required("url"),
                method: r.optional("method"),
                headers: r.optional("headers"),
                body: r.optional("body"),
                fail_on_status: r.optional("failOnStatus"),
                timeout_ms: r.optional("timeoutMs"),
                max_response_bytes: r.optional("maxResponseBytes"),
                redirect: r.optional("redirect"),
                body_var: r.optional("bodyVar"),
                status_var: r.optional("statusVar"),
                headers_var: r.optional("headersVar"),
            }),
            other => {
                r.free_form();
                ActionKind::Plugin(other.to_owned())
            }
        }
    }
}

impl fmt::Display for ActionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
