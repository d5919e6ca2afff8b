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

use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::thread::{ThreadId, ThreadState};
use abi::tcb::NZCV_MASK;
use abi::user_dispatch::{
    Frame, FLAG_SELECTOR_UNREADABLE, FRAME_BYTES, KILLED_BY_USER_DISPATCH, SELECTOR_ALLOW,
};
use abi::{ErrorCode, Syscall};
use entry::WorkFlags;

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
                .copy_from_user(platform, config.selector, &mut [0u8])
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
        let mut selector = [0u8];
        match self
            .thread_space(current)
            .map(|space| space.copy_from_user(platform, config.selector, &mut selector))
        {
            Some(Ok(())) if selector[0] == SELECTOR_ALLOW => None,
            Some(Ok(())) => Some(0),
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
        let thread = &self.objects[current];
        let Some(config) = thread.user_dispatch else {
            return true;
        };
        let context = &thread.context;
        let frame = Frame {
            x: context.x,
            sp: context.sp,
            pc: context.pc,
            nzcv: context.spsr & NZCV_MASK,
            number: context.syscall_number(),
            flags,
        };
        let saved = self.thread_space(current).is_some_and(|space| {
            space
                .copy_to_user(platform, config.buffer, &frame.to_bytes())
                .is_ok()
        });
        if !saved {
            self.end_thread(
                platform,
                current,
                ThreadState::Exited(KILLED_BY_USER_DISPATCH),
            );
            return false;
        }
        let context = &mut self.objects[current].context;
        context.pc = config.handler;
        // The handler's arguments, and no return address.
        context.set_register(0, config.buffer);
        context.set_register(1, frame.number);
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
        let space = self
            .thread_space(current)
            .ok_or(ErrorCode::InvalidAddress)?;
        let mut bytes = [0u8; FRAME_BYTES as usize];
        space
            .copy_from_user(platform, address, &mut bytes)
            .map_err(|_| ErrorCode::InvalidAddress)?;
        let frame = Frame::from_bytes(&bytes);
        if !arch::layout::is_user_range(frame.pc, 4) {
            return Err(ErrorCode::InvalidAddress);
        }
        if frame.nzcv & !NZCV_MASK != 0 {
            return Err(ErrorCode::InvalidArgument);
        }
        let context = &mut self.objects[current].context;
        context.x = frame.x;
        context.sp = frame.sp;
        context.pc = frame.pc;
        context.spsr = (context.spsr & !NZCV_MASK) | frame.nzcv;
        Ok(())
    }
}
