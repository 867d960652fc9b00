//! One step's usage as recorded, and a sum of many.

use serde::{Deserialize, Serialize};

/// Where a step's cost comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostSource {
    /// The agent CLI (or the step's `spurUsage` line) said what it cost.
    Reported,
    /// spur priced the tokens with `prices:` of `.spur/config.yaml`.
    Priced,
}

/// What one step spent. `inputTokens` counts every token sent, cached ones included;
/// `cachedTokens` is the part of them served from a cache.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Usage {
    /// Tokens sent to the model, cached ones included.
    pub input_tokens: u64,
    /// Tokens the model produced (reasoning included).
    pub output_tokens: u64,
    /// The part of `input_tokens` read from a cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
    /// What it cost, in US dollars, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Where the cost comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_source: Option<CostSource>,
    /// The model, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// How long the agent says it ran, in milliseconds, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Tokens in and out: what a token budget counts.
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// `other` added to this: tokens and costs summed (a cost stays unknown only when both
    /// are), the model kept when both name the same one.
    pub(crate) fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        if self.cost_source.is_none() {
            self.cost_source = other.cost_source;
        }
        if self.model.is_none() {
            self.model.clone_from(&other.model);
        }
        self.duration_ms = match (self.duration_ms, other.duration_ms) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        };
    }

    /// Whether it says anything at all.
    pub fn is_empty(&self) -> bool {
        self.tokens() == 0 && self.cost_usd.is_none()
    }
}

/// The usage of many steps: a run's, a task's.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotal {
    /// Steps that reported usage.
    pub steps: u64,
    /// Tokens sent, cached ones included.
    pub input_tokens: u64,
    /// Tokens produced.
    pub output_tokens: u64,
    /// Tokens read from a cache.
    pub cached_tokens: u64,
    /// The cost of the steps whose cost is known, in US dollars.
    pub cost_usd: f64,
    /// Steps that reported tokens but no cost, and had no price: their cost is not in
    /// `cost_usd`.
    pub unpriced_steps: u64,
}

impl UsageTotal {
    /// One more step.
    pub fn add(&mut self, usage: &Usage) {
        self.steps += 1;
        self.input_tokens = self.input_tokens.saturating_add(usage.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(usage.output_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(usage.cached_tokens);
        match usage.cost_usd {
            Some(cost) => self.cost_usd += cost,
            None => self.unpriced_steps += 1,
        }
    }

    /// Tokens in and out.
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// The total with `usage` added, as a new value.
    pub(crate) fn plus(&self, usage: &Usage) -> UsageTotal {
        let mut total = self.clone();
        total.add(usage);
        total
    }

    /// `$1.2300` (and `+?` when some steps have no cost; `unpriced` when none has one),
    /// for people.
    pub fn cost_text(&self) -> String {
        if self.steps > 0 && self.unpriced_steps == self.steps {
            return "unpriced".to_owned();
        }
        let unknown = if self.unpriced_steps > 0 { " +?" } else { "" };
        format!("${:.4}{unknown}", self.cost_usd)
    }
}

impl FromIterator<Usage> for UsageTotal {
    fn from_iter<I: IntoIterator<Item = Usage>>(iter: I) -> Self {
        let mut total = UsageTotal::default();
        for usage in iter {
            total.add(&usage);
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_tokens_and_known_costs_and_counts_the_unpriced() {
        let priced = Usage {
            input_tokens: 10,
            output_tokens: 5,
            cost_usd: Some(0.5),
            ..Usage::default()
        };
        let unpriced = Usage {
            input_tokens: 1,
            output_tokens: 1,
            ..Usage::default()
        };
        let total: UsageTotal = [priced.clone(), unpriced, priced].into_iter().collect();
        assert_eq!(total.tokens(), 32);
        assert_eq!(total.cost_usd, 1.0);
        assert_eq!(total.unpriced_steps, 1);
        assert_eq!(total.cost_text(), "$1.0000 +?");
    }
}
