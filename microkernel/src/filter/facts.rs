//! What a rule can look at for one syscall, and whether a rule matches.

use abi::cap::CapType;
use abi::policy::{Operand, Rule};
use abi::MessageInfo;

/// The facts about one syscall that rules match on.
///
/// The number, the label and the registers are known at entry, from the
/// saved registers alone. The object type and the badge need a capability
/// lookup of `x0`; they are `None` when the syscall names no object or the
/// slot is empty, and then no rule on them matches. The memory the call
/// carries is the kernel's judged copy ([`JudgedView`]), taken once before
/// the check (`Thread::judged`), never the caller's memory itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyscallFacts<'a> {
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
    /// The caller's PC (the address after its `svc`).
    pub pc: u64,
    /// The memory the call carries, as judged.
    pub memory: JudgedView<'a>,
}

/// The judged copy of the memory a call carries, as rules see it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JudgedView<'a> {
    /// The bytes copied (at most `abi::policy::MAX_JUDGED_BYTES`); `None`:
    /// the call carries none, or none were copied (its buffer could not
    /// be read), and no rule on them holds.
    pub bytes: Option<&'a [u8]>,
    /// How long the buffer is, in bytes (more than `bytes` holds when it
    /// is longer than what is judged).
    pub length: usize,
    /// The bytes are a message's IPC buffer words (word 6 on,
    /// little-endian), so `Operand::Word` reads them.
    pub message: bool,
}

impl JudgedView<'_> {
    /// Message word `index` (6 and up) from the copy, if the call sends a
    /// message that long.
    pub fn buffer_word(&self, index: usize) -> Option<u64> {
        let offset = index.checked_sub(abi::REGISTER_MESSAGE_WORDS)? * 8;
        let bytes = self.bytes.filter(|_| self.message)?;
        let word = bytes.get(offset..offset + 8)?;
        Some(u64::from_le_bytes(word.try_into().ok()?))
    }
}

impl<'a> SyscallFacts<'a> {
    /// The facts the registers alone give: no capability looked up, no
    /// memory judged, PC 0.
    pub fn from_registers(number: u64, args: [u64; 8]) -> SyscallFacts<'a> {
        SyscallFacts {
            number,
            object_type: None,
            label: MessageInfo::from(args[1]).label(),
            badge: None,
            args,
            pc: 0,
            memory: JudgedView {
                bytes: None,
                length: 0,
                message: false,
            },
        }
    }

    /// With the caller's PC.
    pub fn with_pc(self, pc: u64) -> SyscallFacts<'a> {
        SyscallFacts { pc, ..self }
    }

    /// With the judged memory.
    pub fn with_memory(self, memory: JudgedView<'a>) -> SyscallFacts<'a> {
        SyscallFacts { memory, ..self }
    }

    /// The value of `operand` for this call (`None`: it has none, e.g. a
    /// buffer word of a call that sends no message that long). A register
    /// inline, anything else out of line (most rules compare registers).
    #[inline(always)]
    pub fn operand(&self, operand: Operand) -> Option<u64> {
        match operand {
            Operand::Register(r) => self.args.get(usize::from(r)).copied(),
            other => self.other_operand(other),
        }
    }

    #[cold]
    #[inline(never)]
    fn other_operand(&self, operand: Operand) -> Option<u64> {
        match operand {
            Operand::Register(r) => self.args.get(usize::from(r)).copied(),
            Operand::Word(w) if usize::from(w) < abi::REGISTER_MESSAGE_WORDS => {
                self.args.get(usize::from(w) + 2).copied()
            }
            Operand::Word(w) => self.memory.buffer_word(usize::from(w)),
            Operand::Pc => Some(self.pc),
        }
    }

    /// The same facts with the capability lookup's result.
    pub fn with_capability(self, object_type: CapType, badge: u64) -> SyscallFacts<'a> {
        SyscallFacts {
            object_type: Some(object_type),
            badge: Some(badge),
            ..self
        }
    }
}

/// Does `rule` match the syscall `facts` describe? (Inlined, as it was
/// before rules could read memory: out of line it cost an evaluated
/// verdict some 80 instructions.)
#[inline(always)]
pub(super) fn rule_matches(rule: &Rule, facts: &SyscallFacts) -> bool {
    rule.applies_to(facts.number)
        && rule
            .object_type
            .is_none_or(|t| facts.object_type == Some(t))
        && rule.label.is_none_or(|l| facts.label == l)
        && rule.badge.is_none_or(|b| facts.badge == Some(b))
        && rule.args.iter().all(|a| a.holds(facts.operand(a.operand)))
        && rule.bytes.as_ref().is_none_or(|b| bytes_hold(b, facts))
}

/// A rule's byte match, out of line (few rules have one).
#[cold]
#[inline(never)]
fn bytes_hold(bytes: &abi::policy::BytesMatch, facts: &SyscallFacts) -> bool {
    bytes.holds(facts.memory.bytes, facts.memory.length)
}
