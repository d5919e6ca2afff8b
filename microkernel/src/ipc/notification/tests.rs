//! Tests of `notification`.

use super::*;
use crate::thread::test_threads::ThreadVec;
use crate::thread::ThreadState;

fn threads(n: usize) -> ThreadVec {
    ThreadVec::new(n)
}

#[test]
fn signals_or_together_until_taken() {
    let mut t = threads(1);
    let mut n = Notification::EMPTY;
    signal(&mut t, &mut n, 0b001);
    signal(&mut t, &mut n, 0b100);
    assert_eq!(
        wait(&mut t, &mut n, ObjectId(0), ThreadId::nth(0), true).next,
        Next::Continue
    );
    assert_eq!(t[0].context.value(), 0b101);
    assert_eq!(n.word, 0);
    wait(&mut t, &mut n, ObjectId(0), ThreadId::nth(0), false);
    assert_eq!(
        t[0].context.value(),
        0,
        "poll of an empty notification returns 0"
    );
}

#[test]
fn a_signal_wakes_the_first_waiter_with_the_word() {
    let mut t = threads(2);
    let mut n = Notification::EMPTY;
    assert_eq!(
        wait(&mut t, &mut n, ObjectId(3), ThreadId::nth(0), true).next,
        Next::Blocked
    );
    assert_eq!(
        wait(&mut t, &mut n, ObjectId(3), ThreadId::nth(1), true).next,
        Next::Blocked
    );
    let e = signal(&mut t, &mut n, 0b10);
    assert_eq!(e.woken().collect::<Vec<_>>(), vec![ThreadId::nth(0)]);
    assert_eq!((t[0].context.result(), t[0].context.value()), (0, 0b10));
    assert_eq!(
        t[1].state(),
        ThreadState::BlockedOnNotification {
            notification: ObjectId(3)
        }
    );
    assert_eq!(n.word, 0);
}

#[test]
fn unbadged_capabilities_signal_bit_zero() {
    assert_eq!(signal_bits(0, false), 1);
    assert_eq!(signal_bits(0x40, true), 0x40);
}
