//! A thread's verdicts compiled to comparisons of `x0..x7`, for the
//! syscalls whose filters look at nothing else.
//!
//! For such a syscall the verdict is the strictest, over the filters that
//! can decide it, of each one's first matching rule (or its default); the
//! compiled form is that evaluation written out as a table of
//! comparisons, each `(x[register] & mask)` against `value`, with where
//! to go when it holds and when it does not. The vector walks it in
//! assembly on the registers as the thread left them
//! (`policy_fast_path.s`), so an allowed syscall goes on as one of a
//! thread without entry work and a refused one is answered there; the
//! lean entry walks it in Rust ([`RegisterProgram::verdict`]), the same
//! way. The property test in `tests.rs` holds it to [`super::evaluate`].
//!
//! A syscall is compiled when the lean entry judges it
//! (`VerdictCache::judged_by_lean_entry`), its verdict is not cached, and
//! every rule the deciding filters can reach for it compares registers,
//! message words in registers or the label, with `Allow` or `Errno` as
//! the only actions and defaults; and when its comparisons fit in the
//! table ([`PROGRAM_COMPARISONS`], shared by every syscall: the same
//! comparisons are kept once). Any other syscall is judged as before.

use super::cache::VerdictCache;
use super::description::Filter;
use abi::policy::{Action, ArgMatch, ArgOp, Operand, Rule};
use abi::{MessageInfo, Syscall};

/// How many comparisons a thread's table holds (every syscall's): as
/// many as keep a TCB's record within 4 KiB (a TCB is retyped from an
/// Untyped of that size).
pub const PROGRAM_COMPARISONS: usize = 16;

/// The link that ends the walk.
pub const END: u8 = u8::MAX;

// Every link but `END` names a comparison.
const _: () = assert!(PROGRAM_COMPARISONS < END as usize);

/// The outcomes of a comparison of the masked register with the value,
/// as bits: bit 0 less, bit 1 equal, bit 2 greater (the assembly's
/// `cset`/`cinc` of an unsigned compare gives the bit's number).
pub const LESS: u8 = 1 << 0;
/// See [`LESS`].
pub const EQUAL: u8 = 1 << 1;
/// See [`LESS`].
pub const GREATER: u8 = 1 << 2;
const ALWAYS: u8 = LESS | EQUAL | GREATER;

/// An `Errno`'s rank: above `Allow`'s (0), and ordered by code among
/// themselves, as [`Action`]'s order is, so the strictest is the largest.
pub const ERRNO_RANK: u32 = 1 << 16;

/// The label's bits in `x1`, and where they start.
fn label_field() -> (u64, u32) {
    let shift = u64::from(MessageInfo::new().with_label(1)).trailing_zeros();
    (u64::MAX << shift, shift)
}

/// One step of the walk: `(x[register] & mask)` compared with `value`.
/// If the outcome's bit is in `outcomes` it holds: the verdict so far
/// becomes the larger of it and `verdict`, and the walk goes on at
/// `on_hold`; else at `on_fail`. Links only go forward (or `END`).
///
/// `repr(C)`, 24 bytes: the assembly reads `mask` and `value` as one
/// pair and `verdict` with the four bytes after it as one word (offsets
/// checked in `fast_paths.rs`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// The bits of the register compared.
    pub mask: u64,
    /// What they are compared with.
    pub value: u64,
    /// The rank of the verdict a holding comparison gives: 0 for
    /// `Allow` (a comparison that is not its rule's last), else
    /// `ERRNO_RANK | code`.
    pub verdict: u32,
    /// `x0..x7`.
    pub register: u8,
    /// Which outcomes hold ([`LESS`], [`EQUAL`], [`GREATER`]).
    pub outcomes: u8,
    /// The next comparison when it holds.
    pub on_hold: u8,
    /// The next comparison when it does not.
    pub on_fail: u8,
}

impl Comparison {
    const UNUSED: Comparison = Comparison {
        mask: 0,
        value: 0,
        verdict: 0,
        register: 0,
        outcomes: 0,
        on_hold: END,
        on_fail: END,
    };

    /// Does it hold for `registers`?
    fn holds(&self, registers: &[u64; 8]) -> bool {
        let field = registers[usize::from(self.register & 7)] & self.mask;
        let outcome = match field.cmp(&self.value) {
            core::cmp::Ordering::Less => LESS,
            core::cmp::Ordering::Equal => EQUAL,
            core::cmp::Ordering::Greater => GREATER,
        };
        self.outcomes & outcome != 0
    }
}

/// A thread's compiled verdicts (see the module docs).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterProgram {
    /// Bit n: syscall n is compiled.
    compiled: u64,
    /// Per number: its first comparison (`END`: none, the verdict is
    /// `Allow`).
    start: [u8; 64],
    /// Every compiled syscall's comparisons.
    comparisons: [Comparison; PROGRAM_COMPARISONS],
}

/// One syscall's comparisons, linked from 0, while it is compiled.
type Scratch = heapless::Vec<Comparison, PROGRAM_COMPARISONS>;

impl RegisterProgram {
    /// Where the first comparisons' bytes lie in it (the assembly's).
    pub const START_OFFSET: usize = core::mem::offset_of!(RegisterProgram, start);
    /// Where the comparisons lie in it (the assembly's).
    pub const COMPARISONS_OFFSET: usize = core::mem::offset_of!(RegisterProgram, comparisons);

    /// No syscall compiled.
    pub const fn empty() -> RegisterProgram {
        RegisterProgram {
            compiled: 0,
            start: [END; 64],
            comparisons: [Comparison::UNUSED; PROGRAM_COMPARISONS],
        }
    }

    /// The program of the stack `filters`, whose cache is `cache`.
    pub fn new(filters: &[&Filter], cache: &VerdictCache) -> RegisterProgram {
        let mut program = RegisterProgram::empty();
        let mut used = 0;
        for syscall in Syscall::ALL {
            let number = syscall.number();
            if !cache.judged_by_lean_entry(number)
                || cache.cached_verdict(number).is_some()
                || cache.needs_capability(number)
            {
                continue;
            }
            let Some(own) = compile(filters, cache.deciding_filters(number), number) else {
                continue;
            };
            let start = match program.find(&own, used) {
                Some(start) => start,
                None if used + own.len() <= PROGRAM_COMPARISONS => {
                    for (i, comparison) in own.iter().enumerate() {
                        program.comparisons[used + i] = relocated(comparison, used);
                    }
                    used += own.len();
                    used - own.len()
                }
                None => continue,
            };
            program.start[number as usize] = if own.is_empty() { END } else { start as u8 };
            program.compiled |= 1 << number;
        }
        program
    }

    /// Bit n set: syscall n is compiled.
    pub fn compiled_mask(&self) -> u64 {
        self.compiled
    }

    /// The verdict of compiled syscall `number` for `registers`
    /// (`x0..x7`); `None` if it is not compiled.
    pub fn verdict(&self, number: u64, registers: &[u64; 8]) -> Option<Action> {
        if number >= 64 || self.compiled & (1 << number) == 0 {
            return None;
        }
        let mut rank = 0;
        let mut at = self.start[number as usize];
        // Links go forward: at most one step per comparison.
        for _ in 0..=PROGRAM_COMPARISONS {
            let Some(comparison) = self.comparisons.get(usize::from(at)) else {
                break;
            };
            at = if comparison.holds(registers) {
                rank = rank.max(comparison.verdict);
                comparison.on_hold
            } else {
                comparison.on_fail
            };
        }
        Some(match rank {
            0 => Action::Allow,
            errno => Action::Errno(errno as u16),
        })
    }

    /// Does every start and link name a comparison (a later one, for a
    /// link), or end the walk? (The assembly's walk relies on it: it has
    /// no bound of its own. `check_invariants` asks.)
    pub fn links_go_forward(&self) -> bool {
        let forward = |from: usize, to: u8| to == END || usize::from(to) > from;
        let starts = self
            .start
            .iter()
            .all(|&s| s == END || usize::from(s) < PROGRAM_COMPARISONS);
        starts
            && self
                .comparisons
                .iter()
                .enumerate()
                .all(|(i, c)| forward(i, c.on_hold) && forward(i, c.on_fail))
    }

    /// Where the first `used` comparisons already hold `own` (linked from
    /// 0), if they do.
    fn find(&self, own: &Scratch, used: usize) -> Option<usize> {
        if own.is_empty() {
            return Some(0);
        }
        (0..=used.checked_sub(own.len())?).find(|&start| {
            own.iter()
                .zip(&self.comparisons[start..])
                .all(|(c, placed)| relocated(c, start) == *placed)
        })
    }
}

impl Default for RegisterProgram {
    fn default() -> RegisterProgram {
        RegisterProgram::empty()
    }
}

/// `comparison`, linked from `base` instead of 0.
fn relocated(comparison: &Comparison, base: usize) -> Comparison {
    let link = |at: u8| if at == END { END } else { at + base as u8 };
    Comparison {
        on_hold: link(comparison.on_hold),
        on_fail: link(comparison.on_fail),
        ..*comparison
    }
}

/// `action`'s rank, if it is `Allow` or `Errno`.
fn rank(action: Action) -> Option<u32> {
    match action {
        Action::Allow => Some(0),
        Action::Errno(code) => Some(ERRNO_RANK | u32::from(code)),
        _ => None,
    }
}

/// One comparison of a rule, before it is linked.
#[derive(Clone, Copy)]
struct Condition {
    register: u8,
    mask: u64,
    outcomes: u8,
    value: u64,
}

/// What a rule compares.
enum Conditions {
    /// These registers (none: it always matches).
    Registers(heapless::Vec<Condition, 8>),
    /// Nothing it can match (a label wider than a label).
    Never,
    /// Something other than registers.
    Beyond,
}

/// The comparisons of `rule`.
fn conditions(rule: &Rule) -> Conditions {
    if rule.object_type.is_some() || rule.badge.is_some() || rule.bytes.is_some() {
        return Conditions::Beyond;
    }
    let mut out = heapless::Vec::new();
    if let Some(label) = rule.label {
        let (mask, shift) = label_field();
        if label > mask >> shift {
            return Conditions::Never;
        }
        let label = Condition {
            register: 1,
            mask,
            outcomes: EQUAL,
            value: label << shift,
        };
        if out.push(label).is_err() {
            return Conditions::Beyond;
        }
    }
    for &ArgMatch {
        operand,
        mask,
        op,
        value,
    } in &rule.args
    {
        let register = match operand {
            Operand::Register(r) if r < 8 => r,
            Operand::Word(w) if usize::from(w) < abi::REGISTER_MESSAGE_WORDS => w + 2,
            _ => return Conditions::Beyond,
        };
        let (outcomes, value) = match op {
            ArgOp::Eq => (EQUAL, value),
            ArgOp::Ne => (LESS | GREATER, value),
            ArgOp::Lt => (LESS, value),
            ArgOp::Le => (LESS | EQUAL, value),
            ArgOp::Gt => (GREATER, value),
            ArgOp::Ge => (GREATER | EQUAL, value),
            ArgOp::MaskedEq => (EQUAL, value & mask),
        };
        let condition = Condition {
            register,
            mask,
            outcomes,
            value,
        };
        if out.push(condition).is_err() {
            return Conditions::Beyond;
        }
    }
    Conditions::Registers(out)
}

/// Which link of a comparison is still open.
#[derive(Clone, Copy)]
enum Link {
    Hold,
    Fail,
}

/// One syscall's comparisons as they are written, with the links still
/// open: those to the next comparison written (a rule's failed
/// comparisons: the next rule, or whatever follows the filter) and those
/// to the next filter's first (a matched rule's last comparison).
struct Writer {
    out: Scratch,
    to_next: heapless::Vec<(usize, Link), { 2 * PROGRAM_COMPARISONS }>,
    to_next_filter: heapless::Vec<(usize, Link), { 2 * PROGRAM_COMPARISONS }>,
    /// No comparison of the current filter is written yet.
    filter_begins: bool,
}

impl Writer {
    /// Writes `comparison`; the open links it closes get its index.
    fn write(&mut self, comparison: Comparison) -> Option<usize> {
        let at = self.out.len();
        self.out.push(comparison).ok()?;
        let mut to_next = core::mem::take(&mut self.to_next);
        self.close(&mut to_next, at as u8);
        if core::mem::take(&mut self.filter_begins) {
            let mut to_next_filter = core::mem::take(&mut self.to_next_filter);
            self.close(&mut to_next_filter, at as u8);
        }
        Some(at)
    }

    fn close(
        &mut self,
        links: &mut heapless::Vec<(usize, Link), { 2 * PROGRAM_COMPARISONS }>,
        at: u8,
    ) {
        for &(i, link) in links.iter() {
            match link {
                Link::Hold => self.out[i].on_hold = at,
                Link::Fail => self.out[i].on_fail = at,
            }
        }
        links.clear();
    }

    /// A filter begins: what was open to the next comparison goes to the
    /// next filter's first (the previous filter's rules that failed).
    fn begin_filter(&mut self) -> Option<()> {
        for &link in self.to_next.iter() {
            self.to_next_filter.push(link).ok()?;
        }
        self.to_next.clear();
        self.filter_begins = true;
        Some(())
    }

    /// What reaches this point of the filter gets `verdict` (an
    /// unconditional rule's, or the default): a comparison that always
    /// holds, on to the next filter. An `Allow` is no comparison at all:
    /// what reaches it goes on with the next filter.
    fn end_filter_with(&mut self, verdict: u32) -> Option<()> {
        if verdict != 0 {
            let at = self.write(Comparison {
                outcomes: ALWAYS,
                verdict,
                ..Comparison::UNUSED
            })?;
            self.to_next_filter.push((at, Link::Hold)).ok()?;
        }
        Some(())
    }

    /// The comparisons, with every link still open ending the walk.
    fn finish(mut self) -> Option<Scratch> {
        self.begin_filter()?;
        let mut open = core::mem::take(&mut self.to_next_filter);
        self.close(&mut open, END);
        Some(self.out)
    }
}

/// Syscall `number`'s comparisons over the filters of `filters` whose
/// bit is set in `deciding`, linked from 0; `None` if a rule they can
/// reach looks at anything but registers, an action is neither `Allow`
/// nor `Errno`, or they do not fit.
fn compile(filters: &[&Filter], deciding: u8, number: u64) -> Option<Scratch> {
    let mut writer = Writer {
        out: Scratch::new(),
        to_next: heapless::Vec::new(),
        to_next_filter: heapless::Vec::new(),
        filter_begins: false,
    };
    for (position, filter) in filters.iter().enumerate() {
        if position >= 8 {
            return None; // evaluated whatever its bit (`evaluate_deciding`)
        }
        if deciding & (1 << position) == 0 {
            continue;
        }
        writer.begin_filter()?;
        let mut ended = false;
        for rule in filter.rules().iter().filter(|r| r.applies_to(number)) {
            let verdict = rank(rule.action)?;
            let conditions = match conditions(rule) {
                Conditions::Registers(conditions) => conditions,
                Conditions::Never => continue,
                Conditions::Beyond => return None,
            };
            if conditions.is_empty() {
                // Unconditional: it ends the filter.
                writer.end_filter_with(verdict)?;
                ended = true;
                break;
            }
            let last = conditions.len() - 1;
            let mut failing: heapless::Vec<(usize, Link), 8> = heapless::Vec::new();
            for (i, condition) in conditions.iter().enumerate() {
                let at = writer.write(Comparison {
                    mask: condition.mask,
                    value: condition.value,
                    verdict: if i == last { verdict } else { 0 },
                    register: condition.register,
                    outcomes: condition.outcomes,
                    ..Comparison::UNUSED
                })?;
                if i == last {
                    writer.to_next_filter.push((at, Link::Hold)).ok()?;
                } else {
                    writer.out[at].on_hold = at as u8 + 1;
                }
                failing.push((at, Link::Fail)).ok()?;
            }
            // Each of the rule's comparisons fails to what follows it.
            for link in failing {
                writer.to_next.push(link).ok()?;
            }
        }
        if !ended {
            writer.end_filter_with(rank(filter.default())?)?;
        }
    }
    writer.finish()
}
