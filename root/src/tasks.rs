//! Building the plan's tasks: each from its ELF with the SDK's task
//! builder, then its capabilities, mappings, filters, tracer and audit
//! ring; and rebuilding one for a restart.

use crate::objects::bits_for;
use crate::objects::{Objects, OWN_VSPACE, SCRATCH_VA};
use abi::bootinfo::{BootInfo, ROOT_CNODE_RADIX, ROOT_CNODE_SLOT, ROOT_CONSOLE_SLOT};
use abi::bootinfo::{ROOT_FIRST_FREE_SLOT, ROOT_IRQ_CONTROL_SLOT};
use abi::cap::{CapType, Rights};
use abi::system::plan::{CapSource, ObjectUse, Plan, TaskPlan, MAX_IRQS, MAX_TASKS};
use abi::system::plan::{Restart, MAX_TASK_FILTERS, MAX_TASK_MAPPINGS};
use abi::vspace::{MapRights, MAX_USER_TABLE_PAGES};
use abi::{ErrorCode, USER_STACK_TOP};
use core::fmt;
use core::ops::Range;
use sdk::ipc::Cptr;
use sdk::syscall::{cnode, irq_control_get, irq_set_notification, retype};
use sdk::task::{MemoryError, SlotAllocator, Supervisor, Task, TaskBuilder, TaskError};
use sdk::task::{PoolUntyped, UntypedPool};
use sdk::tcb::{FilterCap, FilterServer};
use sdk::vspace::Frame;

mod steering;

/// Runs of root slots one task's extras take at most: one per mapping
/// (copies of the Frames it maps), per filter (the filter and its
/// server's badged endpoint), the tracer's and the audit ring's.
const MAX_EXTRA_RUNS: usize = MAX_TASK_MAPPINGS + 2 * MAX_TASK_FILTERS + 3;

/// Why the system could not be built.
#[derive(Clone, Copy, Debug)]
pub enum Why {
    /// A syscall answered this.
    Code(ErrorCode),
    /// The task builder failed.
    Task(TaskError),
    /// No memory for it.
    Memory(MemoryError),
    /// The root's CNode is full.
    Slots,
    /// The plan asks for what cannot be.
    Plan(&'static str),
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::Code(code) => write!(f, "{} ({})", code.name(), code.describe()),
            Why::Task(TaskError::Syscall { step, code }) => {
                write!(f, "{step:?} failed: {} ({})", code.name(), code.describe())
            }
            Why::Task(error) => write!(f, "{error:?}"),
            Why::Memory(MemoryError::Exhausted { size_bits }) => write!(
                f,
                "no free block of 2^{size_bits} bytes is left (the system needs more RAM)"
            ),
            Why::Memory(error) => write!(f, "{error:?}"),
            Why::Slots => f.write_str("the root's CNode is full"),
            Why::Plan(what) => f.write_str(what),
        }
    }
}

/// A failure to build, with what was being built.
#[derive(Clone, Copy, Debug)]
pub struct Failure {
    who: (&'static str, &'static str),
    what: &'static str,
    why: Why,
}

impl Failure {
    /// Failed making the system's own parts.
    pub fn system(what: &'static str, why: Why) -> Failure {
        Failure {
            who: ("", ""),
            what,
            why,
        }
    }

    /// Failed making object `name`.
    pub fn object(name: &'static str, why: Why) -> Failure {
        Failure {
            who: ("object ", name),
            what: "making it",
            why,
        }
    }

    /// Failed building task `name`.
    pub fn task(name: &'static str, what: &'static str, why: Why) -> Failure {
        Failure {
            who: ("task ", name),
            what,
            why,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, name) = self.who;
        if name.is_empty() {
            write!(f, "building the system: {}: {}", self.what, self.why)
        } else {
            write!(f, "{kind}{name}: {}: {}", self.what, self.why)
        }
    }
}

/// A task the root built, and what the root keeps for it.
pub struct Built {
    /// The task.
    pub task: Task,
    /// Runs of root slots (first, count: the root has 4096) holding
    /// copies made for it, deleted when it is rebuilt.
    extras: heapless::Vec<(u16, u16), MAX_EXTRA_RUNS>,
    /// How often it was rebuilt.
    pub restarts: u32,
    /// It has ended for good.
    pub ended: bool,
    /// It ended other than by exiting with status 0.
    pub failed: bool,
    /// Its filters, as the root holds them (it made them: write right).
    filters: [HeldFilter; MAX_TASK_FILTERS],
    /// The root's slot of the endpoint a control request traced it to.
    traced_to: Option<u64>,
}

/// A filter the root made and attached to a task, packed in a word (0:
/// none): the root's stack holds a `System`, with 4 of these for each of
/// 32 tasks. Bits 0..12: the root's slot of the Filter capability (root
/// slots are below 2^12); bits 12..24: the root's slot of the endpoint
/// capability it was attached with; bits 24..31: the task that receives
/// on that endpoint, its policy server (`NO_SERVER`: none); bit 31 set.
#[derive(Clone, Copy, Debug, Default)]
struct HeldFilter(u32);

/// `HeldFilter`'s task bits of a filter without a policy server.
const NO_SERVER: u32 = 0x7f;

impl HeldFilter {
    fn new(slot: u64, server: Option<(u64, usize)>) -> HeldFilter {
        let (endpoint, task) = server.map_or((0, NO_SERVER), |(e, t)| (e as u32, t as u32));
        HeldFilter(1 << 31 | (task & 0x7f) << 24 | (endpoint & 0xfff) << 12 | (slot as u32 & 0xfff))
    }

    /// The filter's slot, if this holds one.
    fn slot(self) -> Option<u64> {
        (self.0 != 0).then_some(u64::from(self.0 & 0xfff))
    }

    /// Its server's endpoint slot and task.
    fn server(self) -> Option<(u64, usize)> {
        let task = (self.0 >> 24) & 0x7f;
        (self.0 != 0 && task != NO_SERVER)
            .then_some((u64::from((self.0 >> 12) & 0xfff), task as usize))
    }
}

/// The system being run.
pub struct System {
    /// The plan.
    pub plan: Plan<'static>,
    /// What the kernel gave the root.
    pub info: BootInfo,
    /// The root's slots and memory.
    pub supervisor: Supervisor,
    /// The shared objects.
    pub objects: Objects,
    /// The tasks, by plan index (`None`: not built yet).
    pub tasks: heapless::Vec<Option<Built>, MAX_TASKS>,
    /// The endpoint every supervised task's faults and end come to,
    /// badged with the task's index + 1.
    pub endpoint: Cptr,
    /// IrqHandlers made: (interrupt ID, root slot).
    irqs: heapless::Vec<(u32, u64), MAX_IRQS>,
    /// The boot Untyped the system's memory was carved from.
    pub memory_parent: Cptr,
}

impl System {
    /// The system of `plan` with its shared objects and the supervisor's
    /// endpoint made, and no task yet ([`System::build_all`]).
    // A frame of its own: inlined, every step's locals would share
    // one frame bigger than the root's 128 KiB stack.
    #[inline(never)]
    pub fn new(info: &BootInfo, plan: Plan<'static>) -> Result<System, Failure> {
        let slots = SlotAllocator::new(ROOT_FIRST_FREE_SLOT..1 << ROOT_CNODE_RADIX)
            .map_err(|_| Failure::system("the root's slots", Why::Slots))?;
        // Every task and shared object comes from one child Untyped, so
        // that the root's other Untypeds stay whole (for a privileged
        // task): twice what the plan asks for, as children of mixed sizes
        // are aligned to their size.
        let mut slots = slots;
        let system_slot = slots
            .alloc()
            .map_err(|_| Failure::system("a slot", Why::Slots))?;
        let system_bits = bits_for(2 * plan_bytes(&plan) + (64 << 10));
        let parent = UntypedPool::from_boot_info(info)
            .carve(system_bits, system_slot)
            .map_err(|e| Failure::system("the system's memory", Why::Memory(e)))?;
        let mut memory = UntypedPool::new();
        memory
            .add(PoolUntyped {
                cap: Cptr(system_slot),
                size_bits: system_bits,
            })
            .map_err(|e| Failure::system("the system's memory", Why::Memory(e)))?;
        let mut supervisor = Supervisor {
            cnode: Cptr(ROOT_CNODE_SLOT),
            vspace: OWN_VSPACE,
            scratch: SCRATCH_VA + 4096,
            slots,
            memory,
        };
        let objects = Objects::make(&plan, info, &mut supervisor)?;
        let endpoint = supervisor
            .slots
            .alloc()
            .map_err(|_| Failure::system("a slot", Why::Slots))?;
        retype(objects.untyped.0, CapType::Endpoint, 0, endpoint, 1)
            .map_err(|e| Failure::system("the supervisor's endpoint", Why::Code(e)))?;
        let mut system = System {
            plan,
            info: info.clone(),
            supervisor,
            objects,
            tasks: heapless::Vec::new(),
            endpoint: Cptr(endpoint),
            irqs: heapless::Vec::new(),
            memory_parent: parent.cap,
        };
        for _ in 0..plan.head.tasks {
            let _ = system.tasks.push(None);
        }
        Ok(system)
    }

    /// Builds every task (the privileged one last), gives each the
    /// other tasks' TCBs it names, and starts them in plan order.
    // A frame of its own (see `new`).
    #[inline(never)]
    pub fn build_all(&mut self) -> Result<(), Failure> {
        let plan = self.plan;
        sdk::println!(
            "system: building {:?}: {} task{}, {} object{}",
            plan.head.name,
            plan.head.tasks,
            plural(plan.head.tasks.into()),
            plan.head.objects,
            plural(plan.head.objects.into()),
        );
        let mut privileged = None;
        for (index, task) in plan.tasks().enumerate() {
            if task.privileged.is_some() {
                privileged = Some(index);
                continue;
            }
            self.build_task(index, &task)?;
        }
        if let Some(index) = privileged {
            let task = plan
                .task(index as u16)
                .ok_or(Failure::system("the privileged task", Why::Plan("missing")))?;
            self.build_task(index, &task)?;
            crate::privileged::hand_over(self, index, &task)?;
        }
        for (index, task) in plan.tasks().enumerate() {
            self.connect(index, &task)?;
        }
        for (index, task) in plan.tasks().enumerate() {
            self.confine(index, &task)?;
        }
        for (index, task) in plan.tasks().enumerate() {
            self.start(index, &task)?;
        }
        Ok(())
    }

    /// Attaches task `index`'s filters, each with its policy server: the
    /// endpoint and the thread of the task that receives on it (every
    /// task is built by now).
    // A frame of its own (see `new`).
    #[inline(never)]
    fn confine(&mut self, index: usize, plan: &TaskPlan<'static>) -> Result<(), Failure> {
        let fail = |why| Failure::task(plan.name, "attaching a filter", why);
        let Some(built) = self.built(index) else {
            return Ok(());
        };
        let tcb = built.task.tcb();
        for held in built.filters {
            let Some(slot) = held.slot() else { continue };
            let server = match held.server() {
                Some((endpoint, task)) => {
                    let thread = self
                        .built(task)
                        .ok_or(fail(Why::Plan("its policy server was not built")))?
                        .task
                        .tcb();
                    Some(FilterServer {
                        endpoint: Cptr(endpoint),
                        thread,
                    })
                }
                None => None,
            };
            tcb.attach_filter(FilterCap(Cptr(slot)), server)
                .map_err(|e| fail(Why::Code(e)))?;
        }
        Ok(())
    }

    /// Task `index` was rebuilt: every other task's filter it serves lost
    /// its server with the old thread, and is handed to the new one (the
    /// root made the filters, so it holds them with the write right).
    // A frame of its own (see `new`).
    #[inline(never)]
    fn hand_filters_to(&mut self, index: usize) -> Result<(), Failure> {
        let Some(server) = self.built(index) else {
            return Ok(());
        };
        let (thread, name) = (server.task.tcb(), server.task.name());
        for (other, built) in self.tasks.iter().enumerate() {
            let Some(built) = built else { continue };
            for (position, held) in built.filters.iter().enumerate() {
                let (Some(slot), Some((endpoint, task))) = (held.slot(), held.server()) else {
                    continue;
                };
                if task != index || other == index {
                    continue;
                }
                let handed = FilterCap(Cptr(slot))
                    .set_server(FilterServer {
                        endpoint: Cptr(endpoint),
                        thread,
                    })
                    .map_err(|e| Failure::task(name, "taking over a filter", Why::Code(e)))?;
                sdk::println!(
                    "system: filter {position} of {} handed to the restarted {name} ({handed} thread{})",
                    built.task.name(),
                    plural(handed as usize),
                );
            }
        }
        Ok(())
    }

    /// The built task `index`.
    pub fn built(&self, index: usize) -> Option<&Built> {
        self.tasks.get(index).and_then(Option::as_ref)
    }

    /// Builds task `index` (not started, not yet given other tasks'
    /// TCBs: `connect` does that once every task exists).
    // A frame of its own: inlined, every step's locals would share
    // one frame bigger than the root's 128 KiB stack.
    #[inline(never)]
    fn build_task(&mut self, index: usize, plan: &TaskPlan<'static>) -> Result<(), Failure> {
        let name = plan.name;
        let fail = |what, why| Failure::task(name, what, why);
        let elf = self
            .plan
            .file(plan.elf)
            .ok_or(fail("its ELF", Why::Plan("not in the image")))?;
        // An image low, a stack and IPC buffer high: 6 table pages; each
        // mapping may need three more, and so may the privileged task's
        // copy of its ELF.
        // (A privileged task maps as a root does, anywhere in its frame
        // window: it may take every table page a space may have.)
        let regions = plan.mappings.len() as u64;
        let table_pages = if plan.privileged.is_some() {
            MAX_USER_TABLE_PAGES
        } else {
            (8 + 3 * regions).min(MAX_USER_TABLE_PAGES)
        };
        let argument = if plan.privileged.is_some() {
            abi::bootinfo::ROOT_ARGUMENT
        } else {
            plan.argument
        };
        let (fault, badge) = match plan.fault_handler {
            Some(handler) => (
                Cptr(self.objects.get(handler.object).slot),
                badge_of(handler),
            ),
            None => (self.endpoint, Some(index as u64 + 1)),
        };
        let task = TaskBuilder::new(name, elf)
            .argument(argument)
            .cnode_radix(plan.cnode_radix)
            .priority(plan.priority.into())
            .mcp(plan.mcp.into())
            .stack(plan.stack_pages.into(), USER_STACK_TOP)
            .table_pages(table_pages)
            .memory_bits(plan.memory_bits)
            .fault_endpoint(fault, badge)
            .build(&mut self.supervisor)
            .map_err(|e| fail("building it", Why::Task(e)))?;
        let mut built = Built {
            task,
            extras: heapless::Vec::new(),
            restarts: 0,
            ended: false,
            failed: false,
            filters: [HeldFilter::default(); MAX_TASK_FILTERS],
            traced_to: None,
        };
        let result = self.equip(&mut built, index, plan);
        self.tasks[index] = Some(built);
        result
    }

    /// Gives a built task its capabilities (but other tasks' TCBs), its
    /// mappings, filters, tracer and audit ring.
    // A frame of its own: inlined, every step's locals would share
    // one frame bigger than the root's 128 KiB stack.
    #[inline(never)]
    fn equip(
        &mut self,
        built: &mut Built,
        index: usize,
        plan: &TaskPlan<'static>,
    ) -> Result<(), Failure> {
        let name = plan.name;
        let fail = |what, why| Failure::task(name, what, why);
        let (tcb, vspace, untyped) = (built.task.tcb(), built.task.vspace(), built.task.untyped());
        let own = built.task.cnode().0;
        for cap in &plan.caps {
            let rights = Rights::from_raw(cap.rights.into())
                .ok_or(fail("a capability", Why::Plan("undefined rights")))?;
            let slot = u64::from(cap.slot);
            let given = match cap.source {
                CapSource::Object(used) => cnode::mint_into(
                    own,
                    self.objects.get(used.object).slot,
                    slot,
                    rights,
                    badge_of(used),
                ),
                CapSource::Console => cnode::mint_into(own, ROOT_CONSOLE_SLOT, slot, rights, None),
                CapSource::Supervisor => {
                    let badge = abi::control::CONTROL_BADGE | (index as u64 + 1);
                    cnode::mint_into(own, self.endpoint.0, slot, rights, Some(badge))
                }
                CapSource::Irq {
                    intid,
                    notification,
                } => {
                    let handler = self
                        .irq_handler(intid, notification)
                        .map_err(|why| fail("an IrqHandler", why))?;
                    cnode::mint_into(own, handler, slot, rights, None)
                }
                CapSource::OwnVSpace => cnode::mint_into(own, vspace.0 .0, slot, rights, None),
                CapSource::Untyped { bits } => {
                    let scratch = self.slot().map_err(|why| fail("an Untyped", why))?;
                    let made = retype(untyped.0, CapType::Untyped, u64::from(bits), scratch, 1)
                        .and_then(|()| cnode::move_into(own, scratch, slot));
                    let _ = self.supervisor.slots.free(scratch);
                    made
                }
                // Given by `connect`, once every task is built.
                CapSource::Tcb { .. } => Ok(()),
            };
            given.map_err(|e| fail("giving it a capability", Why::Code(e)))?;
        }
        for mapping in &plan.mappings {
            let made = self.objects.get(mapping.object);
            let rights = if mapping.writable {
                MapRights::ReadWrite
            } else {
                MapRights::Read
            };
            let copies = self
                .supervisor
                .slots
                .alloc_range(made.pages)
                .map_err(|_| fail("mapping shared memory", Why::Slots))?;
            keep(built, copies.clone())?;
            for (page, copy) in copies.enumerate() {
                let page = page as u64;
                cnode::copy(ROOT_CNODE_SLOT, made.slot + page, copy)
                    .map_err(|e| fail("copying a Frame", Why::Code(e)))?;
                Frame(Cptr(copy))
                    .map(vspace, mapping.address + page * 4096, rights)
                    .map_err(|e| fail("mapping shared memory", Why::Code(e)))?;
            }
        }
        // Made and loaded here; attached by `confine`, once its servers'
        // threads exist.
        for filter in &plan.filters {
            let slot = self.slot().map_err(|why| fail("a filter", why))?;
            keep(built, slot..slot + 1)?;
            let server = match filter.server {
                Some(server) => {
                    let task = server_task(&self.plan, plan, server).ok_or(fail(
                        "a filter",
                        Why::Plan("no task receives on its server's endpoint"),
                    ))?;
                    Some((self.used(built, server)?, task))
                }
                None => None,
            };
            let filter_cap = FilterCap(Cptr(slot));
            retype(untyped.0, CapType::Filter, 0, slot, 1)
                .and_then(|()| filter_cap.load(filter.description))
                .map_err(|e| fail("making a filter", Why::Code(e)))?;
            let held = built
                .filters
                .iter_mut()
                .find(|held| held.slot().is_none())
                .ok_or(fail("a filter", Why::Plan("too many filters")))?;
            *held = HeldFilter::new(slot, server);
        }
        if let Some(tracer) = plan.tracer {
            let endpoint = self.used(built, tracer)?;
            tcb.attach_tracer(Cptr(endpoint))
                .map_err(|e| fail("attaching its tracer", Why::Code(e)))?;
        }
        if let Some(audit) = plan.audit {
            let ring = self.copy(built, self.objects.get(audit.ring).slot, None)?;
            let notification = self.used(built, audit.notification)?;
            let mode = if audit.lossless {
                abi::audit::AuditMode::Lossless
            } else {
                abi::audit::AuditMode::Lossy
            };
            tcb.set_audit(
                Frame(Cptr(ring)),
                Cptr(notification),
                Some(mode),
                audit.badge,
            )
            .map_err(|e| fail("setting its audit ring", Why::Code(e)))?;
        }
        Ok(())
    }

    /// Gives task `index` the TCBs of other tasks its plan names, and
    /// every task that names task `index`'s TCB gets it (after a rebuild,
    /// the old copies went with the old TCB).
    // A frame of its own: inlined, every step's locals would share
    // one frame bigger than the root's 128 KiB stack.
    #[inline(never)]
    fn connect(&mut self, index: usize, plan: &TaskPlan<'static>) -> Result<(), Failure> {
        let fail = |why| Failure::task(plan.name, "giving it a TCB", why);
        for cap in &plan.caps {
            let CapSource::Tcb { task } = cap.source else {
                continue;
            };
            let rights = Rights::from_raw(cap.rights.into()).unwrap_or(Rights::NONE);
            // A task that is not built (a rebuild of it failed) neither
            // gets nor gives a TCB; the others go on being connected.
            let (Some(holder), Some(named)) = (self.built(index), self.built(task.into())) else {
                continue;
            };
            let given = cnode::mint_into(
                holder.task.cnode().0,
                named.task.tcb().0 .0,
                u64::from(cap.slot),
                rights,
                None,
            );
            match given {
                // Still there: the holder was not rebuilt. Or one of the
                // two was killed (`steering.rs`): its CNode or TCB went
                // with its memory, and there is nothing to give.
                Ok(()) | Err(ErrorCode::SlotOccupied | ErrorCode::InvalidCapability) => {}
                Err(e) => return Err(fail(Why::Code(e))),
            }
        }
        Ok(())
    }

    /// Starts task `index` and says so.
    // A frame of its own: inlined, every step's locals would share
    // one frame bigger than the root's 128 KiB stack.
    #[inline(never)]
    fn start(&mut self, index: usize, plan: &TaskPlan<'static>) -> Result<(), Failure> {
        let Some(built) = self.built(index) else {
            return Ok(());
        };
        built
            .task
            .start()
            .map_err(|e| Failure::task(plan.name, "starting it", Why::Task(e)))?;
        sdk::println!(
            "system: started {} (priority {}, {} KiB, {} capabilit{}{}{}{}{})",
            plan.name,
            plan.priority,
            (1u64 << plan.memory_bits) >> 10,
            plan.caps.len(),
            if plan.caps.len() == 1 { "y" } else { "ies" },
            match plan.filters.len() {
                0 => "",
                1 => ", a filter",
                _ => ", filters",
            },
            if plan.tracer.is_some() {
                ", traced"
            } else {
                ""
            },
            if plan.audit.is_some() {
                ", audited"
            } else {
                ""
            },
            if plan.privileged.is_some() {
                ", privileged"
            } else {
                ""
            },
        );
        Ok(())
    }

    /// Ends task `index` and builds it again from its plan (fresh
    /// memory), with every capability, mapping, filter, tracer and ring,
    /// and starts it.
    // A frame of its own: inlined, every step's locals would share
    // one frame bigger than the root's 128 KiB stack.
    #[inline(never)]
    pub fn rebuild(&mut self, index: usize) -> Result<(), Failure> {
        let plan = self
            .plan
            .task(index as u16)
            .ok_or(Failure::system("a restart", Why::Plan("no such task")))?;
        let restarts = self.built(index).map_or(0, |b| b.restarts);
        self.take_down(index, plan.name)?;
        self.build_task(index, &plan)?;
        if let Some(built) = self.tasks[index].as_mut() {
            built.restarts = restarts + 1;
        }
        for (other, task) in self.plan.tasks().enumerate() {
            self.connect(other, &task)?;
        }
        self.confine(index, &plan)?;
        self.hand_filters_to(index)?;
        self.start(index, &plan)
    }

    /// Destroys task `index` (if built) and frees the root's copies made
    /// for it: its memory is revoked, so nothing of it is left.
    pub fn take_down(&mut self, index: usize, name: &'static str) -> Result<(), Failure> {
        let Some(old) = self.tasks.get_mut(index).and_then(Option::take) else {
            return Ok(());
        };
        old.task
            .destroy(&mut self.supervisor)
            .map_err(|e| Failure::task(name, "taking it down", Why::Task(e)))?;
        for (first, count) in old.extras {
            let run = u64::from(first)..u64::from(first) + u64::from(count);
            for slot in run.clone() {
                let _ = cnode::delete(ROOT_CNODE_SLOT, slot);
            }
            let _ = self.supervisor.slots.free_range(run);
        }
        Ok(())
    }

    /// A free slot of the root's.
    pub fn slot(&mut self) -> Result<u64, Why> {
        self.supervisor.slots.alloc().map_err(|_| Why::Slots)
    }

    /// A copy (maybe badged) of the root's capability at `source`, kept
    /// as one of `built`'s extras.
    fn copy(&mut self, built: &mut Built, source: u64, badge: Option<u64>) -> Result<u64, Failure> {
        let name = built.task.name();
        let slot = self
            .slot()
            .map_err(|why| Failure::task(name, "a copy", why))?;
        keep(built, slot..slot + 1)?;
        let copied = match badge {
            None => cnode::copy(ROOT_CNODE_SLOT, source, slot),
            Some(badge) => cnode::mint(ROOT_CNODE_SLOT, source, slot, Rights::ALL, Some(badge)),
        };
        copied.map_err(|e| Failure::task(name, "copying a capability", Why::Code(e)))?;
        Ok(slot)
    }

    /// The root's capability for a use of an object: the original, or a
    /// badged copy kept as one of `built`'s extras.
    fn used(&mut self, built: &mut Built, used: ObjectUse) -> Result<u64, Failure> {
        let original = self.objects.get(used.object).slot;
        match badge_of(used) {
            None => Ok(original),
            Some(badge) => self.copy(built, original, Some(badge)),
        }
    }

    /// The IrqHandler for `intid` (made once, its interrupts signalled
    /// to the notification with the badge given).
    fn irq_handler(&mut self, intid: u32, notification: ObjectUse) -> Result<u64, Why> {
        if let Some(&(_, slot)) = self.irqs.iter().find(|(i, _)| *i == intid) {
            return Ok(slot);
        }
        let handler = self.slot()?;
        let signal = match self.slot() {
            Ok(slot) => slot,
            Err(why) => {
                let _ = self.supervisor.slots.free(handler);
                return Err(why);
            }
        };
        let source = self.objects.get(notification.object).slot;
        let made = irq_control_get(ROOT_IRQ_CONTROL_SLOT, intid, handler)
            .and_then(|()| {
                cnode::mint(
                    ROOT_CNODE_SLOT,
                    source,
                    signal,
                    Rights::WRITE,
                    badge_of(notification),
                )
            })
            .and_then(|()| irq_set_notification(handler, signal));
        if let Err(code) = made {
            for slot in [handler, signal] {
                let _ = cnode::delete(ROOT_CNODE_SLOT, slot);
                let _ = self.supervisor.slots.free(slot);
            }
            return Err(Why::Code(code));
        }
        self.irqs
            .push((intid, handler))
            .map_err(|_| Why::Plan("too many IRQs"))?;
        Ok(handler)
    }
}

/// The task that serves a filter of `confined` whose server endpoint is
/// `server`: the first task (in plan order) other than the confined one
/// that holds that endpoint with the read right (the description's
/// `server`, which the host tool checked holds it so).
fn server_task(
    plan: &Plan<'static>,
    confined: &TaskPlan<'static>,
    server: ObjectUse,
) -> Option<usize> {
    plan.tasks().position(|task| {
        task.name != confined.name
            && task.caps.iter().any(|cap| match cap.source {
                CapSource::Object(used) => {
                    used.object == server.object
                        && Rights::from_raw(cap.rights.into()).is_some_and(|r| r.read())
                }
                _ => false,
            })
    })
}

/// The badge of a use (`None` for 0, no badge).
fn badge_of(used: ObjectUse) -> Option<u64> {
    (used.badge != 0).then_some(used.badge)
}

/// "s" unless `count` is 1.
fn plural(count: usize) -> &'static str {
    if count == 1 {
        ""
    } else {
        "s"
    }
}

/// Bytes the plan's tasks and shared objects take: each task's memory,
/// once more for each rebuild it may have (memory an Untyped handed out
/// comes back only when all of it does), and the shared objects' Untyped.
fn plan_bytes(plan: &Plan<'static>) -> u64 {
    let tasks: u64 = plan
        .tasks()
        .map(|task| {
            let restarts = match task.restart {
                Restart::Never => 0,
                Restart::OnFault { max } | Restart::Always { max } => u64::from(max),
            };
            (1u64 << task.memory_bits) * (1 + restarts)
        })
        .sum();
    tasks + (1 << crate::objects::shared_bits(plan))
}

/// Records a run of root slots as one of `built`'s extras.
fn keep(built: &mut Built, run: Range<u64>) -> Result<(), Failure> {
    // Root slots are below 2^ROOT_CNODE_RADIX = 4096.
    let packed = (run.start as u16, (run.end - run.start) as u16);
    built.extras.push(packed).map_err(|_| {
        Failure::task(
            built.task.name(),
            "keeping its copies",
            Why::Plan("more mappings and filters than the plan allows"),
        )
    })
}
