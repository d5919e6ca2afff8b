//! The root task's checks of the SDK's time (`sdk::time`) on the physical
//! timer its IrqHandler is for: a sleep lasts at least what it asked, a
//! receive with a deadline on an endpoint nobody sends to times out (and
//! not before the deadline, even when the bit of a cancelled timer that
//! had fired is waiting), one whose deadline has passed times out at
//! once, and another bit of the timer's notification ends it. Timing
//! under QEMU is noisy: every bound is a lower one.

use abi::bootinfo::ROOT_TCB_SLOT;
use abi::bootinfo::{BootInfo, ROOT_CNODE_SLOT, ROOT_FIRST_FREE_SLOT, ROOT_IRQ_SLOT};
use abi::cap::{CapType, Rights};
use abi::message::NOTIFICATION_LABEL;
use core::time::Duration;
use sdk::ipc::{self, Cptr};
use sdk::println;
use sdk::syscall::{cnode, retype};
use sdk::tcb::Tcb;
use sdk::time::{self, TimeError, Timer};

/// The checks' objects, in slots the root's other checks leave free.
const MEMORY: u64 = ROOT_FIRST_FREE_SLOT + 6;
const NOTIFICATION: u64 = ROOT_FIRST_FREE_SLOT + 7;
const TIMER_SIGNAL: u64 = ROOT_FIRST_FREE_SLOT + 8;
const ENDPOINT: u64 = ROOT_FIRST_FREE_SLOT + 9;
const OTHER_SIGNAL: u64 = ROOT_FIRST_FREE_SLOT + 10;
/// The timer's bit of the notification word, and another one.
const TIMER_BIT: u64 = 1 << 4;
const OTHER_BIT: u64 = 1 << 1;
/// 64 KiB for a notification and an endpoint.
const MEMORY_BITS: u64 = 16;
/// What the sleeps and deadlines ask for.
const WAIT: Duration = Duration::from_millis(2);

/// Returns 0 or the number of the first failed check.
pub fn check(info: &BootInfo) -> i32 {
    let Some(largest) = (0..info.untypeds.len()).max_by_key(|&i| info.untypeds[i].size_bits) else {
        return 80;
    };
    let untyped = BootInfo::untyped_slot(largest);
    expect!(
        81,
        retype(untyped, CapType::Untyped, MEMORY_BITS, MEMORY, 1),
        Ok(())
    );
    let failed = check_with_objects();
    // One revoke takes back what the checks made, whatever they did.
    expect!(97, cnode::revoke(ROOT_CNODE_SLOT, MEMORY), Ok(()));
    expect!(98, cnode::delete(ROOT_CNODE_SLOT, MEMORY), Ok(()));
    failed
}

fn check_with_objects() -> i32 {
    expect!(
        82,
        retype(MEMORY, CapType::Notification, 0, NOTIFICATION, 1),
        Ok(())
    );
    expect!(
        83,
        retype(MEMORY, CapType::Endpoint, 0, ENDPOINT, 1),
        Ok(())
    );
    for (slot, bit) in [(TIMER_SIGNAL, TIMER_BIT), (OTHER_SIGNAL, OTHER_BIT)] {
        expect!(
            84,
            cnode::mint(
                ROOT_CNODE_SLOT,
                NOTIFICATION,
                slot,
                Rights::WRITE,
                Some(bit)
            ),
            Ok(())
        );
    }
    let mut timer = match Timer::new(
        Cptr(ROOT_IRQ_SLOT),
        Cptr(TIMER_SIGNAL),
        Cptr(NOTIFICATION),
        TIMER_BIT,
    ) {
        Ok(timer) => timer,
        Err(error) => {
            println!("driver: the timer could not be set up: {error:?}");
            return 85;
        }
    };
    expect!(86, timer.bind_to(Tcb(Cptr(ROOT_TCB_SLOT))), Ok(()));
    let frequency = time::frequency();
    let at_least = time::ticks_for(WAIT, frequency);
    expect!(87, at_least > 0, true);

    // A sleep lasts at least what it asked for.
    let start = time::now();
    expect!(88, timer.sleep(WAIT), Ok(()));
    let slept = time::now().ticks_since(start);
    expect!(89, slept >= at_least, true);
    expect!(90, timer.armed_for(), None);

    // Nobody sends on the endpoint: the receive times out, not before its
    // deadline.
    let start = time::now();
    let deadline = start.after(WAIT, frequency);
    expect!(
        91,
        timer.recv_until(Cptr(ENDPOINT), deadline),
        Err(TimeError::TimedOut)
    );
    expect!(92, time::now() >= deadline, true);

    // A timer cancelled after it fired leaves its bit set: the next
    // receive wakes for it, sees its deadline has not come, and waits on.
    // (Arming can find its 200 µs deadline past already when the
    // emulator's host is busy between reading the counter and arming:
    // then it is tried again.)
    let armed = (0..10)
        .any(|_| timer.arm(time::now().after(Duration::from_micros(200), frequency)) == Ok(true));
    expect!(93, armed, true);
    sdk::probe::spin_ms(2);
    expect!(93, timer.cancel(), Ok(()));
    let deadline = time::now().after(WAIT, frequency);
    expect!(
        94,
        timer.recv_until(Cptr(ENDPOINT), deadline),
        Err(TimeError::TimedOut)
    );
    expect!(94, time::now() >= deadline, true);

    // A deadline that has passed times out at once; another bit of the
    // notification ends the receive as a notification message.
    expect!(
        95,
        timer.recv_until(Cptr(ENDPOINT), time::now()),
        Err(TimeError::TimedOut)
    );
    expect!(96, ipc::signal(Cptr(OTHER_SIGNAL)), Ok(()));
    let received = timer.recv_until(Cptr(ENDPOINT), time::now().after(WAIT, frequency));
    expect!(
        96,
        received.map(|r| (r.message.info.label(), r.badge)),
        Ok((NOTIFICATION_LABEL, OTHER_BIT))
    );
    expect!(96, timer.cancel(), Ok(()));
    println!(
        "driver: a 2 ms sleep on the timer lasted at least 2 ms by the counter; a receive with a 2 ms deadline on an endpoint nobody sends to timed out, not before it"
    );
    0
}
