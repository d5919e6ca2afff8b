//! Entry stops paired with exit stops into calls.
//!
//! An exit stop ends the call its thread's last entry stop began. A thread
//! stops at most once in a syscall's entry, so an entry stop that finds
//! its thread's previous call still open means that call had no exit stop
//! (it was skipped, or it ended the thread, as `exit` does): it ends
//! there, unreturned. An exit stop with no entry before it (the tracer
//! was attached while the call ran) is reported on its own.

use std::collections::BTreeMap;

use abi::export::Event;

/// One syscall, from its entry stop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The thread that made it.
    pub thread: u32,
    /// The syscall number (the entry's `x8`).
    pub number: u64,
    /// `x0..x5` at the entry stop.
    pub args: [u64; 6],
    /// The entry stop's time.
    pub start: u64,
    /// How it ended.
    pub end: CallEnd,
}

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallEnd {
    /// Its exit stop came.
    Returned {
        /// The exit stop's time.
        time: u64,
        /// `x0`.
        result: u64,
        /// `x8`.
        second: u64,
    },
    /// The thread's next entry stop came first, at this time: no exit
    /// stop.
    NoExit {
        /// The next entry stop's time.
        time: u64,
    },
    /// The log ended first.
    Open,
}

/// What one stop completes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Completed {
    /// A call: the one an exit stop ends, or the one a new entry stop
    /// shows had no exit.
    Call(Call),
    /// An exit stop with no entry stop before it.
    Unpaired {
        /// The exit stop's time.
        time: u64,
        /// Its thread.
        thread: u32,
        /// Its syscall number.
        number: u64,
        /// `x0`.
        result: u64,
        /// `x8`.
        second: u64,
    },
}

/// The open call of each thread.
#[derive(Clone, Debug, Default)]
pub struct Pairing {
    open: BTreeMap<u32, Call>,
}

impl Pairing {
    /// Takes one event; a syscall stop may complete something.
    pub fn take(&mut self, event: &Event) -> Option<Completed> {
        match *event {
            Event::SyscallEntry {
                time,
                thread,
                number,
                args,
            } => {
                let call = Call {
                    thread,
                    number,
                    args,
                    start: time,
                    end: CallEnd::Open,
                };
                self.open.insert(thread, call).map(|mut earlier| {
                    earlier.end = CallEnd::NoExit { time };
                    Completed::Call(earlier)
                })
            }
            Event::SyscallExit {
                time,
                thread,
                number,
                result,
                second,
            } => Some(match self.open.remove(&thread) {
                Some(mut call) => {
                    call.end = CallEnd::Returned {
                        time,
                        result,
                        second,
                    };
                    Completed::Call(call)
                }
                None => Completed::Unpaired {
                    time,
                    thread,
                    number,
                    result,
                    second,
                },
            }),
            _ => None,
        }
    }

    /// The calls still open when the log ended, in the order they began.
    pub fn finish(self) -> Vec<Call> {
        let mut open: Vec<Call> = self.open.into_values().collect();
        open.sort_by_key(|call| call.start);
        open
    }
}

/// Every call of `events` and the unpaired exits, in the order they were
/// completed (then the open calls).
pub fn pair<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<Completed> {
    let mut pairing = Pairing::default();
    let mut completed: Vec<Completed> = events
        .into_iter()
        .filter_map(|event| pairing.take(event))
        .collect();
    completed.extend(pairing.finish().into_iter().map(Completed::Call));
    completed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(time: u64, thread: u32, number: u64) -> Event {
        Event::SyscallEntry {
            time,
            thread,
            number,
            args: [time; 6],
        }
    }

    fn exit(time: u64, thread: u32, result: u64) -> Event {
        Event::SyscallExit {
            time,
            thread,
            number: 3,
            result,
            second: 0,
        }
    }

    fn call(thread: u32, start: u64, end: CallEnd) -> Completed {
        Completed::Call(Call {
            thread,
            number: 3,
            args: [start; 6],
            start,
            end,
        })
    }

    #[test]
    fn an_exit_ends_its_threads_call_across_other_threads() {
        let events = [entry(1, 1, 3), entry(2, 2, 3), exit(3, 1, 0), exit(4, 2, 8)];
        assert_eq!(
            pair(&events),
            [
                call(
                    1,
                    1,
                    CallEnd::Returned {
                        time: 3,
                        result: 0,
                        second: 0
                    }
                ),
                call(
                    2,
                    2,
                    CallEnd::Returned {
                        time: 4,
                        result: 8,
                        second: 0
                    }
                ),
            ]
        );
    }

    #[test]
    fn a_second_entry_ends_the_first_without_an_exit_and_the_last_stays_open() {
        let events = [entry(1, 1, 3), entry(5, 1, 3)];
        assert_eq!(
            pair(&events),
            [
                call(1, 1, CallEnd::NoExit { time: 5 }),
                call(1, 5, CallEnd::Open)
            ]
        );
    }

    #[test]
    fn an_exit_with_no_entry_is_unpaired() {
        assert_eq!(
            pair(&[exit(7, 2, 0)]),
            [Completed::Unpaired {
                time: 7,
                thread: 2,
                number: 3,
                result: 0,
                second: 0
            }]
        );
    }
}
