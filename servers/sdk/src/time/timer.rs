//! A one-shot deadline timer over the EL1 physical timer, which only the
//! holder of its IrqHandler can program (`IrqSetTimer`), and a receive on
//! an endpoint that gives up at a deadline.
//!
//! The interrupt signals a notification with one bit, the timer's; the
//! kernel then masks it until `IrqAck`. The timer line stays asserted
//! while the timer is enabled and expired, so every time the bit is seen
//! the timer is disarmed (or re-armed) before the acknowledgement, and so
//! is every cancel. Nothing trusts a wake-up: whatever ends a wait (the
//! bit of a timer cancelled after it fired, a capped arming of a far
//! deadline, another bit of the notification), the counter is read again
//! and the timer re-armed until the deadline has passed.
//!
//! `IrqSetTimer` counts from the moment the kernel programs the timer,
//! after the counter read the arming is computed from, so the interrupt
//! never comes before the deadline: waits are at least as long as asked.

use super::clock::Instant;
use crate::ipc::{self, Cptr, Message, Received};
use crate::syscall::{irq_ack, irq_set_notification, irq_set_timer};
use crate::tcb::Tcb;
use abi::message::NOTIFICATION_LABEL;
use abi::ErrorCode;

/// The most ticks one arming asks for: `CNTP_TVAL_EL0` holds a signed
/// 32-bit count (about 34 s at QEMU's 62.5 MHz). A later deadline is
/// reached by re-arming.
pub const MAX_ARM_TICKS: u64 = i32::MAX as u64;

/// What a timer must do at `now` for `deadline`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// The deadline has passed.
    Due,
    /// Arm for this many ticks (1 ..= [`MAX_ARM_TICKS`]).
    Arm(u64),
}

/// The decision every wait makes after each wake-up.
pub fn next(now: Instant, deadline: Instant) -> Next {
    match deadline.ticks_since(now) {
        0 => Next::Due,
        ticks => Next::Arm(ticks.min(MAX_ARM_TICKS)),
    }
}

/// A syscall step of the timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerStep {
    /// `IrqSetNotification`: routing the interrupt to the notification.
    BindIrq,
    /// `TcbBindNotification`: binding the notification to a thread.
    BindThread,
    /// `IrqSetTimer`: arming or disarming.
    SetTimer,
    /// `IrqAck`.
    Ack,
    /// `Wait` on the notification.
    Wait,
    /// `Recv` on the endpoint.
    Recv,
}

/// Why a timed wait ended without what it waited for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeError {
    /// The deadline passed first.
    TimedOut,
    /// The timer's bit is not one bit.
    BadBit(u64),
    /// A syscall failed.
    Syscall {
        /// The step.
        step: TimerStep,
        /// The kernel's answer.
        code: ErrorCode,
    },
}

fn at(step: TimerStep, result: Result<(), ErrorCode>) -> Result<(), TimeError> {
    result.map_err(|code| TimeError::Syscall { step, code })
}

/// A one-shot timer: an IrqHandler for the physical timer's interrupt and
/// the notification it signals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timer {
    irq: Cptr,
    notification: Cptr,
    bit: u64,
    armed_for: Option<Instant>,
    other: u64,
}

impl Timer {
    /// A timer through the IrqHandler `irq` (write right; the physical
    /// timer's, as `abi::bootinfo::BootInfo::irq` names it for the root
    /// task): its interrupt signals `signal` (a notification capability,
    /// write right, badged `bit` or unbadged with `bit` = 1), and the
    /// timer waits on `notification` (the same notification, read
    /// right). Starts disarmed.
    pub fn new(irq: Cptr, signal: Cptr, notification: Cptr, bit: u64) -> Result<Timer, TimeError> {
        if bit.count_ones() != 1 {
            return Err(TimeError::BadBit(bit));
        }
        at(TimerStep::BindIrq, irq_set_notification(irq.0, signal.0))?;
        let mut timer = Timer {
            irq,
            notification,
            bit,
            armed_for: None,
            other: 0,
        };
        timer.reset()?;
        Ok(timer)
    }

    /// Binds the notification to `thread`, so that the timer ends its
    /// `Recv` ([`Timer::recv_until`] needs that of the thread calling it).
    pub fn bind_to(&self, thread: Tcb) -> Result<(), TimeError> {
        at(
            TimerStep::BindThread,
            thread.bind_notification(Some(self.notification)),
        )
    }

    /// The timer's bit of the notification word.
    pub fn bit(&self) -> u64 {
        self.bit
    }

    /// The deadline it is armed for, if any.
    pub fn armed_for(&self) -> Option<Instant> {
        self.armed_for
    }

    /// Other bits of the notification a wait took (the notification may
    /// be shared), cleared.
    pub fn take_other_bits(&mut self) -> u64 {
        core::mem::take(&mut self.other)
    }

    /// Disarmed, the interrupt acknowledged: no expired timer holds the
    /// line, and the next expiry comes through.
    fn reset(&mut self) -> Result<(), TimeError> {
        self.armed_for = None;
        at(TimerStep::SetTimer, irq_set_timer(self.irq.0, 0))?;
        at(TimerStep::Ack, irq_ack(self.irq.0))
    }

    /// Arms the timer for `deadline`; `Ok(false)` (and disarmed) if it has
    /// passed already. Arming again for the deadline it is armed for does
    /// nothing.
    pub fn arm(&mut self, deadline: Instant) -> Result<bool, TimeError> {
        match next(super::clock::now(), deadline) {
            Next::Due => {
                self.cancel()?;
                Ok(false)
            }
            Next::Arm(_) if self.armed_for == Some(deadline) => Ok(true),
            Next::Arm(ticks) => {
                at(TimerStep::SetTimer, irq_set_timer(self.irq.0, ticks))?;
                at(TimerStep::Ack, irq_ack(self.irq.0))?;
                self.armed_for = Some(deadline);
                Ok(true)
            }
        }
    }

    /// Disarms the timer. Its bit may be set already (it fired just
    /// before): a later wait sees it, re-reads the counter and waits on.
    pub fn cancel(&mut self) -> Result<(), TimeError> {
        if self.armed_for.is_some() {
            self.reset()?;
        }
        Ok(())
    }

    /// A word taken from the notification: the timer's bit resets the
    /// timer (the kernel masked its interrupt), other bits are kept.
    fn took(&mut self, word: u64) -> Result<(), TimeError> {
        self.other |= word & !self.bit;
        if word & self.bit != 0 {
            self.reset()?;
        }
        Ok(())
    }

    /// Waits until `deadline` has passed (at once if it has).
    pub fn sleep_until(&mut self, deadline: Instant) -> Result<(), TimeError> {
        while self.arm(deadline)? {
            let word = ipc::wait(self.notification).map_err(|code| TimeError::Syscall {
                step: TimerStep::Wait,
                code,
            })?;
            self.took(word)?;
        }
        Ok(())
    }

    /// Waits for at least `duration`.
    pub fn sleep(&mut self, duration: core::time::Duration) -> Result<(), TimeError> {
        self.sleep_until(super::clock::deadline_after(duration))
    }

    /// Receives on `endpoint` until `deadline`: a message, or the other
    /// bits of the timer's notification as a `NOTIFICATION_LABEL` message
    /// (badge = those bits), or `TimedOut` once the deadline has passed
    /// (at once if it has, without receiving). The notification must be
    /// bound to the calling thread ([`Timer::bind_to`]). The timer stays
    /// armed for `deadline` after a message, so a server loop with one
    /// deadline arms it once.
    pub fn recv_until(&mut self, endpoint: Cptr, deadline: Instant) -> Result<Received, TimeError> {
        loop {
            let other = self.take_other_bits();
            if other != 0 {
                return Ok(notification_message(other));
            }
            if !self.arm(deadline)? {
                return Err(TimeError::TimedOut);
            }
            let received = ipc::recv(endpoint).map_err(|code| TimeError::Syscall {
                step: TimerStep::Recv,
                code,
            })?;
            if received.message.info.label() != NOTIFICATION_LABEL {
                return Ok(received);
            }
            self.took(received.badge)?;
        }
    }
}

/// What a `Recv` ended by the bound notification returns.
fn notification_message(word: u64) -> Received {
    Received {
        message: Message::new(NOTIFICATION_LABEL, &[]),
        badge: word,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_is_due_once_reached_and_armed_for_what_is_left() {
        let deadline = Instant(10_000);
        assert_eq!(next(Instant(10_000), deadline), Next::Due);
        assert_eq!(next(Instant(u64::MAX), deadline), Next::Due);
        assert_eq!(next(Instant(9_999), deadline), Next::Arm(1));
        assert_eq!(next(Instant(0), deadline), Next::Arm(10_000));
        // A far deadline is armed in steps the timer holds: waking at the
        // first is early, and re-checked.
        assert_eq!(
            next(Instant(0), Instant(u64::MAX)),
            Next::Arm(MAX_ARM_TICKS)
        );
    }

    #[test]
    fn the_timer_bit_is_one_bit_and_other_bits_are_kept() {
        // On the host every syscall fails: the first is the routing.
        assert_eq!(
            Timer::new(Cptr(5), Cptr(6), Cptr(7), 0b11),
            Err(TimeError::BadBit(0b11))
        );
        assert_eq!(
            Timer::new(Cptr(5), Cptr(6), Cptr(7), 0),
            Err(TimeError::BadBit(0))
        );
        assert_eq!(
            Timer::new(Cptr(5), Cptr(6), Cptr(7), 1 << 63),
            Err(TimeError::Syscall {
                step: TimerStep::BindIrq,
                code: ErrorCode::InvalidSyscall
            })
        );
        let mut timer = Timer {
            irq: Cptr(5),
            notification: Cptr(7),
            bit: 1 << 63,
            armed_for: None,
            other: 0,
        };
        assert_eq!(timer.took(0b101), Ok(()), "no timer bit: no syscall");
        assert_eq!(timer.take_other_bits(), 0b101);
        assert_eq!(timer.take_other_bits(), 0);
        assert_eq!(timer.cancel(), Ok(()), "not armed: nothing to do");
        let received = notification_message(0b10);
        assert_eq!(received.message.info.label(), NOTIFICATION_LABEL);
        assert_eq!(received.badge, 0b10);
    }
}
