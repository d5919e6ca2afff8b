//! The kernel the host tests of kernel internals start from: object
//! memory on the heap, a CNode of 16 slots and, in its slot 0, the
//! original capability to an Untyped of the size the test asks for.

use crate::cap::{CNodeId, Capability, Memory, ObjectId};
use crate::kernel::Kernel;
use abi::cap::CapType;
use abi::cap::Rights;

/// Object memory: the CNode's record, then free records room, then the
/// Untyped's own memory. It starts a page lower: the first page holds
/// granule 0, which holds no record.
pub(in crate::kernel) const MEMORY_BASE: u64 = 0x10_0000;
pub(in crate::kernel) const UNTYPED_BASE: u64 = 0x20_0000;
/// Where tests may place records of their own (`create_object`).
pub(in crate::kernel) const SPARE_RECORDS: u64 = MEMORY_BASE + 0x2000;

/// The kernel, its CNode, and the Untyped of `untyped_bytes` in slot 0.
pub(in crate::kernel) fn kernel_with_untyped(
    untyped_bytes: u64,
) -> (Box<Kernel>, CNodeId, ObjectId) {
    let mut kernel = Box::new(Kernel::new());
    let bytes = (UNTYPED_BASE - MEMORY_BASE + 0x1000 + untyped_bytes) as usize;
    assert!(kernel.install_object_memory(Memory::on_heap(MEMORY_BASE - 0x1000, bytes)));
    let caps = &mut kernel.objects;
    let cnode = caps.create_cnode(4, MEMORY_BASE).unwrap();
    let untyped = caps
        .create_object(
            CapType::Untyped,
            UNTYPED_BASE,
            untyped_bytes,
            MEMORY_BASE + 0x1000,
        )
        .unwrap();
    let slot = caps.slot(cnode, 0).unwrap();
    caps.install_original(
        slot,
        Capability::new(CapType::Untyped, Rights::ALL, untyped),
    )
    .unwrap();
    (kernel, cnode, untyped)
}

/// The kernel of `kernel_with_untyped` (64 KiB) with one TCB retyped
/// from its Untyped into slot 1, and that TCB's thread (inactive).
pub(in crate::kernel) fn kernel_with_a_thread() -> (Box<Kernel>, crate::thread::ThreadId) {
    let (mut kernel, cnode, _) = kernel_with_untyped(64 * 1024);
    let objects = &mut kernel.objects;
    let slot = objects.slot(cnode, 0).unwrap();
    let tcb = objects.retype(slot, CapType::Tcb, 0, cnode, 1, 1).unwrap()[0];
    (kernel, crate::thread::ThreadId::of(tcb))
}

/// Deletes the capability in slot `index` of `cnode` and frees what that
/// destroys, as the end of a kernel entry does (without the kernel's own
/// destruction hooks).
pub(in crate::kernel) fn delete_and_reap(kernel: &mut Kernel, cnode: CNodeId, index: u64) {
    let slot = kernel.objects.slot(cnode, index).unwrap();
    kernel.objects.delete(slot).unwrap();
    while kernel.objects.take_destroyed().is_some() {}
    kernel.reap();
}

/// Deletes the capability in slot `index` of `cnode` as a kernel entry
/// does: the kernel lets go of what that destroys (its hooks run), and
/// the records are freed as the entry ends.
pub(in crate::kernel) fn delete_through_the_kernel<P: crate::platform::Platform>(
    kernel: &mut Kernel,
    platform: &mut P,
    cnode: CNodeId,
    index: u64,
) {
    let slot = kernel.objects.slot(cnode, index).unwrap();
    kernel
        .destroying(platform, |objects| objects.delete(slot))
        .unwrap();
    kernel.reap();
}

/// What a stale saved slot holds while the lean entry's kernel half runs
/// (`svc_as_the_vector_takes_it`).
const LEAN_SCRIBBLE: u64 = 0xdead_1ea0_dead_1ea0;

/// The SVC of `current` (on the CPU), as the vector takes it: by the lean
/// entry for a thread with no work, or with audit or policy alone (the
/// Rust half then decides), else by the generic entry.
pub(in crate::kernel) fn svc_as_the_vector_takes_it<P: crate::platform::Platform>(
    kernel: &mut Kernel,
    platform: &mut P,
    current: crate::thread::ThreadId,
    esr: u64,
) -> crate::kernel::Resume {
    use crate::kernel::LeanSyscall;
    use entry::WorkFlags;
    assert_eq!(kernel.current, Some(current), "the thread is on the CPU");
    let work = kernel.objects[current].work;
    let number = kernel.objects[current].context.syscall_number();
    // A number of 64 or more of a thread with work takes the full save
    // (the vector's refusal test reads a 64-bit mask first).
    let lean_work = work == WorkFlags::AUDIT || work == WorkFlags::POLICY;
    if !(work.is_empty() || lean_work && number < 64) {
        return kernel.syscall(platform, current, esr);
    }
    // `Call` and `ReplyRecv` of a thread without entry work for them: the
    // IPC fast path (not modelled here: the in-guest cases compare it with
    // these) or, where it declines, the IPC entry, and the generic entry
    // if that declines too.
    if kernel.objects[current].skips_entry_work(number) {
        let ipc = if number == abi::Syscall::Call.number() {
            Some(kernel.ipc_entry::<P, false>(platform, esr))
        } else if number == abi::Syscall::ReplyRecv.number() {
            Some(kernel.ipc_entry::<P, true>(platform, esr))
        } else {
            None
        };
        if let Some(taken) = ipc {
            return match taken {
                Some(resume) => resume,
                None => kernel.syscall(platform, current, esr),
            };
        }
    }
    // A number the mask excuses goes the ways of a syscall without work,
    // and with the work word not 0, from there to the generic entry.
    if !work.is_empty() && kernel.objects[current].skips_entry_work(number) {
        return kernel.syscall(platform, current, esr);
    }
    match lean_half(kernel, platform, esr) {
        LeanSyscall::Returns { ttbr0 } => crate::kernel::Resume::User {
            context: &mut kernel.objects[current].context,
            ttbr0,
        },
        LeanSyscall::NotLean => kernel.syscall(platform, current, esr),
        LeanSyscall::Finish => kernel.finish_lean_syscall(platform),
    }
}

/// The lean entry's kernel half for the thread on the CPU, as on the
/// board: while it runs, the slots it leaves unsaved (x19..x29, SP_EL0,
/// ELR, SPSR, TPIDR_EL0) hold garbage, as on the board they hold stale
/// values; they are put back before the thread returns or its frame is
/// saved whole, so what the half wrote there is lost, as on the board.
pub(in crate::kernel) fn lean_half<P: crate::platform::Platform>(
    kernel: &mut Kernel,
    platform: &mut P,
    esr: u64,
) -> crate::kernel::LeanSyscall {
    let current = kernel.current.expect("a thread is on the CPU");
    let kept = kernel.objects[current].context;
    let context = &mut kernel.objects[current].context;
    context.x[19..30].fill(LEAN_SCRIBBLE);
    (context.sp, context.pc, context.spsr, context.tpidr) =
        (LEAN_SCRIBBLE, LEAN_SCRIBBLE, LEAN_SCRIBBLE, LEAN_SCRIBBLE);
    // The vector's entry for a thread whose only work is audit.
    let lean = if kernel.objects[current].work == entry::WorkFlags::AUDIT {
        kernel.lean_audited_syscall(platform, esr)
    } else {
        kernel.lean_syscall(platform, esr)
    };
    // (A thread that ended in its syscall keeps its record until `reap`.)
    let context = &mut kernel.objects[current].context;
    context.x[19..30].copy_from_slice(&kept.x[19..30]);
    (context.sp, context.pc, context.spsr, context.tpidr) =
        (kept.sp, kept.pc, kept.spsr, kept.tpidr);
    lean
}
