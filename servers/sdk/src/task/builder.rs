//! The task builder: one call that makes a task from an ELF file and a
//! description, and the handle that starts, restarts and destroys it.
//!
//! Every object of a task is retyped from a child Untyped made for it
//! from the supervisor's [`UntypedPool`]; its capabilities sit in one run
//! of the supervisor's slots from its [`SlotAllocator`]:
//!
//! | offset | holds |
//! |--------|-------|
//! | 0 | the task's Untyped (its memory) |
//! | 1 | its CNode |
//! | 2 | its TCB |
//! | 3 | its VSpace |
//! | 4 | its IPC buffer's Frame |
//! | 5 | the badged copy of its fault endpoint (empty without one) |
//! | 6.. | its stack's Frames, then its image's Frames |
//!
//! A task built with the defaults finds the layout a thread the kernel
//! made has: its own CNode in slot 0 (read-write), what the caller grants
//! elsewhere (the console in slot 1 by convention), the ELF's entry point,
//! `sp` at [`abi::USER_STACK_TOP`] over [`abi::USER_STACK_PAGES`] pages,
//! its IPC buffer at [`abi::IPC_BUFFER_ADDRESS`], which is also its first
//! `TPIDR_EL0`, priority and MCP as given (at most the caller's MCP).

use super::memory::{MemoryError, UntypedPool};
use super::slots::{SlotAllocator, SlotError};
use crate::ipc::Cptr;
use crate::loader::{load_elf, plan, ElfError, LoadError, TaskMemory, PAGE_SIZE};
use crate::syscall::{cnode, retype};
use crate::tcb::{IpcBuffer, Tcb, ThreadStart};
use crate::vspace::{Frame, VSpace};
use abi::cap::{CapType, Rights};
use abi::tcb::Register;
use abi::vspace::MapRights;
use abi::ErrorCode;
use core::ops::Range;

/// Most capabilities one builder grants (besides the task's own CNode).
pub const MAX_GRANTS: usize = 16;
/// The CNode radix a builder uses unless told: 8 slots, what `abi::task`
/// needs.
pub const DEFAULT_CNODE_RADIX: u8 = 3;
/// Page-table pages a task's VSpace may take unless told: an image low
/// and a stack and IPC buffer high need 6.
pub const DEFAULT_TABLE_PAGES: u64 = 8;
/// The priority (and MCP) a builder gives unless told: the boot suite's
/// default priority.
pub const DEFAULT_PRIORITY: u64 = 100;

/// Slots of a task's run before its stack's Frames.
const FIXED_SLOTS: u64 = 6;

/// What a supervisor builds tasks with: its own CNode and VSpace, a
/// scratch page for the loader, its free slots and its memory.
#[derive(Clone, Debug)]
pub struct Supervisor {
    /// The caller's own CNode (read-write): where the task's capabilities
    /// are kept and deleted.
    pub cnode: Cptr,
    /// The caller's own VSpace (write): the loader fills each image page
    /// through a mapping at `scratch` in it.
    pub vspace: VSpace,
    /// A free page of the caller's frame-mapping window
    /// (`abi::vspace::FRAME_MAP_START..FRAME_MAP_END`).
    pub scratch: u64,
    /// The caller's free slots.
    pub slots: SlotAllocator,
    /// Where each task's Untyped comes from.
    pub memory: UntypedPool,
}

/// A capability the builder gives the task: `source` of the caller's
/// CSpace minted into slot `slot` of the task's CNode with `rights` (a
/// subset of the source's) and maybe a badge. A copy is a mint with the
/// source's rights and no badge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The capability in the caller's CSpace.
    pub source: Cptr,
    /// The slot of the task's CNode it goes to.
    pub slot: u64,
    /// Its rights.
    pub rights: Rights,
    /// Its badge (endpoints and notifications), if any.
    pub badge: Option<u64>,
}

/// A syscall step of building or running a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Retyping the task's CNode.
    RetypeCNode,
    /// Retyping its TCB.
    RetypeTcb,
    /// Retyping its VSpace.
    RetypeVSpace,
    /// Retyping its IPC buffer's Frame.
    RetypeIpcBuffer,
    /// Retyping its stack's Frames.
    RetypeStack,
    /// Minting its own CNode into its CNode.
    MintOwnCNode,
    /// Minting the grant for this slot of the task's CNode.
    Grant(u64),
    /// Minting the badged copy of its fault endpoint.
    MintFaultEndpoint,
    /// `TcbConfigure`: CSpace, priority and MCP.
    Configure,
    /// `TcbSetName`: the task's name in the kernel's console lines.
    SetName,
    /// `TcbSetMcp`.
    SetMcp,
    /// `TcbSetSpace`: VSpace, IPC buffer, fault endpoint, PC, SP, `x0`.
    SetSpace,
    /// Mapping its IPC buffer.
    MapIpcBuffer,
    /// Mapping the stack page at this address.
    MapStack(u64),
    /// `TcbResume`.
    Resume,
    /// `TcbSuspend`.
    Suspend,
    /// Writing this register (a restart).
    WriteRegister(u64),
    /// Revoking the task's Untyped (ends it, destroys its objects).
    Revoke,
    /// Deleting a capability of the task's run of slots.
    Delete(u64),
}

/// Why a task could not be built or driven.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskError {
    /// The ELF file was refused; nothing was made.
    Elf(ElfError),
    /// The name is not one the kernel takes for a thread
    /// (`abi::tcb::is_valid_name`); nothing was made.
    BadName,
    /// The entry point asked for is not a 4-byte aligned address of an
    /// executable segment of the image; nothing was made.
    EntryOutsideCode(u64),
    /// A slot (own CNode or grant) outside the task's CNode, or the same
    /// slot twice; nothing was made.
    BadSlot(u64),
    /// The stack does not fit below its top (or has no pages, or its top
    /// is not 16-byte aligned); nothing was made.
    BadStack,
    /// More than [`MAX_GRANTS`] grants; nothing was made.
    TooManyGrants,
    /// Not enough free slots in the caller's CNode; nothing was made.
    Slots(SlotError),
    /// No child Untyped for the task; nothing was made.
    Memory(MemoryError),
    /// Loading the image failed (what was made is taken back).
    Load(LoadError),
    /// A syscall step failed with this code (what was made is taken back
    /// when building).
    Syscall {
        /// The step.
        step: Step,
        /// The kernel's answer.
        code: ErrorCode,
    },
}

impl TaskError {
    /// The syscall step that failed, if one did.
    pub fn step(&self) -> Option<Step> {
        match self {
            TaskError::Syscall { step, .. } => Some(*step),
            _ => None,
        }
    }
}

/// `Result::map_err` to a [`TaskError::Syscall`] of `step`.
fn at<T>(step: Step, result: Result<T, ErrorCode>) -> Result<T, TaskError> {
    result.map_err(|code| TaskError::Syscall { step, code })
}

/// A description of a task to build; [`TaskBuilder::build`] makes it.
#[derive(Clone, Debug)]
pub struct TaskBuilder<'elf> {
    name: &'static str,
    elf: &'elf [u8],
    entry: Option<u64>,
    argument: u64,
    cnode_radix: u8,
    own_cnode_slot: Option<u64>,
    priority: u64,
    mcp: Option<u64>,
    stack_pages: u64,
    stack_top: u64,
    table_pages: u64,
    memory_bits: Option<u8>,
    fault_endpoint: Option<(Cptr, Option<u64>)>,
    grants: [Option<Grant>; MAX_GRANTS],
    too_many_grants: bool,
}

impl<'elf> TaskBuilder<'elf> {
    /// A task running `elf` named `name` (in errors and reports, and its
    /// thread in the kernel's console lines, `[name#N]`: 1 ..= 16 bytes of
    /// printable ASCII without space, `#`, `[` or `]`) with the
    /// defaults: the ELF's entry point, `x0` 0, a CNode of
    /// [`DEFAULT_CNODE_RADIX`] with itself in slot 0, priority and MCP
    /// [`DEFAULT_PRIORITY`], [`abi::USER_STACK_PAGES`] stack pages below
    /// [`abi::USER_STACK_TOP`], no fault endpoint (a fault stops it), no
    /// grants.
    pub fn new(name: &'static str, elf: &'elf [u8]) -> TaskBuilder<'elf> {
        TaskBuilder {
            name,
            elf,
            entry: None,
            argument: 0,
            cnode_radix: DEFAULT_CNODE_RADIX,
            own_cnode_slot: Some(abi::task::CNODE_SLOT),
            priority: DEFAULT_PRIORITY,
            mcp: None,
            stack_pages: abi::USER_STACK_PAGES,
            stack_top: abi::USER_STACK_TOP,
            table_pages: DEFAULT_TABLE_PAGES,
            memory_bits: None,
            fault_endpoint: None,
            grants: [None; MAX_GRANTS],
            too_many_grants: false,
        }
    }

    /// Starts at `pc` instead of the ELF's entry point (an address in its
    /// code: several programs may share one ELF).
    pub fn entry(mut self, pc: u64) -> Self {
        self.entry = Some(pc);
        self
    }

    /// Its `x0` at entry (and at each restart unless told otherwise).
    pub fn argument(mut self, x0: u64) -> Self {
        self.argument = x0;
        self
    }

    /// Its CNode has `2^radix` slots.
    pub fn cnode_radix(mut self, radix: u8) -> Self {
        self.cnode_radix = radix;
        self
    }

    /// Its own CNode (read-write) goes to `slot` of it; `None`: it is not
    /// given its own CNode.
    pub fn own_cnode_slot(mut self, slot: Option<u64>) -> Self {
        self.own_cnode_slot = slot;
        self
    }

    /// Its priority, and its MCP unless [`TaskBuilder::mcp`] says
    /// otherwise (both at most the caller's MCP).
    pub fn priority(mut self, priority: u64) -> Self {
        self.priority = priority;
        self
    }

    /// Its MCP (at most the caller's).
    pub fn mcp(mut self, mcp: u64) -> Self {
        self.mcp = Some(mcp);
        self
    }

    /// `pages` read-write stack pages ending (exclusive) at `top`.
    pub fn stack(mut self, pages: u64, top: u64) -> Self {
        self.stack_pages = pages;
        self.stack_top = top;
        self
    }

    /// Page-table pages its VSpace may take (1 ..=
    /// `abi::vspace::MAX_USER_TABLE_PAGES`).
    pub fn table_pages(mut self, pages: u64) -> Self {
        self.table_pages = pages;
        self
    }

    /// Its Untyped is `2^bits` bytes (default: an estimate from the
    /// image, stack and tables; a short one fails at a named step with
    /// `NotEnoughMemory`).
    pub fn memory_bits(mut self, bits: u8) -> Self {
        self.memory_bits = Some(bits);
        self
    }

    /// Its faults go to `endpoint` (the caller's, write right), through a
    /// copy badged `badge`.
    pub fn fault_endpoint(mut self, endpoint: Cptr, badge: Option<u64>) -> Self {
        self.fault_endpoint = Some((endpoint, badge));
        self
    }

    /// Gives it a capability (see [`Grant`]).
    pub fn grant(mut self, grant: Grant) -> Self {
        match self.grants.iter_mut().find(|g| g.is_none()) {
            Some(free) => *free = Some(grant),
            None => self.too_many_grants = true,
        }
        self
    }

    /// Mints `source` into slot `slot` of its CNode with `rights` and
    /// maybe `badge`.
    pub fn mint(self, source: Cptr, slot: u64, rights: Rights, badge: Option<u64>) -> Self {
        self.grant(Grant {
            source,
            slot,
            rights,
            badge,
        })
    }

    /// Where its stack ends (its first `sp`).
    pub fn stack_top(&self) -> u64 {
        self.stack_top
    }

    /// Where its IPC buffer is mapped (its first `TPIDR_EL0`).
    pub fn ipc_buffer_address(&self) -> u64 {
        abi::IPC_BUFFER_ADDRESS
    }

    fn grants(&self) -> impl Iterator<Item = &Grant> {
        self.grants.iter().flatten()
    }

    /// The checks made before any syscall.
    fn check(&self, image: &crate::loader::Image) -> Result<u64, TaskError> {
        if !abi::tcb::is_valid_name(self.name.as_bytes()) {
            return Err(TaskError::BadName);
        }
        if self.too_many_grants {
            return Err(TaskError::TooManyGrants);
        }
        let entry = self.entry.unwrap_or(image.entry);
        let in_code = image.segments().iter().any(|s| {
            s.rights == MapRights::ReadExecute && (s.vaddr..s.vaddr + s.mem_size).contains(&entry)
        });
        if !in_code || !entry.is_multiple_of(4) {
            return Err(TaskError::EntryOutsideCode(entry));
        }
        let size = 1u64.checked_shl(u32::from(self.cnode_radix)).unwrap_or(0);
        let mut seen = [0u64; MAX_GRANTS + 1];
        let slots = self
            .own_cnode_slot
            .into_iter()
            .chain(self.grants().map(|g| g.slot));
        for (index, slot) in slots.enumerate() {
            if slot >= size || seen[..index].contains(&slot) {
                return Err(TaskError::BadSlot(slot));
            }
            seen[index] = slot;
        }
        let stack_bytes = self.stack_pages.checked_mul(PAGE_SIZE);
        let fits = stack_bytes.is_some_and(|b| b > 0 && b <= self.stack_top);
        if !fits || !self.stack_top.is_multiple_of(PAGE_SIZE) {
            return Err(TaskError::BadStack);
        }
        Ok(entry)
    }

    /// The task's Untyped: what was asked for, else room for its image,
    /// stack, IPC buffer, tables, CNode, TCB and VSpace, rounded up to a
    /// power of two.
    fn memory_bits_for(&self, image_pages: u64) -> u8 {
        if let Some(bits) = self.memory_bits {
            return bits;
        }
        let cnode_pages = (1u64 << self.cnode_radix.min(20)) * 64 / PAGE_SIZE + 1;
        let pages = image_pages + self.stack_pages + 1 + self.table_pages + 1 + cnode_pages + 4;
        let bytes = pages.saturating_mul(PAGE_SIZE);
        bytes.next_power_of_two().trailing_zeros().max(16) as u8
    }

    /// Makes the task, inactive: [`Task::start`] runs it. On failure
    /// everything made is taken back and its slots freed.
    pub fn build(&self, supervisor: &mut Supervisor) -> Result<Task, TaskError> {
        let plan = plan(self.elf).map_err(TaskError::Elf)?;
        let entry = self.check(plan.image())?;
        let image_pages = plan.page_count() as u64;
        let count = FIXED_SLOTS + self.stack_pages + image_pages;
        let slots = supervisor
            .slots
            .alloc_range(count)
            .map_err(TaskError::Slots)?;
        let task = Task {
            name: self.name,
            untyped: Cptr(slots.start),
            cnode: Cptr(slots.start + 1),
            tcb: Tcb(Cptr(slots.start + 2)),
            vspace: VSpace(Cptr(slots.start + 3)),
            ipc_buffer: Frame(Cptr(slots.start + 4)),
            fault_copy: self.fault_endpoint.map(|_| Cptr(slots.start + 5)),
            slots,
            entry,
            stack_top: self.stack_top,
            argument: self.argument,
            stack_pages: self.stack_pages,
            image_pages,
        };
        match self.build_into(supervisor, &task, image_pages) {
            Ok(()) => Ok(task),
            Err(error) => {
                // Take back what was made; a slot the build had not
                // reached yet is empty and refuses the revoke or delete,
                // which is no failure here: the error to report is the
                // step that failed.
                let own = supervisor.cnode.0;
                let _ = cnode::revoke(own, task.untyped.0);
                let _ = cnode::delete(own, task.untyped.0);
                if let Some(copy) = task.fault_copy {
                    let _ = cnode::delete(own, copy.0);
                }
                let _ = supervisor.slots.free_range(task.slots.clone());
                Err(error)
            }
        }
    }

    fn build_into(
        &self,
        supervisor: &Supervisor,
        task: &Task,
        image_pages: u64,
    ) -> Result<(), TaskError> {
        let bits = self.memory_bits_for(image_pages);
        supervisor
            .memory
            .carve(bits, task.untyped.0)
            .map_err(TaskError::Memory)?;
        let untyped = task.untyped.0;
        let radix = u64::from(self.cnode_radix);
        at(
            Step::RetypeCNode,
            retype(untyped, CapType::CNode, radix, task.cnode.0, 1),
        )?;
        at(
            Step::RetypeTcb,
            retype(untyped, CapType::Tcb, 0, task.tcb.0 .0, 1),
        )?;
        at(
            Step::RetypeVSpace,
            VSpace::retype(task.untyped, self.table_pages, task.vspace.0 .0),
        )?;
        at(
            Step::RetypeIpcBuffer,
            retype(untyped, CapType::Frame, 0, task.ipc_buffer.0 .0, 1),
        )?;
        let stack = task.slots.start + FIXED_SLOTS;
        at(
            Step::RetypeStack,
            retype(untyped, CapType::Frame, 0, stack, self.stack_pages),
        )?;
        // Its capabilities, and nothing else.
        if let Some(slot) = self.own_cnode_slot {
            at(
                Step::MintOwnCNode,
                cnode::mint_into(task.cnode.0, task.cnode.0, slot, Rights::READ_WRITE, None),
            )?;
        }
        for grant in self.grants() {
            at(
                Step::Grant(grant.slot),
                cnode::mint_into(
                    task.cnode.0,
                    grant.source.0,
                    grant.slot,
                    grant.rights,
                    grant.badge,
                ),
            )?;
        }
        if let (Some((endpoint, badge)), Some(copy)) = (self.fault_endpoint, task.fault_copy) {
            at(
                Step::MintFaultEndpoint,
                cnode::mint(supervisor.cnode.0, endpoint.0, copy.0, Rights::WRITE, badge),
            )?;
        }
        at(
            Step::Configure,
            task.tcb.configure(task.cnode, self.priority),
        )?;
        if let Some(mcp) = self.mcp {
            at(Step::SetMcp, task.tcb.set_mcp(mcp))?;
        }
        at(Step::SetName, task.tcb.set_name(self.name))?;
        let start = ThreadStart {
            ipc_buffer: Some(IpcBuffer {
                frame: task.ipc_buffer,
                address: abi::IPC_BUFFER_ADDRESS,
            }),
            fault_endpoint: task.fault_copy,
            pc: task.entry,
            sp: task.stack_top,
            x0: task.argument,
        };
        at(Step::SetSpace, task.tcb.set_space(task.vspace, start))?;
        let image_slots = stack + self.stack_pages;
        let memory = TaskMemory {
            untyped: task.untyped,
            own: supervisor.vspace,
            target: task.vspace,
            slots: image_slots..image_slots + image_pages,
            scratch: supervisor.scratch,
        };
        load_elf(self.elf, &memory).map_err(|failure| TaskError::Load(failure.error))?;
        at(
            Step::MapIpcBuffer,
            task.ipc_buffer
                .map(task.vspace, abi::IPC_BUFFER_ADDRESS, MapRights::ReadWrite),
        )?;
        for page in 0..self.stack_pages {
            let va = task.stack_top - (page + 1) * PAGE_SIZE;
            at(
                Step::MapStack(va),
                Frame(Cptr(stack + page)).map(task.vspace, va, MapRights::ReadWrite),
            )?;
        }
        Ok(())
    }
}

/// A task made by [`TaskBuilder::build`]: its capabilities (in the
/// supervisor's CNode) and what a restart needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    name: &'static str,
    untyped: Cptr,
    cnode: Cptr,
    tcb: Tcb,
    vspace: VSpace,
    ipc_buffer: Frame,
    fault_copy: Option<Cptr>,
    slots: Range<u64>,
    entry: u64,
    stack_top: u64,
    argument: u64,
    stack_pages: u64,
    image_pages: u64,
}

impl Task {
    /// Its name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Its TCB.
    pub fn tcb(&self) -> Tcb {
        self.tcb
    }

    /// Its CNode (read-write): the caller may mint more into it.
    pub fn cnode(&self) -> Cptr {
        self.cnode
    }

    /// Its VSpace.
    pub fn vspace(&self) -> VSpace {
        self.vspace
    }

    /// Its Untyped: all of its memory.
    pub fn untyped(&self) -> Cptr {
        self.untyped
    }

    /// Its IPC buffer's Frame (the caller may map a copy of it to write
    /// what the task reads first, as a boot-info block).
    pub fn ipc_buffer(&self) -> Frame {
        self.ipc_buffer
    }

    /// Where it starts (and restarts).
    pub fn entry(&self) -> u64 {
        self.entry
    }

    /// Its first `sp`.
    pub fn stack_top(&self) -> u64 {
        self.stack_top
    }

    /// Pages of its stack.
    pub fn stack_pages(&self) -> u64 {
        self.stack_pages
    }

    /// Pages of its image.
    pub fn image_pages(&self) -> u64 {
        self.image_pages
    }

    /// The supervisor's slots its capabilities take.
    pub fn slots(&self) -> Range<u64> {
        self.slots.clone()
    }

    /// Runs it (its first start, or after [`Task::stop`]).
    pub fn start(&self) -> Result<(), TaskError> {
        at(Step::Resume, self.tcb.resume())
    }

    /// Stops it until [`Task::start`] or [`Task::restart`].
    pub fn stop(&self) -> Result<(), TaskError> {
        at(Step::Suspend, self.tcb.suspend())
    }

    /// Starts it again from the beginning: stopped, PC at its entry, SP at
    /// its stack top, `x0` = `argument` (`None`: the one it was built
    /// with), then run. Its memory is not reloaded: data and stack keep
    /// what it wrote (rebuild it for a fresh image).
    pub fn restart(&self, argument: Option<u64>) -> Result<(), TaskError> {
        self.stop()?;
        for (register, value) in [
            (Register::Pc, self.entry),
            (Register::Sp, self.stack_top),
            (Register::X(0), argument.unwrap_or(self.argument)),
        ] {
            at(
                Step::WriteRegister(register.number()),
                self.tcb.write_register(register, value),
            )?;
        }
        self.start()
    }

    /// Ends it and gives everything back: revoking its Untyped destroys
    /// every object made from it (the thread ends, its mappings and page
    /// tables go); deleting the Untyped returns the memory to the pool's
    /// Untyped; then its fault endpoint copy goes and its slots are free.
    /// If a step fails, the slots stay taken (their contents are not
    /// known) and the error names the step.
    pub fn destroy(self, supervisor: &mut Supervisor) -> Result<(), TaskError> {
        let own = supervisor.cnode.0;
        let revoked = at(Step::Revoke, cnode::revoke(own, self.untyped.0));
        let deleted = at(
            Step::Delete(self.untyped.0),
            cnode::delete(own, self.untyped.0),
        );
        let fault = self.fault_copy.map_or(Ok(()), |copy| {
            at(Step::Delete(copy.0), cnode::delete(own, copy.0))
        });
        let outcome = revoked.and(deleted).and(fault);
        if outcome.is_ok() {
            supervisor
                .slots
                .free_range(self.slots.clone())
                .map_err(TaskError::Slots)?;
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::elf::writer::three_segments;

    fn supervisor() -> Supervisor {
        let mut memory = UntypedPool::new();
        memory
            .add(super::super::PoolUntyped {
                cap: Cptr(16),
                size_bits: 20,
            })
            .unwrap();
        Supervisor {
            cnode: Cptr(0),
            vspace: VSpace(Cptr(3)),
            scratch: abi::vspace::FRAME_MAP_START,
            slots: SlotAllocator::new(80..512).unwrap(),
            memory,
        }
    }

    fn refusal(builder: TaskBuilder) -> TaskError {
        let mut supervisor = supervisor();
        let error = builder.build(&mut supervisor).unwrap_err();
        assert_eq!(supervisor.slots.free_count(), 432, "every slot is free");
        error
    }

    #[test]
    fn the_defaults_are_the_kernel_made_layout() {
        let builder = TaskBuilder::new("t", &[]);
        assert_eq!(builder.stack_top(), abi::USER_STACK_TOP);
        assert_eq!(builder.stack_pages, abi::USER_STACK_PAGES);
        assert_eq!(builder.ipc_buffer_address(), abi::IPC_BUFFER_ADDRESS);
        assert_eq!(builder.own_cnode_slot, Some(abi::task::CNODE_SLOT));
    }

    #[test]
    fn a_description_is_checked_before_any_syscall() {
        let file = three_segments();
        let task = || TaskBuilder::new("t", &file);
        assert!(matches!(
            refusal(TaskBuilder::new("t", b"not an elf")),
            TaskError::Elf(_)
        ));
        // Names the kernel would refuse for the thread.
        for bad in ["", "two words", "a#1", "[a]", "twenty-five-bytes-long!!!"] {
            assert_eq!(refusal(TaskBuilder::new(bad, &file)), TaskError::BadName);
        }
        // Entry points: in the text (0x40_0000..0x40_1800), aligned.
        for bad in [0x40_1800, 0x40_2000, 0x40_0002, 0] {
            assert_eq!(refusal(task().entry(bad)), TaskError::EntryOutsideCode(bad));
        }
        assert_eq!(
            refusal(task().cnode_radix(3).mint(Cptr(1), 8, Rights::WRITE, None)),
            TaskError::BadSlot(8)
        );
        assert_eq!(
            refusal(task().mint(Cptr(1), 0, Rights::WRITE, None)),
            TaskError::BadSlot(0),
            "slot 0 holds its CNode"
        );
        assert_eq!(
            refusal(task().mint(Cptr(1), 2, Rights::WRITE, None).mint(
                Cptr(2),
                2,
                Rights::WRITE,
                None
            )),
            TaskError::BadSlot(2)
        );
        assert_eq!(
            refusal(task().stack(0, abi::USER_STACK_TOP)),
            TaskError::BadStack
        );
        assert_eq!(refusal(task().stack(2, 0x1000)), TaskError::BadStack);
        assert_eq!(
            refusal(task().stack(1, abi::USER_STACK_TOP + 8)),
            TaskError::BadStack
        );
        let mut many = task().cnode_radix(6);
        for slot in 1..=MAX_GRANTS as u64 + 1 {
            many = many.mint(Cptr(1), slot, Rights::WRITE, None);
        }
        assert_eq!(refusal(many), TaskError::TooManyGrants);
    }

    #[test]
    fn a_failed_build_gives_its_slots_back_and_names_the_step() {
        let file = three_segments();
        // On the host every syscall fails: the first is the carve.
        assert_eq!(
            refusal(TaskBuilder::new("t", &file).entry(0x40_0100)),
            TaskError::Memory(MemoryError::Retype(ErrorCode::InvalidSyscall))
        );
        let mut supervisor = supervisor();
        supervisor.slots = SlotAllocator::new(80..90).unwrap();
        assert_eq!(
            TaskBuilder::new("t", &file).build(&mut supervisor),
            Err(TaskError::Slots(SlotError::Exhausted(
                6 + abi::USER_STACK_PAGES + 6
            )))
        );
    }

    #[test]
    fn the_memory_estimate_holds_the_pages_and_rounds_up() {
        let builder = TaskBuilder::new("t", &[]);
        // 5 image + 16 stack + 1 IPC + 8 tables + 1 root + 1 CNode + 4.
        assert_eq!(builder.memory_bits_for(5), 18);
        assert_eq!(
            builder
                .clone()
                .stack(4, abi::USER_STACK_TOP)
                .memory_bits_for(5),
            17
        );
        assert_eq!(builder.clone().memory_bits(21).memory_bits_for(5), 21);
        assert_eq!(builder.memory_bits_for(256), 21);
    }
}
