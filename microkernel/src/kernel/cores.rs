//! The kernel on several CPUs.
//!
//! One big kernel lock (`arch::cpu::kernel_cell`) serialises every kernel
//! entry, so the kernel's state is one `Kernel` as on one CPU. What each
//! CPU has of its own:
//! - its view ([`CoreView`]): the thread it runs, the thread whose ASID
//!   may be live in its TTBR0, the thread whose FP/SIMD registers it
//!   holds, and its trap and step settings. The view of the CPU holding
//!   the lock is in `Kernel`'s own fields (`current`, `last_ran`, ...), so
//!   that the paths written for one CPU, the IPC fast path first, read it
//!   at the same offsets; `on_core` swaps views when the lock passes to
//!   another CPU (one compare when it does not, which is every entry on a
//!   one-CPU boot);
//! - its run queue (`Kernel::run_queues`): a ready thread waits in the
//!   queue of the CPU it has affinity with (`Thread::affinity`), and only
//!   that CPU picks it.
//!
//! Invariants (checked by `check_invariants`):
//! - a thread is the current thread of at most one CPU, and a current
//!   thread is `Running` on the CPU of its affinity, or about to leave it
//!   (`TcbSetAffinity` on itself);
//! - a `Ready` thread is in the run queue of its affinity's CPU, and only
//!   there;
//! - a thread's FP/SIMD registers are live in at most one CPU.
//!
//! Acting on a thread another CPU runs: that CPU is stalled first
//! ([`Kernel::stop_elsewhere`]), the thread taken from it (its registers
//! are in its TCB by then) and put back in its queue as ready, so every
//! operation finds it as it would on one CPU: not running.

use crate::kernel::{Kernel, Resume};
use crate::platform::Platform;
use crate::scheduler::{RunQueue, CORE_QUEUE_BYTES};
use crate::thread::{ThreadId, ThreadState};
use abi::ErrorCode;
use arch::exception::EC_SVC64;
use arch::layout::MAX_CPUS;
use entry::WorkFlags;

/// One CPU's run queue in a 4 KiB slot: `Kernel::run_queues[cpu]` is then
/// a shift of the CPU's index, not a multiplication.
#[repr(C)]
pub(crate) struct CoreQueue {
    pub(crate) ready: RunQueue,
    _slot: [u8; CORE_QUEUE_BYTES - core::mem::size_of::<RunQueue>()],
}

const _: () = assert!(core::mem::size_of::<CoreQueue>() == CORE_QUEUE_BYTES);

impl CoreQueue {
    pub(crate) const EMPTY: CoreQueue = CoreQueue {
        ready: RunQueue::new(),
        _slot: [0; CORE_QUEUE_BYTES - core::mem::size_of::<RunQueue>()],
    };
}

/// One CPU's own part of the kernel's state (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CoreView {
    current: Option<ThreadId>,
    last_ran: Option<ThreadId>,
    fp_owner: Option<ThreadId>,
    step_installed: bool,
    #[cfg(feature = "bench-calls")]
    floor_interrupted: Option<ThreadId>,
}

impl CoreView {
    /// A CPU that has run nothing: EL0 may use FP/SIMD (boot leaves it
    /// so), no single-stepping.
    pub(crate) const IDLE: CoreView = CoreView {
        current: None,
        last_ran: None,
        fp_owner: None,
        step_installed: false,
        #[cfg(feature = "bench-calls")]
        floor_interrupted: None,
    };
}

impl Kernel {
    /// Makes this CPU's view the kernel's own: called by the arch glue at
    /// the start of every kernel entry, with the lock held. `token` tells
    /// the CPU from the others (`arch::cpu::smp::this_core_token`: one
    /// instruction, which the lock needed anyway); `cpu` says its index,
    /// only asked for when the view changes hands.
    #[inline(always)]
    pub fn on_core(&mut self, token: u64, cpu: impl FnOnce() -> usize) {
        if self.core_token != token {
            self.switch_view(cpu(), token);
        }
    }

    /// The lock passed to another CPU: keep the last holder's view, take
    /// `cpu`'s.
    #[cold]
    #[inline(never)]
    fn switch_view(&mut self, cpu: usize, token: u64) {
        let cpu = cpu % MAX_CPUS;
        self.core_token = token;
        self.cores[self.cpu] = self.own_view();
        let view = self.cores[cpu];
        self.current = view.current;
        self.last_ran = view.last_ran;
        self.fp_owner = view.fp_owner;
        self.step_installed = view.step_installed;
        #[cfg(feature = "bench-calls")]
        {
            self.floor_interrupted = view.floor_interrupted;
        }
        self.cpu = cpu;
    }

    /// The view of the CPU holding the lock, from the kernel's own fields.
    fn own_view(&self) -> CoreView {
        CoreView {
            current: self.current,
            last_ran: self.last_ran,
            fp_owner: self.fp_owner,
            step_installed: self.step_installed,
            #[cfg(feature = "bench-calls")]
            floor_interrupted: self.floor_interrupted,
        }
    }

    /// The view of `cpu`, whichever CPU holds the lock.
    fn view(&self, cpu: usize) -> CoreView {
        if cpu == self.cpu {
            self.own_view()
        } else {
            self.cores[cpu % MAX_CPUS]
        }
    }

    /// `cpu` (not the boot CPU, which always runs) has started and runs
    /// the kernel from now on: threads may be given affinity with it.
    /// Called once by the arch glue, on that CPU, with the lock held.
    pub fn core_online(&mut self, cpu: usize) {
        if cpu < MAX_CPUS {
            self.cores_online |= 1 << cpu;
        }
    }

    /// How many CPUs run the kernel.
    pub fn cores_online(&self) -> u32 {
        self.cores_online.count_ones()
    }

    /// Whether the kernel runs on `cpu`.
    pub(in crate::kernel) fn is_online(&self, cpu: u64) -> bool {
        cpu < MAX_CPUS as u64 && self.cores_online & (1 << cpu) != 0
    }

    /// The thread `cpu` runs (or is about to return to), if any.
    pub fn current_on(&self, cpu: usize) -> Option<ThreadId> {
        self.view(cpu).current
    }

    /// The thread whose FP/SIMD registers `cpu` holds, if any.
    pub(in crate::kernel) fn fp_owner_on(&self, cpu: usize) -> Option<ThreadId> {
        self.view(cpu).fp_owner
    }

    /// The CPU of `thread`'s affinity, as an index into per-CPU arrays.
    #[inline(always)]
    pub(in crate::kernel) fn home_of(&self, thread: ThreadId) -> usize {
        usize::from(self.objects[thread].affinity) % MAX_CPUS
    }

    /// The CPU other than this one that runs `thread`, if any.
    pub(in crate::kernel) fn running_elsewhere(&self, thread: ThreadId) -> Option<usize> {
        (0..MAX_CPUS).find(|&cpu| cpu != self.cpu && self.cores[cpu].current == Some(thread))
    }

    /// Makes sure no other CPU runs `thread`: a CPU that does is stalled
    /// (its FP/SIMD registers saved too if they are the thread's), and the
    /// thread taken from it and made ready in its queue. A syscall that
    /// CPU had yet to handle for it runs again when the thread next runs
    /// (its PC goes back to the `svc`); a fault is taken again by running
    /// the faulting instruction again. Every operation on another thread
    /// (a TCB invocation, ending it, destroying its TCB) calls this first.
    pub(in crate::kernel) fn stop_elsewhere<P: Platform>(
        &mut self,
        platform: &mut P,
        thread: ThreadId,
    ) {
        let Some(cpu) = self.running_elsewhere(thread) else {
            return;
        };
        let owns_fp = self.cores[cpu].fp_owner == Some(thread);
        let t = &mut self.objects[thread];
        let stalled = platform.stall_cpu(cpu, owns_fp.then_some(&mut t.fp));
        // (The class is compared by hand: a second caller of
        // `ExceptionClass::from_esr` took it out of line from every
        // entry's path, 12 instructions each.)
        if stalled
            .el0_sync_syndrome
            .is_some_and(|esr| (esr >> 26) & 0x3f == u64::from(EC_SVC64))
        {
            // An SVC instruction is 4 bytes; ELR_EL1 is past it.
            let pc = t.context.pc();
            t.context.set_pc(pc.wrapping_sub(4));
        }
        let view = &mut self.cores[cpu];
        view.current = None;
        if owns_fp {
            view.fp_owner = None;
        }
        // Preempted there.
        self.objects[thread].note_preemption();
        self.make_ready(thread);
    }

    /// Saves `thread`'s FP/SIMD registers into its TCB from whichever CPU
    /// holds them (this one, or another, stalled for it): before it runs
    /// on another CPU.
    fn take_fp_home<P: Platform>(&mut self, platform: &mut P, thread: ThreadId) {
        if self.fp_owner == Some(thread) {
            platform.save_fp_state(&mut self.objects[thread].fp);
            self.fp_owner = None;
        }
        for cpu in 0..MAX_CPUS {
            if cpu != self.cpu && self.cores[cpu].fp_owner == Some(thread) {
                let _ = platform.stall_cpu(cpu, Some(&mut self.objects[thread].fp));
                self.cores[cpu].fp_owner = None;
            }
        }
    }

    /// `thread` is going away (its TCB emptied or kept ended): no CPU's
    /// view may name it any more. Its FP/SIMD registers are dropped where
    /// they are live (the next owner there loads its own over them); a
    /// space it ran in last is no longer named live by it.
    pub(in crate::kernel) fn forget_on_cores(&mut self, thread: ThreadId) {
        if self.fp_owner == Some(thread) {
            self.fp_owner = None;
        }
        if self.last_ran == Some(thread) {
            self.last_ran = None;
        }
        for view in &mut self.cores {
            if view.fp_owner == Some(thread) {
                view.fp_owner = None;
            }
            if view.last_ran == Some(thread) {
                view.last_ran = None;
            }
        }
    }

    /// `thread` leaves a space that `other` still runs in: where it ran
    /// last, `other` stands for the live ASID instead.
    pub(in crate::kernel) fn hand_live_space(&mut self, thread: ThreadId, other: ThreadId) {
        if self.last_ran == Some(thread) {
            self.last_ran = Some(other);
        }
        for view in &mut self.cores {
            if view.last_ran == Some(thread) {
                view.last_ran = Some(other);
            }
        }
    }

    /// The ASIDs that may be live in some CPU's TTBR0: the spaces of the
    /// threads each ran last (see `AsidAllocator::assign`).
    pub(in crate::kernel) fn live_asids(
        &self,
    ) -> heapless::Vec<arch::mmu::AsidWithGeneration, MAX_CPUS> {
        let mut live = heapless::Vec::new();
        for cpu in 0..MAX_CPUS {
            let owner = self.view(cpu).last_ran;
            if let Some(asid) = owner
                .and_then(|owner| self.thread_space(owner))
                .map(crate::address_space::AddressSpace::asid)
            {
                // Cannot fail: one per CPU.
                let _ = live.push(asid);
            }
        }
        live
    }

    /// A thread of priority `priority` was made ready on `cpu`, another
    /// CPU: interrupt it if it idles or runs something less urgent (sent
    /// at the end of this kernel entry, by `send_wakeups` in
    /// `resume_with_work`, which `attention` sends the entry to).
    pub(in crate::kernel) fn wake_core(
        &mut self,
        cpu: usize,
        priority: crate::scheduler::Priority,
    ) {
        let running = self.cores[cpu % MAX_CPUS].current;
        let more_urgent = match running {
            Some(running) => priority > self.objects[running].priority,
            None => true,
        };
        if more_urgent {
            self.wakeups |= 1 << cpu;
            self.attention = true;
        }
    }

    /// Interrupts the CPUs `wake_core` chose in this kernel entry.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn send_wakeups<P: Platform>(&mut self, platform: &mut P) {
        let wakeups = core::mem::take(&mut self.wakeups);
        self.attention = self.shutdown.is_some();
        for cpu in 0..MAX_CPUS {
            if wakeups & (1 << cpu) != 0 && cpu != self.cpu {
                platform.send_reschedule(cpu);
            }
        }
    }

    /// Another CPU made a more urgent thread ready here: reschedule.
    pub(in crate::kernel) fn reschedule_requested(&mut self) {
        if let Some(current) = self.current {
            let thread = &mut self.objects[current];
            if self.run_queues[self.cpu % MAX_CPUS]
                .ready
                .has_ready_at_or_above(thread.priority)
            {
                thread.work.insert(WorkFlags::NEED_RESCHED);
            }
        }
    }

    /// `TcbSetAffinity`: `target` runs on `cpu` from now on.
    pub(in crate::kernel) fn set_affinity<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        target: ThreadId,
        cpu: u64,
    ) -> ErrorCode {
        if !self.is_online(cpu) {
            return ErrorCode::InvalidArgument;
        }
        let cpu = cpu as u8;
        if self.objects[target].affinity == cpu {
            return ErrorCode::Ok;
        }
        // Not running elsewhere (the TCB invocation stopped it), so it is
        // the caller, ready in its old CPU's queue, or waiting.
        self.take_fp_home(platform, target);
        if self.objects[target].state() == ThreadState::Ready {
            let home = self.home_of(target);
            let priority = self.objects[target].priority;
            self.run_queues[home]
                .ready
                .remove(&mut self.objects, target, priority);
            self.objects[target].set_affinity(cpu);
            self.make_ready(target);
        } else {
            self.objects[target].set_affinity(cpu);
            if Some(target) == self.current {
                // It leaves this CPU on its way out (`pick_resume` puts
                // it in its new CPU's queue).
                self.objects[current].work.insert(WorkFlags::NEED_RESCHED);
            }
        }
        ErrorCode::Ok
    }

    /// Whether this CPU may stop its tick while it idles: it is not the
    /// boot CPU (whose tick is the kernel's clock) and nothing is ready in
    /// its queue (a thread made ready there later comes with an SGI).
    pub fn may_idle_without_tick(&self) -> bool {
        self.cpu != 0 && self.run_queues[self.cpu % MAX_CPUS].ready.is_empty()
    }

    /// Where `resume` goes for a CPU that has just come online: its run
    /// queue is empty, so it idles until a thread is made ready there.
    pub fn start_core<P: Platform>(&mut self, platform: &mut P) -> Resume {
        self.resume(platform)
    }
}
