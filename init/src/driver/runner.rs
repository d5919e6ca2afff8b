//! Running one case: the driver makes the case's objects and threads from
//! its Untyped memory with the SDK's task builder (each thread a program
//! of init's own ELF, its selector in `x0`), starts them, waits for every
//! one's end message (a fault with no handler of the case's comes to the
//! driver first, which stops the thread), reads their counters, and takes
//! everything back with one revoke per task and one for the case.

use super::case::{Case, CaseObject, DEFAULT_PRIORITY};
use super::judge::Ended;
use abi::cap::{CapType, Rights};
use abi::fault::{FAULT_LABEL, FAULT_REPLY_STOP};
use abi::message::NOTIFICATION_LABEL;
use abi::vspace::MapRights;
use abi::ErrorCode;
use core::time::Duration;
use sdk::ipc::{self, Cptr, Message};
use sdk::supervision;
use sdk::syscall::{cnode, retype};
use sdk::task::{Supervisor, Task, TaskBuilder};
use sdk::time::{self, TimeError, Timer};
use sdk::vspace::Frame;

/// Most threads a case starts.
pub const MAX_CASE_THREADS: usize = 4;
/// Most endpoints (and notifications) a case is given.
const MAX_CASE_OBJECTS: u64 = 4;
/// The CNode radix of a case thread unless the case says otherwise.
const THREAD_CNODE_RADIX: u8 = 4;
/// Page-table pages of a case thread's VSpace: its image, stack and IPC
/// buffer, and the frames it maps in the frame window.
const THREAD_TABLE_PAGES: u64 = 24;
/// How long a case may run before the driver fails it and takes it down.
const CASE_DEADLINE: Duration = Duration::from_secs(30);
/// The same for a case spread over several CPUs: each cross-CPU wakeup
/// waits for the host to run the woken vCPU's thread, which on a loaded
/// host takes milliseconds (case 67's 20 000 round trips took 5 to 11 s
/// with two CPU hogs on a 2-core host, and once more than 30 s). A lost
/// wakeup still fails it: a hang outlasts any deadline.
const SPREAD_CASE_DEADLINE: Duration = Duration::from_secs(120);
/// How long a round of the fuzzer (`Expect::AnyEnd`) runs at most: its
/// threads may wait for each other forever, or restart each other
/// (`TcbRestart`); the round is over once each has ended once, once every
/// one still there waits (nothing of the round can wake it: the driver
/// looks every `ANY_END_POLL`), or at this deadline, and the kernel's
/// invariants are what is judged.
const ANY_END_DEADLINE: Duration = Duration::from_secs(5);
const ANY_END_POLL: Duration = Duration::from_millis(20);
/// How a thread the driver stopped is recorded (at the deadline of an
/// `AnyEnd` case, or once a sibling's end failed the case): the kernel's status for a stuck thread, which `Exit` refuses,
/// so no thread can end with it itself.
const STOPPED_BY_DRIVER: i64 = -2;
/// The badge of a case thread's fault endpoint capability: its index.
const THREAD_BADGE: u64 = 0x7e00;

/// What the driver holds.
pub struct Driver {
    /// Its CNode, VSpace, free slots and memory.
    pub supervisor: Supervisor,
    /// init's own ELF (`sdk::root_image`).
    pub image: &'static [u8],
    /// The endpoint case threads' faults and ends come to (read-write).
    pub ends: Cptr,
    /// Its timer (none while a case holds the physical timer's IrqHandler).
    pub timer: Option<Timer>,
    /// The physical timer's IrqHandler (the root's).
    pub timer_irq: Cptr,
    /// The console.
    pub console: Cptr,
    /// How many CPUs the kernel runs on (`Tcb::set_affinity` says).
    pub cpus: u64,
}

/// The objects the driver made for one case.
struct CaseObjects {
    /// The Untyped the case's objects came from.
    memory: Cptr,
    /// First slot of the run: endpoints, notifications, the case's
    /// Untyped, its IrqHandler, the Frames of files it is given.
    first: u64,
    count: u64,
    endpoints: u64,
    notifications: u64,
}

impl CaseObjects {
    fn endpoint(&self, index: u8) -> u64 {
        self.first + u64::from(index)
    }
    fn notification(&self, index: u8) -> u64 {
        self.first + self.endpoints + u64::from(index)
    }
    fn untyped(&self) -> u64 {
        self.first + self.endpoints + self.notifications
    }
    fn irq(&self) -> u64 {
        self.untyped() + 1
    }
    /// The slot of the Frame of the case's `index`th `CaseObject::File`
    /// grant (made when the grant is handed out).
    fn file(&self, index: u64) -> u64 {
        self.irq() + 1 + index
    }
}

/// How many `CaseObject::File` grants `case` has.
fn files_of(case: &Case) -> u64 {
    case.grants
        .iter()
        .filter(|g| matches!(g.object, CaseObject::File(_)))
        .count() as u64
}

/// Does every thread that has not ended (by the messages taken) wait, so
/// that none of them can wake another? (One that ended since has its end
/// message waiting: not yet.)
fn all_wait(
    tasks: &heapless::Vec<Task, MAX_CASE_THREADS>,
    ends: &[Option<Ended>; MAX_CASE_THREADS],
) -> bool {
    tasks.iter().zip(ends).all(|(task, end)| {
        end.is_some()
            || sdk::debug::thread_stats(task.tcb().0)
                .is_ok_and(|stats| stats.run_state == abi::debug::WAITS)
    })
}

/// log2 of the smallest power of two at least `bytes` (at least a page).
fn bits_for(bytes: u64) -> u8 {
    (bytes.max(4096).next_power_of_two().trailing_zeros()) as u8
}

impl Driver {
    /// Runs `case` with `parameter` or'd into each thread's selector;
    /// returns how each thread ended, in thread order.
    pub fn run(
        &mut self,
        case: &Case,
        parameter: u64,
    ) -> Result<heapless::Vec<Ended, MAX_CASE_THREADS>, &'static str> {
        if case.threads.is_empty() || case.threads.len() > MAX_CASE_THREADS {
            return Err("the case has no threads or too many");
        }
        if u64::from(case.endpoints) > MAX_CASE_OBJECTS
            || u64::from(case.notifications) > MAX_CASE_OBJECTS
        {
            return Err("the case asks for too many objects");
        }
        let objects = self.make_objects(case)?;
        let mut tasks: heapless::Vec<Task, MAX_CASE_THREADS> = heapless::Vec::new();
        let built = self.build_threads(case, parameter, &objects, &mut tasks);
        let outcome = match built {
            Ok(()) => self.start_and_wait(case, &objects, &tasks),
            Err(reason) => Err(reason),
        };
        // Whatever happened, everything goes back.
        let taken_back = self.take_back(case, objects, tasks);
        let ended = outcome?;
        taken_back?;
        Ok(ended)
    }

    /// The case's endpoints, notifications, Untyped and IrqHandler, from
    /// an Untyped of its own.
    fn make_objects(&mut self, case: &Case) -> Result<CaseObjects, &'static str> {
        let untyped_bytes = u64::from(case.untyped_pages) * 4096;
        let untyped_bits = bits_for(untyped_bytes);
        // The case's Untyped and room for the rest beside it.
        let memory_bits = if case.untyped_pages > 0 {
            untyped_bits + 1
        } else {
            16
        };
        let endpoints = u64::from(case.endpoints);
        let notifications = u64::from(case.notifications);
        let count = endpoints + notifications + 2 + files_of(case);
        let slots = self
            .supervisor
            .slots
            .alloc_range(count + 1)
            .map_err(|_| "no free slots for the case's objects")?;
        let memory = slots.start;
        let objects = CaseObjects {
            memory: Cptr(memory),
            first: memory + 1,
            count,
            endpoints,
            notifications,
        };
        self.supervisor
            .memory
            .carve(memory_bits, memory)
            .map_err(|_| "no memory for the case")?;
        let made = (|| {
            if endpoints > 0 {
                retype(memory, CapType::Endpoint, 0, objects.endpoint(0), endpoints)?;
            }
            if notifications > 0 {
                retype(
                    memory,
                    CapType::Notification,
                    0,
                    objects.notification(0),
                    notifications,
                )?;
            }
            if case.untyped_pages > 0 {
                retype(
                    memory,
                    CapType::Untyped,
                    u64::from(untyped_bits),
                    objects.untyped(),
                    1,
                )?;
            }
            Ok::<(), ErrorCode>(())
        })();
        if made.is_err() {
            self.release_objects(objects);
            return Err("cannot make the case's objects");
        }
        if let Some(intid) = case.irq {
            if let Err(reason) = self.irq_for(intid, objects.irq()) {
                self.release_objects(objects);
                return Err(reason);
            }
        }
        Ok(objects)
    }

    /// A new IrqHandler for `intid` in `slot`, from the root's
    /// IrqControl. The physical timer's interrupt is the driver's own: its
    /// handler goes first (one handler per interrupt), so the case's is as
    /// new as any, and the driver has no timer until the case is over.
    fn irq_for(&mut self, intid: u32, slot: u64) -> Result<(), &'static str> {
        if intid == super::cases::PHYSICAL_TIMER_INTID {
            if let Some(mut timer) = self.timer.take() {
                let _ = timer.cancel();
            }
            cnode::delete(self.supervisor.cnode.0, self.timer_irq.0)
                .map_err(|_| "cannot give up the timer's IrqHandler")?;
        }
        super::irq_control::handler_for(intid, slot)
            .map_err(|_| "no IrqHandler for the case's interrupt")
    }

    /// Builds each thread (inactive), then hands out the grants, fault
    /// endpoints and the endpoint's original as the case says.
    fn build_threads(
        &mut self,
        case: &Case,
        parameter: u64,
        objects: &CaseObjects,
        tasks: &mut heapless::Vec<Task, MAX_CASE_THREADS>,
    ) -> Result<(), &'static str> {
        for (index, &selector) in case.threads.iter().enumerate() {
            let priority = u64::from(
                case.priorities
                    .get(index)
                    .copied()
                    .unwrap_or(DEFAULT_PRIORITY),
            );
            let name = crate::programs::BootProgram::decode(selector)
                .map_or("init", |(program, _)| program.name());
            let mut builder = TaskBuilder::new(name, self.image)
                .argument(selector | parameter)
                .cnode_radix(case.cnode_radix.unwrap_or(THREAD_CNODE_RADIX))
                .priority(priority)
                .mcp(priority)
                .table_pages(THREAD_TABLE_PAGES)
                .mint(
                    self.console,
                    crate::programs::CONSOLE_SLOT,
                    Rights::WRITE,
                    None,
                );
            builder = match case
                .fault_endpoints
                .iter()
                .find(|(thread, _)| usize::from(*thread) == index)
            {
                // The case's own handler takes its faults (and its end).
                Some(&(_, endpoint)) => {
                    builder.fault_endpoint(Cptr(objects.endpoint(endpoint)), None)
                }
                None => builder.fault_endpoint(self.ends, Some(THREAD_BADGE + index as u64)),
            };
            let task = builder.build(&mut self.supervisor).map_err(|error| {
                sdk::println!("driver: building {name} failed: {error:?}");
                "building a thread failed"
            })?;
            // Cannot fail: at most `MAX_CASE_THREADS` threads.
            let _ = tasks.push(task);
        }
        let mut files = 0;
        for grant in case.grants {
            let task = tasks
                .get(usize::from(grant.thread))
                .ok_or("a grant names a thread the case does not have")?;
            let of = |i: u8| {
                tasks
                    .get(usize::from(i))
                    .ok_or("a grant names a thread the case does not have")
            };
            let source = match grant.object {
                CaseObject::Endpoint(i) => objects.endpoint(i),
                CaseObject::Notification(i) => objects.notification(i),
                CaseObject::Untyped => objects.untyped(),
                CaseObject::Irq => objects.irq(),
                CaseObject::Tcb(i) => of(i)?.tcb().0 .0,
                CaseObject::VSpace(i) => of(i)?.vspace().0 .0,
                // The driver keeps the original (deleting it would delete
                // the thread's copy too) until the case's memory goes.
                CaseObject::File(address) => {
                    let frame = objects.file(files);
                    files += 1;
                    self.fill_file_frame(objects.memory, frame, address)?;
                    frame
                }
            };
            let badge = (grant.badge != 0).then_some(grant.badge);
            cnode::mint_into(task.cnode().0, source, grant.slot, grant.rights, badge)
                .map_err(|_| "minting a granted capability failed")?;
        }
        if let Some((thread, slot)) = case.endpoint_owner {
            let owner = tasks
                .get(usize::from(thread))
                .ok_or("the endpoint owner is not a thread of the case")?;
            cnode::move_into(owner.cnode().0, objects.endpoint(0), slot)
                .map_err(|_| "moving the endpoint to its owner failed")?;
        }
        Ok(())
    }

    /// Makes a Frame in `slot` from `memory` (the case's), holding the
    /// file the description maps into the driver at `address` as the root
    /// lays out a file (its length, then its bytes). The case's memory
    /// takes it back.
    fn fill_file_frame(&self, memory: Cptr, slot: u64, address: u64) -> Result<(), &'static str> {
        let file = sdk::described_file(address);
        if file.len() > 4096 - 8 {
            return Err("a file given to a case is larger than a page");
        }
        let frame = Frame(Cptr(slot));
        retype(memory.0, CapType::Frame, 0, slot, 1)
            .and_then(|()| {
                frame.map_view(
                    self.supervisor.vspace,
                    self.supervisor.scratch,
                    MapRights::ReadWrite,
                )
            })
            .and_then(|view| {
                let written = view
                    .write_u64(0, file.len() as u64)
                    .and_then(|()| view.write_bytes(8, file));
                frame.unmap().and(written)
            })
            .map_err(|_| "cannot copy a file into a Frame for the case")
    }

    /// Starts the threads in order (the driver is more urgent: none runs
    /// before all are ready) and collects how each ended.
    fn start_and_wait(
        &mut self,
        case: &Case,
        objects: &CaseObjects,
        tasks: &heapless::Vec<Task, MAX_CASE_THREADS>,
    ) -> Result<heapless::Vec<Ended, MAX_CASE_THREADS>, &'static str> {
        for (index, task) in tasks.iter().enumerate() {
            if case.cpus == super::case::Cpus::Spread {
                let cpu = (index as u64 + 1) % self.cpus.max(1);
                task.tcb()
                    .set_affinity(cpu)
                    .map_err(|_| "giving a thread its CPU failed")?;
            }
            task.start().map_err(|_| "starting a thread failed")?;
        }
        let mut ends: [Option<Ended>; MAX_CASE_THREADS] = [None; MAX_CASE_THREADS];
        let any_end = case.expect == super::case::Expect::AnyEnd;
        let deadline = time::deadline_after(if any_end {
            ANY_END_DEADLINE
        } else if case.cpus == super::case::Cpus::Boot {
            CASE_DEADLINE
        } else {
            SPREAD_CASE_DEADLINE
        });
        let own_handler = |index: usize| {
            !case
                .fault_endpoints
                .iter()
                .any(|(thread, _)| usize::from(*thread) == index)
        };
        // Those whose faults and end come to the driver.
        while (0..tasks.len()).any(|i| own_handler(i) && ends[i].is_none()) {
            let wait_until = if any_end {
                time::deadline_after(ANY_END_POLL).min(deadline)
            } else {
                deadline
            };
            let received = match self.timer.as_mut() {
                Some(timer) => match timer.recv_until(self.ends, wait_until) {
                    Ok(received) => received,
                    Err(TimeError::TimedOut) if any_end => {
                        if time::now() >= deadline || all_wait(tasks, &ends) {
                            return Ok(self.stopped_at_deadline(tasks, &ends));
                        }
                        continue;
                    }
                    Err(TimeError::TimedOut) => return Err("the case did not end in time"),
                    Err(_) => return Err("the driver's timed receive failed"),
                },
                None => ipc::recv(self.ends).map_err(|_| "the driver's receive failed")?,
            };
            self.take_message(received.message, received.badge, tasks, &mut ends)?;
            if failed(case, &ends) {
                return Ok(self.stopped_at_deadline(tasks, &ends));
            }
        }
        // Those whose end goes to a handler of the case: once it is done
        // (every thread the driver supervises has ended), their fault and
        // end messages wait in its endpoint, or come there, for the driver
        // to take (a case has one such thread per endpoint).
        while let Some(index) = (0..tasks.len()).find(|&i| ends[i].is_none()) {
            let (_, endpoint) = case
                .fault_endpoints
                .iter()
                .find(|(thread, _)| usize::from(*thread) == index)
                .copied()
                .ok_or("a thread's end went nowhere")?;
            let endpoint = Cptr(objects.endpoint(endpoint));
            let received = match self.timer.as_mut() {
                Some(timer) => match timer.recv_until(endpoint, deadline) {
                    Ok(received) => received,
                    Err(TimeError::TimedOut) => return Err("the case did not end in time"),
                    Err(_) => return Err("the driver's timed receive failed"),
                },
                None => ipc::recv(endpoint).map_err(|_| "the driver's receive failed")?,
            };
            let badge = THREAD_BADGE + index as u64;
            self.take_message(received.message, badge, tasks, &mut ends)?;
            if failed(case, &ends) {
                return Ok(self.stopped_at_deadline(tasks, &ends));
            }
        }
        let mut ended = heapless::Vec::new();
        for end in ends.iter().take(tasks.len()) {
            // Cannot fail: as many as the tasks.
            let _ = ended.push(end.ok_or("a thread did not end")?);
        }
        Ok(ended)
    }

    /// The ends of an `AnyEnd` case at its deadline, or of a case one of
    /// whose threads has already failed (`failed`): a thread that has not
    /// ended is recorded as stopped by the driver (with its counters), and
    /// the case's clean-up ends it.
    fn stopped_at_deadline(
        &self,
        tasks: &heapless::Vec<Task, MAX_CASE_THREADS>,
        ends: &[Option<Ended>; MAX_CASE_THREADS],
    ) -> heapless::Vec<Ended, MAX_CASE_THREADS> {
        let mut ended = heapless::Vec::new();
        for (task, end) in tasks.iter().zip(ends) {
            let stopped = Ended {
                end: abi::fault::ThreadEnd::Killed(abi::fault::KillReason::Other(
                    STOPPED_BY_DRIVER,
                )),
                stats: sdk::debug::thread_stats(task.tcb().0).unwrap_or_default(),
            };
            // Cannot fail: as many as the tasks.
            let _ = ended.push(end.unwrap_or(stopped));
        }
        ended
    }

    /// A message about case thread `badge - THREAD_BADGE`: a fault with no
    /// handler of the case (stopped: its end follows) or its end.
    fn take_message(
        &mut self,
        message: Message,
        badge: u64,
        tasks: &heapless::Vec<Task, MAX_CASE_THREADS>,
        ends: &mut [Option<Ended>; MAX_CASE_THREADS],
    ) -> Result<(), &'static str> {
        // The driver's timer notification is bound to it: a bit of the
        // timer it gave up to a case (fired just before) may still come
        // with no timer to take it.
        if message.info.label() == NOTIFICATION_LABEL {
            return Ok(());
        }
        let index = badge.wrapping_sub(THREAD_BADGE) as usize;
        let task = tasks
            .get(index)
            .ok_or("a message from no thread of the case")?;
        match message.info.label() {
            FAULT_LABEL => ipc::reply(&Message::new(FAULT_REPLY_STOP, &[]))
                .map_err(|_| "stopping a faulted thread failed"),
            _ => {
                let end = supervision::end_of(&message).ok_or("an unexpected message")?;
                let stats = sdk::debug::thread_stats(task.tcb().0).unwrap_or_default();
                ends[index] = Some(Ended { end, stats });
                Ok(())
            }
        }
    }

    /// Ends the threads and takes every object back.
    fn take_back(
        &mut self,
        case: &Case,
        objects: CaseObjects,
        tasks: heapless::Vec<Task, MAX_CASE_THREADS>,
    ) -> Result<(), &'static str> {
        let mut result = Ok(());
        for task in tasks {
            if task.destroy(&mut self.supervisor).is_err() {
                result = Err("taking a thread's memory back failed");
            }
        }
        self.release_objects(objects);
        if case.irq == Some(super::cases::PHYSICAL_TIMER_INTID) {
            // The timer's interrupt back to the driver.
            let handler = super::irq_control::handler_for(
                super::cases::PHYSICAL_TIMER_INTID,
                self.timer_irq.0,
            );
            result = result
                .and(handler.map_err(|_| "cannot take the timer's interrupt back"))
                .and(super::restart_timer(self));
        }
        result
    }

    /// Revokes and deletes the case's Untyped (every object made from it
    /// goes) and frees the run of slots.
    fn release_objects(&mut self, objects: CaseObjects) {
        let own = self.supervisor.cnode.0;
        // The IrqHandler came from IrqControl, not from the case's memory.
        let _ = cnode::delete(own, objects.irq());
        let _ = cnode::revoke(own, objects.memory.0);
        let _ = cnode::delete(own, objects.memory.0);
        let _ = self
            .supervisor
            .slots
            .free_range(objects.memory.0..objects.first + objects.count);
    }
}

/// Has a thread of `case` already ended as its expectation forbids? Then
/// the case has failed, whatever the others do, and the driver stops
/// waiting for them: a failed check often leaves a sibling waiting for
/// something that will never come (a timer the failed case held, an
/// answer its checker will not give), and waiting for it wedged the suite
/// until its overall timeout.
fn failed(case: &Case, ends: &[Option<Ended>; MAX_CASE_THREADS]) -> bool {
    ends.iter()
        .flatten()
        .any(|ended| super::judge::check_end(case.expect, ended.end).is_err())
}
