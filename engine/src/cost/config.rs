//! `budgets:` and `prices:` of `.spur/config.yaml`. A budget bounds the tokens (in and
//! out) and/or the cost of a run, a task (all its runs) or one agent step; a price table
//! prices the tokens of a step whose CLI reports no cost, looked up by the model the CLI
//! names, else by the agent's name. spur has no prices of its own: a built-in table would
//! silently age. Every finding of both sections is reported at once, with its span;
//! unknown keys are errors, since a misspelt budget would not be held.
//!
//! ```yaml
//! budgets:
//!   run:  { tokens: 200000, costUsd: 5 }
//!   task: { costUsd: 20 }
//!   step: { tokens: 50000 }
//! prices:                     # US dollars per million tokens
//!   gpt-5-codex: { input: 1.25, cachedInput: 0.125, output: 10 }
//! ```

use std::path::{Path, PathBuf};

use crate::diagnostic::{coded_diagnostic, Code, Diagnostic};
use crate::source::SourceFile;
use crate::store::bounded_read::read_string;
use crate::store::state_dir::{StateDir, MAX_CONFIG_BYTES};
use crate::yaml::{parse_config, Codes, Fields, Loader, Loose, Node, NodeValue, UnknownKeys};

use super::usage::{CostSource, Usage};

const CODES: Codes = Codes {
    wrong_type: Code::CostConfig,
    missing_key: Code::CostConfig,
    unknown_key: Code::CostConfig,
    duplicate_key: Code::CostConfig,
};

/// The most a budget or a price may be, in US dollars: anything above is a typo.
const MAX_DOLLARS: f64 = 1_000_000_000.0;

/// One budget: tokens and/or cost; `None` is no bound.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budget {
    /// Tokens in and out.
    pub tokens: Option<u64>,
    /// US dollars.
    pub cost_usd: Option<f64>,
}

impl Budget {
    /// Whether it bounds anything.
    pub fn is_set(&self) -> bool {
        self.tokens.is_some() || self.cost_usd.is_some()
    }
}

/// The budgets of `budgets:`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budgets {
    /// Each run.
    pub run: Budget,
    /// Each task, over all its runs.
    pub task: Budget,
    /// Each agent step.
    pub step: Budget,
}

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Input tokens not read from a cache.
    pub input: f64,
    /// Input tokens read from a cache (the input price when not given).
    pub cached_input: Option<f64>,
    /// Output tokens.
    pub output: f64,
}

/// `budgets:` and `prices:`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CostConfig {
    /// The budgets.
    pub budgets: Budgets,
    /// The prices, by model or agent name, in file order.
    pub prices: Vec<(String, Price)>,
}

impl CostConfig {
    /// `usage` with its cost: as reported, else priced by its model's price, else the
    /// agent's; unchanged when neither is in the table.
    pub(crate) fn priced(&self, mut usage: Usage, agent: &str) -> Usage {
        if usage.cost_usd.is_some() {
            return usage;
        }
        let price = usage
            .model
            .as_deref()
            .and_then(|m| self.price(m))
            .or_else(|| self.price(agent));
        if let Some(price) = price {
            let cached = usage.cached_tokens.min(usage.input_tokens);
            let fresh = usage.input_tokens - cached;
            let million = 1_000_000.0;
            let cost = (fresh as f64 * price.input
                + cached as f64 * price.cached_input.unwrap_or(price.input)
                + usage.output_tokens as f64 * price.output)
                / million;
            usage.cost_usd = Some(cost);
            usage.cost_source = Some(CostSource::Priced);
        }
        usage
    }

    fn price(&self, name: &str) -> Option<Price> {
        self.prices
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, price)| *price)
    }
}

/// Why `budgets:` or `prices:` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CostConfigErrors {
    /// The file exists but could not be read.
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable {
        /// The configuration file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The sections have errors.
    #[error("`budgets:` or `prices:` in {} cannot be used", path.display())]
    Invalid {
        /// The configuration file.
        path: PathBuf,
        /// Every problem found.
        errors: Vec<Diagnostic>,
    },
}

coded_diagnostic! {
    CostConfigErrors {
        Self::Unreadable { .. } => Code::CostConfig,
            help("check that the file is a readable regular file");
        Self::Invalid { errors, .. } => Code::CostConfig,
            help("`budgets` holds `run`, `task` and `step`, each `{{tokens: N, costUsd: X}}` (either or both); `prices` maps a model or agent name to `{{input: X, output: X, cachedInput: X}}` in US dollars per million tokens (book: Cost and budgets)"),
            related(errors);
    }
}

impl CostConfig {
    /// Read `budgets:` and `prices:` from the project's config; no file, or neither
    /// section, is no budget and no price.
    pub fn load(state_dir: &StateDir) -> Result<CostConfig, CostConfigErrors> {
        let path = state_dir.config_path();
        match read_string(&path, MAX_CONFIG_BYTES) {
            Ok(text) => Self::parse(&path, &text),
            Err(e) if e.is_missing() => Ok(CostConfig::default()),
            Err(e) => Err(CostConfigErrors::Unreadable {
                path,
                reason: e.to_string(),
            }),
        }
    }

    /// [`CostConfig::load`] on the text of the file.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<CostConfig, CostConfigErrors> {
        let source = SourceFile::new(path, text);
        let mut cx = Loader::new(&source, CODES);
        let config = match parse_config(text) {
            // A file that is not YAML is reported by the readers of its other sections.
            Ok(Some(root)) => read(&mut cx, &root),
            Ok(None) | Err(_) => CostConfig::default(),
        };
        if cx.diagnostics.is_empty() {
            Ok(config)
        } else {
            Err(CostConfigErrors::Invalid {
                path: path.to_path_buf(),
                errors: cx.diagnostics,
            })
        }
    }
}

fn read(cx: &mut Loader<'_>, root: &Node) -> CostConfig {
    let mut config = CostConfig::default();
    let Some(top) = cx.fields_with(
        root,
        "the configuration file",
        &["budgets", "prices"],
        UnknownKeys::Ignore,
    ) else {
        return config;
    };
    if let Some(node) = top.get("budgets").filter(|n| n.value != NodeValue::Null) {
        if let Some(fields) = cx.fields_with(
            node,
            "`budgets`",
            &["run", "task", "step"],
            UnknownKeys::Error,
        ) {
            config.budgets = Budgets {
                run: budget(cx, &fields, "run"),
                task: budget(cx, &fields, "task"),
                step: budget(cx, &fields, "step"),
            };
        }
    }
    if let Some(node) = top.get("prices").filter(|n| n.value != NodeValue::Null) {
        config.prices = prices(cx, node);
    }
    config
}

fn budget(cx: &mut Loader<'_>, fields: &Fields<'_>, key: &str) -> Budget {
    let Some(node) = fields.get(key).filter(|n| n.value != NodeValue::Null) else {
        return Budget::default();
    };
    let what = format!("`budgets.{key}`");
    let Some(inner) = cx.fields_with(node, &what, &["tokens", "costUsd"], UnknownKeys::Error)
    else {
        return Budget::default();
    };
    let tokens = inner.get("tokens").and_then(|n| {
        cx.read::<Loose<u64>>(n, &format!("`budgets.{key}.tokens`"))
            .map(|t| t.0)
    });
    let cost_usd = inner
        .get("costUsd")
        .and_then(|n| dollars(cx, n, &format!("`budgets.{key}.costUsd`")));
    let budget = Budget { tokens, cost_usd };
    if !budget.is_set() && inner.get("tokens").is_none() && inner.get("costUsd").is_none() {
        let d = Diagnostic::error(
            Code::CostConfig,
            cx.source,
            node.pointed(),
            format!("{what} bounds nothing"),
        )
        .help("give `tokens`, `costUsd` or both, or leave the budget out");
        cx.push(d);
    }
    budget
}

fn prices(cx: &mut Loader<'_>, node: &Node) -> Vec<(String, Price)> {
    let NodeValue::Map(entries) = &node.value else {
        let d = Diagnostic::error(
            Code::CostConfig,
            cx.source,
            node.pointed(),
            format!("`prices` must be a mapping, not {}", node.value.type_name()),
        )
        .help("map a model or agent name to `{input: X, output: X}`");
        cx.push(d);
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in entries {
        let Some(name) = key.key_text() else {
            continue;
        };
        if out.iter().any(|(n, _)| n == &name) {
            let d = Diagnostic::error(
                Code::CostConfig,
                cx.source,
                key.pointed(),
                format!("`prices.{name}` is given twice"),
            );
            cx.push(d);
            continue;
        }
        let what = format!("`prices.{name}`");
        let Some(fields) = cx.fields_with(
            value,
            &what,
            &["input", "output", "cachedInput"],
            UnknownKeys::Error,
        ) else {
            continue;
        };
        let field = |cx: &mut Loader<'_>, k: &str| {
            fields
                .get(k)
                .and_then(|n| dollars(cx, n, &format!("`prices.{name}.{k}`")))
        };
        let input = field(cx, "input");
        let output = field(cx, "output");
        let cached_input = field(cx, "cachedInput");
        match (input, output) {
            (Some(input), Some(output)) => out.push((
                name,
                Price {
                    input,
                    cached_input,
                    output,
                },
            )),
            _ => {
                if fields.get("input").is_none() || fields.get("output").is_none() {
                    let d = Diagnostic::error(
                        Code::CostConfig,
                        cx.source,
                        value.pointed(),
                        format!("{what} needs both `input` and `output`"),
                    )
                    .help("US dollars per million tokens, e.g. `{input: 3, output: 15}`");
                    cx.push(d);
                }
            }
        }
    }
    out
}

/// A number of US dollars: 0 or more, finite, at most [`MAX_DOLLARS`].
fn dollars(cx: &mut Loader<'_>, node: &Node, what: &str) -> Option<f64> {
    let value = match &node.value {
        NodeValue::Number(n) => n.as_f64(),
        _ => None,
    };
    match value {
        Some(v) if v.is_finite() && (0.0..=MAX_DOLLARS).contains(&v) => Some(v),
        _ => {
            let found = match &node.value {
                NodeValue::Number(n) => n.to_string(),
                other => other.type_name().to_owned(),
            };
            let d = Diagnostic::error(
                Code::CostConfig,
                cx.source,
                node.pointed(),
                format!(
                    "{what} must be a number of US dollars from 0 to {MAX_DOLLARS}, not {found}"
                ),
            );
            cx.push(d);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<CostConfig, Vec<String>> {
        CostConfig::parse(Path::new("config.yaml"), text).map_err(|e| match e {
            CostConfigErrors::Invalid { errors, .. } => {
                errors.iter().map(Diagnostic::one_line).collect()
            }
            other => vec![other.to_string()],
        })
    }

    #[test]
    fn reads_budgets_and_prices() {
        let config = parse(
            "agents: {}\nbudgets:\n  run: {tokens: 100, costUsd: 1.5}\n  step: {costUsd: 0}\nprices:\n  m1: {input: 3, output: 15, cachedInput: 0.3}\n",
        )
        .unwrap();
        assert_eq!(config.budgets.run.tokens, Some(100));
        assert_eq!(config.budgets.run.cost_usd, Some(1.5));
        assert_eq!(config.budgets.step.cost_usd, Some(0.0));
        assert!(!config.budgets.task.is_set());
        let usage = Usage {
            input_tokens: 1_000_000,
            cached_tokens: 500_000,
            output_tokens: 1_000_000,
            model: Some("m1".into()),
            ..Usage::default()
        };
        let priced = config.priced(usage, "agent");
        assert_eq!(priced.cost_usd, Some(1.5 + 0.15 + 15.0));
        assert_eq!(priced.cost_source, Some(CostSource::Priced));
        assert_eq!(parse("verify: {}\n").unwrap(), CostConfig::default());
    }

    #[test]
    fn reports_every_finding_with_its_place() {
        let errors = parse(
            "budgets:\n  run: {tokens: -1, costUsd: lots}\n  tsk: {tokens: 1}\n  step: {}\nprices:\n  m: {input: 1}\n  n: {input: 1, output: .inf}\n",
        )
        .unwrap_err();
        let all = errors.join("\n");
        assert!(all.contains("budgets.run.tokens"), "{all}");
        assert!(all.contains("budgets.run.costUsd"), "{all}");
        assert!(all.contains("tsk"), "{all}");
        assert!(all.contains("bounds nothing"), "{all}");
        assert!(all.contains("prices.m` needs both"), "{all}");
        assert!(all.contains("prices.n.output"), "{all}");
        assert!(errors.iter().all(|e| e.contains("line ")), "{all}");
    }
}
