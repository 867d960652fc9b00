//! Every stable code spur reports, in one enum: pipeline findings, run and store errors,
//! answer-lint findings, CLI failures and verdict warnings. The strings are part of the
//! JSON contract; `book/src/diagnostic-codes.md` lists them and what each means.

use std::fmt;

use serde::Serialize;

/// Declares [`Code`]: each variant's one-line `///` meaning and its string, once.
macro_rules! codes {
    ($( #[doc = $meaning:literal] $variant:ident = $code:literal, )*) => {
        /// A stable diagnostic code. Never changes once released.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $( #[doc = $meaning] $variant, )*
        }

        impl Code {
            /// Every code, in the book's order.
            pub const ALL: &'static [Code] = &[$( Code::$variant, )*];

            /// The code as it appears in output, e.g. `spur::check::unknown-state`.
            pub(crate) const fn as_str(self) -> &'static str {
                match self {
                    $( Code::$variant => $code, )*
                }
            }

            /// What the code means, in one line (the book's wording).
            pub fn meaning(self) -> &'static str {
                match self {
                    $( Code::$variant => $meaning.trim(), )*
                }
            }
        }
    };
}

codes! {
    /// the pipeline file cannot be opened or read, or is a directory
    LoadUnreadable = "spur::load::unreadable",
    /// the pipeline file is over 8 MiB (checked before reading)
    LoadTooLarge = "spur::load::too-large",
    /// the pipeline file is not UTF-8
    LoadNotUtf8 = "spur::load::not-utf8",
    /// the pipeline file is empty or only comments
    LoadEmpty = "spur::load::empty",
    /// the pipeline file is not valid YAML
    LoadYaml = "spur::load::yaml",
    /// the YAML is nested too deep, has too many nodes, or is an alias bomb
    LoadTooComplex = "spur::load::too-complex",
    /// the pipeline file holds more than one YAML document
    LoadMultipleDocuments = "spur::load::multiple-documents",
    /// the pipeline document is a list or a scalar, not a mapping
    LoadNotAMapping = "spur::load::not-a-mapping",
    /// the pipeline kind is known but not supported (no kind is reported so since `transition-flow` loads)
    LoadUnsupportedKind = "spur::load::unsupported-kind",

    /// a key the pipeline format does not know (with did-you-mean)
    CheckUnknownKey = "spur::check::unknown-key",
    /// a key, var or option given twice
    CheckDuplicateKey = "spur::check::duplicate-key",
    /// a required key is absent
    CheckMissingKey = "spur::check::missing-key",
    /// a value of the wrong type (or an empty name)
    CheckWrongType = "spur::check::wrong-type",
    /// an unknown pipeline `kind`
    CheckUnknownKind = "spur::check::unknown-kind",
    /// a transition-flow's `extensions` (modules in the reference's language): spur runs plugins from PATH
    CheckExtensions = "spur::check::extensions",
    /// two states with the same id
    CheckDuplicateState = "spur::check::duplicate-state",
    /// a reference to a state that is not declared
    CheckUnknownState = "spur::check::unknown-state",
    /// a failure state that has outgoing transitions
    CheckFailureNotTerminal = "spur::check::failure-not-terminal",
    /// a transition out of a terminal state
    CheckTransitionFromTerminal = "spur::check::transition-from-terminal",
    /// the initial state is a declared terminal state
    CheckInitialTerminal = "spur::check::initial-terminal",
    /// `iterationBound` is not a positive integer
    CheckIterationBound = "spur::check::iteration-bound",
    /// an `onError` value other than `fail` or `continue`
    CheckOnError = "spur::check::on-error",
    /// an unknown `terminalReason`
    CheckTerminalReason = "spur::check::terminal-reason",
    /// an invalid var or environment variable name
    CheckVarName = "spur::check::var-name",
    /// a var named like a built-in (`task`, `state`, `node`, `iteration`, `run`, `runtime`)
    CheckReservedVar = "spur::check::reserved-var",
    /// a var default that is not a string (warning; read as a string)
    CheckVarNotString = "spur::check::var-not-string",
    /// a `secrets:` name that is neither a declared var nor an `env.allow` name
    CheckSecretUnknown = "spur::check::secret-unknown",
    /// `wbs` under `secrets:`: the task id names files and is recorded as such
    CheckSecretTaskId = "spur::check::secret-task-id",
    /// a malformed `${…}` placeholder
    CheckTemplate = "spur::check::template",
    /// a `${vars.X}` naming no declared var: in an action's options, or one edit away from a declared var (a typo)
    CheckUndefinedVar = "spur::check::undefined-var",
    /// a `${vars.X}` in a guard's options that resembles no declared var (warning; may come from `--var`)
    CheckUndeclaredVar = "spur::check::undeclared-var",
    /// `${env.X}` for a variable not listed under `env.allow`
    CheckEnvNotAllowed = "spur::check::env-not-allowed",
    /// a template in shell text where spur cannot place a reference to its value with certainty
    CheckShellTemplate = "spur::check::shell-template",
    /// a jq guard expression that does not compile
    CheckJqCompile = "spur::check::jq-compile",
    /// an action kind that is neither built in nor a plugin on PATH (error when one typo away, else warning)
    CheckUnknownActionKind = "spur::check::unknown-action-kind",
    /// a guard kind that is neither built in nor a plugin on PATH (error when one typo away, else warning)
    CheckUnknownGuardKind = "spur::check::unknown-guard-kind",
    /// an action or guard without an option it needs
    CheckMissingOption = "spur::check::missing-option",
    /// an option the action or guard does not know (warning; ignored)
    CheckUnknownOption = "spur::check::unknown-option",
    /// an option written without templates whose value its action or guard cannot take (e.g. `timeoutMs: soon`)
    CheckOptionType = "spur::check::option-type",
    /// a `decision:` of an hitl action that the reference would refuse
    CheckDecision = "spur::check::decision",
    /// an `agent.run` whose agent `.spur/config.yaml` does not map (warning)
    CheckUnmappedAgent = "spur::check::unmapped-agent",
    /// a state from which no terminal state can be reached
    CheckTrapState = "spur::check::trap-state",
    /// a state no transition leads to from the initial state (warning)
    CheckUnreachableState = "spur::check::unreachable-state",
    /// a transition after an unconditional one from the same state (warning)
    CheckShadowedTransition = "spur::check::shadowed-transition",
    /// a shell guard that could be a native `jq` guard (note)
    CheckShellJqGuard = "spur::check::shell-jq-guard",

    /// the pipeline has errors, so `spur run` does not start it
    RunPipelineInvalid = "spur::run::pipeline-invalid",
    /// the pipeline uses vars that have no value
    RunUnsetVar = "spur::run::unset-var",
    /// the pipeline has no state of that name
    RunUnknownState = "spur::run::unknown-state",
    /// a template cannot be rendered at run time
    RunTemplate = "spur::run::template",
    /// a guard does not compile at run time
    RunGuardCompile = "spur::run::guard-compile",
    /// another run holds the task's lock
    RunLocked = "spur::run::locked",
    /// the task lock cannot be opened
    RunLockIo = "spur::run::lock-io",
    /// not a run id
    RunInvalidRunId = "spur::run::invalid-run-id",
    /// no run with that id in the state directory
    RunNotFound = "spur::run::not-found",
    /// the run being resumed has already finished
    RunFinished = "spur::run::finished",
    /// `spur retry` was given a run that did not fail, or has no state to go on from
    RunNotRetryable = "spur::run::not-retryable",
    /// the task var `wbs` is empty while the pipeline's steps use it
    RunEmptyTask = "spur::run::empty-task",
    /// no run id of the state directory is, or starts with, the run reference given
    RunRefUnknown = "spur::run::ref-unknown",
    /// the run reference given is the start of more than one run id
    RunRefAmbiguous = "spur::run::ref-ambiguous",
    /// the pipeline changed since the run started
    RunPipelineChanged = "spur::run::pipeline-changed",
    /// an action started and never finished, so it may or may not have run
    RunAmbiguousAction = "spur::run::ambiguous-action",
    /// the run is paused for a question and needs `--answer`
    RunAnswerRequired = "spur::run::answer-required",
    /// the answer is not one of the question's choices
    RunAnswerInvalid = "spur::run::answer-invalid",
    /// `--answer` was given but the run is not paused for a question
    RunAnswerUnexpected = "spur::run::answer-unexpected",
    /// the run journal cannot be written
    RunJournalIo = "spur::run::journal-io",
    /// the durable-execution engine (Restate) a run is journaled on failed a step
    RunEngine = "spur::run::engine",
    /// an action on a run engine may run longer than the engine waits for a journaled step
    RunActionTooLong = "spur::run::action-too-long",
    /// the run directory cannot be created
    RunRunDir = "spur::run::run-dir",
    /// `agents:` in `.spur/config.yaml` is not agent name → `{preset: …}` or `{command: …}` (fails `agent.run`, `spur agent doctor`)
    RunAgentConfig = "spur::run::agent-config",
    /// `defaults:` in `.spur/config.yaml` has the wrong shape, a bad timeout or an unknown key
    RunDefaultsConfig = "spur::run::defaults-config",
    /// a var is too large to be exported to a step's process (fails the step)
    RunVarTooLarge = "spur::run::var-too-large",
    /// a shell step's or shell guard's `cwd` is not a directory (fails the step)
    RunCwdMissing = "spur::run::cwd-missing",
    /// `file.read.into-var` names a file outside the project root without `allowOutside: true`
    RunReadOutsideProject = "spur::run::read-outside-project",
    /// `file.read.into-var` read bytes that are not UTF-8
    RunReadNotUtf8 = "spur::run::read-not-utf8",
    /// `secrets:` in `.spur/config.yaml` is not a list of names (no run starts or resumes)
    RunSecretConfig = "spur::run::secret-config",
    /// a resumed run's secret var was recorded redacted and not given again with `--var`
    RunSecretNotGiven = "spur::run::secret-not-given",
    /// `spur continue --var` names a var that is not secret (only secrets are given again)
    RunNotASecret = "spur::run::not-a-secret",
    /// a `rule.check` preset (`.spur/rules/<preset>.yaml`) is missing or does not read
    RunRuleConfig = "spur::run::rule-config",
    /// `http:` in `.spur/config.yaml` is not an allow-list of origins and hosts
    RunHttpConfig = "spur::run::http-config",
    /// `spur run --worktree` could not make, or `continue`/`retry` could not reopen, the run's git worktree; on a fleet, the run's branch could not be pushed to the remote
    RunWorktree = "spur::run::worktree",
    /// `run:` in `.spur/config.yaml` is not `worktree: true|false`
    RunWorktreeConfig = "spur::run::worktree-config",
    /// `http.request` refused a request before connecting (scheme, host, credentials, bounds)
    RunHttpRefused = "spur::run::http-refused",
    /// `budgets:` or `prices:` in `.spur/config.yaml` has the wrong shape, a bad number or an unknown key
    CostConfig = "spur::cost::config",
    /// an agent step did not start, or was stopped, because a budget of `budgets:` is spent (fails the step)
    CostBudgetExceeded = "spur::cost::budget-exceeded",
    /// a step's usage report (`{"spurUsage": …}` on stderr, or the agent's own output) is too large or malformed (fails the step)
    CostReportRefused = "spur::cost::report-refused",
    /// a task's usage ledger cannot be read or written, or its chain is broken
    CostLedger = "spur::cost::ledger",

    /// a run journal cannot be read
    JournalUnreadable = "spur::journal::unreadable",
    /// a journal line other than a torn last one is not a record
    JournalCorrupt = "spur::journal::corrupt",
    /// the journal's sequence numbers have a gap
    JournalSeqGap = "spur::journal::seq-gap",
    /// the journal is empty or does not start with run-started
    JournalNoStart = "spur::journal::no-start",
    /// a journal line is not chained to the one before it (edited, inserted or removed)
    JournalChainBroken = "spur::journal::chain-broken",
    /// the journal was written by a newer spur (a newer format version)
    JournalNewerFormat = "spur::journal::newer-format",
    /// the journal was written by an older spur (no format version), so it is not resumed
    JournalOlderFormat = "spur::journal::older-format",
    /// a journal record does not fit the run before it or its pipeline, so it is not resumed
    JournalRecordDoesNotFit = "spur::journal::record-does-not-fit",
    /// the journal is not sealed with a key (format 1: before keyed chains, or rewritten without the key), so it is not resumed
    JournalUnkeyed = "spur::journal::unkeyed",
    /// a journal's seals cannot be checked (its key is missing, or another key sealed it), so it is not resumed
    JournalUnverifiable = "spur::journal::unverifiable",

    /// `--var` is not of the form name=value
    UsageVarSyntax = "spur::usage::var-syntax",
    /// an invalid var name on the command line
    UsageVarName = "spur::usage::var-name",
    /// `--vars` is not a JSON object of scalars
    UsageVarsJson = "spur::usage::vars-json",
    /// `--var` or `--vars` names a var the pipeline does not declare
    UsageUndeclaredVar = "spur::usage::undeclared-var",
    /// not a valid task id (wbs)
    UsageInvalidWbs = "spur::usage::invalid-wbs",
    /// not a valid task status
    UsageInvalidStatus = "spur::usage::invalid-status",
    /// `--force-done` without a `--reason` that has a visible character
    UsageBlankForceReason = "spur::usage::blank-force-reason",
    /// `--force-done` on a run whose pipeline declares no `wbs`
    UsageForceDoneWithoutTask = "spur::usage::force-done-without-task",
    /// `--force-done` with a status other than done
    UsageForceDoneNeedsDone = "spur::usage::force-done-needs-done",
    /// the current directory cannot be read
    UsageCwd = "spur::usage::cwd",
    /// the run engine (`--engine`, `engine:` of the config) is unknown or lacks its URL
    UsageEngine = "spur::usage::engine",
    /// there is no state directory (`.spur/`) here or above, and the command does not make one
    UsageNoStateDir = "spur::usage::no-state-dir",
    /// a `spur` call from a step that its run refuses: a verb it does not take, `--state-dir`, or `--force-done`
    UsageNestedRefused = "spur::usage::nested-refused",
    /// a `spur` call from a step cannot reach its run's socket (`SPUR_RUN_SOCKET`)
    UsageNestedUnreachable = "spur::usage::nested-unreachable",

    /// done is set only through the done gate
    TaskDoneNeedsGate = "spur::task::done-needs-gate",
    /// a task ledger cannot be read
    TaskLedgerReadFailed = "spur::task::ledger-read-failed",
    /// a task ledger record does not fit its chain (edited, reordered, removed or forged)
    TaskLedgerBroken = "spur::task::ledger-broken",
    /// a task ledger record of a format version this spur does not read
    TaskLedgerFormat = "spur::task::ledger-format",
    /// a task ledger's seals cannot be checked (its key is missing, or another key sealed it)
    TaskLedgerUnverifiable = "spur::task::ledger-unverifiable",
    /// a task ledger cannot be appended to (the status did not change)
    TaskLedgerWriteFailed = "spur::task::ledger-write-failed",
    /// the change is in the ledger, but the task view cannot be rewritten from it
    TaskViewWriteFailed = "spur::task::view-write-failed",
    /// the verdict artifact was written, but its write could not be recorded in the task ledger
    TaskVerdictUnrecorded = "spur::task::verdict-unrecorded",
    /// `doneGate:` in `.spur/config.yaml` has the wrong shape, a wrong value or an unknown key
    TaskDoneGateConfig = "spur::task::done-gate-config",
    /// the task's data lock cannot be taken (nothing was written)
    TaskDataLock = "spur::task::data-lock",
    /// a section name the task format does not have
    TaskUnknownSection = "spur::task::unknown-section",
    /// the task lifecycle has no transition between the two statuses
    TaskTransitionDenied = "spur::task::transition-denied",
    /// `spur task check --as STATUS` does not pass, so the task does not move to that status
    TaskCheckFailed = "spur::task::check-failed",
    /// the project's task or feature lifecycle (`.spur/workflows/<kind>-lifecycle.yaml`) cannot be used
    TaskLifecyclePipeline = "spur::task::lifecycle-pipeline",
    /// a feature id, name or value that is not allowed (nothing was written)
    FeatureInvalid = "spur::feature::invalid",
    /// no feature file for the id (or several)
    FeatureNotFound = "spur::feature::not-found",
    /// a feature file cannot be written (nothing was kept)
    FeatureWrite = "spur::feature::write",
    /// `spur feature check` does not pass, or the feature lifecycle refused a status change
    FeatureRefused = "spur::feature::refused",
    /// a new task's value is not allowed, or its folder is outside the project (nothing was created)
    TaskCreateInvalid = "spur::task::create-invalid",
    /// a new task file cannot be written (nothing was kept)
    TaskCreateFailed = "spur::task::create-failed",
    /// the batch file cannot be read or is not a task batch (nothing was created)
    TaskBatchInvalid = "spur::task::batch-invalid",

    /// the task file has no frontmatter
    TaskCheckFrontmatterMissing = "spur::task-check::frontmatter-missing",
    /// the task file's frontmatter is not readable YAML or not a mapping
    TaskCheckFrontmatterUnreadable = "spur::task-check::frontmatter-unreadable",
    /// the frontmatter has no `name`
    TaskCheckNameMissing = "spur::task-check::name-missing",
    /// the frontmatter has no `status`
    TaskCheckStatusMissing = "spur::task-check::status-missing",
    /// the frontmatter's `status` is not a task status
    TaskCheckStatusInvalid = "spur::task-check::status-invalid",
    /// a frontmatter value the task format does not allow (`priority`, `template`, `schema_version`)
    TaskCheckFieldInvalid = "spur::task-check::field-invalid",
    /// a section the status requires is absent
    TaskCheckMissingSection = "spur::task-check::missing-section",
    /// a section the status forbids is present
    TaskCheckForbiddenSection = "spur::task-check::forbidden-section",
    /// the task file's requirements or acceptance criteria cannot be read (an id twice, an unclosed fence)
    TaskCheckTaskFile = "spur::task-check::task-file",
    /// at testing or done, the task file declares no requirement id
    TaskCheckRequirementIds = "spur::task-check::requirement-ids",
    /// a required Requirements section holds only placeholders
    TaskCheckRequirementsEmpty = "spur::task-check::requirements-empty",
    /// Requirements is mostly not R-numbered items
    TaskCheckRequirementsFormat = "spur::task-check::requirements-format",
    /// a required Acceptance Criteria section holds only placeholders
    TaskCheckAcEmpty = "spur::task-check::ac-empty",
    /// Acceptance Criteria has text but no checklist item or scenario
    TaskCheckAcChecklist = "spur::task-check::ac-checklist",
    /// Solution cites no `file:line`
    TaskCheckSolutionFileLine = "spur::task-check::solution-file-line",
    /// Review has no P1–P4 findings table
    TaskCheckReviewPriorityTable = "spur::task-check::review-priority-table",
    /// a Solution or Testing section the status requires holds only placeholders
    TaskCheckRequiredSectionPlaceholder = "spur::task-check::required-section-placeholder",
    /// Plan is prose, not a checklist or table
    TaskCheckPlanFormat = "spur::task-check::plan-format",
    /// a done or cancelled task carries unchecked boxes
    TaskCheckUncheckedChecklist = "spur::task-check::unchecked-checklist",
    /// Review's last verdict is not passing while Testing records PASS
    TaskCheckReviewTestingContradiction = "spur::task-check::review-testing-contradiction",
    /// the task names no feature (`feature_id`)
    TaskCheckMissingFeatureId = "spur::task-check::missing-feature-id",
    /// the task's feature has no feature file
    TaskCheckFeatureNotFound = "spur::task-check::feature-not-found",
    /// Design is present but holds only placeholders
    TaskCheckDesignPlaceholder = "spur::task-check::design-placeholder",

    /// not an entity key (`task:<wbs>` or `feature:<id>`)
    LifecycleEntity = "spur::lifecycle::entity",
    /// the pipeline's name cannot name a lifecycle's directory
    LifecyclePipelineName = "spur::lifecycle::pipeline-name",
    /// the pipeline does not declare the var the entity binds (`wbs`, `featureId`)
    LifecycleEntityVar = "spur::lifecycle::entity-var",
    /// a state the request names is not one of the pipeline's
    LifecycleUnknownState = "spur::lifecycle::unknown-state",
    /// a task's lifecycle state that is not a task status
    LifecycleNotAStatus = "spur::lifecycle::not-a-status",
    /// `--from` for a task, whose status is its ledger's
    LifecycleTaskStatus = "spur::lifecycle::task-status",
    /// the instance's journal is not the lifecycle journal of the entity
    LifecycleWrongInstance = "spur::lifecycle::wrong-instance",
    /// the state directory cannot be written for a lifecycle
    LifecycleIo = "spur::lifecycle::io",
    /// a requested transition was refused (no such transition, a guard, the done gate)
    LifecycleDenied = "spur::lifecycle::denied",

    /// no task file for the task id
    TaskFileNotFound = "spur::task-file::not-found",
    /// several task files match the task id
    TaskFileAmbiguous = "spur::task-file::ambiguous",
    /// the task file cannot be read
    TaskFileUnreadable = "spur::task-file::unreadable",
    /// the task file declares no requirement ids
    TaskFileNoRequirements = "spur::task-file::no-requirements",
    /// the task file declares a requirement id twice
    TaskFileDuplicateRequirement = "spur::task-file::duplicate-requirement",
    /// the task file declares an acceptance criterion id twice
    TaskFileDuplicateCriterion = "spur::task-file::duplicate-criterion",
    /// the task file opens frontmatter or a code fence it never closes
    TaskFileUnclosed = "spur::task-file::unclosed",
    /// the task file has a gherkin scenario with no title
    TaskFileUntitledScenario = "spur::task-file::untitled-scenario",
    /// the task file cannot be written (it is as it was)
    TaskFileUnwritable = "spur::task-file::unwritable",
    /// a frontmatter key was to be set in a task file that has no frontmatter
    TaskFileNoFrontmatter = "spur::task-file::no-frontmatter",
    /// the task file's frontmatter is not readable YAML or not a mapping
    TaskFileFrontmatter = "spur::task-file::frontmatter",

    /// no SSH signing key is configured for done certificates
    CertNoSigningKey = "spur::cert::no-signing-key",
    /// no principal is configured to sign done certificates as
    CertNoPrincipal = "spur::cert::no-principal",
    /// the task file cannot be bound into the certificate (ambiguous or unreadable)
    CertTaskFile = "spur::cert::task-file",
    /// the tree changed between the gate's check and the certificate (none was written)
    CertTreeChanged = "spur::cert::tree-changed",
    /// `ssh-keygen -Y sign` failed or is missing, or its signature does not verify
    CertSignFailed = "spur::cert::sign-failed",
    /// the certificate file cannot be written
    CertWriteFailed = "spur::cert::write-failed",
    /// the `allowed_signers` file is missing, unreadable or has a line that does not parse
    CertAllowedSigners = "spur::cert::allowed-signers",
    /// the task files cannot be listed
    CertTaskFilesUnreadable = "spur::cert::task-files-unreadable",
    /// a task file claims done and has no certificate
    CertMissing = "spur::cert::missing",
    /// a certificate file that cannot be read or has the wrong shape
    CertMalformed = "spur::cert::malformed",
    /// a certificate whose signature does not verify (edited after signing, or not SSHSIG for spur)
    CertBadSignature = "spur::cert::bad-signature",
    /// a certificate signed by a key `allowed_signers` does not allow for its principal
    CertUnknownSigner = "spur::cert::unknown-signer",
    /// a certificate of another task, or of a task file whose requirements changed since
    CertMismatch = "spur::cert::mismatch",
    /// a certificate of a done the check does not accept (forced or external, without `--accept`)
    CertNotAccepted = "spur::cert::not-accepted",
    /// a task file that claims done cannot be read
    CertTaskFileUnreadable = "spur::cert::task-file-unreadable",

    /// the audit log cannot be written (the override was not applied)
    AuditWriteFailed = "spur::audit::write-failed",
    /// the audit log cannot be read
    AuditReadFailed = "spur::audit::read-failed",
    /// an audit record of a format version this spur does not read
    AuditFormat = "spur::audit::format",

    /// no variable names a place for spur's key (`SPUR_KEY_FILE`, `XDG_STATE_HOME`, `HOME`)
    KeyNoPlace = "spur::key::no-place",
    /// the key file cannot be read
    KeyUnreadable = "spur::key::unreadable",
    /// the key file is refused: others can read it, it is not a regular file, not yours, or not a key
    KeyRefused = "spur::key::refused",
    /// a new key file cannot be made
    KeyCreateFailed = "spur::key::create-failed",
    /// the key file is missing and records sealed with a key exist: no new key is made over them
    KeyMissing = "spur::key::missing",
    /// `spur key init` found a key file already there
    KeyExists = "spur::key::exists",

    /// a snapshot of the gate's policy cannot be written to `<protected>/policies/`
    PolicyStoreFailed = "spur::policy::store-failed",
    /// a run's pinned policy cannot be found or does not match the hash its journal recorded
    PolicyPinned = "spur::policy::pinned",
    /// the gate's policy in `.spur/config.yaml` is not the one a person approved (`spur policy approve`)
    PolicyUnapproved = "spur::policy::unapproved",
    /// the approval of the gate's policy was edited or written without the key: it approves nothing
    PolicyApprovalTampered = "spur::policy::approval-tampered",
    /// the approval of the gate's policy was sealed with a key that is not at hand: it approves nothing
    PolicyApprovalUnverifiable = "spur::policy::approval-unverifiable",
    /// the approval of the gate's policy cannot be read or written
    PolicyApprovalUnusable = "spur::policy::approval-unusable",
    /// `spur policy approve` from a step of a run: an approval comes from a person
    PolicyApprovalFromStep = "spur::policy::approval-from-step",

    /// the verdict ledger cannot be read
    LedgerUnreadable = "spur::ledger::unreadable",
    /// the verdict ledger cannot be appended to
    LedgerUnwritable = "spur::ledger::unwritable",

    /// the verdict artifact cannot be written
    VerdictWriteFailed = "spur::verdict::write-failed",
    /// checks cannot be appended to the verdict artifact
    VerdictNotAppendable = "spur::verdict::not-appendable",

    /// the verify configuration cannot be read
    VerifyConfigUnreadable = "spur::verify::config-unreadable",
    /// the verify configuration has errors (listed with it)
    VerifyInvalidConfig = "spur::verify::invalid-config",
    /// the verify configuration is not valid YAML or has the wrong shape
    VerifyYaml = "spur::verify::yaml",
    /// a gate name that cannot name an evidence file
    VerifyInvalidGateName = "spur::verify::invalid-gate-name",
    /// a gate with both `command` and `executable`
    VerifyCommandConflict = "spur::verify::command-conflict",
    /// a gate with `args` but no `executable`
    VerifyArgsWithoutExecutable = "spur::verify::args-without-executable",
    /// a gate with an empty `command` or `executable`
    VerifyEmptyCommand = "spur::verify::empty-command",
    /// an `expectFile` or `findingsFile` outside the project
    VerifyPathOutsideProject = "spur::verify::path-outside-project",
    /// an unknown gate severity
    VerifyInvalidSeverity = "spur::verify::invalid-severity",
    /// a count or timeout of 0
    VerifyZero = "spur::verify::zero",
    /// a gate needs a gate that is not configured
    VerifyUnknownNeed = "spur::verify::unknown-need",
    /// gates need each other in a cycle
    VerifyNeedsCycle = "spur::verify::needs-cycle",
    /// `--gate` names no gate of the configuration
    VerifyUnknownGate = "spur::verify::unknown-gate",
    /// the gate is not configured
    VerifyUnconfiguredGate = "spur::verify::unconfigured-gate",
    /// another verify run of the same scope is in progress
    VerifyBusy = "spur::verify::busy",
    /// the verify lock cannot be taken
    VerifyLock = "spur::verify::lock",
    /// the evidence directory cannot be created
    VerifyEvidenceDir = "spur::verify::evidence-dir",
    /// the verify report cannot be written
    VerifyReportUnwritable = "spur::verify::report-unwritable",
    /// a file or directory of the project tree cannot be read, so the tree fingerprint cannot be taken
    TreeUnreadable = "spur::tree::unreadable",
    /// a `doneGate.fingerprintExclude` glob does not parse
    TreeInvalidExclude = "spur::tree::invalid-exclude",

    /// the answer file cannot be read
    AnswerUnreadable = "spur::answer::unreadable",
    /// the project root cannot be used to check anchors
    AnswerProjectRoot = "spur::answer::project-root",
    /// the derived verdict artifact cannot be written
    AnswerWriteFailed = "spur::answer::write-failed",
    /// the answer is over 8 MiB (not read)
    AnswerTooLarge = "spur::answer::too-large",
    /// the answer is not UTF-8 text
    AnswerNotUtf8 = "spur::answer::not-utf8",
    /// no `Verdict:` line
    AnswerMissingVerdictLine = "spur::answer::missing-verdict-line",
    /// a second `Verdict:` line
    AnswerDuplicateVerdictLine = "spur::answer::duplicate-verdict-line",
    /// the `Verdict:` value is not PASS, PARTIAL or FAIL
    AnswerInvalidVerdictLine = "spur::answer::invalid-verdict-line",
    /// the `Verdict:` line differs from the rows' verdict (warning)
    AnswerVerdictLineDisagrees = "spur::answer::verdict-line-disagrees",
    /// a MET criterion with only static evidence was written PARTIAL (warning)
    AnswerEvidenceRuleDowngrade = "spur::answer::evidence-rule-downgrade",
    /// a second requirements or AC table
    AnswerDuplicateTable = "spur::answer::duplicate-table",
    /// a `Req`/`AC` table with other columns
    AnswerTableHeaderMismatch = "spur::answer::table-header-mismatch",
    /// a table header without a delimiter row
    AnswerMalformedTable = "spur::answer::malformed-table",
    /// a row without its closing pipe (it may have been cut off)
    AnswerIncompleteRow = "spur::answer::incomplete-row",
    /// a row with more or fewer cells than its table
    AnswerWrongColumnCount = "spur::answer::wrong-column-count",
    /// a task requirement has no row
    AnswerMissingRequirement = "spur::answer::missing-requirement",
    /// a requirement has two rows
    AnswerDuplicateRequirement = "spur::answer::duplicate-requirement",
    /// a row names a requirement the task does not have
    AnswerUnknownRequirement = "spur::answer::unknown-requirement",
    /// a task acceptance criterion has no row
    AnswerMissingAc = "spur::answer::missing-ac",
    /// a criterion has two rows
    AnswerDuplicateAc = "spur::answer::duplicate-ac",
    /// the AC cell names no criterion
    AnswerUnresolvedAc = "spur::answer::unresolved-ac",
    /// the AC cell names several criteria
    AnswerAmbiguousAc = "spur::answer::ambiguous-ac",
    /// the answer adds a tag the task does not give the criterion
    AnswerUndeclaredAcTag = "spur::answer::undeclared-ac-tag",
    /// not a valid row status
    AnswerInvalidStatus = "spur::answer::invalid-status",
    /// not a valid evidence type
    AnswerInvalidEvidenceType = "spur::answer::invalid-evidence-type",
    /// an empty evidence cell
    AnswerEmptyEvidence = "spur::answer::empty-evidence",
    /// a MET row cites no `file:line`
    AnswerMissingAnchor = "spur::answer::missing-anchor",
    /// a glob where an anchor should be
    AnswerGlobAnchor = "spur::answer::glob-anchor",
    /// a directory where a file should be
    AnswerDirectoryAnchor = "spur::answer::directory-anchor",
    /// the cited file does not exist
    AnswerAnchorFileMissing = "spur::answer::anchor-file-missing",
    /// the cited file is outside the project root
    AnswerAnchorOutsideProject = "spur::answer::anchor-outside-project",
    /// the cited lines are not in the file
    AnswerAnchorLineOutOfRange = "spur::answer::anchor-line-out-of-range",

    /// `--paths` with a drawing format
    GraphPathsFormat = "spur::graph::paths-format",
    /// the graph cannot be encoded as JSON
    GraphJson = "spur::graph::json",
    /// the pipeline has errors, so it is not drawn
    GraphInvalidPipeline = "spur::graph::invalid-pipeline",

    /// `spur ui` cannot serve: a non-loopback address without `--token`, or an address in use
    UiCannotServe = "spur::ui::cannot-serve",

    /// the stub agent (`spur agent stub`) cannot do what its input asks
    AgentStub = "spur::agent::stub",

    /// `spur init` would overwrite files that exist (nothing was written)
    InitExists = "spur::init::exists",
    /// `spur init` cannot write a file
    InitWrite = "spur::init::write",

    /// a `spur jq` input cannot be read or is not JSON
    JqInput = "spur::jq::input",
    /// the jq filter does not compile
    JqCompile = "spur::jq::compile",
    /// an `--argjson` value is not JSON
    JqArgjson = "spur::jq::argjson",
    /// the jq filter failed at run time
    JqRuntime = "spur::jq::runtime",
    /// the jq filter halted with an error code
    JqHalt = "spur::jq::halt",
    /// the jq output cannot be written
    JqOutput = "spur::jq::output",
    /// `spur jq` crashed (a stack overflow, out of memory) and was stopped
    JqCrashed = "spur::jq::crashed",

    /// the verdict artifact is missing, malformed or invalid (one warning per artifact)
    VerdictMalformedArtifact = "L4.malformed-verdict-artifact",
    /// a stored PASS that does not recompute to PASS
    VerdictSelfInconsistent = "verdict.self-inconsistent",
    /// the artifact names another task
    VerdictWbsMismatch = "verdict.wbs-mismatch",
}

impl Code {
    /// The warning ids of the verdict contract: kept as that contract spells them (its
    /// consumers match these strings), not in the `spur::area::name` style of the others.
    pub const VERDICT_CONTRACT: [Code; 3] = [
        Code::VerdictMalformedArtifact,
        Code::VerdictSelfInconsistent,
        Code::VerdictWbsMismatch,
    ];
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A code read back from its string (a fleet worker's answer); an unknown one is refused.
impl<'de> serde::Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Code::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown code {text:?}")))
    }
}

/// For APIs that take the code as a string, e.g. `miette::miette!(code = Code::GraphJson, …)`.
impl From<Code> for String {
    fn from(code: Code) -> Self {
        code.as_str().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `spur::<area>::<name>`, every part kebab-case.
    fn is_kebab_code(code: &str) -> bool {
        let kebab = |part: &str| {
            !part.is_empty()
                && part.split('-').all(|w| {
                    !w.is_empty() && w.bytes().all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9'))
                })
        };
        let mut parts = code.split("::");
        parts.next() == Some("spur")
            && parts.next().is_some_and(kebab)
            && parts.next().is_some_and(kebab)
            && parts.next().is_none()
    }

    #[test]
    fn codes_are_unique() {
        let mut strings: Vec<_> = Code::ALL.iter().map(|c| c.as_str()).collect();
        strings.sort_unstable();
        strings.dedup();
        assert_eq!(strings.len(), Code::ALL.len());
    }

    #[test]
    fn every_code_but_the_verdict_contract_is_kebab_case() {
        for code in Code::ALL {
            assert_eq!(
                is_kebab_code(code.as_str()),
                !Code::VERDICT_CONTRACT.contains(code),
                "{code}"
            );
        }
        assert!(!is_kebab_code("spur::run::pipeline_changed"));
        assert!(!is_kebab_code("spur::check::"));
        assert!(!is_kebab_code("spur::check::a--b"));
    }

    #[test]
    fn every_code_has_a_one_line_meaning() {
        for code in Code::ALL {
            let meaning = code.meaning();
            assert!(!meaning.is_empty() && !meaning.contains('\n'), "{code}");
        }
    }

    /// The book's list is the user's reference for the JSON contract: it names every code
    /// with the meaning given here.
    #[test]
    fn the_book_lists_every_code_with_its_meaning() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../book/src/diagnostic-codes.md"
        );
        let book = std::fs::read_to_string(path).unwrap();
        for code in Code::ALL {
            let row = format!("| `{code}` | {} |", code.meaning());
            assert!(
                book.contains(&row),
                "book/src/diagnostic-codes.md lacks the row {row}"
            );
        }
    }
}
