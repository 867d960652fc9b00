//! The reference dialect (issue 21): where spur now behaves as the reference engine
//! (`gobing-ai/ts-libs` `packages/dual-workflow-engine`, and `gobing-ai/spur`'s action
//! runners) does. Each test is named after the reference test or source it mirrors, which
//! its doc comment cites. The deliberate differences are in the book's Compatibility page.

mod builtins;
mod http_request;
mod lifecycle;
mod newer_actions;
mod options;
mod same_state_vars;
mod semantics;
mod transition_flow;
mod validation;
