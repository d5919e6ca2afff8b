//! Changing a running task on request (`abi::control`, served by
//! `crate::control`): killing, restarting, tracing it and adding a filter.
//! What may be asked, of which task, is decided here: never of the
//! privileged task (trusted with the root's own authority), never of the
//! asker itself (it would stop or lock itself out), never of a task that
//! has ended unless to restart it.

use super::{keep, Built, HeldFilter, System};
use abi::bootinfo::ROOT_CNODE_SLOT;
use abi::cap::CapType;
use abi::control::ControlError;
use abi::system::plan::Restart;
use abi::ErrorCode;
use sdk::ipc::Cptr;
use sdk::syscall::{cnode, retype};
use sdk::tcb::FilterCap;

impl System {
    /// The plan index of the task named `name`.
    pub fn task_named(&self, name: &str) -> Option<usize> {
        self.plan.tasks().position(|task| task.name == name)
    }

    /// Task `index`, if it may be changed at `asker`'s request and is
    /// running: its plan's name.
    fn changeable(&self, index: usize, asker: usize) -> Result<&'static str, ControlError> {
        let plan = self
            .plan
            .task(index as u16)
            .ok_or(ControlError::NoSuchTask)?;
        if plan.privileged.is_some() || index == asker {
            return Err(ControlError::NotAllowed);
        }
        match self.built(index) {
            Some(built) if !built.ended => Ok(plan.name),
            _ => Err(ControlError::Ended),
        }
    }

    /// Takes task `index` down for good: its memory is revoked (every
    /// object made from it goes, its thread with its TCB), and it stays
    /// ended, as a failed task, until a restart is asked for. What the
    /// root keeps of it stays, as for a task that ended by itself: its
    /// restart count above all (a kill and a restart do not give it a
    /// fresh count of restarts, whose memory was set aside once), and
    /// the copies made for it, freed when it is rebuilt.
    pub fn kill(&mut self, index: usize, asker: usize) -> Result<&'static str, ControlError> {
        let name = self.changeable(index, asker)?;
        let Some(built) = self.tasks[index].as_mut() else {
            return Err(ControlError::Ended);
        };
        if let Err(code) = cnode::revoke(ROOT_CNODE_SLOT, built.task.untyped().0) {
            sdk::println!("system: task {name}: taking it down: {}", code.name());
            return Err(ControlError::Failed);
        }
        built.ended = true;
        built.failed = true;
        Ok(name)
    }

    /// Rebuilds task `index` from its plan and starts it, whether it runs
    /// or has ended. A restart asked for counts against the task's
    /// `max_restarts` as one its rule makes does: every build takes fresh
    /// memory from the system's Untyped, which gets none back while the
    /// system runs, and the root set aside memory for `1 + max_restarts`
    /// builds of each task (`plan_bytes`). Past that it is refused, so
    /// that restarts asked for in a loop cannot spend the memory other
    /// tasks' restarts need. A rebuild that fails leaves the task ended,
    /// failed (`NotRestarted::ended`), as a failed restart by its rule
    /// does.
    pub fn restart_on_request(
        &mut self,
        index: usize,
        asker: usize,
    ) -> Result<&'static str, NotRestarted> {
        let refused = |error| NotRestarted {
            error,
            ended: false,
        };
        let plan = self
            .plan
            .task(index as u16)
            .ok_or(refused(ControlError::NoSuchTask))?;
        if plan.privileged.is_some() || index == asker {
            return Err(refused(ControlError::NotAllowed));
        }
        let restarts = self.built(index).map_or(0, |b| b.restarts);
        let max = match plan.restart {
            Restart::Never => 0,
            Restart::OnFault { max } | Restart::Always { max } => max,
        };
        if restarts >= max {
            sdk::println!(
                "system: {} cannot be restarted: memory was set aside for {max} restart{}, and it has had {restarts}",
                plan.name,
                if max == 1 { "" } else { "s" },
            );
            return Err(refused(ControlError::Failed));
        }
        if let Err(failure) = self.rebuild(index) {
            sdk::println!("system: {failure}");
            // Down, and not up again: ended, failed (a partly built task
            // was never started, and would never report its end).
            if let Some(built) = self.tasks.get_mut(index).and_then(Option::as_mut) {
                built.ended = true;
                built.failed = true;
            }
            return Err(NotRestarted {
                error: ControlError::Failed,
                ended: true,
            });
        }
        Ok(plan.name)
    }

    /// Traces task `index` to the endpoint the root received into
    /// `endpoint` (kept, to detach it later, and deleted with the task's
    /// other copies when it is rebuilt or killed). The copy is recorded
    /// before the tracer is attached: a tracer attached is always one
    /// `untrace` can detach.
    pub fn trace_to(
        &mut self,
        index: usize,
        asker: usize,
        endpoint: u64,
    ) -> Result<(), ControlError> {
        self.changeable(index, asker)?;
        let Some(built) = self.tasks[index].as_mut() else {
            return Err(ControlError::Ended);
        };
        keep(built, endpoint..endpoint + 1).map_err(|_| ControlError::Failed)?;
        if let Err(code) = built.task.tcb().attach_tracer(Cptr(endpoint)) {
            forget(built, endpoint);
            return Err(ControlError::Kernel(code));
        }
        // A tracer attached before and gone since (its endpoint was
        // destroyed, or it replied "detach"): its copy goes now.
        if let Some(old) = built.traced_to.replace(endpoint) {
            forget(built, old);
            let _ = cnode::delete(ROOT_CNODE_SLOT, old);
            let _ = self.supervisor.slots.free(old);
        }
        Ok(())
    }

    /// Detaches the tracer `trace_to` attached to task `index`, and frees
    /// the root's copy of its endpoint (so tracing on and off again and
    /// again takes no more of the root's slots, nor of the task's
    /// extras). A tracer the kernel has dropped already (it replied
    /// "detach", or its endpoint was destroyed) is forgotten the same way,
    /// and so is one whose copy the root no longer has (the asker revoked
    /// it): the root cannot detach that one, its tracer still can, by
    /// answering a stop with "detach".
    pub fn untrace(&mut self, index: usize, asker: usize) -> Result<(), ControlError> {
        self.changeable(index, asker)?;
        let Some(built) = self.tasks[index].as_mut() else {
            return Err(ControlError::Ended);
        };
        let endpoint = built.traced_to.ok_or(ControlError::NotTraced)?;
        match built.task.tcb().detach_tracer(Cptr(endpoint)) {
            Ok(()) | Err(ErrorCode::InvalidArgument | ErrorCode::InvalidCapability) => {}
            Err(code) => return Err(ControlError::Kernel(code)),
        }
        built.traced_to = None;
        forget(built, endpoint);
        let _ = cnode::delete(ROOT_CNODE_SLOT, endpoint);
        let _ = self.supervisor.slots.free(endpoint);
        Ok(())
    }

    /// Makes a filter from task `index`'s own memory with `description`
    /// (checked by the kernel's `FilterLoad`) and attaches it on top of
    /// its filters, with no policy server (a description that can say
    /// `Notify` is refused). Filters only add restrictions, and one
    /// attached here is gone when the task is rebuilt from its plan. The
    /// filter's slot is recorded before it is attached, so an attached
    /// filter's slot is always freed with the task.
    pub fn attach_policy(
        &mut self,
        index: usize,
        asker: usize,
        description: &[u8],
    ) -> Result<(), ControlError> {
        self.changeable(index, asker)?;
        let slot = self.slot().map_err(|_| ControlError::Failed)?;
        let Some(built) = self.tasks[index].as_mut() else {
            let _ = self.supervisor.slots.free(slot);
            return Err(ControlError::Ended);
        };
        let Some(position) = built.filters.iter().position(|h| h.slot().is_none()) else {
            let _ = self.supervisor.slots.free(slot);
            return Err(ControlError::Kernel(ErrorCode::OutOfResources));
        };
        if keep(built, slot..slot + 1).is_err() {
            let _ = self.supervisor.slots.free(slot);
            return Err(ControlError::Failed);
        }
        let filter = FilterCap(Cptr(slot));
        let made = retype(built.task.untyped().0, CapType::Filter, 0, slot, 1)
            .and_then(|()| filter.load(description))
            .and_then(|()| built.task.tcb().attach_filter(filter, None));
        if let Err(code) = made {
            forget(built, slot);
            let _ = cnode::delete(ROOT_CNODE_SLOT, slot);
            let _ = self.supervisor.slots.free(slot);
            return Err(ControlError::Kernel(code));
        }
        built.filters[position] = HeldFilter::new(slot, None);
        Ok(())
    }
}

/// Why a restart asked for did not happen.
#[derive(Clone, Copy, Debug)]
pub struct NotRestarted {
    /// The answer.
    pub error: ControlError,
    /// The task was taken down and could not be built again: it has
    /// ended, failed (the rules of `supervise::after_end` apply).
    pub ended: bool,
}

/// Takes the one-slot run `slot` out of `built`'s extras (its copy is
/// deleted, or about to be, by the caller).
fn forget(built: &mut Built, slot: u64) {
    if let Some(at) = built.extras.iter().position(|&run| run == (slot as u16, 1)) {
        built.extras.swap_remove(at);
    }
}
