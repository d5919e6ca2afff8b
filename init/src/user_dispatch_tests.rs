//! Syscall user dispatch in the in-guest suite. Each program returns its
//! exit status: 0 when every check passed, else the number of the first
//! failed check.
//!
//! While the selector blocks, a failed check's message would itself be
//! redirected, so every check runs with the selector at `Allow`; the
//! blocked calls only record what happened.

use abi::cap::CapType;
use abi::user_dispatch::{
    FLAGS_WORD, FLAG_SELECTOR_UNREADABLE, FRAME_BYTES, FRAME_WORDS, NUMBER_WORD, NZCV_WORD,
    PC_WORD, SP_WORD,
};
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, Syscall};
use core::sync::atomic::{AtomicU64, Ordering};
use sdk::ipc::Cptr;
use sdk::syscall::{raw_syscall, retype};
use sdk::user_dispatch::{
    self, trampoline_range, trampoline_syscall, DispatchBuffer, Frame, Selector, SelectorByte,
};
use sdk::vspace::{Frame as FrameCap, VSpace};

static SELECTOR: SelectorByte = SelectorByte::new(Selector::Allow);
static FRAME: DispatchBuffer = DispatchBuffer::new();

/// What the handler saw, for the checks made after it returned.
static HANDLED: AtomicU64 = AtomicU64::new(0);
static SEEN_NUMBER: AtomicU64 = AtomicU64::new(u64::MAX);
static SEEN_FRAME_NUMBER: AtomicU64 = AtomicU64::new(u64::MAX);
static SEEN_X2: AtomicU64 = AtomicU64::new(0);
static SEEN_PC: AtomicU64 = AtomicU64::new(0);
static SEEN_FLAGS: AtomicU64 = AtomicU64::new(u64::MAX);
static SEEN_FRAME_ADDRESS: AtomicU64 = AtomicU64::new(0);

/// A page's bytes.
const PAGE_BYTES: u64 = 4096;

/// The result the handler makes up: recognisably not the kernel's.
const EMULATED: u64 = 0x5eed_0000;

/// Emulates every redirected syscall: records it, answers
/// `EMULATED | x2`, and resumes the interrupted code.
extern "C" fn handler(frame: &mut Frame, number: u64) -> ! {
    HANDLED.fetch_add(1, Ordering::SeqCst);
    SEEN_NUMBER.store(number, Ordering::SeqCst);
    SEEN_FRAME_NUMBER.store(frame.number, Ordering::SeqCst);
    SEEN_X2.store(frame.x[2], Ordering::SeqCst);
    SEEN_PC.store(frame.pc, Ordering::SeqCst);
    SEEN_FLAGS.store(frame.flags, Ordering::SeqCst);
    SEEN_FRAME_ADDRESS.store(frame as *mut Frame as u64, Ordering::SeqCst);
    frame.x[0] = EMULATED | frame.x[2];
    let _ = user_dispatch::return_to(frame);
    // A refused frame: leave through the trampoline (an `exit` from here
    // would be redirected again).
    trampoline_syscall(Syscall::Exit.number(), [0, 0, 90, 0, 0, 0, 0, 0]);
    loop {
        core::hint::spin_loop();
    }
}

/// `Null` with `x2` = `tag` from outside the trampoline: `x0` as returned.
#[inline(never)]
fn null_outside(tag: u64) -> u64 {
    raw_syscall(Syscall::Null.number(), 0, tag, 0).0
}

/// The same from inside the trampoline.
fn null_inside(tag: u64) -> u64 {
    trampoline_syscall(Syscall::Null.number(), [0, 0, tag, 0, 0, 0, 0, 0])[0]
}

/// `BootProgram::UserDispatch`.
pub fn run() -> i32 {
    let range = trampoline_range();
    let handler_address = handler as *const () as usize as u64;
    let good = [
        range.start,
        range.end,
        handler_address,
        FRAME.address(),
        SELECTOR.address(),
    ];
    let with = |index: usize, value: u64| {
        let mut args = good;
        args[index] = value;
        args
    };
    expect!(1, range.end - range.start, 8);
    // Bad configurations, each with its typed error; none turns it on.
    let bad = ErrorCode::InvalidArgument;
    let address = ErrorCode::InvalidAddress;
    expect!(2, user_dispatch::set_raw(1, good), Err(bad));
    expect!(
        3,
        user_dispatch::set_raw(0, with(1, range.start - 4)),
        Err(bad)
    );
    expect!(
        4,
        user_dispatch::set_raw(0, with(2, handler_address + 2)),
        Err(bad)
    );
    expect!(
        5,
        user_dispatch::set_raw(0, with(3, FRAME.address() + 4)),
        Err(bad)
    );
    let kernel = crate::programs::KERNEL_PROBE_ADDRESS;
    expect!(6, user_dispatch::set_raw(0, with(2, kernel)), Err(address));
    expect!(7, user_dispatch::set_raw(0, with(3, kernel)), Err(address));
    expect!(8, user_dispatch::set_raw(0, with(4, kernel)), Err(address));
    // Code is not writable: no buffer there.
    expect!(
        9,
        user_dispatch::set_raw(0, with(3, handler_address & !7)),
        Err(address)
    );
    // Unmapped user memory: no buffer, no selector.
    expect!(
        10,
        user_dispatch::set_raw(0, with(3, FRAME_MAP_START)),
        Err(address)
    );
    expect!(
        11,
        user_dispatch::set_raw(0, with(4, FRAME_MAP_START)),
        Err(address)
    );
    SELECTOR.set(Selector::Block);
    expect!(12, null_outside(1), 0);
    expect!(13, HANDLED.load(Ordering::SeqCst), 0);
    SELECTOR.set(Selector::Allow);

    // On, selector Allow: every syscall runs.
    expect!(
        20,
        user_dispatch::set(range.clone(), handler, &FRAME, &SELECTOR),
        Ok(())
    );
    expect!(21, null_outside(0x21), 0);
    expect!(22, HANDLED.load(Ordering::SeqCst), 0);

    // Block (a store, no syscall): the call from outside the range is
    // the handler's to answer.
    SELECTOR.set(Selector::Block);
    let emulated = null_outside(0x23);
    let exit_answer = raw_syscall(Syscall::Exit.number(), 0, 0x24, 0).0;
    let inside = null_inside(0x25);
    SELECTOR.set(Selector::Allow);
    expect!(23, emulated, EMULATED | 0x23);
    expect!(24, exit_answer, EMULATED | 0x24);
    expect!(25, inside, 0);
    expect!(26, HANDLED.load(Ordering::SeqCst), 2);
    expect!(
        27,
        SEEN_NUMBER.load(Ordering::SeqCst),
        Syscall::Exit.number()
    );
    expect!(
        28,
        SEEN_FRAME_NUMBER.load(Ordering::SeqCst),
        Syscall::Exit.number()
    );
    expect!(29, SEEN_X2.load(Ordering::SeqCst), 0x24);
    expect!(30, SEEN_FLAGS.load(Ordering::SeqCst), 0);
    expect!(
        31,
        SEEN_FRAME_ADDRESS.load(Ordering::SeqCst),
        FRAME.address()
    );
    let pc = SEEN_PC.load(Ordering::SeqCst);
    expect!(32, range.contains(&pc), false);
    expect!(33, pc % 4, 0);

    // Flipped back to Allow without a syscall: the same call runs.
    expect!(40, null_outside(0x40), 0);
    expect!(41, HANDLED.load(Ordering::SeqCst), 2);

    // Bad frames for the return: refused with typed errors.
    expect!(42, user_dispatch::return_to_address(kernel), address);
    expect!(
        43,
        user_dispatch::return_to_address(FRAME.address() + 4),
        bad
    );
    expect!(
        44,
        user_dispatch::return_to_address(FRAME_MAP_START),
        address
    );
    // A readable frame whose words would return to the kernel's half or
    // set SPSR bits other than NZCV: refused, nothing restored (this code
    // goes on running).
    // (On one page, as the SDK's buffer is: the user-dispatch fast path
    // reads these frames and leaves each to the generic entry's refusal.)
    #[repr(C, align(512))]
    struct OnePage(Frame);
    let mut forged = OnePage(Frame {
        x: [0; 31],
        sp: 0,
        pc: kernel,
        nzcv: 0,
        number: 0,
        flags: 0,
    });
    expect!(45, user_dispatch::return_to(&forged.0), address);
    forged.0.pc = null_outside as *const () as u64;
    forged.0.nzcv = 1 << 21;
    expect!(46, user_dispatch::return_to(&forged.0), bad);
    // The PC's last word must lie in the user half: 2^48 - 3 does not.
    forged.0.pc = (1 << 48) - 3;
    forged.0.nzcv = 0;
    expect!(47, user_dispatch::return_to(&forged.0), address);

    // Off (through the trampoline would do as well): blocking no longer
    // redirects.
    expect!(50, user_dispatch::clear(), Ok(()));
    SELECTOR.set(Selector::Block);
    let after_clear = null_outside(0x50);
    SELECTOR.set(Selector::Allow);
    expect!(51, after_clear, 0);
    expect!(52, HANDLED.load(Ordering::SeqCst), 2);
    expect!(53, FRAME_BYTES, 288);
    0
}

/// `BootProgram::UserDispatchUnmapped`: an Untyped in slot 4, its own
/// VSpace in slot 6.
pub fn unmapped() -> i32 {
    use crate::policy_tests::KILL_MARKER;
    const UNTYPED: u64 = 4;
    const SPACE: VSpace = VSpace(Cptr(6));
    const PAGE: FrameCap = FrameCap(Cptr(8));
    let va = FRAME_MAP_START;
    expect!(1, retype(UNTYPED, CapType::Frame, 0, 8, 1), Ok(()));
    let page = match PAGE.map_view(SPACE, va, MapRights::ReadWrite) {
        Ok(page) => page,
        Err(_) => return 2,
    };
    // The selector lives in the mapped page; the frame in this program.
    expect!(
        3,
        user_dispatch::set_raw(
            0,
            [
                trampoline_range().start,
                trampoline_range().end,
                handler as *const () as usize as u64,
                FRAME.address(),
                va,
            ],
        ),
        Ok(())
    );
    expect!(4, null_outside(4), 0);
    expect!(5, page.write_u64(0, 1), Ok(()));
    let blocked = null_outside(5);
    expect!(6, page.write_u64(0, 0), Ok(()));
    expect!(7, blocked, EMULATED | 5);
    expect!(8, SEEN_FLAGS.load(Ordering::SeqCst), 0);

    // The selector's page goes: unreadable blocks, and the frame says so.
    expect!(10, PAGE.unmap(), Ok(()));
    let unreadable = null_outside(10);
    let flags = SEEN_FLAGS.load(Ordering::SeqCst);
    // Calls through the trampoline still run; every other call is
    // redirected until dispatch is off (turned off from the trampoline).
    let inside = null_inside(11);
    let off = trampoline_syscall(Syscall::SetUserDispatch.number(), [0; 8])[0];
    expect!(11, off, 0);
    expect!(12, inside, 0);
    expect!(13, unreadable, EMULATED | 10);
    expect!(14, flags, FLAG_SELECTOR_UNREADABLE);

    // Now the buffer is in the page (mapped again, selector Block in it),
    // then unmapped: the next redirect cannot save the context, and the
    // thread is killed (the suite expects KILLED_BY_USER_DISPATCH).
    let page = match PAGE.map_view(SPACE, va, MapRights::ReadWrite) {
        Ok(page) => page,
        Err(_) => return 20,
    };
    let selector = va;
    let buffer = va + 0x100;
    expect!(
        21,
        user_dispatch::set_raw(
            0,
            [
                trampoline_range().start,
                trampoline_range().end,
                handler as *const () as usize as u64,
                buffer,
                selector,
            ],
        ),
        Ok(())
    );
    expect!(22, page.write_u64(0, 1), Ok(()));
    // Still fine while mapped.
    let redirected = null_outside(23);
    let inside = null_inside(0);
    expect!(23, page.write_u64(0, 0), Ok(()));
    expect!(24, redirected, EMULATED | 23);
    expect!(25, inside, 0);
    // The selector allows: this line is not redirected. The host test
    // wants it, so that a kill before this point (which ends the thread
    // with the status the case expects) does not pass.
    sdk::println!("{KILL_MARKER}");
    expect!(26, page.write_u64(0, 1), Ok(()));
    // Unmap through the trampoline (an ordinary call would be redirected).
    let unmapped = trampoline_syscall(Syscall::FrameUnmap.number(), [8, 0, 0, 0, 0, 0, 0, 0]);
    if unmapped[0] != 0 {
        let _ = page.write_u64(0, 0);
        return 27;
    }
    // The selector is unreadable now (blocks) and the buffer unwritable:
    // this never returns.
    null_outside(28);
    // Not reached if the kernel killed the thread; an ordinary `exit`
    // would be redirected (and kill it, passing the case by accident).
    trampoline_syscall(Syscall::Exit.number(), [0, 0, 30, 0, 0, 0, 0, 0]);
    30
}

/// The whole frame the handler was last given, word by word.
static SEEN_FRAME: [AtomicU64; FRAME_WORDS] = [const { AtomicU64::new(0) }; FRAME_WORDS];

/// Emulates a redirected syscall as `handler` does, keeping a copy of
/// the frame it was given.
extern "C" fn copying_handler(frame: &mut Frame, number: u64) -> ! {
    let tail = [frame.sp, frame.pc, frame.nzcv, frame.number, frame.flags];
    for (seen, word) in SEEN_FRAME.iter().zip(frame.x.iter().chain(&tail)) {
        seen.store(*word, Ordering::SeqCst);
    }
    handler(frame, number)
}

/// One `Null` redirected into `buffer` and returned from, with the
/// selector blocking only around it: the result the caller got, the
/// frame the handler saw, and how many of the two syscalls (the redirect
/// and its return) the generic entry counted. `None` if the statistics
/// cannot be read.
#[inline(never)]
fn redirect_into(buffer: u64, own_tcb: Cptr) -> Option<(u64, [u64; FRAME_WORDS], u64)> {
    let range = trampoline_range();
    let config = [
        range.start,
        range.end,
        copying_handler as *const () as usize as u64,
        buffer,
        SELECTOR.address(),
    ];
    user_dispatch::set_raw(0, config).ok()?;
    let before = sdk::debug::thread_stats(own_tcb).ok()?.syscalls;
    SELECTOR.set(Selector::Block);
    let result = null_outside(0x52);
    SELECTOR.set(Selector::Allow);
    let after = sdk::debug::thread_stats(own_tcb).ok()?.syscalls;
    user_dispatch::clear().ok()?;
    let frame = core::array::from_fn(|word| SEEN_FRAME[word].load(Ordering::SeqCst));
    // (The second `thread_stats` counts itself.)
    Some((result, frame, after - before - 1))
}

/// `BootProgram::UserDispatchPaths`: an Untyped in slot 4, its own VSpace
/// in slot 6, its own TCB in slot 7. The same redirect and return, from
/// the same call site, into the SDK's buffer (on one page: the fast
/// path, which the generic entry's statistics never see) and into a
/// buffer across two pages (which the fast path leaves to the generic
/// entry: both syscalls counted): the caller gets the handler's answer
/// both times, and the frames agree in every word the call site fixes.
pub fn paths() -> i32 {
    const UNTYPED: u64 = 4;
    const SPACE: VSpace = VSpace(Cptr(6));
    const OWN_TCB: Cptr = Cptr(7);
    const PAGES: [FrameCap; 2] = [FrameCap(Cptr(8)), FrameCap(Cptr(9))];
    let va = FRAME_MAP_START;
    expect!(1, retype(UNTYPED, CapType::Frame, 0, 8, 2), Ok(()));
    expect!(
        2,
        PAGES[0].map_view(SPACE, va, MapRights::ReadWrite).is_ok(),
        true
    );
    expect!(
        3,
        PAGES[1]
            .map_view(SPACE, va + PAGE_BYTES, MapRights::ReadWrite)
            .is_ok(),
        true
    );
    expect!(
        4,
        FRAME.address() % PAGE_BYTES <= PAGE_BYTES - FRAME_BYTES,
        true
    );
    let across = va + PAGE_BYTES - 64;
    let Some((fast_result, fast, fast_counted)) = redirect_into(FRAME.address(), OWN_TCB) else {
        return 5;
    };
    let Some((slow_result, slow, slow_counted)) = redirect_into(across, OWN_TCB) else {
        return 6;
    };
    expect!(10, fast_result, EMULATED | 0x52);
    expect!(11, slow_result, EMULATED | 0x52);
    expect!(12, fast_counted, 0);
    expect!(13, slow_counted, 2);
    // x0..x8 (the call's registers), SP, PC, the number, the flags.
    let fixed = (0..=8).chain([SP_WORD, PC_WORD, NUMBER_WORD, FLAGS_WORD]);
    for word in fixed {
        expect!(20 + word as i32, fast[word], slow[word]);
    }
    expect!(60, fast[NUMBER_WORD], Syscall::Null.number());
    expect!(61, fast[2], 0x52);
    expect!(62, fast[NZCV_WORD] & !abi::tcb::NZCV_MASK, 0);
    expect!(63, slow[NZCV_WORD] & !abi::tcb::NZCV_MASK, 0);
    expect!(64, SEEN_FRAME_ADDRESS.load(Ordering::SeqCst), across);
    0
}
