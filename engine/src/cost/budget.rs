//! Holding spend to `budgets:`. Before an agent step starts, a run or task budget already
//! spent fails it ([`already_spent`]); while it runs, and once it ends, the step's own
//! spend is added to the run's and the task's and held to all three budgets
//! ([`crossed`]). The message names the budget, what was spent and how to go on.

use super::config::{Budget, Budgets};
use super::usage::{Usage, UsageTotal};

/// Which budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The run's.
    Run,
    /// The task's, over all its runs.
    Task,
    /// One agent step's.
    Step,
}

impl Scope {
    fn key(self) -> &'static str {
        match self {
            Scope::Run => "run",
            Scope::Task => "task",
            Scope::Step => "step",
        }
    }

    fn whose(self) -> &'static str {
        match self {
            Scope::Run => "this run has",
            Scope::Task => "the task has, over all its runs,",
            Scope::Step => "the step has",
        }
    }
}

/// A budget that is spent: which, its bound, and what was spent against it.
#[derive(Debug, Clone, PartialEq)]
pub struct Exceeded {
    /// Which budget.
    pub scope: Scope,
    /// `tokens` or `costUsd`.
    pub field: &'static str,
    /// The bound, as written (`1000 tokens`, `$0.5000`).
    pub limit: String,
    /// What was spent against it.
    pub spent: UsageTotal,
}

impl Exceeded {
    /// `budgets.run.costUsd`.
    pub fn key(&self) -> String {
        format!("budgets.{}.{}", self.scope.key(), self.field)
    }

    /// "the budget `budgets.run.costUsd` ($0.5000) is spent: this run has spent 1200 tokens
    /// in 3 steps costing $0.6000".
    pub fn describe(&self) -> String {
        let steps = match self.spent.steps {
            1 => "1 step".to_owned(),
            n => format!("{n} steps"),
        };
        let cost = if self.spent.unpriced_steps == self.spent.steps {
            String::new()
        } else {
            format!(" costing {}", self.spent.cost_text())
        };
        format!(
            "the budget `{}` ({}) is spent: {} spent {} tokens in {steps}{cost}",
            self.key(),
            self.limit,
            self.scope.whose(),
            self.spent.tokens(),
        )
    }

    /// How to go on.
    pub fn help(&self, config: &str, run_id: &str) -> String {
        let retry = match self.scope {
            Scope::Step => "",
            _ => " (what was spent stays spent)",
        };
        format!(
            "raise `{}` in {config}{retry}, then `spur retry {run_id}` goes on from the failed step",
            self.key()
        )
    }
}

/// `total` against `budget`: the first bound it reaches (`at_bound`: reaching the bound
/// counts) or passes.
fn against(budget: &Budget, scope: Scope, total: &UsageTotal, at_bound: bool) -> Option<Exceeded> {
    let over_tokens = |limit: u64| {
        if at_bound {
            total.tokens() >= limit
        } else {
            total.tokens() > limit
        }
    };
    let over_cost = |limit: f64| {
        if at_bound {
            total.cost_usd >= limit
        } else {
            total.cost_usd > limit
        }
    };
    if let Some(limit) = budget.tokens.filter(|l| over_tokens(*l)) {
        return Some(Exceeded {
            scope,
            field: "tokens",
            limit: format!("{limit} tokens"),
            spent: total.clone(),
        });
    }
    if let Some(limit) = budget.cost_usd.filter(|l| over_cost(*l)) {
        return Some(Exceeded {
            scope,
            field: "costUsd",
            limit: format!("${limit:.4}"),
            spent: total.clone(),
        });
    }
    None
}

/// Before an agent step: the run's or the task's budget that is already spent.
pub fn already_spent(
    budgets: &Budgets,
    run: &UsageTotal,
    task: Option<&UsageTotal>,
) -> Option<Exceeded> {
    against(&budgets.run, Scope::Run, run, true)
        .or_else(|| task.and_then(|task| against(&budgets.task, Scope::Task, task, true)))
}

/// The step has spent `step` so far: the first budget that puts over.
pub fn crossed(
    budgets: &Budgets,
    run: &UsageTotal,
    task: Option<&UsageTotal>,
    step: &Usage,
) -> Option<Exceeded> {
    let own = UsageTotal::default().plus(step);
    against(&budgets.step, Scope::Step, &own, false)
        .or_else(|| against(&budgets.run, Scope::Run, &run.plus(step), false))
        .or_else(|| {
            task.and_then(|task| against(&budgets.task, Scope::Task, &task.plus(step), false))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(tokens: u64, cost: f64) -> Usage {
        Usage {
            input_tokens: tokens,
            cost_usd: Some(cost),
            ..Usage::default()
        }
    }

    #[test]
    fn a_spent_budget_stops_the_next_step_and_a_crossing_one_the_current() {
        let budgets = Budgets {
            run: Budget {
                tokens: None,
                cost_usd: Some(1.0),
            },
            task: Budget {
                tokens: Some(100),
                cost_usd: None,
            },
            step: Budget::default(),
        };
        let run: UsageTotal = [usage(10, 0.6)].into_iter().collect();
        assert_eq!(already_spent(&budgets, &run, None), None);
        let spent = crossed(&budgets, &run, None, &usage(10, 0.5)).unwrap();
        assert_eq!(spent.key(), "budgets.run.costUsd");
        assert!(spent.describe().contains("$1.1000"), "{}", spent.describe());
        let task: UsageTotal = [usage(100, 0.0)].into_iter().collect();
        let spent = already_spent(&budgets, &run, Some(&task)).unwrap();
        assert_eq!(spent.key(), "budgets.task.tokens");
        assert!(spent.help("c.yaml", "r1").contains("spur retry r1"));
    }
}
