//! What a case of the root task's driver is: the threads it starts (each a
//! program of init, chosen by its selector), the objects the driver makes
//! for them and the capabilities it hands each, and how the threads must
//! end.

use abi::cap::Rights;

/// The exception classes (ESR_EL1.EC) cases expect a fault of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExceptionClass {
    /// Unknown reason: an undefined instruction.
    Unknown = 0x00,
    /// A trapped MSR/MRS (a system register EL0 may not touch).
    SystemRegister = 0x18,
    /// An instruction abort from EL0.
    InstructionAbortLower = 0x20,
    /// A PC alignment fault.
    PcAlignment = 0x22,
    /// A data abort from EL0.
    DataAbortLower = 0x24,
}

/// How the threads of a case must end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Every thread exits with status 0.
    ExitZero,
    /// Every thread exits with this status (e.g. killed by a filter).
    ExitStatus(i64),
    /// Every thread exits 0 or is killed by a filter (fault-injection
    /// cases, whose surviving threads check what the kill did).
    ExitZeroOrKilled,
    /// Every thread exits 0 and took at least this many interrupts at EL0.
    ExitZeroWithInterrupts(u64),
    /// Every thread exits 0 and was preempted by the timer at least once.
    ExitZeroPreempted,
    /// Every thread exits 0 after exactly this many yields.
    ExitZeroAfterYields(u64),
    /// Every thread stops with a data abort whose status is an alignment
    /// fault.
    AlignmentFault,
    /// However the threads end (the fuzzer: the kernel surviving and its
    /// invariants holding are what is checked).
    AnyEnd,
    /// Every thread faults with this class; for aborts, at this address
    /// (if given) and with this kind of fault status (if given).
    Fault {
        /// The exception class.
        class: ExceptionClass,
        /// The faulting address (FAR).
        address: Option<u64>,
        /// Permission fault (true) or translation fault (false).
        permission: Option<bool>,
    },
}

/// One case of the boot suite.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    /// The TAP test name.
    pub name: &'static str,
    /// One init selector per thread to start.
    pub threads: &'static [u64],
    /// How they must end.
    pub expect: Expect,
    /// Endpoints the kernel creates for the case.
    pub endpoints: u8,
    /// Notifications the kernel creates for the case.
    pub notifications: u8,
    /// Pages of Untyped memory the kernel makes for the case (0: none).
    pub untyped_pages: u16,
    /// An interrupt the kernel makes an IrqHandler for.
    pub irq: Option<u32>,
    /// Endpoint capabilities handed to the case's threads (every thread
    /// also gets its own CNode in slot 0 and the console in slot 1).
    pub grants: &'static [Grant],
    /// Thread priorities, by thread index (default `DEFAULT_PRIORITY`).
    pub priorities: &'static [u8],
    /// Moves the first endpoint's original capability (after the grants
    /// are minted from it) to this thread and slot, so that thread can
    /// destroy the endpoint.
    pub endpoint_owner: Option<(u8, u64)>,
    /// `(thread, endpoint)`: that thread's faults go to that endpoint of
    /// the case as fault messages.
    pub fault_endpoints: &'static [(u8, u8)],
    /// Radix of each thread's CNode (`None`: 16 slots).
    pub cnode_radix: Option<u8>,
    /// The first thread is a root task: it also gets its own TCB, VSpace
    /// and IPC buffer Frame, the case's IrqHandler, and all free RAM as
    /// Untypeds, as `abi::bootinfo` describes.
    pub root_task: bool,
    /// The CPUs the case needs and where its threads run.
    pub cpus: Cpus,
}

/// The CPUs a case needs, and where the driver puts its threads (each
/// starts with the driver's affinity, CPU 0, unless said otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cpus {
    /// Runs on any number of CPUs; its threads start on CPU 0.
    Boot,
    /// Needs at least this many CPUs running (the suite reports it as
    /// skipped, `# SKIP`, on fewer); its threads start on CPU 0 and
    /// place themselves.
    AtLeast(u8),
    /// Needs at least two CPUs; thread `i` runs on CPU `(i + 1) % cpus`,
    /// so the threads spread over every CPU but the driver's first.
    Spread,
}

impl Cpus {
    /// The fewest CPUs the case runs on.
    pub const fn needed(self) -> u64 {
        match self {
            Cpus::Boot => 1,
            Cpus::AtLeast(n) => n as u64,
            Cpus::Spread => 2,
        }
    }
}

/// Priority of boot-suite threads unless a case says otherwise.
pub const DEFAULT_PRIORITY: u8 = 100;

/// One of a case's kernel objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseObject {
    /// The case's endpoint with this index.
    Endpoint(u8),
    /// The case's notification with this index.
    Notification(u8),
    /// The case's Untyped memory (`Case::untyped_pages`).
    Untyped,
    /// The case's IrqHandler (`Case::irq`).
    Irq,
    /// The TCB of the case's thread with this index.
    Tcb(u8),
    /// The VSpace (address space) of the case's thread with this index.
    VSpace(u8),
    /// A Frame holding the file the system description maps into the
    /// driver at this address, laid out as the root lays out a described
    /// file (its length in the first 8 bytes, then its bytes), for the
    /// thread to map itself: how a thread of the driver gets a file at
    /// run time (the demo's policy server, its rules). A new Frame per
    /// grant, from the case's memory; the file must fit in it.
    File(u64),
}

/// A capability the driver installs for a case.
#[derive(Clone, Copy, Debug)]
pub struct Grant {
    /// Index of the receiving thread in `Case::threads`.
    pub thread: u8,
    /// Destination slot in its CNode.
    pub slot: u64,
    /// The object the capability names.
    pub object: CaseObject,
    /// Rights of the capability.
    pub rights: Rights,
    /// Badge (0: unbadged).
    pub badge: u64,
}

pub(super) const fn grant(thread: u8, slot: u64, rights: Rights, badge: u64) -> Grant {
    Grant {
        thread,
        slot,
        object: CaseObject::Endpoint(0),
        rights,
        badge,
    }
}

pub(super) const fn nth_endpoint_grant(
    index: u8,
    thread: u8,
    slot: u64,
    rights: Rights,
    badge: u64,
) -> Grant {
    Grant {
        thread,
        slot,
        object: CaseObject::Endpoint(index),
        rights,
        badge,
    }
}

pub(super) const fn notification_grant(thread: u8, slot: u64, rights: Rights, badge: u64) -> Grant {
    nth_notification_grant(0, thread, slot, rights, badge)
}

pub(super) const fn nth_notification_grant(
    index: u8,
    thread: u8,
    slot: u64,
    rights: Rights,
    badge: u64,
) -> Grant {
    Grant {
        thread,
        slot,
        object: CaseObject::Notification(index),
        rights,
        badge,
    }
}

pub(super) const fn case(name: &'static str, threads: &'static [u64], expect: Expect) -> Case {
    Case {
        name,
        threads,
        expect,
        endpoints: 0,
        notifications: 0,
        untyped_pages: 0,
        irq: None,
        grants: &[],
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    }
}

pub(super) const fn ipc_case(
    name: &'static str,
    threads: &'static [u64],
    grants: &'static [Grant],
) -> Case {
    Case {
        name,
        threads,
        expect: Expect::ExitZero,
        endpoints: 1,
        notifications: 0,
        untyped_pages: 0,
        irq: None,
        grants,
        priorities: &[],
        endpoint_owner: None,
        fault_endpoints: &[],
        cnode_radix: None,
        root_task: false,
        cpus: Cpus::Boot,
    }
}

pub(super) const RECEIVE: Rights = Rights::READ;
pub(super) const SEND: Rights = Rights::WRITE;
pub(super) const CLIENT_BADGE: u64 = 0x42;

pub(super) const fn fault(
    class: ExceptionClass,
    address: Option<u64>,
    permission: Option<bool>,
) -> Expect {
    Expect::Fault {
        class,
        address,
        permission,
    }
}
