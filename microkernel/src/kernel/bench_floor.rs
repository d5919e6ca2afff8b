//! `BenchFloor`: the benchmarks' floor measurement (bench image only).

use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::syscall::SyscallResult;
use crate::thread::ThreadId;
use abi::ErrorCode;

impl Kernel {
    /// `BenchFloor`: `on` installs the floor for the caller's return to
    /// EL0, which is straight back to it (the caller has no work: a
    /// thread with entry or exit work could be switched away from on the
    /// way out, leaving the floor to another thread). The next kernel
    /// entry from EL0 ends it (`end_floor`). Off: whether an interrupt
    /// ended it first (`Interrupted`: the samples taken under it are
    /// spoiled).
    #[cfg(feature = "bench-calls")]
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn bench_floor<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        on: bool,
    ) -> SyscallResult {
        let interrupted = self.floor_interrupted.take() == Some(current);
        if !on {
            return SyscallResult::Return(if interrupted {
                ErrorCode::Interrupted
            } else {
                ErrorCode::Ok
            });
        }
        if !self.objects[current].work.is_empty() {
            return SyscallResult::Return(ErrorCode::InvalidArgument);
        }
        platform.set_syscall_floor(true);
        SyscallResult::Return(ErrorCode::Ok)
    }

    /// A kernel entry from EL0 under the benchmark floor: the normal
    /// vectors again, before anything else runs.
    #[cfg(feature = "bench-calls")]
    #[inline(never)]
    pub fn end_floor<P: Platform>(&mut self, platform: &mut P, interrupted: bool) {
        platform.set_syscall_floor(false);
        if interrupted {
            self.floor_interrupted = self.current;
        }
    }
}
