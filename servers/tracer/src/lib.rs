//! The reference tracer's logic: trace stops in, strace-like lines out.
//!
//! A traced thread stops at the entry and at the exit of each syscall
//! (`abi::trace`, decoded by `sdk::trace::Stop`). [`Tracer`] keeps each
//! thread's entry stop until its exit stop arrives and then gives one
//! line for the pair, the arguments from the entry and the result from
//! the exit:
//!
//! ```text
//! [task 3] call(ep=5, label=0x2, 0x1, 0x2) = 0
//! [task 3] signal(ntfn=4) = denied (denied by policy)
//! [task 3] debug_print(console=1, 0x418ab4, 81) = 0
//! ```
//!
//! A stop names `x0`'s capability only by its slot: the object behind it
//! and its badge are not in the stop. The tracer prints `ep=5` only for
//! slots it was told about ([`Tracer::name_slot`]), `x0=5` otherwise.
//! Results that are error codes print by name (`= 0` for success).
//!
//! Everything here is a plain function of stops, so it unit-tests on the
//! host; the program around it answers the stops (`sdk::trace::serve`).
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]

use abi::{ErrorCode, MessageInfo, Syscall};
use core::fmt;
use sdk::trace::{Stop, StopKind};

/// Threads whose entry stops a tracer can hold at once.
pub const MAX_THREADS: usize = 8;
/// Slots a tracer can be told the kind of.
pub const MAX_SLOTS: usize = 16;

/// What one stop completes: a line to print, or nothing yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A syscall that returned: its entry and its exit stop.
    Returned {
        /// The entry stop (the arguments as the thread made the call).
        entry: Stop,
        /// The exit stop (the result).
        exit: Stop,
    },
    /// A syscall that will not return (`exit`), or an entry whose exit
    /// stop never came: the next entry of its thread arrived first (the
    /// tracer skipped the call, or the policy server answered it in the
    /// kernel's stead).
    NoReturn {
        /// Its entry stop.
        entry: Stop,
    },
    /// An exit stop with no entry seen (the tracer attached mid-call).
    Unpaired {
        /// The exit stop.
        exit: Stop,
    },
    /// A single-stepped instruction.
    Step {
        /// The step stop.
        stop: Stop,
    },
}

/// Pairs entry and exit stops and names slots.
#[derive(Clone, Copy, Debug)]
pub struct Tracer {
    pending: [Option<Stop>; MAX_THREADS],
    slots: [Option<(u64, &'static str)>; MAX_SLOTS],
}

impl Default for Tracer {
    fn default() -> Self {
        Tracer::new()
    }
}

impl Tracer {
    /// A tracer that knows no slots and holds no stops.
    pub const fn new() -> Tracer {
        Tracer {
            pending: [None; MAX_THREADS],
            slots: [None; MAX_SLOTS],
        }
    }

    /// From now on `x0 == slot` prints as `kind=slot` (`ep`, `ntfn`,
    /// `console`, ...). Ignored once [`MAX_SLOTS`] are named.
    pub fn name_slot(mut self, slot: u64, kind: &'static str) -> Tracer {
        if let Some(free) = self.slots.iter_mut().find(|s| s.is_none()) {
            *free = Some((slot, kind));
        }
        self
    }

    fn slot_kind(&self, slot: u64) -> Option<&'static str> {
        self.slots
            .iter()
            .flatten()
            .find(|(s, _)| *s == slot)
            .map(|(_, kind)| *kind)
    }

    /// Takes one stop. An entry stop is held until its exit stop (`None`
    /// now), except `exit`'s, which never returns; a step is reported as
    /// it comes. An entry that arrives while the same thread's last entry
    /// is still held means that call was skipped (no exit stop): that one
    /// is reported ([`Event::NoReturn`]) and the new one held.
    pub fn stop(&mut self, stop: &Stop) -> Option<Event> {
        match stop.kind {
            StopKind::Step => Some(Event::Step { stop: *stop }),
            StopKind::Exit => match self.take(stop.thread) {
                Some(entry) => Some(Event::Returned { entry, exit: *stop }),
                None => Some(Event::Unpaired { exit: *stop }),
            },
            StopKind::Entry => {
                let skipped = self.take(stop.thread);
                if stop.syscall() == Some(Syscall::Exit) {
                    // Reported at once: nothing comes back from it. (A
                    // skipped call before it is lost from view; exit is
                    // what a person wants to see.)
                    return Some(Event::NoReturn { entry: *stop });
                }
                self.hold(*stop);
                skipped.map(|entry| Event::NoReturn { entry })
            }
        }
    }

    /// Removes and returns the entry stop held for `thread`.
    pub fn take(&mut self, thread: u64) -> Option<Stop> {
        self.pending
            .iter_mut()
            .find(|p| p.is_some_and(|s| s.thread == thread))
            .and_then(Option::take)
    }

    fn hold(&mut self, stop: Stop) {
        // A full table forgets the oldest slot's entry: that call's line
        // will come out unpaired.
        let index = self.pending.iter().position(Option::is_none).unwrap_or(0);
        self.pending[index] = Some(stop);
    }

    /// The event as one line (without a newline).
    pub fn line<'a>(&'a self, event: &'a Event) -> Line<'a> {
        Line {
            tracer: self,
            event,
            name: None,
        }
    }

    /// The event as one line whose thread is shown by `name` as
    /// `[name#N]` (the kernel's console tag), not as `[task N]`.
    pub fn named_line<'a>(&'a self, event: &'a Event, name: &'a str) -> Line<'a> {
        Line {
            tracer: self,
            event,
            name: Some(name),
        }
    }
}

/// One [`Event`] as an strace-like line.
pub struct Line<'a> {
    tracer: &'a Tracer,
    event: &'a Event,
    name: Option<&'a str>,
}

/// Who a line is about: `[task N]`, or `[name#N]`.
struct Who<'a>(Option<&'a str>, u64);

impl fmt::Display for Who<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(name) => write!(f, "[{name}#{}]", self.1),
            None => write!(f, "[task {}]", self.1),
        }
    }
}

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.event {
            Event::Returned { entry, exit } => {
                write!(f, "{} ", Who(self.name, entry.thread))?;
                self.call(f, entry)?;
                write!(f, " = ")?;
                result(f, entry, exit)
            }
            Event::NoReturn { entry } if entry.syscall() == Some(Syscall::Exit) => {
                write!(
                    f,
                    "{} exit({}) = ?",
                    Who(self.name, entry.thread),
                    entry.regs[0] as i64
                )
            }
            Event::NoReturn { entry } => {
                write!(f, "{} ", Who(self.name, entry.thread))?;
                self.call(f, entry)?;
                write!(f, " = ? (no exit stop)")
            }
            Event::Unpaired { exit } => {
                let who = Who(self.name, exit.thread);
                write!(f, "{who} <... {} resumed> = ", exit.name())?;
                result(f, exit, exit)
            }
            Event::Step { stop } => {
                write!(f, "{} step at {:#x}", Who(self.name, stop.thread), stop.pc)
            }
        }
    }
}

impl Line<'_> {
    /// `x0` as `kind=slot` or `x0=slot`.
    fn slot(&self, f: &mut fmt::Formatter<'_>, x0: u64) -> fmt::Result {
        match self.tracer.slot_kind(x0) {
            Some(kind) => write!(f, "{kind}={x0}"),
            None => write!(f, "x0={x0}"),
        }
    }

    /// `name(arguments)` from an entry stop.
    fn call(&self, f: &mut fmt::Formatter<'_>, entry: &Stop) -> fmt::Result {
        let r = &entry.regs;
        let Some(syscall) = entry.syscall() else {
            return write!(
                f,
                "syscall_{}({:#x}, {:#x}, {:#x}, {:#x})",
                entry.number, r[0], r[1], r[2], r[3]
            );
        };
        write!(f, "{}(", syscall.name())?;
        match syscall {
            Syscall::Null | Syscall::Yield | Syscall::BenchFloor => {}
            Syscall::Exit => write!(f, "{}", r[0] as i64)?,
            Syscall::DebugPrint => {
                self.slot(f, r[0])?;
                write!(f, ", {:#x}, {}", r[2], r[3])?;
            }
            Syscall::Send | Syscall::NBSend | Syscall::Call | Syscall::ReplyRecv => {
                self.slot(f, r[0])?;
                message(f, r)?;
            }
            Syscall::Reply => {
                let info = MessageInfo::from(r[1]);
                write!(f, "label={:#x}", info.label())?;
                words(f, r, info)?;
            }
            Syscall::Recv | Syscall::NBRecv | Syscall::Wait | Syscall::Poll | Syscall::Signal => {
                self.slot(f, r[0])?
            }
            _ => {
                self.slot(f, r[0])?;
                // x2.. without the zeros at the end: most calls take a
                // few arguments.
                let used = r[2..6].iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
                for x in &r[2..2 + used] {
                    write!(f, ", {x:#x}")?;
                }
            }
        }
        write!(f, ")")
    }
}

/// `, label=L` and the message words `x2..` (as many as the length says,
/// at most the six in registers), `, caps=N` if any.
fn message(f: &mut fmt::Formatter<'_>, r: &[u64; 9]) -> fmt::Result {
    let info = MessageInfo::from(r[1]);
    write!(f, ", label={:#x}", info.label())?;
    words(f, r, info)
}

fn words(f: &mut fmt::Formatter<'_>, r: &[u64; 9], info: MessageInfo) -> fmt::Result {
    let shown = usize::from(info.length()).min(6);
    for x in &r[2..2 + shown] {
        write!(f, ", {x:#x}")?;
    }
    if info.length() > 6 {
        write!(f, ", ...")?;
    }
    if info.caps() > 0 {
        write!(f, ", caps={}", info.caps())?;
    }
    Ok(())
}

/// The result: an error code by name (`0` for success), else the value;
/// what came back besides it for calls that return more.
fn result(f: &mut fmt::Formatter<'_>, entry: &Stop, exit: &Stop) -> fmt::Result {
    let x0 = exit.regs[0];
    match ErrorCode::from_raw(x0) {
        Some(ErrorCode::Ok) => write!(f, "0")?,
        Some(code) => return write!(f, "{} ({})", code.name(), code.describe()),
        None => return write!(f, "{x0:#x}"),
    }
    match entry.syscall() {
        Some(Syscall::Wait | Syscall::Poll) => write!(f, " (word {:#x})", exit.regs[8]),
        Some(Syscall::Recv | Syscall::NBRecv | Syscall::Call | Syscall::ReplyRecv) => {
            let info = MessageInfo::from(exit.regs[1]);
            write!(f, " (label={:#x}", info.label())?;
            words(f, &exit.regs, info)?;
            write!(f, ")")
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::trace::{TRACE_ENTRY, TRACE_EXIT, TRACE_STEP};

    /// A stop as the kernel sends it: `number`, `x0..x5`, `x8`, pc,
    /// thread, `x6`, `x7`, time.
    fn stop(label: u64, thread: u64, number: u64, x: [u64; 6], x8: u64) -> Stop {
        let words = [
            number, x[0], x[1], x[2], x[3], x[4], x[5], x8, 0x40_1000, thread, 0, 0, 0,
        ];
        Stop::from_words(label, &words, 0).expect("a stop")
    }

    fn info(label: u64, length: u8) -> u64 {
        MessageInfo::with(label, length).into()
    }

    fn lines(tracer: &mut Tracer, stops: &[Stop]) -> Vec<String> {
        let mut out = Vec::new();
        for s in stops {
            if let Some(event) = tracer.stop(s) {
                out.push(tracer.line(&event).to_string());
            }
        }
        out
    }

    #[test]
    fn an_entry_and_its_exit_make_one_line() {
        let mut tracer = Tracer::new().name_slot(5, "ep");
        let call = Syscall::Call.number();
        let entry = stop(TRACE_ENTRY, 3, call, [5, info(2, 2), 1, 2, 0, 0], call);
        assert_eq!(tracer.stop(&entry), None, "held until the exit");
        let exit = stop(TRACE_EXIT, 3, call, [0, info(7, 0), 0, 0, 0, 0], 0);
        let event = tracer.stop(&exit).expect("a line");
        assert_eq!(
            tracer.line(&event).to_string(),
            "[task 3] call(ep=5, label=0x2, 0x1, 0x2) = 0 (label=0x7)"
        );
        assert_eq!(tracer.take(3), None, "nothing left held");
    }

    #[test]
    fn unknown_slots_print_as_x0_and_errors_by_name() {
        let mut tracer = Tracer::new().name_slot(5, "ntfn");
        let signal = Syscall::Signal.number();
        let denied = ErrorCode::Denied.raw();
        let out = lines(
            &mut tracer,
            &[
                stop(TRACE_ENTRY, 2, signal, [4, 0, 0, 0, 0, 0], signal),
                stop(TRACE_EXIT, 2, signal, [denied, 0, 0, 0, 0, 0], 0),
                stop(TRACE_ENTRY, 2, 19, [5, 0, 0, 0, 0, 0], 19),
                stop(TRACE_EXIT, 2, 19, [0, 0, 0, 0, 0, 0], 0x77),
            ],
        );
        assert_eq!(
            out,
            [
                "[task 2] signal(x0=4) = denied (denied by policy)",
                "[task 2] poll(ntfn=5) = 0 (word 0x77)",
            ]
        );
    }

    #[test]
    fn threads_are_paired_separately() {
        let mut tracer = Tracer::new().name_slot(1, "console");
        let print = Syscall::DebugPrint.number();
        let null = Syscall::Null.number();
        let out = lines(
            &mut tracer,
            &[
                stop(TRACE_ENTRY, 2, print, [1, 0, 0x4000, 81, 0, 0], print),
                stop(TRACE_ENTRY, 4, null, [0; 6], null),
                stop(TRACE_EXIT, 4, null, [0; 6], 0),
                stop(TRACE_EXIT, 2, print, [0, 0, 0x4000, 48, 0, 0], 0),
            ],
        );
        assert_eq!(
            out,
            [
                "[task 4] null() = 0",
                "[task 2] debug_print(console=1, 0x4000, 81) = 0",
            ]
        );
    }

    #[test]
    fn exit_skips_steps_and_strays_are_reported() {
        let mut tracer = Tracer::new();
        let null = Syscall::Null.number();
        let exit = Syscall::Exit.number();
        let copy = Syscall::CapCopy.number();
        let out = lines(
            &mut tracer,
            &[
                // Skipped: no exit stop, the next entry shows it.
                stop(TRACE_ENTRY, 2, null, [0; 6], null),
                stop(TRACE_ENTRY, 2, copy, [0, 0, 1, 6, 0, 0], copy),
                stop(
                    TRACE_EXIT,
                    2,
                    copy,
                    [ErrorCode::SlotOccupied.raw(), 0, 1, 6, 0, 0],
                    0,
                ),
                stop(TRACE_STEP, 2, 0, [0; 6], 0),
                stop(TRACE_EXIT, 2, null, [0x1234, 0, 0, 0, 0, 0], 0),
                stop(TRACE_ENTRY, 2, exit, [0, 0, 0, 0, 0, 0], exit),
            ],
        );
        assert_eq!(
            out,
            [
                "[task 2] null() = ? (no exit stop)",
                "[task 2] cap_copy(x0=0, 0x1, 0x6) = slot_occupied (destination slot is not empty)",
                "[task 2] step at 0x401000",
                "[task 2] <... null resumed> = 0x1234",
                "[task 2] exit(0) = ?",
            ]
        );
        assert_eq!(tracer.take(2), None, "exit holds nothing");
    }

    #[test]
    fn long_messages_and_unknown_numbers_stay_on_one_line() {
        let mut tracer = Tracer::new();
        let send = Syscall::Send.number();
        let big = MessageInfo::with(9, 8).with_caps(1).into();
        let out = lines(
            &mut tracer,
            &[
                stop(TRACE_ENTRY, 1, send, [2, big, 1, 2, 3, 4], send),
                stop(TRACE_EXIT, 1, send, [0; 6], 0),
                stop(TRACE_ENTRY, 1, 99, [1, 2, 3, 4, 5, 6], 99),
                stop(TRACE_EXIT, 1, 99, [1, 0, 0, 0, 0, 0], 0),
            ],
        );
        assert_eq!(
            out[0],
            "[task 1] send(x0=2, label=0x9, 0x1, 0x2, 0x3, 0x4, 0x0, 0x0, ..., caps=1) = 0"
        );
        assert_eq!(
            out[1],
            "[task 1] syscall_99(0x1, 0x2, 0x3, 0x4) = invalid_syscall (no such syscall)"
        );
    }

    #[test]
    fn a_full_table_forgets_rather_than_fails() {
        let mut tracer = Tracer::new();
        let null = Syscall::Null.number();
        for thread in 0..=MAX_THREADS as u64 {
            assert_eq!(
                tracer.stop(&stop(TRACE_ENTRY, thread, null, [0; 6], null)),
                None
            );
        }
        let last = MAX_THREADS as u64;
        assert!(matches!(
            tracer.stop(&stop(TRACE_EXIT, last, null, [0; 6], 0)),
            Some(Event::Returned { .. })
        ));
        assert!(matches!(
            tracer.stop(&stop(TRACE_EXIT, 0, null, [0; 6], 0)),
            Some(Event::Unpaired { .. })
        ));
    }
}
