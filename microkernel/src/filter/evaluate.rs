//! The verdict of one filter, and of a stack of them.

use super::description::Filter;
use super::facts::{rule_matches, SyscallFacts};
use abi::policy::Action;

impl Filter {
    /// This filter's verdict: the action of the first rule that matches,
    /// `Allow` when none does (a deny-by-default filter ends with a rule
    /// that matches everything).
    pub fn verdict(&self, facts: &SyscallFacts) -> Action {
        self.rules()
            .iter()
            .find(|rule| rule_matches(rule, facts))
            .map_or(self.default(), |rule| rule.action)
    }

    /// The rule that gives this filter's verdict: the index of the first
    /// rule that matches, and its action; when none does, the default,
    /// as index `rules().len()` (one past the last rule). What an end
    /// message names for a policy kill.
    pub fn deciding_rule(&self, facts: &SyscallFacts) -> Option<(usize, Action)> {
        let rules = self.rules();
        Some(
            rules
                .iter()
                .position(|rule| rule_matches(rule, facts))
                .map_or((rules.len(), self.default()), |index| {
                    (index, rules[index].action)
                }),
        )
    }
}

/// Which filter of a stack, and which of its rules, killed a thread in the
/// syscall `facts` describe: the first filter whose deciding rule is
/// `Kill` (`false`: a rule), else the first whose deciding rule is
/// `Notify` (`true`: its policy server answered "kill"). `None` when
/// neither (no filter gave either verdict).
pub fn killing_rule(filters: &[&Filter], facts: &SyscallFacts) -> Option<(usize, usize, bool)> {
    let decided = |wanted: Action| {
        filters.iter().enumerate().find_map(|(position, filter)| {
            filter
                .deciding_rule(facts)
                .filter(|(_, action)| *action == wanted)
                .map(|(rule, _)| (position, rule))
        })
    };
    if let Some((filter, rule)) = decided(Action::Kill) {
        return Some((filter, rule, false));
    }
    decided(Action::Notify).map(|(filter, rule)| (filter, rule, true))
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

/// [`evaluate`] over the filters of `filters` whose bit is set in
/// `deciding`: the same verdict when the others can only say `Allow` for
/// this syscall (`VerdictCache::deciding_filters`), without evaluating
/// them.
#[inline(always)]
pub fn evaluate_deciding(filters: &[&Filter], deciding: u8, facts: &SyscallFacts) -> Action {
    let mut verdict = Action::Allow;
    for (position, filter) in filters.iter().enumerate() {
        // (No stack holds more than 8; a ninth would be evaluated.)
        if position < 8 && deciding & (1 << position) == 0 {
            continue;
        }
        verdict = verdict.max(filter.verdict(facts));
        if verdict == Action::Kill {
            break; // nothing is stricter
        }
    }
    verdict
}

/// The verdict of a thread's stacked filters as the kernel acts on it,
/// where each filter's `Notify` goes to that filter's own policy server:
///
/// * a `Notify` of filter `i` with bit `i` of `waived` set counts as
///   `Allow` (its server allowed these registers);
/// * a `Notify` of a filter with bit `i` of `served` clear (no server
///   named, or its endpoint gone) counts as `Errno(Denied)`: it fails
///   closed, and so outranks every other filter's `Notify`;
///
/// and the strictest verdict wins as in [`evaluate`]. When it is `Notify`,
/// the second value is the position of the first filter that gave it:
/// the one whose server is asked next (once it allows, the next such
/// filter's server is asked, so every filter's server must agree).
pub fn routed_verdict(
    filters: &[&Filter],
    facts: &SyscallFacts,
    waived: u8,
    served: u8,
) -> (Action, Option<u8>) {
    let mut verdict = Action::Allow;
    let mut asker = None;
    for (i, filter) in filters.iter().enumerate() {
        let bit = 1u8.checked_shl(i as u32).unwrap_or(0);
        let own = match filter.verdict(facts) {
            Action::Notify if waived & bit != 0 => Action::Allow,
            Action::Notify if served & bit == 0 => {
                Action::Errno(abi::ErrorCode::Denied.raw() as u16)
            }
            Action::Notify => {
                asker.get_or_insert(i as u8);
                Action::Notify
            }
            other => other,
        };
        verdict = verdict.max(own);
    }
    (verdict, asker.filter(|_| verdict == Action::Notify))
}
