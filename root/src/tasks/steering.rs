//! Changing a running task on request (`abi::control`, served by
//! `crate::control`): killing, restarting, tracing it and adding a filter.
//! What may be asked, of which task, is decided here: never of the
//! privileged task (trusted with the root's own authority), never of the
//! asker itself (it would stop or lock itself out), never of a task that
//! has ended unless to restart it.

use super::{keep, HeldFilter, System};
use abi::bootinfo::ROOT_CNODE_SLOT;
use abi::cap::CapType;
use abi::control::ControlError;
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

    /// Takes task `index` down for good (its memory revoked): it stays
    /// ended, as a failed task, and is not restarted unless asked.
    pub fn kill(&mut self, index: usize, asker: usize) -> Result<&'static str, ControlError> {
        let name = self.changeable(index, asker)?;
        self.take_down(index, name).map_err(|failure| {
            sdk::println!("system: {failure}");
            ControlError::Failed
        })?;
        Ok(name)
    }

    /// Rebuilds task `index` from its plan and starts it, whether it runs
    /// or has ended. A restart asked for does not count against the
    /// task's `max_restarts`.
    pub fn restart_on_request(
        &mut self,
        index: usize,
        asker: usize,
    ) -> Result<&'static str, ControlError> {
        let plan = self
            .plan
            .task(index as u16)
            .ok_or(ControlError::NoSuchTask)?;
        if plan.privileged.is_some() || index == asker {
            return Err(ControlError::NotAllowed);
        }
        let restarts = self.built(index).map_or(0, |b| b.restarts);
        self.rebuild(index).map_err(|failure| {
            sdk::println!("system: {failure}");
            ControlError::Failed
        })?;
        if let Some(built) = self.tasks[index].as_mut() {
            built.restarts = restarts;
        }
        Ok(plan.name)
    }

    /// Traces task `index` to the endpoint the root received into
    /// `endpoint` (kept, to detach it later, and deleted with the task's
    /// other copies when it is rebuilt or killed).
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
        built
            .task
            .tcb()
            .attach_tracer(Cptr(endpoint))
            .map_err(ControlError::Kernel)?;
        keep(built, endpoint..endpoint + 1).map_err(|_| ControlError::Failed)?;
        built.traced_to = Some(endpoint);
        Ok(())
    }

    /// Detaches the tracer `trace_to` attached to task `index`.
    pub fn untrace(&mut self, index: usize, asker: usize) -> Result<(), ControlError> {
        self.changeable(index, asker)?;
        let Some(built) = self.tasks[index].as_mut() else {
            return Err(ControlError::Ended);
        };
        let endpoint = built.traced_to.ok_or(ControlError::NotTraced)?;
        built
            .task
            .tcb()
            .detach_tracer(Cptr(endpoint))
            .map_err(ControlError::Kernel)?;
        built.traced_to = None;
        // The copy stays one of the task's extras until it is rebuilt;
        // emptied now, so a later `trace_to` takes a new slot.
        let _ = cnode::delete(ROOT_CNODE_SLOT, endpoint);
        Ok(())
    }

    /// Makes a filter from task `index`'s own memory with `description`
    /// (checked by the kernel's `FilterLoad`) and attaches it on top of
    /// its filters, with no policy server (a description that can say
    /// `Notify` is refused). Filters only add restrictions, and one
    /// attached here is gone when the task is rebuilt from its plan.
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
        let Some(held) = built.filters.iter_mut().find(|h| h.slot().is_none()) else {
            let _ = self.supervisor.slots.free(slot);
            return Err(ControlError::Kernel(abi::ErrorCode::OutOfResources));
        };
        let filter = FilterCap(Cptr(slot));
        let made = retype(built.task.untyped().0, CapType::Filter, 0, slot, 1)
            .and_then(|()| filter.load(description))
            .and_then(|()| built.task.tcb().attach_filter(filter, None));
        if let Err(code) = made {
            let _ = cnode::delete(ROOT_CNODE_SLOT, slot);
            let _ = self.supervisor.slots.free(slot);
            return Err(ControlError::Kernel(code));
        }
        *held = HeldFilter::new(slot, None);
        keep(built, slot..slot + 1).map_err(|_| ControlError::Failed)
    }
}
