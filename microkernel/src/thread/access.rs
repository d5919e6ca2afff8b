//! What other modules and the kernel's clients read of a thread, and
//! the links its queues keep in it (each list's module owns its links'
//! type: `scheduler::RunLinks`, `endpoint_queue::QueueLinks`).

use super::*;

/// What the kernel's clients (the integration tests, the harnesses)
/// read of a thread: the fields are the crate's, so these are read-only.
impl Thread {
    /// Its saved registers.
    #[inline(always)]
    pub fn context(&self) -> &UserContext {
        &self.context
    }

    /// Its entry and exit work.
    #[inline(always)]
    pub fn work(&self) -> WorkFlags {
        self.work
    }

    /// The syscalls that skip the entry work (`no_entry_work`).
    #[inline(always)]
    pub fn no_entry_work(&self) -> u64 {
        self.no_entry_work
    }

    /// Its scheduling priority.
    #[inline(always)]
    pub fn priority(&self) -> Priority {
        self.priority
    }

    /// Its maximum controlled priority.
    #[inline(always)]
    pub fn mcp(&self) -> Priority {
        self.mcp
    }

    /// The caller it owes a reply.
    #[inline(always)]
    pub fn reply_to(&self) -> Option<ThreadId> {
        self.reply_to
    }

    /// Its CSpace.
    #[inline(always)]
    pub fn cspace(&self) -> Option<CNodeId> {
        self.cspace
    }

    /// Its IPC buffer's physical address.
    #[inline(always)]
    pub fn ipc_buffer(&self) -> Option<u64> {
        self.ipc_buffer
    }

    /// Where its faults go.
    #[inline(always)]
    pub fn fault_endpoint(&self) -> Option<(ObjectRef, u64)> {
        self.fault_endpoint
    }

    /// The syscall it stopped in.
    #[inline(always)]
    pub fn call(&self) -> Option<&StoppedCall> {
        self.call.as_ref()
    }

    /// Its counters.
    #[inline(always)]
    pub fn stats(&self) -> &ThreadStats {
        &self.stats
    }

    /// Its name.
    #[inline(always)]
    pub fn name(&self) -> &ThreadName {
        &self.name
    }

    /// Its number.
    #[inline(always)]
    pub fn number(&self) -> u32 {
        self.number
    }

    /// The VSpace it runs in.
    #[inline(always)]
    pub fn space(&self) -> Option<ObjectId> {
        self.space
    }

    /// Its TTBR0_EL1 value.
    #[inline(always)]
    pub fn ttbr0(&self) -> u64 {
        self.ttbr0
    }

    /// Its space's ASID generation.
    #[inline(always)]
    pub fn asid_generation(&self) -> u64 {
        self.asid_generation
    }

    /// Its filters, oldest first.
    #[inline(always)]
    pub fn filters(&self) -> &[AttachedFilter] {
        &self.filters
    }

    /// Where its trace stops go.
    #[inline(always)]
    pub fn tracer(&self) -> Option<(ObjectRef, u64)> {
        self.tracer
    }

    /// The Reply object that answers it, while its server saved it.
    #[inline(always)]
    pub fn saved_reply(&self) -> Option<ObjectId> {
        self.saved_reply
    }

    /// How it ended, while its TCB is kept ended.
    #[inline(always)]
    pub fn end(&self) -> Option<abi::fault::ThreadEnd> {
        self.end
    }

    /// Its part as a policy server.
    #[inline(always)]
    pub fn served(&self) -> super::ServedFilters {
        self.served
    }
}

/// The endpoint queues' links, kept here and read and written through
/// `endpoint_queue` alone (`QueueLinks`' fields are its own).
impl Queued for Thread {
    #[inline(always)]
    fn queue_links(&self) -> &QueueLinks {
        &self.queue_links
    }

    #[inline(always)]
    fn queue_links_mut(&mut self) -> &mut QueueLinks {
        &mut self.queue_links
    }
}

/// The run queue's links, kept here and read and written by the
/// scheduler alone (`RunLinks`' fields are its own).
impl RunQueued for Thread {
    #[inline(always)]
    fn run_links(&self) -> &RunLinks {
        &self.run_links
    }

    #[inline(always)]
    fn run_links_mut(&mut self) -> &mut RunLinks {
        &mut self.run_links
    }
}
