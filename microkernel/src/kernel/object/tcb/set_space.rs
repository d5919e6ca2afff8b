//! `TcbSetSpace`: a new thread runs in an address space its creator built.
//!
//! The creator retypes a VSpace from its Untyped (the root table and the
//! page-table pages it may use, all charged to that Untyped), a TCB, and
//! Frames for code, stack and IPC buffer; configures the TCB with
//! `abi::tcb::NO_PROGRAM` (CSpace and priority); binds the VSpace to the
//! thread here, naming the IPC buffer, the fault endpoint and the first
//! PC, SP and x0; maps its frames with `FrameMap`; and resumes it.
//!
//! A VSpace may be bound to any number of threads (a second thread of a
//! task runs in the space its first one runs in, mappings and all); each
//! stays bound for its life. When the last of them ends the space is
//! taken down (mappings forgotten, TLB flushed) and the VSpace is unbound
//! again, reusable; when the VSpace is destroyed first, every thread bound
//! to it ends (see `Kernel::destroying`). A kernel-made VSpace may be
//! given too (the root starts a thread in its own space); its space lives
//! as long as the thread the kernel made it for, the root,
//! and the threads sharing it end when that one ends
//! (`Kernel::end_space_guests`).

use crate::address_space::AddressSpace;
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::syscall::set_space_arguments;
use crate::thread::{ThreadId, ThreadState};
use abi::cap::{CapType, Rights};
use abi::ErrorCode;
use arch::context::UserContext;
use arch::object_memory::kind;

impl Kernel {
    /// `TcbSetSpace` by `current` (arguments in its registers, see
    /// `syscall::set_space_arguments`): binds the user-made VSpace (write
    /// right; a user-made one unbound, or any VSpace already bound to
    /// other threads, whose space the thread then shares) to the inactive, spaceless thread of the TCB
    /// (write right), with the Frame (read and write rights) as its IPC
    /// buffer and the Endpoint (write right) for its faults. Everything is
    /// checked before anything changes.
    #[inline(never)]
    pub(in crate::kernel) fn tcb_set_space<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> Result<(), ErrorCode> {
        let arguments = set_space_arguments(&self.objects[current].context)?;
        let tcb = self.thread_cap(current, arguments.tcb, CapType::Tcb, Rights::WRITE)?;
        let vspace = self.thread_cap(current, arguments.vspace, CapType::VSpace, Rights::WRITE)?;
        let buffer = match arguments.ipc_buffer {
            Some(cptr) => {
                Some(self.thread_cap(current, cptr, CapType::Frame, Rights::READ_WRITE)?)
            }
            None => None,
        };
        let endpoint = match arguments.fault_endpoint {
            Some(cptr) => Some(self.thread_cap(current, cptr, CapType::Endpoint, Rights::WRITE)?),
            None => None,
        };
        let target = self
            .tcb_thread(tcb.object())
            .ok_or(ErrorCode::InvalidCapability)?;
        let thread = &self.objects[target];
        // A new thread without a space, or an ended one (kept for its
        // supervisor) that is to be restarted in a new space.
        let ended = thread.state().is_kept_end();
        if !ended && (thread.state() != ThreadState::Inactive || thread.space.is_some()) {
            return Err(ErrorCode::InvalidArgument);
        }
        let same_space = thread.space == Some(vspace.object());
        let (phys, pages) = self
            .objects
            .get::<kind::VSpace>(vspace.object())
            .map(|v| (v.phys, v.pages))
            .ok_or(ErrorCode::InvalidCapability)?;
        let buffer_phys = match buffer {
            Some(frame) => Some(
                self.objects
                    .get::<kind::Frame>(frame.object())
                    // The kernel writes an IPC buffer: never device memory.
                    .map(|f| (!f.is_device()).then_some((frame.object(), f.phys)))
                    .ok_or(ErrorCode::InvalidCapability)?
                    .ok_or(ErrorCode::InvalidArgument)?,
            ),
            None => None,
        };
        let fault_endpoint = match endpoint {
            Some(e) => Some((
                self.objects
                    .reference(e.object())
                    .ok_or(ErrorCode::InvalidCapability)?,
                e.badge(),
            )),
            None => None,
        };
        let vspace = vspace.object();
        if ended {
            // Everything is checked: it leaves its old space (the last
            // thread there takes it down) and buffer, unless it is given
            // the space it is in.
            if !same_space {
                self.leave_space(platform, target);
            }
            self.leave_buffer(target);
        }
        if self.vspace_space(vspace).is_none() {
            // A kernel-made VSpace always has its space (its owner's):
            // unreachable, a typed error rather than a panic.
            if !self.is_user_vspace(vspace) {
                return Err(ErrorCode::InvalidCapability);
            }
            // Nothing can fail from here on but building the root, which
            // the object's first page always allows.
            let live = self.live_asids();
            let assignment = self.asids.assign(None, live);
            if assignment.flush_all {
                platform.flush_tlb_all();
            }
            let space = AddressSpace::in_object(platform, assignment.asid, phys, pages)
                .ok_or(ErrorCode::OutOfResources)?;
            if !self.install_space(platform, vspace, space) {
                return Err(ErrorCode::OutOfResources);
            }
        }
        // Bound already (a kernel-made one always is, to its owner), or
        // built just now: the thread joins the threads running there.
        if !(ended && same_space) {
            self.bind_space(target, vspace);
        }
        if let Some((frame, phys)) = buffer_phys {
            self.set_buffer_frame(target, frame, phys);
        }
        let thread = &mut self.objects[target];
        thread.fault_endpoint = fault_endpoint;
        thread.context = UserContext::new_user(arguments.pc, arguments.sp, arguments.x0)
            .with_thread_pointer(arguments.ipc_buffer_address);
        Ok(())
    }
}

// The user half `TcbSetSpace` and `FrameMap` check against is the MMU's.
const _: () = assert!(abi::vspace::USER_MAP_END == arch::layout::USER_END);
