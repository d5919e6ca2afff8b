//! The per-thread verdict cache and the "no entry work" mask.
//!
//! Recomputed whenever the thread's filter stack changes (attach time).
//! For each syscall number it keeps the verdict if that verdict is known
//! from the number alone, so the entry needs no evaluation, no argument
//! copy and no capability lookup; and it derives the mask of syscalls whose
//! verdict is a constant `Allow`, which (with no tracer and no audit) may
//! take the fast path.
//!
//! # What counts as "known from the number"
//!
//! A rule whose only condition is the syscall number is *unconditional*;
//! one that also looks at the object type, label, badge or registers is
//! *conditional*: the label and registers vary from call to call, and the
//! object type and badge need a capability lookup. For one filter and one
//! number, the rules that can apply are tried in order up to the first
//! unconditional one (the ones after it are never reached); the filter's
//! verdict is one of their actions, or `Allow` if no unconditional rule
//! ends the list. Across the stack the verdict is the strictest of the
//! filters', so it lies between the strictest of their least strict
//! possible verdicts and the strictest of their strictest possible ones.
//! When those two bounds are the same action, the verdict is constant and
//! is cached. So a conditional rule costs nothing when every outcome is the
//! same (a conditional `Errno` before an unconditional one of the same
//! code), or when another filter's constant verdict is stricter anyway
//! (`Kill`).

use super::description::Filter;
use super::evaluate::evaluate_deciding;
use super::facts::SyscallFacts;
use abi::policy::Action;
use abi::Syscall;

/// How many syscall numbers the cache covers: `0..SYSCALL_COUNT`, every
/// [`Syscall`] (numbers are not dense: the gaps are never cached). Other
/// numbers are never cached (they fail in dispatch).
pub const SYSCALL_COUNT: usize = Syscall::END as usize;

// The mask is one u64 with a bit per syscall.
const _: () = assert!(SYSCALL_COUNT <= 64);

/// A thread's precomputed verdicts (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerdictCache {
    /// Per number: the verdict, when it depends on the number alone.
    verdicts: [Option<Action>; SYSCALL_COUNT],
    /// Bit n: syscall n's verdict is a constant `Allow`.
    no_entry_work: u64,
    /// Bit n: syscall n's verdict is a constant `Errno`.
    refused: u64,
    /// Bit n: syscall n's verdict is the constant `Notify` of the stack's
    /// one filter, and syscall n carries no memory: its policy request is
    /// made of the registers and the capability `x0` names, which the
    /// vector can send (`asked_mask`).
    asked: u64,
    /// Bit n: a reachable rule for syscall n looks at the object type or
    /// the badge, so evaluating it needs the capability lookup.
    needs_capability: u64,
    /// Bit n: judging syscall n needs the memory it carries copied first:
    /// it carries some (`Syscall::carries_memory`), and a reachable
    /// rule reads memory or the verdict can be `Notify` (the request
    /// carries the copy to the server).
    needs_memory: u64,
    /// Bit n: the lean entry may judge syscall n (`Kernel::lean_syscall`),
    /// which saves only `x0..x18` and `x30`: judging it, and what its
    /// verdict does, reads and writes no saved register beyond `x0..x8`.
    /// So no rule the filters can reach for it reads the PC, and no
    /// verdict they can reach is `Notify` (the request carries the PC),
    /// `Trap` (its fault report does) or `Kill`. Nor is memory copied to
    /// judge it: such a call sends or prints what it carries, mostly
    /// switches threads, and so saves the whole frame anyway (by the lean
    /// entry, `ipc_call_one_way_bytes_judged` cost 23 instructions more).
    /// Nor does the syscall itself read or write the whole frame (the lean
    /// entry would decline it: `syscall::reads_or_writes_whole_context`).
    judged_lean: u64,
    /// Per number: bit i set when filter i of the stack can give syscall
    /// n a verdict other than `Allow`. The others cannot change the
    /// stack's verdict (the strictest; `Allow` is the least strict), so
    /// evaluation skips them (`evaluate_deciding`).
    deciding: [u8; SYSCALL_COUNT],
}

// A bit per filter a thread may stack.
const _: () = assert!(crate::ids::MAX_STACKED_FILTERS <= 8);

impl VerdictCache {
    /// The cache of a thread with no filters: everything allowed.
    pub const fn unfiltered() -> VerdictCache {
        let mut verdicts = [None; SYSCALL_COUNT];
        let mut i = 0;
        while i < Syscall::ALL.len() {
            verdicts[Syscall::ALL[i].number() as usize] = Some(Action::Allow);
            i += 1;
        }
        VerdictCache {
            verdicts,
            no_entry_work: all_syscalls_mask(),
            refused: 0,
            asked: 0,
            needs_capability: 0,
            needs_memory: 0,
            judged_lean: lean_entry_syscalls_mask(),
            deciding: [0; SYSCALL_COUNT],
        }
    }

    /// Precomputes the cache for the filter stack `filters`.
    pub fn new(filters: &[&Filter]) -> VerdictCache {
        let mut cache = VerdictCache {
            verdicts: [None; SYSCALL_COUNT],
            no_entry_work: 0,
            refused: 0,
            asked: 0,
            needs_capability: 0,
            needs_memory: 0,
            judged_lean: 0,
            deciding: [0; SYSCALL_COUNT],
        };
        for syscall in Syscall::ALL {
            let number = syscall.number();
            let (mut least, mut most) = (Action::Allow, Action::Allow);
            let mut lean = true;
            for (position, filter) in filters.iter().enumerate() {
                let reach = reachable(filter, number);
                // (A ninth filter and on, past any stack the kernel
                // keeps, is always evaluated.)
                if reach.most != Action::Allow && position < 8 {
                    cache.deciding[number as usize] |= 1 << position;
                }
                least = least.max(reach.least);
                most = most.max(reach.most);
                lean &= reach.registers_only;
                // A syscall that names no capability has no object type
                // or badge to look up (`Syscall::names_capability`).
                if reach.needs_capability && syscall.names_capability() {
                    cache.needs_capability |= 1 << number;
                }
                if reach.needs_memory && syscall.carries_memory() {
                    cache.needs_memory |= 1 << number;
                }
            }
            if lean
                && cache.needs_memory & (1 << number) == 0
                && !crate::syscall::reads_or_writes_whole_context(syscall)
            {
                cache.judged_lean |= 1 << number;
            }
            if least == most {
                cache.verdicts[number as usize] = Some(least);
                if let Action::Errno(_) = least {
                    cache.refused |= 1 << number;
                }
                if least == Action::Allow {
                    cache.no_entry_work |= 1 << number;
                }
                if least == Action::Notify && filters.len() == 1 && !syscall.carries_memory() {
                    cache.asked |= 1 << number;
                }
            }
        }
        cache
    }

    /// Syscall `number`'s verdict if it depends on the number alone; `None`
    /// if the filters must be evaluated (or the number is no syscall).
    pub fn cached_verdict(&self, number: u64) -> Option<Action> {
        *self.verdicts.get(usize::try_from(number).ok()?)?
    }

    /// Bit n set: syscall n's verdict is a constant `Allow`. Without a
    /// tracer or audit, such a syscall needs no entry work at all.
    pub fn no_entry_work_mask(&self) -> u64 {
        self.no_entry_work
    }

    /// Bit n set: syscall n's verdict is a constant `Errno`. Without a
    /// tracer or audit, such a syscall is refused in the vector
    /// (`Thread::refused`).
    pub fn refused_mask(&self) -> u64 {
        self.refused
    }

    /// Bit n set: syscall n's verdict is the constant `Notify` of the
    /// stack's one filter, and the syscall carries no memory, so its
    /// policy request holds the registers, the PC, and the type and badge
    /// of the capability `x0` names (for a syscall that names one), and
    /// nothing else of the thread. With policy its only work, the vector
    /// sends such a syscall to the policy request fast path
    /// (`policy_request_fast_path.s`), which asks the filter's server
    /// itself when it waits.
    pub fn asked_mask(&self) -> u64 {
        self.asked
    }

    /// The code a constant `Errno` verdict of syscall `number` refuses it
    /// with (0 for any other number).
    pub fn refusal_code(&self, number: u64) -> u16 {
        match self.cached_verdict(number) {
            Some(Action::Errno(code)) => code,
            _ => 0,
        }
    }

    /// Whether evaluating syscall `number` needs the object type and badge
    /// (a capability lookup before the check). False for cached numbers.
    pub fn needs_capability(&self, number: u64) -> bool {
        self.cached_verdict(number).is_none()
            && number < 64
            && self.needs_capability & (1 << number) != 0
    }

    /// Whether judging syscall `number` needs the memory it carries copied
    /// first (it carries some, and a rule that can decide it reads memory
    /// or a filter's verdict can be `Notify`). Unlike `needs_capability`,
    /// true for a cached `Notify` too: its server is sent the copy.
    pub fn needs_memory(&self, number: u64) -> bool {
        number < 64 && self.needs_memory & (1 << number) != 0
    }

    /// Bit n set: the lean entry may judge syscall n (as
    /// `judged_by_lean_entry`).
    pub fn lean_judged_mask(&self) -> u64 {
        self.judged_lean
    }

    /// Whether the lean entry may judge syscall `number`: no rule that can
    /// decide it reads the PC, its verdict is always `Allow`, `Log` or
    /// `Errno`, no memory is copied to judge it, and the syscall takes
    /// the lean entry at all (false for any number that is no syscall).
    pub fn judged_by_lean_entry(&self, number: u64) -> bool {
        number < 64 && self.judged_lean & (1 << number) != 0
    }

    /// Bit i set: filter i of the stack can give syscall `number` a
    /// verdict other than `Allow` (every bit for a number that is no
    /// syscall: nothing is known of it).
    pub fn deciding_filters(&self, number: u64) -> u8 {
        usize::try_from(number)
            .ok()
            .and_then(|n| self.deciding.get(n))
            .map_or(u8::MAX, |&bits| bits)
    }

    /// The verdict for `facts`: cached, or evaluated over `filters`, which
    /// must be the stack the cache was computed for.
    pub fn verdict(&self, filters: &[&Filter], facts: &SyscallFacts) -> Action {
        self.cached_verdict(facts.number).unwrap_or_else(|| {
            evaluate_deciding(filters, self.deciding_filters(facts.number), facts)
        })
    }
}

/// Bit n set for every syscall number n that takes the lean entry (it
/// reads and writes no saved register beyond `x0..x18` and `x30`).
const fn lean_entry_syscalls_mask() -> u64 {
    let mut mask = 0u64;
    let mut i = 0;
    while i < Syscall::ALL.len() {
        if !crate::syscall::reads_or_writes_whole_context(Syscall::ALL[i]) {
            mask |= 1 << Syscall::ALL[i].number();
        }
        i += 1;
    }
    mask
}

/// Bit n set for every syscall number n.
pub const fn all_syscalls_mask() -> u64 {
    let mut mask = 0u64;
    let mut i = 0;
    while i < Syscall::ALL.len() {
        mask |= 1 << Syscall::ALL[i].number();
        i += 1;
    }
    mask
}

/// What one filter can answer for one syscall number.
struct Reach {
    /// The least strict verdict it can give.
    least: Action,
    /// The strictest verdict it can give.
    most: Action,
    /// A rule it can reach looks at the object type or the badge.
    needs_capability: bool,
    /// A rule it can reach reads memory, or it can say `Notify`.
    needs_memory: bool,
    /// No rule it can reach reads the PC, and it can only say `Allow`,
    /// `Log` or `Errno`.
    registers_only: bool,
}

impl Reach {
    fn add(&mut self, action: Action) {
        self.least = self.least.min(action);
        self.most = self.most.max(action);
        self.registers_only &= matches!(action, Action::Allow | Action::Log | Action::Errno(_));
    }
}

/// The rules of `filter` that can decide syscall `number`: those that apply
/// to it, up to the first unconditional one; past the last, the default
/// `Allow`.
fn reachable(filter: &Filter, number: u64) -> Reach {
    // Kill is the strictest action, so the first `add` sets `least`.
    let mut reach = Reach {
        least: Action::Kill,
        most: Action::Allow,
        needs_capability: false,
        needs_memory: false,
        registers_only: true,
    };
    for rule in filter.rules().iter().filter(|r| r.applies_to(number)) {
        reach.add(rule.action);
        reach.registers_only &= !rule.reads_pc();
        reach.needs_capability |= rule.object_type.is_some() || rule.badge.is_some();
        reach.needs_memory |= rule.reads_memory() || rule.action == Action::Notify;
        if !rule.is_conditional() {
            return reach;
        }
    }
    reach.add(filter.default());
    reach.needs_memory |= filter.default() == Action::Notify;
    reach
}
