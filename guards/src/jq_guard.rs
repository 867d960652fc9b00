//! The `jq` guard: passes only when the first output is exactly `true`.
//! Anything else — `false`, a non-boolean, no output, a runtime error, a deadline or size
//! overrun, a missing or malformed input file — fails closed with the reason recorded.

use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use crate::bounded_read::{read_bounded, ReadError};
use crate::guard_result::GuardResult;
use crate::jq::{JqLimits, JqProgram, JqSandbox};

/// Evaluate `program` on `input` (the run context or a file's JSON) in `sandbox`.
pub fn jq_guard_passes(
    sandbox: &JqSandbox,
    program: &JqProgram,
    input: &Value,
    var_values: &[Value],
    limits: &JqLimits,
) -> GuardResult {
    let started = Instant::now();
    let (passed, detail) = match sandbox.first(program, input, var_values, limits) {
        Ok(Some(Value::Bool(true))) => (true, "yielded true".to_owned()),
        Ok(Some(Value::Bool(false))) => (false, "yielded false".to_owned()),
        Ok(Some(other)) => (false, format!("yielded {} (not a boolean)", brief(&other))),
        Ok(None) => (false, "yielded no output".to_owned()),
        Err(e) => (false, e.to_string()),
    };
    GuardResult {
        passed,
        detail,
        duration: started.elapsed(),
    }
}

/// Evaluate `program` on the JSON in `path` (`options.file`). The file is read only up to
/// `limits.max_input_bytes`.
pub fn jq_file_guard(
    sandbox: &JqSandbox,
    program: &JqProgram,
    path: &Path,
    var_values: &[Value],
    limits: &JqLimits,
) -> GuardResult {
    let started = Instant::now();
    let input = match read_json_capped(path, limits.max_input_bytes) {
        Ok(value) => value,
        Err(why) => return GuardResult::fail(why, started.elapsed()),
    };
    let mut result = jq_guard_passes(sandbox, program, &input, var_values, limits);
    result.duration = started.elapsed();
    result
}

fn read_json_capped(path: &Path, cap: usize) -> Result<Value, String> {
    let cap = u64::try_from(cap).unwrap_or(u64::MAX);
    let bytes = read_bounded(path, cap).map_err(|e| match e {
        ReadError::Missing => format!("input file {} does not exist", path.display()),
        ReadError::TooLarge { .. } => {
            format!("input file {} is over the {cap}-byte limit", path.display())
        }
        e => format!("cannot read input file {}: {e}", path.display()),
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("input file {} is not valid JSON: {e}", path.display()))
}

fn brief(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn guard(expr: &str, input: Value) -> GuardResult {
        let program = JqProgram::compile(expr, &[]).unwrap();
        jq_guard_passes(
            &JqSandbox::in_process(),
            &program,
            &input,
            &[],
            &JqLimits::default(),
        )
    }

    #[test]
    fn only_a_first_output_of_true_passes() {
        assert!(guard(".verdict == \"PASS\"", json!({"verdict": "PASS"})).passed);
        let failed = guard(".verdict == \"PASS\"", json!({"verdict": "FAIL"}));
        assert!(!failed.passed);
        assert_eq!(failed.detail, "yielded false");
        assert!(guard("true, false", json!(null)).passed);
        assert!(!guard("false, true", json!(null)).passed);
    }

    #[test]
    fn non_booleans_empty_output_and_errors_fail_closed_with_a_reason() {
        let r = guard(".verdict", json!({"verdict": "PASS"}));
        assert_eq!(
            (r.passed, r.detail.as_str()),
            (false, "yielded \"PASS\" (not a boolean)")
        );
        let r = guard("empty", json!(null));
        assert_eq!((r.passed, r.detail.as_str()), (false, "yielded no output"));
        let r = guard(".a.b", json!({"a": 1}));
        assert!(!r.passed);
        assert!(
            r.detail.starts_with("jq error: cannot index"),
            "{}",
            r.detail
        );
    }

    #[test]
    fn file_input_missing_or_malformed_fails_closed() {
        let dir = tempfile::tempdir().unwrap();
        let program = JqProgram::compile(".ok", &[]).unwrap();
        let limits = JqLimits::default();
        let sandbox = JqSandbox::in_process();
        let missing = jq_file_guard(
            &sandbox,
            &program,
            &dir.path().join("nope.json"),
            &[],
            &limits,
        );
        assert!(!missing.passed);
        assert!(
            missing.detail.contains("does not exist"),
            "{}",
            missing.detail
        );

        std::fs::write(dir.path().join("bad.json"), "{not json").unwrap();
        let bad = jq_file_guard(
            &sandbox,
            &program,
            &dir.path().join("bad.json"),
            &[],
            &limits,
        );
        assert!(!bad.passed);
        assert!(bad.detail.contains("not valid JSON"), "{}", bad.detail);

        std::fs::write(dir.path().join("good.json"), r#"{"ok": true}"#).unwrap();
        assert!(
            jq_file_guard(
                &sandbox,
                &program,
                &dir.path().join("good.json"),
                &[],
                &limits
            )
            .passed
        );

        let small = JqLimits {
            max_input_bytes: 4,
            ..JqLimits::default()
        };
        let big = jq_file_guard(
            &sandbox,
            &program,
            &dir.path().join("good.json"),
            &[],
            &small,
        );
        assert!(!big.passed);
        assert!(
            big.detail.contains("over the 4-byte limit"),
            "{}",
            big.detail
        );
    }
}
