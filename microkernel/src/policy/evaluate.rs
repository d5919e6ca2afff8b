//! The verdict of one filter, and of a stack of them.

use super::facts::{rule_matches, SyscallFacts};
use super::filter::Filter;
use abi::policy::Action;

impl Filter {
    /// This filter's verdict: the action of the first rule that matches,
    /// `Allow` when none does (a deny-by-default filter ends with a rule
    /// that matches everything).
    pub fn verdict(&self, facts: &SyscallFacts) -> Action {
        self.rules()
            .iter()
            .find(|rule| rule_matches(rule, facts))
            .map_or(Action::Allow, |rule| rule.action)
    }
}

/// The verdict of a thread's stacked filters: the strictest of their
/// verdicts (`Kill > Trap > Errno > Notify > Log > Allow`, see
/// [`Action`]); `Allow` with no filters. The order of `filters` does not
/// matter.
pub fn evaluate(filters: &[&Filter], facts: &SyscallFacts) -> Action {
    let mut verdict = Action::Allow;
    for filter in filters {
        verdict = verdict.max(filter.verdict(facts));
        if verdict == Action::Kill {
            break; // nothing is stricter
        }
    }
    verdict
}
