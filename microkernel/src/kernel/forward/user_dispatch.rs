//! Syscall user dispatch (stage 1 of the generic entry; `abi::user_dispatch`
//! has the ABI, `docs/user_dispatch.md` the design).
//!
//! Three pieces, all out of line and reached only when a thread asked for
//! them, so the fast paths never see this file:
//! - `set_user_dispatch` (`SetUserDispatch`) checks the buffer and the
//!   selector against the thread's tables and sets the `USER_DISPATCH` work
//!   bit (which also zeroes the fast-path mask: `recompute_no_entry_work`);
//! - `user_dispatch_decision` answers stage 1's question
//!   (`EntryStep::UserDispatch`, the first step of a new syscall with the
//!   bit): it reads the selector byte and the PC;
//! - `redirect_to_handler` carries out `EntryStep::Redirect`, which ends
//!   the entry on a redirect: it saves the context into the buffer and
//!   points the thread at its handler. A buffer that can no longer be
//!   written kills the thread.
//!
//! `UserDispatchReturn` (`user_dispatch_return`) restores a saved frame.

use crate::address_space::UserAccess;
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::thread::{ThreadId, ThreadState};
use abi::tcb::NZCV_MASK;
use abi::user_dispatch::{
    FLAGS_WORD, FLAG_SELECTOR_UNREADABLE, FRAME_BYTES, FRAME_WORDS, KILLED_BY_USER_DISPATCH,
    NUMBER_WORD, NZCV_WORD, PC_WORD, SELECTOR_ALLOW, SP_WORD, X0_WORD,
};
use abi::{ErrorCode, Syscall};
use entry::{SkipReason, SyscallEntry, WorkFlags};

// The frame's tail, written as one run: sp, pc, NZCV, number, flags.
const _: () = assert!(
    PC_WORD == SP_WORD + 1
        && NZCV_WORD == SP_WORD + 2
        && NUMBER_WORD == SP_WORD + 3
        && FLAGS_WORD == SP_WORD + 4
);

impl Kernel {
    /// `SetUserDispatch`: turns the calling thread's user dispatch on (the
    /// buffer must be writable and the selector readable now; both are
    /// checked again at each use) or off.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn set_user_dispatch<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> Result<(), ErrorCode> {
        // Decode accepted these registers; they have not changed since.
        let config = crate::syscall::user_dispatch_config(&self.objects[current].context)?;
        if let Some(config) = config {
            let space = self
                .thread_space(current)
                .ok_or(ErrorCode::InvalidAddress)?;
            space
                .check_user_writable(platform, config.buffer, FRAME_BYTES)
                .map_err(|_| ErrorCode::InvalidAddress)?;
            space
                .read_user_byte(platform, config.selector)
                .map_err(|_| ErrorCode::InvalidAddress)?;
        }
        let thread = &mut self.objects[current];
        thread.user_dispatch = config;
        match config {
            Some(_) => thread.work.insert(WorkFlags::USER_DISPATCH),
            None => thread.work.remove(WorkFlags::USER_DISPATCH),
        }
        thread.recompute_no_entry_work();
        Ok(())
    }

    /// A new syscall of a thread whose only syscall work is user dispatch
    /// (`WorkFlags::USER_DISPATCH`: no trace, policy or audit), carried out
    /// as the entry and exit machines would for that work word, without
    /// asking them at each step:
    /// - `UserDispatchReturn`, which stage 1 never redirects: the frame
    ///   restored (or its error in `x0`), then the exit to user mode;
    /// - a syscall stage 1 redirects: the frame written and the handler
    ///   entered, then the exit to user mode;
    /// - any other goes on through the generic entry with stage 1's answer
    ///   (`dispatch_decided`: the selector is read once).
    ///
    /// Asked step by step, the machines cost a redirect and its return
    /// some 350 instructions more.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn syscall_user_dispatched<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        esr: u64,
    ) {
        let thread = &mut self.objects[current];
        let number = thread.context.syscall_number();
        thread.trace.number = number;
        debug_assert!(thread.audit_pending.is_none(), "no audit work");
        if number == Syscall::UserDispatchReturn.number() {
            debug_assert!(self.exits_at_once(current, SyscallEntry::Dispatch));
            let restored = crate::syscall::user_dispatch_frame(&self.objects[current].context)
                .and_then(|frame| self.user_dispatch_return(platform, current, frame));
            let thread = &mut self.objects[current];
            if let Err(code) = restored {
                Self::write_result(thread, code);
            }
            Self::exit_loop_on(thread);
            return;
        }
        match self.user_dispatch_decision(platform, current) {
            Some(flags) => {
                debug_assert!(
                    self.exits_at_once(current, SyscallEntry::Skipped(SkipReason::Redirected))
                );
                if self.redirect_to_handler(platform, current, flags) {
                    Self::exit_loop_on(&mut self.objects[current]);
                }
            }
            None => {
                self.dispatch_decided = Some(None);
                self.syscall_with_work(platform, current, esr, None);
                debug_assert!(self.dispatch_decided.is_none(), "stage 1 took it");
            }
        }
    }

    /// Does the exit machine of `current`'s syscall, whose entry ended as
    /// `entry`, ask for nothing but the exit to user mode? (What
    /// `syscall_user_dispatched` assumes of its work word.)
    fn exits_at_once(&self, current: ThreadId, entry: SyscallEntry) -> bool {
        let mut exit = entry::SyscallExit::new(entry, self.exit_work_word(current));
        exit.next_step() == entry::ExitStep::ExitToUser
    }

    /// Stage 1's question (`EntryStep::UserDispatch`): is the syscall in
    /// progress to be redirected? `Some(flags)` (the frame's
    /// flags word) if so. `UserDispatchReturn` never is; a syscall whose
    /// `svc` lies in the allowed range never is; otherwise the selector
    /// decides, and one that cannot be read blocks (fail closed: the
    /// syscall does not run, and the handler learns why from the flags).
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn user_dispatch_decision<P: Platform>(
        &self,
        platform: &P,
        current: ThreadId,
    ) -> Option<u64> {
        let thread = &self.objects[current];
        let config = thread.user_dispatch?;
        let context = &thread.context;
        if context.syscall_number() == Syscall::UserDispatchReturn.number() {
            return None;
        }
        if config.allows(context.pc.wrapping_sub(4)) {
            return None;
        }
        match self
            .thread_space(current)
            .map(|space| space.read_user_byte(platform, config.selector))
        {
            Some(Ok(SELECTOR_ALLOW)) => None,
            Some(Ok(_)) => Some(0),
            _ => Some(FLAG_SELECTOR_UNREADABLE),
        }
    }

    /// Carries out a redirect (`EntryStep::Redirect`): the frame goes into the buffer, the thread
    /// resumes at its handler with `x0` = the buffer, `x1` = the number and
    /// `x30` = 0. `true`: back to the thread. If the frame cannot be
    /// written (the buffer was unmapped or made read-only since it was
    /// configured) the thread is killed with `KILLED_BY_USER_DISPATCH`:
    /// the syscall must not run, and there is nowhere to tell the handler.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn redirect_to_handler<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        flags: u64,
    ) -> bool {
        let Some(config) = self.objects[current].user_dispatch else {
            return true;
        };
        let frame = self.thread_space(current).and_then(|space| {
            space
                .user_words(platform, config.buffer, FRAME_WORDS, UserAccess::Write)
                .ok()
        });
        let Some(frame) = frame else {
            self.end_thread(
                platform,
                current,
                ThreadState::Exited(KILLED_BY_USER_DISPATCH),
            );
            return false;
        };
        // Straight from the saved registers, word by word (`Frame`'s
        // layout: `abi::user_dispatch`).
        let context = &self.objects[current].context;
        let number = context.syscall_number();
        frame.write(platform, X0_WORD, &context.x);
        frame.write(
            platform,
            SP_WORD,
            &[
                context.sp,
                context.pc,
                context.spsr & NZCV_MASK,
                number,
                flags,
            ],
        );
        let context = &mut self.objects[current].context;
        context.pc = config.handler;
        // The handler's arguments, and no return address.
        context.set_register(0, config.buffer);
        context.set_register(1, number);
        context.set_link_register(0);
        true
    }

    /// `UserDispatchReturn`: restores `x0..x30`, `sp`, `pc` and NZCV from
    /// the frame at `address` (any readable user memory: the thread could
    /// set these registers itself). The saved PC must be in the user half
    /// (`InvalidAddress`) and the NZCV word hold NZCV bits only
    /// (`InvalidArgument`); on error nothing changes.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn user_dispatch_return<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        address: u64,
    ) -> Result<(), ErrorCode> {
        let frame = self
            .thread_space(current)
            .ok_or(ErrorCode::InvalidAddress)?
            .user_words(platform, address, FRAME_WORDS, UserAccess::Read)
            .map_err(|_| ErrorCode::InvalidAddress)?;
        // Each word read once: the values checked are the values used,
        // whatever another thread writes into the frame meanwhile.
        let pc = frame.read(platform, PC_WORD);
        let nzcv = frame.read(platform, NZCV_WORD);
        if !arch::layout::is_user_range(pc, 4) {
            return Err(ErrorCode::InvalidAddress);
        }
        if nzcv & !NZCV_MASK != 0 {
            return Err(ErrorCode::InvalidArgument);
        }
        let sp = frame.read(platform, SP_WORD);
        let context = &mut self.objects[current].context;
        frame.read_into(platform, X0_WORD, &mut context.x);
        context.sp = sp;
        context.pc = pc;
        context.spsr = (context.spsr & !NZCV_MASK) | nzcv;
        Ok(())
    }
}
