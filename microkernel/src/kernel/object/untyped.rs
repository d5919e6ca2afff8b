//! Untyped memory: `Retype`, preemptible, into new objects.

use crate::cap::ObjectId;
use crate::cap::ObjectState;
use crate::cap::SlotId;
use crate::kernel::Kernel;
use crate::kernel::FILTER_DESTROYED_STATUS;
use crate::platform::Platform;
use crate::stopped_call::Progress;
use crate::syscall::SyscallResult;
use crate::thread::ThreadId;
use crate::thread::ThreadState;
use abi::cap::{CapType, Rights};
use abi::ErrorCode;
use arch::object_memory::kind;

/// How far a `Retype` got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::kernel) enum Retyped {
    /// Every object was made.
    Done,
    /// Stopped at a preemption point: `progress` pages zeroed, valid while
    /// the Untyped's epoch is `at`.
    Preempted {
        /// Pages zeroed.
        progress: u64,
        /// The Untyped's epoch.
        at: u64,
    },
}

/// Pages a preemptible operation zeroes between two looks for a pending
/// interrupt (64 KiB: well under a millisecond on a Cortex-A72).
pub(in crate::kernel) const ZERO_PAGES_PER_CHECK: u64 = 16;

impl Kernel {
    /// `Retype`: objects from the caller's Untyped capability into its own
    /// CNode: endpoints, notifications, Reply objects, CNodes, smaller
    /// Untypeds, Frames and VSpaces (zeroed before any capability to them
    /// exists; a VSpace is unbound until `TcbSetSpace`), filters and TCBs
    /// (each a new, inactive thread in its own record), `count` of them
    /// into slots from `target` on.
    ///
    /// Zeroing is the long part (64 VSpaces of 65 pages are 16.6 MiB), so
    /// it is preemptible: every `ZERO_PAGES_PER_CHECK` pages the kernel
    /// looks for a pending interrupt, and if there is one the call stops
    /// there (`Retyped::Preempted`, `progress` pages zeroed of the memory
    /// that starts the plan's range) and goes on later from the same
    /// registers. Nothing is made until all of it is zeroed, so a call
    /// that is preempted, cancelled or fails in the end changes nothing;
    /// on going on, the call is checked afresh, and the zeroing done so far
    /// counts only if the Untyped's memory is as it was (its epoch).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(in crate::kernel) fn retype_syscall<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        untyped_cptr: u64,
        object_type: CapType,
        size: u64,
        destination: (u64, u64, u64),
        progress: Progress,
    ) -> SyscallResult {
        match self.retype(
            platform,
            current,
            untyped_cptr,
            object_type,
            size,
            destination,
            progress,
        ) {
            Ok(Retyped::Done) => SyscallResult::Return(ErrorCode::Ok),
            Ok(Retyped::Preempted { progress, at }) => SyscallResult::Preempted { progress, at },
            Err(code) => SyscallResult::Return(code),
        }
    }

    /// `retype_syscall`'s work.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::kernel) fn retype<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        untyped_cptr: u64,
        object_type: CapType,
        size: u64,
        (target, count, payer): (u64, u64, u64),
        progress: Progress,
    ) -> Result<Retyped, ErrorCode> {
        if !matches!(
            object_type,
            CapType::Endpoint
                | CapType::Notification
                | CapType::Reply
                | CapType::CNode
                | CapType::Untyped
                | CapType::Filter
                | CapType::Frame
                | CapType::VSpace
                | CapType::Tcb
        ) {
            return Err(ErrorCode::InvalidArgument);
        }
        // Records destroyed earlier in this kernel entry give their memory
        // back first.
        self.reap();
        let cnode = self.objects[current]
            .cspace
            .ok_or(ErrorCode::InvalidCapability)?;
        let untyped_slot = self
            .objects
            .slot(cnode, untyped_cptr)
            .map_err(ErrorCode::from)?;
        // A device Untyped's Frames have their records paid by the RAM
        // Untyped in `x6` (`cap/device.rs`); their pages are never zeroed.
        let device = self
            .objects
            .lookup_typed(untyped_slot, CapType::Untyped, Rights::WRITE)
            .is_ok_and(|cap| self.objects.is_device_untyped(cap.object()));
        let plan = if device {
            let payer_slot = self.objects.slot(cnode, payer).map_err(ErrorCode::from)?;
            self.objects.plan_device_retype(
                untyped_slot,
                payer_slot,
                object_type,
                size,
                cnode,
                target,
                count,
            )
        } else {
            self.objects
                .plan_retype(untyped_slot, object_type, size, cnode, target, count)
        }
        .map_err(ErrorCode::from)?;
        if !plan.is_device() && matches!(object_type, CapType::Frame | CapType::VSpace) {
            let page_size = arch::layout::PAGE_SIZE;
            let pages = (plan.end - plan.start) / page_size;
            let mut zeroed = if progress.at == plan.epoch {
                progress.done.min(pages)
            } else {
                0
            };
            while zeroed < pages {
                platform.zero_frame(plan.start + zeroed * page_size);
                zeroed += 1;
                if zeroed < pages
                    && zeroed % ZERO_PAGES_PER_CHECK == 0
                    && platform.interrupt_is_pending()
                {
                    return Ok(Retyped::Preempted {
                        progress: zeroed,
                        at: plan.epoch,
                    });
                }
            }
        }
        let made = self.objects.commit_retype(&plan).map_err(ErrorCode::from)?;
        if object_type == CapType::Tcb {
            for object in made {
                self.tcb_created(current, ThreadId::of(object));
            }
        }
        Ok(Retyped::Done)
    }
}

impl Kernel {
    /// An Untyped is destroyed: the memory of the filters it holds that
    /// are pinned is being taken back: the threads they confine end (fail closed).
    pub(in crate::kernel) fn untyped_destroyed<P: Platform>(
        &mut self,
        platform: &mut P,
        object: ObjectId,
    ) {
        let pinned = self
            .objects
            .get::<kind::Untyped>(object)
            .map_or(0, |u| u.pinned);
        if pinned > 0 {
            self.end_pinned_children(platform, object);
        }
    }

    /// After a revoke of the capability in `slot`: if it is an Untyped's
    /// with the right to retype from it (write), and all that is left
    /// carved from it are filters pinned by the threads they confine (and
    /// records this kernel entry destroyed, freed when it ends), those
    /// threads end (fail closed) so that the memory comes back, as
    /// revoking an Untyped promises. (With other objects still carved from
    /// it, through another of its capabilities, its memory is not all back
    /// anyway, and the filters stay.)
    pub(in crate::kernel) fn reclaim_pinned<P: Platform>(
        &mut self,
        platform: &mut P,
        slot: SlotId,
    ) {
        let Some(untyped) = self
            .objects
            .lookup(slot)
            .ok()
            .filter(|cap| {
                cap.has_type(CapType::Untyped) && Rights::WRITE.is_subset_of(cap.rights())
            })
            .map(|cap| cap.object())
        else {
            return;
        };
        let has_pinned = self
            .objects
            .get::<kind::Untyped>(untyped)
            .is_some_and(|u| u.pinned > 0);
        // One walk, and only when there are pinned children (rare).
        let only_pinned = has_pinned
            && self.objects.iter().all(|id| {
                self.objects.object(id).is_none_or(|h| {
                    h.parent() != Some(untyped)
                        || matches!(h.state, ObjectState::Pinned | ObjectState::Retired)
                })
            });
        if only_pinned {
            self.end_pinned_children(platform, untyped);
            self.let_go_of_destroyed(platform);
        }
    }

    /// Ends the threads confined by the pinned filters carved from
    /// `untyped` (each end detaches the filter; the last one retires it).
    pub(in crate::kernel) fn end_pinned_children<P: Platform>(
        &mut self,
        platform: &mut P,
        untyped: ObjectId,
    ) {
        // One walk of every object per pinned filter, not per thread: all
        // of a filter's threads end before the next one is looked for.
        loop {
            let next = self.objects.pinned_children(untyped).next();
            let Some(filter) = next else {
                break;
            };
            while let Some(user) = self
                .objects
                .get::<kind::Filter>(filter)
                .and_then(|f| f.attached)
            {
                self.end_thread(
                    platform,
                    user.thread,
                    ThreadState::Exited(FILTER_DESTROYED_STATUS),
                );
                // Kept ended (now or before): the filter goes all the same.
                self.ended_loses_filters(user.thread);
            }
            // The last end retired it; one with no thread left is retired
            // here.
            if self
                .objects
                .object(filter)
                .is_some_and(|h| h.state == ObjectState::Pinned)
            {
                self.objects.retire_pinned(filter);
            }
        }
    }
}
