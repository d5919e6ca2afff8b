//! What a rule can look at for one syscall, and whether a rule matches.

use abi::cap::CapType;
use abi::policy::Rule;
use abi::MessageInfo;

/// The facts about one syscall that rules match on.
///
/// The number, the label and the registers are known at entry, from the
/// saved registers alone. The object type and the badge need a capability
/// lookup of `x0`; they are `None` when the syscall names no object or the
/// slot is empty, and then no rule on them matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyscallFacts {
    /// The syscall number (`x8`).
    pub number: u64,
    /// The type of the object the capability in `x0` names.
    pub object_type: Option<CapType>,
    /// The message label: `MessageInfo::label` of `x1`.
    pub label: u64,
    /// The badge of the capability in `x0` (0 when unbadged).
    pub badge: Option<u64>,
    /// `x0..=x7`, as copied into the kernel.
    pub args: [u64; 8],
}

impl SyscallFacts {
    /// The facts the registers alone give: no capability looked up.
    pub fn from_registers(number: u64, args: [u64; 8]) -> SyscallFacts {
        SyscallFacts {
            number,
            object_type: None,
            label: MessageInfo::from(args[1]).label(),
            badge: None,
            args,
        }
    }

    /// The same facts with the capability lookup's result.
    pub fn with_capability(self, object_type: CapType, badge: u64) -> SyscallFacts {
        SyscallFacts {
            object_type: Some(object_type),
            badge: Some(badge),
            ..self
        }
    }
}

/// Does `rule` match the syscall `facts` describe?
pub(super) fn rule_matches(rule: &Rule, facts: &SyscallFacts) -> bool {
    rule.applies_to(facts.number)
        && rule
            .object_type
            .is_none_or(|t| facts.object_type == Some(t))
        && rule.label.is_none_or(|l| facts.label == l)
        && rule.badge.is_none_or(|b| facts.badge == Some(b))
        && rule.args.iter().all(|a| a.matches(&facts.args))
}
