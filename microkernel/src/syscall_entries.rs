//! The kernel halves of the syscall entries beside the generic one
//! (`portcullis_el0_sync`): the lean entry's, which runs with only part of
//! the frame saved, and the IPC entry's, which takes the `Call`s and
//! `ReplyRecv`s the IPC fast path declined. Each goes where the kernel
//! said, or hands the exception back to its stub in `vectors.s`, which
//! then saves what is left and takes the generic entry.

use crate::{go, locked, Machine, STATE};
use arch::context::UserContext;
use arch::cpu::cross_core::Waiting;
use arch::cpu::lean_entry::{self, LeanExit};
use arch::cpu::smp::this_cpu;
use arch::cpu::{registers, user_return};
use microkernel::kernel::{Kernel, LeanSyscall};

/// The kernel's half of the IPC entry (`el0_ipc_call_slow` in
/// `vectors.s`): a `Call` the IPC fast path declined, with the whole frame
/// saved, taken by `Kernel::ipc_entry`; or, if that declines too, back to
/// the stub, which takes the generic entry.
#[no_mangle]
extern "C" fn portcullis_el0_ipc_call(_context: *mut UserContext) {
    el0_ipc::<false>()
}

/// The same for a `ReplyRecv` (`el0_ipc_reply_recv_slow`).
#[no_mangle]
extern "C" fn portcullis_el0_ipc_reply_recv(_context: *mut UserContext) {
    el0_ipc::<true>()
}

/// The IPC entry's kernel half: goes where the kernel said, or returns
/// when `Kernel::ipc_entry` declined (nothing was done, and the lock is
/// free again).
#[inline(always)]
fn el0_ipc<const REPLY_RECV: bool>() {
    user_return::block_user_access();
    let esr = registers::exception_syndrome_register();
    let resume = locked(Waiting::El0Sync, move |state| {
        state
            .kernel
            .ipc_entry::<_, REPLY_RECV>(&mut state.machine, esr)
    });
    if let Some(resume) = resume {
        go(resume)
    }
}

/// The kernel's half of the lean syscall entry (`el0_svc_generic` in
/// `vectors.s`, `arch::cpu::lean_entry`): a syscall of a thread with no
/// work, or policy alone, with only `x0..x18` and `x30` saved. It is
/// carried out here if the kernel lock is free now and
/// `Kernel::lean_syscall` takes it.
#[no_mangle]
extern "C" fn portcullis_el0_svc(context: *mut UserContext) -> LeanExit {
    lean_entry(context, Kernel::lean_syscall)
}

/// The lean entry's kernel half for a thread whose only work is audit
/// (`el0_svc_audited` in `vectors.s`): `Kernel::lean_audited_syscall`.
#[no_mangle]
extern "C" fn portcullis_el0_svc_audited(context: *mut UserContext) -> LeanExit {
    lean_entry(context, Kernel::lean_audited_syscall)
}

/// The lean entry's kernel half, with the kernel's side of it: `syscall`.
#[inline(always)]
fn lean_entry(
    context: *mut UserContext,
    syscall: impl FnOnce(&mut Kernel, &mut Machine, u64) -> LeanSyscall,
) -> LeanExit {
    user_return::block_user_access();
    let esr = registers::exception_syndrome_register();
    let next = STATE.try_with_on_core(|state, token| {
        state.kernel.on_core(token, this_cpu);
        match syscall(&mut state.kernel, &mut state.machine, esr) {
            LeanSyscall::NotLean => (lean_entry::SAVE_REST, false),
            LeanSyscall::Returns { ttbr0 } => {
                // A table's address: never mistaken for the two codes.
                debug_assert!(ttbr0 > lean_entry::FINISH);
                (ttbr0, false)
            }
            // The lock stays held until the frame is whole.
            LeanSyscall::Finish => (lean_entry::FINISH, true),
        }
    });
    // Taken elsewhere: the generic entry waits for it (and answers stall
    // requests with the whole frame saved).
    LeanExit {
        context,
        next: next.unwrap_or(lean_entry::SAVE_REST),
    }
}

/// The lean entry's end, after `LeanSyscall::Finish` and with the whole
/// frame saved: as the generic entry would go on.
#[no_mangle]
extern "C" fn portcullis_el0_svc_finish() -> ! {
    // SAFETY: the stub calls this only when `portcullis_el0_svc` returned
    // `FINISH`, which kept this CPU's hold of the lock; the stub itself
    // only stored registers since.
    go(unsafe { STATE.with_kept(|state| state.kernel.finish_lean_syscall(&mut state.machine)) })
}
