//! The IPC entry (`Kernel::ipc_entry`) beside the generic entry: a `Call`
//! or `ReplyRecv` it takes ends as `Kernel::syscall` ends it, and what is
//! not its own (another number in `x8`, entry work to do, no thread on
//! the CPU) it declines with nothing done.

use super::lanes::LaneState;
use super::*;
use abi::MessageInfo;

/// An empty slot of the scene's CNode.
const EMPTY: u64 = 12;

/// The scene's thread's registers for `number` with `x0` =
/// `capability` and `x1` = `info`, as it makes the syscall.
fn set_registers(scene: &mut Scene, number: Syscall, capability: u64, info: MessageInfo) {
    let context = &mut scene.kernel.objects[scene.thread].context;
    context.set_syscall_number(number.number());
    context.set_arg(entry::ArgIndex::X0, capability);
    context.set_message_info(info);
    context.pc = 0x1004;
}

/// The IPC entry of `Call` (`reply_recv` false) or `ReplyRecv` takes the
/// scene's thread's syscall: did it (else it declined)?
fn ipc_entry(scene: &mut Scene, reply_recv: bool) -> bool {
    let resume = if reply_recv {
        scene.kernel.ipc_entry::<_, true>(&mut scene.machine, SVC)
    } else {
        scene.kernel.ipc_entry::<_, false>(&mut scene.machine, SVC)
    };
    resume.is_some()
}

/// The scene's thread makes `number` with these registers, by the IPC
/// entry (`by_ipc_entry`: it must take it) or by the generic entry: what
/// became of the thread.
fn make(
    scene: &mut Scene,
    number: Syscall,
    capability: u64,
    info: MessageInfo,
    by_ipc_entry: bool,
) -> LaneState {
    set_registers(scene, number, capability, info);
    if by_ipc_entry {
        let taken = ipc_entry(scene, number == Syscall::ReplyRecv);
        assert!(taken, "{number:?} {capability} {info:?}");
    } else {
        let _ = scene.kernel.syscall(&mut scene.machine, scene.thread, SVC);
    }
    scene.lane_state()
}

/// Every way a `Call` or `ReplyRecv` of a thread without work can end
/// before it meets a partner (a refused pointer, type, length or
/// capability count, a message too long for a thread with no IPC buffer,
/// no partner so that it waits) ends the same by both entries: the same
/// registers, state, counts and thread on the CPU.
#[test]
fn a_call_or_reply_recv_taken_by_the_ipc_entry_ends_as_by_the_generic_entry() {
    let short = MessageInfo::with(7, 2);
    let cases = [
        (Syscall::Call, SERVER, short),
        // One word too long for registers, and no buffer to send it from.
        (Syscall::Call, SERVER, MessageInfo::with(7, 7)),
        (Syscall::Call, SERVER, MessageInfo::with(7, 65)),
        (Syscall::Call, EMPTY, short),
        (Syscall::Call, TCB, short),
        (Syscall::Call, u64::MAX, short),
        (Syscall::ReplyRecv, SERVER, MessageInfo::with(0, 0)),
        (Syscall::ReplyRecv, SERVER, short.with_caps(1)),
        (Syscall::ReplyRecv, EMPTY, short),
        (Syscall::ReplyRecv, SIGNAL, short),
    ];
    // No work at all, or exit work alone (which no syscall's entry
    // waits for: both entries take the syscall, and `resume` does it).
    let works = [
        WorkFlags::empty(),
        WorkFlags::NEED_RESCHED,
        WorkFlags::NOTIFY_RESUME,
    ];
    for (number, capability, info) in cases {
        for work in works {
            let scene_with = |work| {
                let mut scene = Scene::with_rules([]);
                scene.kernel.objects[scene.thread].work = work;
                scene
            };
            let mut generic = scene_with(work);
            let expected = make(&mut generic, number, capability, info, false);
            let mut scene = scene_with(work);
            let state = make(&mut scene, number, capability, info, true);
            assert_eq!(state, expected, "{number:?} {capability} {info:?} {work:?}");
        }
    }
}

/// The IPC entry declines, with nothing done, a number that is not its
/// syscall's, a thread that has entry work to do for it (a filter with a
/// rule for it), and a CPU whose thread was taken away while it waited for
/// the lock: the generic entry then takes the exception.
#[test]
fn the_ipc_entry_declines_what_is_not_its_own_with_nothing_done() {
    let short = MessageInfo::with(7, 2);
    let declines = |mut scene: Scene, number: Syscall, reply_recv: bool| {
        set_registers(&mut scene, number, SERVER, short);
        let before = scene.lane_state();
        assert!(!ipc_entry(&mut scene, reply_recv), "{number:?}");
        assert_eq!(scene.lane_state(), before, "{number:?}");
    };
    // Another number in x8 than the entry's.
    for number in [Syscall::Null, Syscall::Send, Syscall::ReplyRecv] {
        declines(Scene::with_rules([]), number, false);
    }
    for number in [Syscall::Null, Syscall::Recv, Syscall::Call] {
        declines(Scene::with_rules([]), number, true);
    }
    // Entry work for the number: a filter that judges it.
    for number in [Syscall::Call, Syscall::ReplyRecv] {
        let scene = Scene::new(rule(number, Action::Errno(ERRNO))).filtered();
        assert!(!scene.thread().skips_entry_work(number.number()));
        declines(scene, number, number == Syscall::ReplyRecv);
    }
    // Syscall work the entry has no lane for: single-stepping, alone.
    for number in [Syscall::Call, Syscall::ReplyRecv] {
        let mut scene = Scene::with_rules([]);
        scene.kernel.objects[scene.thread].work = WorkFlags::SINGLESTEP;
        declines(scene, number, number == Syscall::ReplyRecv);
    }
    // No thread on the CPU.
    let mut scene = Scene::with_rules([]);
    scene.kernel.current = None;
    declines(scene, Syscall::Call, false);
}
