//! The run journal through `spur runs` and `spur trace`, for tests of `spur run`.

use serde_json::Value;

use super::Spur;

impl Spur {
    /// `spur runs --json`: the project's runs, newest first.
    pub fn runs(&self) -> Vec<Value> {
        let runs = self.args(["runs"]).json().run().success().stdout_json();
        runs.as_array().expect("runs is an array").clone()
    }

    /// The id of the project's only run.
    pub fn only_run_id(&self) -> String {
        let runs = self.runs();
        assert_eq!(runs.len(), 1, "{runs:?}");
        runs[0]["runId"].as_str().unwrap().to_owned()
    }

    /// `spur trace RUN --json`: the journal records of one run.
    pub fn trace(&self, run_id: &str) -> Vec<Value> {
        let records = self
            .args(["trace", run_id])
            .json()
            .run()
            .success()
            .stdout_json();
        records.as_array().expect("trace is an array").clone()
    }

    /// The journal records of the newest run.
    pub fn newest_trace(&self) -> Vec<Value> {
        let runs = self.runs();
        self.trace(runs[0]["runId"].as_str().expect("a run"))
    }
}

/// The records of one event kind, in journal order.
pub fn events<'a>(records: &'a [Value], name: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["event"] == name).collect()
}

/// Journal sequence numbers run 1, 2, 3… without a gap.
pub fn assert_gap_free(records: &[Value]) {
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r["seq"].as_u64(), Some(i as u64 + 1), "seq gap at {i}: {r}");
    }
}
