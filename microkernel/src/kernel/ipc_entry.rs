//! The IPC entry: a `Call` or `ReplyRecv` that the IPC fast path
//! (`ipc_fast_path.s`) declined, taken by the generic entry's own code for
//! it without finding out again what the vector already knows.
//!
//! The vector sends such a syscall here with the whole frame saved: its
//! exception is an SVC, its number is the path's own, and the thread had
//! no entry work to do for it. The kernel half asks the last two again
//! under the lock (another CPU may have given the thread work since, and
//! `x8` is read again from the frame): if either no longer holds, it
//! declines and the stub takes the generic entry, `portcullis_el0_sync`,
//! with the frame as it is. Otherwise it does what `Kernel::syscall` does
//! for a thread without entry work (count the syscall, decode it, run it,
//! write its result, `resume`), but with the operation a constant: no
//! decoding of the exception class and the syscall number, no dispatch
//! on the decoded call, and a locked closure of its own, much smaller
//! than the generic entry's (a slow `Call` 465 → 424 and a slow
//! `ReplyRecv` 461 → 423 with that alone, `portcullis bench`; the `Call`
//! half then runs `ipc_operation` inline: 373).

use crate::kernel::{Kernel, Resume};
use crate::platform::Platform;
use crate::syscall::{self, IpcOperation, SyscallResult};
use abi::Syscall;
use entry::WorkFlags;

impl Kernel {
    /// A `Call` (`REPLY_RECV` false) or `ReplyRecv` (true) of the thread
    /// on this CPU, whose exception syndrome is `esr` (an SVC's): where the
    /// CPU goes next, or `None` when the IPC entry does not take it (no
    /// thread is current, its `x8` is not that syscall's number, or it has
    /// entry work to do for it): nothing was done, and the generic entry
    /// takes the exception.
    pub fn ipc_entry<P: Platform, const REPLY_RECV: bool>(
        &mut self,
        platform: &mut P,
        esr: u64,
    ) -> Option<Resume> {
        debug_assert!(
            !self.objects.has_retired(),
            "an earlier kernel entry left retired objects"
        );
        let (operation, number) = if REPLY_RECV {
            (IpcOperation::ReplyRecv, Syscall::ReplyRecv.number())
        } else {
            (IpcOperation::Call, Syscall::Call.number())
        };
        let current = self.current?;
        let thread = &mut self.objects[current];
        // `Kernel::syscall`'s test of entry work, for this number.
        if thread.context.syscall_number() != number
            || (thread.work.intersects(WorkFlags::SYSCALL_WORK) && !thread.skips_entry_work(number))
        {
            return None;
        }
        thread.stats.count_syscall();
        match syscall::ipc_capability(&thread.context, operation) {
            Ok(capability) => {
                let result = if REPLY_RECV {
                    self.ipc_syscall(platform, current, operation, capability)
                } else {
                    self.ipc_operation_inline::<P, false>(platform, current, operation, capability)
                };
                // Its effects first: the common result, tested with one
                // compare (not the decision tree over every variant: 6
                // instructions of a slow `ReplyRecv`).
                match result {
                    SyscallResult::Ipc(effects) => self.apply_ipc(platform, effects),
                    result => self.apply_result(platform, current, esr, None, result),
                }
            }
            Err(code) => Self::write_result(thread, code),
        }
        Some(self.resume(platform))
    }
}
