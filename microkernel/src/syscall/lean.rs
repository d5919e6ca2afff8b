//! Which syscalls the lean entry may carry out (`Kernel::lean_syscall`,
//! docs/architecture.md).
//!
//! The lean entry saves only `x0..x18` and `x30` before the kernel runs;
//! `x19..x29`, `SP_EL0`, `ELR_EL1`, `SPSR_EL1` and `TPIDR_EL0` stay in the
//! CPU (the compiled kernel keeps `x19..x29` as the procedure-call
//! standard asks, and touches none of the others) and are saved only if
//! the thread does not go back as it is. So a syscall whose kernel side
//! reads or writes some thread's saved registers beyond those may not take
//! it: the thread may be the caller itself, whose saved copies would be
//! stale, or whose new values the lean return would not load.

use abi::Syscall;

/// Does the kernel's side of `syscall` read or write a thread's saved
/// registers other than `x0..x18` and `x30`? (Every syscall is named, so a
/// new one must be placed on one side or the other.)
pub const fn reads_or_writes_whole_context(syscall: Syscall) -> bool {
    match syscall {
        // Any register of any thread, by number.
        Syscall::TcbReadRegister | Syscall::TcbWriteRegister => true,
        // A whole new context for the thread.
        Syscall::TcbConfigure | Syscall::TcbSetSpace | Syscall::TcbRestart => true,
        // The caller's whole frame back from its dispatch frame.
        Syscall::UserDispatchReturn => true,
        // A tracer's attach or detach may stop or release a thread where
        // it is, and the invariants read every waiting thread's SPSR:
        // neither is worth a proof that the caller is never one of them.
        Syscall::TcbAttachTracer | Syscall::TcbDetachTracer | Syscall::DebugCheckInvariants => true,
        Syscall::Null
        | Syscall::Yield
        | Syscall::Exit
        | Syscall::DebugPrint
        | Syscall::BenchFloor
        | Syscall::Send
        | Syscall::NBSend
        | Syscall::Recv
        | Syscall::NBRecv
        | Syscall::Call
        | Syscall::Reply
        | Syscall::ReplyRecv
        | Syscall::CapCopy
        | Syscall::CapMint
        | Syscall::CapMove
        | Syscall::CapDelete
        | Syscall::CapRevoke
        | Syscall::Signal
        | Syscall::Wait
        | Syscall::Poll
        | Syscall::Retype
        | Syscall::IrqSetNotification
        | Syscall::IrqAck
        | Syscall::TcbSetPriority
        | Syscall::TcbSetMcp
        | Syscall::TcbSuspend
        | Syscall::TcbResume
        | Syscall::FilterLoad
        | Syscall::TcbAttachFilter
        | Syscall::FrameMap
        | Syscall::FrameUnmap
        | Syscall::TcbSetAudit
        | Syscall::TcbBindNotification
        | Syscall::SetUserDispatch
        | Syscall::CapMintInto
        | Syscall::ReplySave
        | Syscall::IrqSetTimer
        | Syscall::DebugThreadStats
        | Syscall::TcbSetName
        | Syscall::CapMoveInto
        | Syscall::IrqControlGet
        | Syscall::FilterSetServer
        | Syscall::TcbSetAffinity
        | Syscall::SetRseq
        | Syscall::SliceYield
        | Syscall::DebugRseqCounters
        | Syscall::ConsoleRead
        | Syscall::ConsoleSetNotification
        | Syscall::ConsoleWriteFrame
        | Syscall::InspectThread
        | Syscall::InspectCaps => false,
    }
}

/// May the lean entry carry out syscall `number` (`x8`, which may name no
/// syscall: that is refused on either entry)? One bit test.
#[inline(always)]
pub const fn lean_entry_takes(number: u64) -> bool {
    const WHOLE_CONTEXT: u64 = {
        let mut mask = 0u64;
        let mut i = 0;
        while i < Syscall::ALL.len() {
            let syscall = Syscall::ALL[i];
            if reads_or_writes_whole_context(syscall) {
                assert!(syscall.number() < 64);
                mask |= 1 << syscall.number();
            }
            i += 1;
        }
        mask
    };
    number >= 64 || WHOLE_CONTEXT & (1 << number) == 0
}
