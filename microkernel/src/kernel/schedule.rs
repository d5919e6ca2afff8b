//! Scheduling: which thread runs next, switching to it, and the
//! exit-to-user work of the thread that returns to EL0.

#[cfg(feature = "rseq-counters")]
use crate::kernel::rseq::counters;
use crate::kernel::{Kernel, Resume};
use crate::platform::Platform;
use crate::stopped_call::StoppedCall;
use crate::thread::{Thread, ThreadId};
use arch::layout::MAX_CPUS;
use arch::object_memory::kind;
use entry::{ExitLoopHooks, WorkFlags};

/// Bound on reschedules in one return to user (each round handles one
/// reschedule request).
pub(in crate::kernel) const MAX_SCHEDULING_ROUNDS: usize = 8;

/// Bound on the rounds of one return to user (see `Kernel::resume`): the
/// reschedules, and a few stops and continuations of the threads the
/// rounds pick (each round uses one up; past the bound the CPU idles and
/// the kernel looks again at the next interrupt).
pub(in crate::kernel) const MAX_RESUME_ROUNDS: usize = MAX_SCHEDULING_ROUNDS + 256;

/// Work that keeps `resume` from sending the current thread straight
/// back: exit work, and trace stops or single-stepping to arrange
/// (`TRACE` alone only while a stop is owed: `traced_owing_nothing`).
pub(in crate::kernel) const RESUME_WORK: WorkFlags = WorkFlags::EXIT_WORK
    .union(WorkFlags::TRACE)
    .union(WorkFlags::SINGLESTEP);

impl Kernel {
    /// Puts a thread that stopped waiting into the run queue; asks the
    /// current thread to yield if the woken one is more urgent.
    /// The thread waits in the queue of the CPU of its affinity; another
    /// CPU is interrupted if the thread is more urgent than what it runs.
    pub(in crate::kernel) fn make_ready(&mut self, thread: ThreadId) {
        let ready = &mut self.objects[thread];
        ready.make_ready();
        let priority = ready.priority;
        let home = usize::from(ready.affinity) % MAX_CPUS;
        let links = self.run_queues[home].ready.append(ready, thread, priority);
        self.run_queues[home]
            .ready
            .link_behind(&mut self.objects, thread, links);
        if home != self.cpu {
            self.wake_core(home, priority);
            return;
        }
        if let Some(current) = self.current {
            if priority > self.objects[current].priority {
                self.objects[current].work.insert(WorkFlags::NEED_RESCHED);
            }
        }
    }

    /// Picks the thread to return to and runs its exit-to-user work.
    ///
    /// Each round picks a thread and either returns to it or does one
    /// thing that changes what is next: a reschedule (only in the first
    /// `MAX_SCHEDULING_ROUNDS` rounds; after that the thread runs and the
    /// next tick asks again), a stopped syscall that goes on, a trace stop
    /// sent, an audit waiter woken. Each of those uses
    /// something up (a stopped call, an owed stop, a blocked thread), so
    /// the loop ends; `MAX_RESUME_ROUNDS` makes sure of it: past it the CPU
    /// idles until the next interrupt and the kernel looks again.
    pub(in crate::kernel) fn resume<P: Platform>(&mut self, platform: &mut P) -> Resume {
        // Most kernel entries end with the thread that made them, or the
        // one an IPC switched to, going back as it is: no exit work, no
        // answered call, nothing to free, no end of the run. One look at
        // it then.
        if let Some(current) = self.current {
            if self.nothing_due() {
                if let Some(resume) = Self::as_it_is(&mut self.objects[current]) {
                    return resume;
                }
            }
        }
        self.resume_with_work(platform)
    }

    /// Nothing is due at the end of this kernel entry but the current
    /// thread's own return: no end of the run, no other CPU to interrupt,
    /// nothing to free.
    #[inline(always)]
    pub(in crate::kernel) fn nothing_due(&self) -> bool {
        !self.attention && !self.objects.has_retired()
    }

    /// The current thread `thread` goes back to EL0 as it is, if it has
    /// nothing to do first (no answered call to go on with, no exit work,
    /// no trace stop owed): `resume`'s one look at it, when
    /// [`nothing_due`](Self::nothing_due).
    #[inline(always)]
    pub(in crate::kernel) fn as_it_is(thread: &mut Thread) -> Option<Resume> {
        if !Self::goes_back_as_it_is(thread) {
            return None;
        }
        #[cfg(feature = "rseq-counters")]
        counters::count_exit(thread);
        Some(Resume::User {
            ttbr0: thread.ttbr0,
            context: &mut thread.context,
        })
    }

    /// `as_it_is`'s question alone (without its count of the return):
    /// has the current thread `thread` nothing to do before it goes back
    /// to EL0?
    #[inline(always)]
    pub(in crate::kernel) fn goes_back_as_it_is(thread: &Thread) -> bool {
        let answered = thread.call.as_ref().is_some_and(StoppedCall::is_answered);
        !(answered || (thread.work.intersects(RESUME_WORK) && !Self::traced_owing_nothing(thread)))
    }

    /// A traced thread (its only resume work) that owes its tracer no
    /// stop and has no blocked syscall's exit stages to run: its way back
    /// asks nothing of `trace_before_user` (the half of a traced thread's
    /// returns that follow an answered exit stop). What that would do
    /// besides is done lazily: a tracer whose endpoint is gone is
    /// detached at the thread's next stop (`trace_stop`), and single-step
    /// hardware left on by a stepping thread is switched off by the one
    /// software-step exception it causes (`software_step`), as for a
    /// thread that is not traced. (When anything else is due, the thread
    /// goes through `pick_resume` after all, and `trace_before_user` does
    /// both at once: either way is right.)
    #[inline(always)]
    fn traced_owing_nothing(thread: &Thread) -> bool {
        thread.work.intersection(RESUME_WORK) == WorkFlags::TRACE
            && thread.trace.owed == 0
            && thread.trace.exit_deferred.is_none()
    }

    /// `resume` when there is something to do first.
    #[inline(never)]
    pub(in crate::kernel) fn resume_with_work<P: Platform>(&mut self, platform: &mut P) -> Resume {
        // The thread that ran waits or yielded, and the next ready one has
        // nothing to do first: the common case, kept out of the loop of
        // `pick_resume` (whose set-up costs more than this whole path).
        let quick = if self.current.is_none() && !self.attention {
            match self.run_queues[self.cpu % MAX_CPUS]
                .ready
                .dequeue(&mut self.objects)
            {
                Some((next, _)) => self.switch_to_ready(platform, next),
                None => None,
            }
        } else {
            None
        };
        // (Not quick: `pick_resume` goes on with the thread just switched
        // to, if any, as its current thread.)
        let resume = match quick {
            Some(resume) => resume,
            None => {
                let resume = self.pick_resume(platform);
                // Other CPUs to interrupt: a thread was made ready there
                // in this entry (`attention` kept it off the quick ways).
                if self.wakeups != 0 {
                    self.send_wakeups(platform);
                }
                resume
            }
        };
        // The kernel entry is over: records destroyed in it are freed.
        if self.objects.has_retired() {
            self.reap();
        }
        resume
    }

    /// `resume`'s choice.
    #[inline(never)]
    pub(in crate::kernel) fn pick_resume<P: Platform>(&mut self, platform: &mut P) -> Resume {
        for round in 0..MAX_RESUME_ROUNDS {
            // The root task has ended: so does the run.
            if let Some(status) = self.shutdown {
                return Resume::Shutdown { status };
            }
            let current = match self.current {
                Some(current) => current,
                None => match self.run_queues[self.cpu % MAX_CPUS]
                    .ready
                    .dequeue(&mut self.objects)
                {
                    Some((next, _)) => {
                        if let Some(resume) = self.switch_to_ready(platform, next) {
                            return resume;
                        }
                        next
                    }
                    // Nothing ready, but an audit ring may have room by now
                    // (the server drained it and went to sleep).
                    None if self.wake_audit_waiters(platform) => continue,
                    // Nothing can run: idle until an interrupt (waiting
                    // for one that never comes is the root's to time out).
                    None => return Resume::Idle,
                },
            };
            let thread = &mut self.objects[current];
            let work = thread.work;
            let mut hooks = ExitWork {
                work: &mut thread.work,
                reschedule: false,
            };
            let _pending = entry::exit_to_user_mode(&mut hooks, work);
            if !hooks.reschedule || round >= MAX_SCHEDULING_ROUNDS {
                // A stopped syscall whose answer has come goes on before
                // the thread returns to EL0 (it may stop or block again).
                if thread.call.as_ref().is_some_and(StoppedCall::is_answered) {
                    // Then, for a call of the policy-only lane (a server's
                    // answer, the common case), as `resume` looks first: the
                    // thread, still this CPU's with nothing else due, goes
                    // back as it is if it has nothing to do first (its call
                    // returned, and left it no work), without the next
                    // round's look.
                    let judged = self.continue_call(platform, current);
                    if judged && self.current == Some(current) && self.nothing_due() {
                        if let Some(resume) = Self::as_it_is(&mut self.objects[current]) {
                            return resume;
                        }
                    }
                    continue;
                }
                // Its restartable sequence, once its syscall is over and
                // before a trace exit stop or step report tells anyone of
                // it (a bad area ends it: pick again).
                if work.contains(WorkFlags::RSEQ) && !self.rseq_on_exit(platform, current) {
                    continue;
                }
                // Trace stops owed, or the single-step hardware to switch
                // on (a stale one is switched off lazily: see
                // `Kernel::software_step`).
                if work.intersects(WorkFlags::TRACE | WorkFlags::SINGLESTEP)
                    && self.trace_before_user(platform, current)
                {
                    continue;
                }
                return self.user_resume(current);
            }
            // Round robin: back of its priority's queue, then pick again
            // (the queue of its affinity's CPU: `TcbSetAffinity` on itself
            // moves it from this CPU here). Preempted: an rseq event.
            self.current = None;
            let thread = &mut self.objects[current];
            thread.note_preemption();
            if usize::from(thread.affinity) != self.cpu {
                self.make_ready(current);
                continue;
            }
            thread.make_ready();
            let priority = thread.priority;
            let queue = &mut self.run_queues[self.cpu % MAX_CPUS].ready;
            let links = queue.append(thread, current, priority);
            queue.link_behind(&mut self.objects, current, links);
        }
        Resume::Idle
    }

    pub(in crate::kernel) fn user_resume(&mut self, id: ThreadId) -> Resume {
        let thread = &mut self.objects[id];
        #[cfg(feature = "rseq-counters")]
        counters::count_exit(thread);
        Resume::User {
            ttbr0: thread.ttbr0,
            context: &mut thread.context,
        }
    }

    /// The switch to `next`, and the way back to EL0 if `next` has nothing
    /// to do first (no exit work, trace stop or answered call: `resume`'s
    /// own test), read while the thread is in hand.
    #[inline(never)]
    pub(in crate::kernel) fn switch_to_ready<P: Platform>(
        &mut self,
        platform: &mut P,
        next: ThreadId,
    ) -> Option<Resume> {
        let (resume, ready) = self.switch_to_inline(platform, next);
        #[cfg(feature = "rseq-counters")]
        if ready {
            counters::count_exit(&self.objects[next]);
        }
        ready.then_some(resume)
    }

    /// Makes `next` the running thread: its ASID is current, its FP/SIMD
    /// state and TPIDR_EL0 are in the CPU. Inlined into its two callers,
    /// `apply_ipc` (a slow IPC, a kernel message sent) and
    /// `switch_to_ready` (`resume`'s scheduler, out of line: inlined into
    /// `resume` it weighed on the paths that do not switch, which are most
    /// syscalls), with no call and no register saves of its own.
    ///
    /// Returns the way back to EL0 for `next` and whether it may take it
    /// at once (`switch_to_ready`).
    #[inline(always)]
    pub(in crate::kernel) fn switch_to_inline<P: Platform>(
        &mut self,
        platform: &mut P,
        next: ThreadId,
    ) -> (Resume, bool) {
        self.current = Some(next);
        let thread = &mut self.objects[next];
        thread.run();
        // Same generation: the ASID is still this space's (a rollover on
        // any CPU starts a new generation, and keeps the numbers live on
        // every CPU reserved). Otherwise take a new one. The
        // thread's own copy of the generation spares a look at its space.
        let asid_stale = thread.asid_generation != self.asids.generation();
        let answered = thread.call.as_ref().is_some_and(StoppedCall::is_answered);
        let ready = !answered
            && (!thread.work.intersects(RESUME_WORK) || Self::traced_owing_nothing(thread));
        let mut resume = Resume::User {
            ttbr0: thread.ttbr0,
            context: &mut thread.context,
        };
        if asid_stale {
            self.refresh_asid(platform, next);
            resume = self.user_resume(next);
        }
        // TPIDR_EL0 needs nothing here: the vectors save it on entry and
        // restore_user_context loads the thread's own.
        self.last_ran = Some(next);
        // FP/SIMD moves lazily: a thread that does not own the registers
        // traps on its first FP instruction (see `take_fp`).
        let owns_fp = self.fp_owner == Some(next);
        if platform.fp_access() != owns_fp {
            platform.set_fp_access(owns_fp);
        }
        (resume, ready)
    }

    /// A new ASID for `thread`'s space after a generation rollover (kept
    /// out of line: the switch is on every slow IPC's path). The space keeps
    /// it, so the other threads in the space find it current; their
    /// cached TTBR0 values change with it.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn refresh_asid<P: Platform>(
        &mut self,
        platform: &mut P,
        thread: ThreadId,
    ) {
        let live = self.live_asids();
        let Some(id) = self.objects[thread].space else {
            // Nothing to refresh. Its generation stays 0, which is no
            // generation's (`AsidAllocator::FIRST_GENERATION`): the fast
            // paths' one compare refuses a thread without a space.
            return;
        };
        let space = self
            .objects
            .get_mut::<kind::VSpace>(id)
            .and_then(|v| v.space.as_mut());
        if let Some(space) = space {
            let assignment = self.asids.assign(Some(space.asid()), live);
            if assignment.flush_all {
                platform.flush_tlb_all();
            }
            space.set_asid(assignment.asid);
        }
        self.sync_space_caches(id);
    }

    /// The current thread used FP/SIMD without owning the registers: move
    /// the owner's state out and the thread's in, then retry.
    pub(in crate::kernel) fn take_fp<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> Resume {
        if self.fp_owner != Some(current) {
            match self.fp_owner {
                Some(owner) => {
                    let Some((outgoing, incoming)) = self.objects.thread_pair_mut(owner, current)
                    else {
                        unreachable!("owner and current differ and are threads");
                    };
                    platform.move_fp_state(Some(&mut outgoing.fp), &incoming.fp);
                }
                None => platform.move_fp_state(None, &self.objects[current].fp),
            }
            self.fp_owner = Some(current);
        }
        platform.set_fp_access(true);
        self.resume(platform)
    }
}

/// Exit-to-user work of the thread about to return to EL0.
///
/// `RSEQ` the loop leaves to the caller: `pick_resume` carries the check
/// out (`rseq_on_exit`, which clears the bit) once a stopped syscall has
/// gone on; a thread switched away keeps the bit for its return.
pub(in crate::kernel) struct ExitWork<'a> {
    work: &'a mut WorkFlags,
    reschedule: bool,
}

impl ExitLoopHooks for ExitWork<'_> {
    fn current_work(&mut self) -> WorkFlags {
        let mut work = *self.work;
        // The rseq check is the caller's (after the loop, or when the
        // thread returns if it is switched away).
        work.remove(WorkFlags::RSEQ);
        // Once a reschedule is decided, it is handled by the caller.
        if self.reschedule {
            work.remove(WorkFlags::NEED_RESCHED);
        }
        work
    }

    fn handle_need_resched(&mut self) {
        self.work.remove(WorkFlags::NEED_RESCHED);
        self.reschedule = true;
    }

    fn handle_notify_resume(&mut self) {
        self.work.remove(WorkFlags::NOTIFY_RESUME);
    }
}
