//! The calls there are, with their arguments decoded, and what carrying
//! one out comes to.

use crate::scheduler::Priority;
use abi::audit::AuditMode;
use abi::cap::{CapType, Rights};
use abi::tcb::Register;
use abi::vspace::MapRights;
use abi::ErrorCode;

/// Which IPC operation a syscall asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpcOperation {
    /// `Send`.
    Send,
    /// `NBSend`.
    NBSend,
    /// `Recv`.
    Recv,
    /// `NBRecv`.
    NBRecv,
    /// `Call`.
    Call,
    /// `Reply` (no capability).
    Reply,
    /// `ReplyRecv`.
    ReplyRecv,
}

impl IpcOperation {
    /// Does the operation send the caller's message?
    pub fn sends(self) -> bool {
        !matches!(self, IpcOperation::Recv | IpcOperation::NBRecv)
    }

    /// May the operation's message carry capabilities? Sends and calls,
    /// not replies (the decoder refuses a reply that names any).
    pub fn may_carry_caps(self) -> bool {
        matches!(
            self,
            IpcOperation::Send | IpcOperation::NBSend | IpcOperation::Call
        )
    }
}

/// Which notification operation a syscall asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotificationOperation {
    /// `Signal`.
    Signal,
    /// `Wait`.
    Wait,
    /// `Poll`.
    Poll,
}

/// Which CNode operation a syscall asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapOperation {
    /// Copy `source` to `target`.
    Copy,
    /// Mint `source` into `target` with fewer rights and maybe a badge.
    Mint {
        /// The new capability's rights.
        rights: Rights,
        /// Its badge, if one is set.
        badge: Option<u64>,
    },
    /// Move `source` to `target`.
    Move,
    /// Mint `source` (an index of the caller's own CSpace) into `target`
    /// of the CNode named by the capability: fewer rights, maybe a badge.
    MintInto {
        /// The new capability's rights.
        rights: Rights,
        /// Its badge, if one is set.
        badge: Option<u64>,
    },
    /// Move `source` (an index of the caller's own CSpace) to `target` of
    /// the CNode named by the capability.
    MoveInto,
    /// Delete `source` and its descendants.
    Delete,
    /// Delete `source`'s descendants.
    Revoke,
    /// Turn the reply the caller owes into a Reply capability at `source`
    /// (an empty index; `target` unused).
    ReplySave,
}

/// Which TCB operation a syscall asks for, with its checked arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcbOperation {
    /// `TcbSetPriority`.
    SetPriority(Priority),
    /// `TcbSetMcp`.
    SetMcp(Priority),
    /// `TcbSuspend`.
    Suspend,
    /// `TcbResume`.
    Resume,
    /// `TcbReadRegister`.
    ReadRegister(Register),
    /// `TcbWriteRegister` with the value to write.
    WriteRegister(Register, u64),
    /// `TcbAttachTracer` with the slot of the tracer's endpoint capability
    /// (x2).
    AttachTracer(u64),
    /// `TcbDetachTracer` with the slot of a capability to the endpoint
    /// the tracer was attached with (x2).
    DetachTracer(u64),
    /// `TcbSetAffinity` with the CPU (x2, checked by the kernel, which
    /// knows which CPUs run).
    SetAffinity(u64),
}

impl TcbOperation {
    /// The right the TCB capability needs for this operation.
    pub fn needed_rights(self) -> Rights {
        match self {
            TcbOperation::ReadRegister(_) => Rights::READ,
            TcbOperation::AttachTracer(_) | TcbOperation::DetachTracer(_) => Rights::TRACE,
            _ => Rights::WRITE,
        }
    }
}

/// A syscall with its arguments, decoded and range-checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// `Syscall::Null`.
    Null,
    /// `Syscall::Yield`.
    Yield,
    /// `Syscall::Exit` with its status.
    Exit {
        /// Exit status (x2, signed).
        status: i64,
    },
    /// `Syscall::DebugThreadStats` of the TCB capability `tcb` (test
    /// image only).
    #[cfg(feature = "test-calls")]
    DebugThreadStats {
        /// The TCB capability.
        tcb: u64,
    },
    /// `Syscall::DebugCheckInvariants` (test image only).
    #[cfg(feature = "test-calls")]
    DebugCheckInvariants {
        /// Check at every timer tick from now on (x2 == 1) or not (0).
        at_ticks: bool,
    },
    /// `Syscall::BenchFloor`: turn the benchmark floor on or off (bench
    /// image only).
    #[cfg(feature = "bench-calls")]
    BenchFloor {
        /// On (x2 == 1) or off (x2 == 0).
        on: bool,
    },
    /// An IPC operation through the endpoint capability at slot
    /// `capability` (ignored by `Reply`).
    Ipc {
        /// The operation.
        operation: IpcOperation,
        /// The endpoint capability's slot (x0).
        capability: u64,
    },
    /// A notification operation through the capability at `capability`.
    Notification {
        /// Signal, Wait or Poll.
        operation: NotificationOperation,
        /// The notification capability's slot (x0).
        capability: u64,
    },
    /// `IrqSetNotification`: bind the handler at `handler` to the
    /// notification at `notification`.
    IrqSetNotification {
        /// The IrqHandler capability's slot (x0).
        handler: u64,
        /// The notification capability's slot (x2).
        notification: u64,
    },
    /// `IrqAck` through the handler at `handler`.
    IrqAck {
        /// The IrqHandler capability's slot (x0).
        handler: u64,
    },
    /// `IrqSetTimer` through the handler at `handler`.
    IrqSetTimer {
        /// The IrqHandler capability's slot (x0).
        handler: u64,
        /// Counter ticks from now (x2); 0 disarms.
        ticks: u64,
    },
    /// `IrqControlGet`: an IrqHandler for `intid` from the IrqControl
    /// capability at `control`, into the caller's slot `slot`.
    IrqControlGet {
        /// The IrqControl capability's slot (x0).
        control: u64,
        /// The interrupt ID (x2).
        intid: u64,
        /// The empty slot of the caller's own CNode (x3).
        slot: u64,
    },
    /// `Retype` from the Untyped capability at `untyped`.
    Retype {
        /// The Untyped capability's slot (x0).
        untyped: u64,
        /// The type of the new objects.
        object_type: CapType,
        /// Radix / log2 size / 0, by type (x3).
        size: u64,
        /// First destination index in the caller's CNode (x4).
        target: u64,
        /// How many objects (x5).
        count: u64,
        /// For a device Untyped only: the RAM Untyped capability's slot
        /// that pays the Frames' records (x6; not read otherwise).
        payer: u64,
    },
    /// A CNode operation in the CNode named by the capability at `cnode`.
    Cap {
        /// The operation.
        operation: CapOperation,
        /// The CNode capability's slot (x0).
        cnode: u64,
        /// Index of the source (or only) slot in that CNode (x2).
        source: u64,
        /// Index of the target slot (x3; unused by delete, revoke and
        /// reply save).
        target: u64,
    },
    /// A TCB operation on the thread named by the capability at `tcb`.
    Tcb {
        /// The operation.
        operation: TcbOperation,
        /// The TCB capability's slot (x0).
        tcb: u64,
    },
    /// `FilterLoad`: `len` bytes at user address `address` into the filter
    /// at `filter`.
    FilterLoad {
        /// The Filter capability's slot (x0).
        filter: u64,
        /// User address of the encoded description (x2).
        address: u64,
        /// Its length (x3, at most `MAX_DESCRIPTION_BYTES`).
        len: usize,
    },
    /// `TcbAttachFilter`: the filter at `filter` onto the thread at `tcb`.
    AttachFilter {
        /// The TCB capability's slot (x0).
        tcb: u64,
        /// The Filter capability's slot (x2).
        filter: u64,
        /// The policy server's endpoint capability slot (x3, if x4 == 1).
        server: Option<u64>,
        /// Its thread's TCB capability slot (x5; read only with a
        /// server). Apart from `server`: an `Option` of both is 24 bytes,
        /// which the hot path's dispatch would pass through memory,
        /// keeping the decoded call out of registers for every syscall.
        server_thread: u64,
    },
    /// `FilterSetServer`: the filter at `filter` handed to a server.
    FilterSetServer {
        /// The Filter capability's slot (x0).
        filter: u64,
        /// The endpoint capability's slot (x2).
        endpoint: u64,
        /// The server thread's TCB capability slot (x3).
        thread: u64,
    },
    /// `TcbConfigure`: a CSpace and a priority for the new thread at
    /// `tcb` (x4 was `abi::tcb::NO_PROGRAM`: the kernel loads no program
    /// for user space, `TcbSetSpace` gives the address space).
    TcbConfigure {
        /// The TCB capability's slot (x0).
        tcb: u64,
        /// The CNode capability that becomes its CSpace (x2).
        cnode: u64,
        /// Its priority and MCP (x3).
        priority: Priority,
    },
    /// `TcbSetSpace`, its registers checked ([`set_space_arguments`]
    /// reads them again: keeping its seven words out of `Call` keeps
    /// every other syscall's decode and dispatch cheap).
    TcbSetSpace,
    /// `TcbRestart`, its registers checked ([`restart_arguments`]).
    TcbRestart,
    /// `TcbSetName`, its registers checked ([`name_arguments`]).
    TcbSetName,
    /// `TcbBindNotification`: bind (`Some`) or unbind (`None`).
    BindNotification {
        /// The TCB capability's slot (x0).
        tcb: u64,
        /// The notification capability's slot (x2), when binding.
        notification: Option<u64>,
    },
    /// `TcbSetAudit`: the audit ring and mode of the thread at `tcb`.
    SetAudit {
        /// The TCB capability's slot (x0).
        tcb: u64,
        /// The ring's Frame capability slot (x2).
        frame: u64,
        /// The notification capability slot (x3).
        notification: u64,
        /// Off (`None`), lossy or lossless (x4).
        mode: Option<AuditMode>,
        /// The badge the records carry (x5).
        badge: u64,
    },
    /// `FrameMap`: the frame at `frame` into the VSpace at `vspace`.
    FrameMap {
        /// The Frame capability's slot (x0).
        frame: u64,
        /// The VSpace capability's slot (x2).
        vspace: u64,
        /// The page-aligned user address in the mapping window (x3).
        va: u64,
        /// R, RW or RX (x4).
        rights: MapRights,
    },
    /// `FrameUnmap` of the frame at `frame`.
    FrameUnmap {
        /// The Frame capability's slot (x0).
        frame: u64,
    },
    /// `SetUserDispatch` for the calling thread, its registers checked
    /// ([`user_dispatch_config`] reads them again: keeping the five words
    /// out of `Call` keeps every other syscall's decode cheap).
    SetUserDispatch,
    /// `SetRseq` for the calling thread (`abi::rseq`), its registers
    /// checked ([`rseq_arguments`] reads them again: as for
    /// `SetUserDispatch`, fields here cost every other syscall's decode
    /// on the hot path, 6 instructions on an invalid one).
    SetRseq,
    /// `SliceYield`: end a time-slice extension.
    SliceYield,
    /// `ConsoleRead`, its registers checked ([`console_read_arguments`]
    /// reads them again, as for `TcbSetName`).
    ConsoleRead,
    /// `ConsoleSetNotification`, its registers checked
    /// ([`console_binding_arguments`]).
    ConsoleSetNotification,
    /// `ConsoleWriteFrame`, its registers checked
    /// ([`console_frame_arguments`]).
    ConsoleWriteFrame,
    /// `InspectThread`, its registers checked ([`inspect_arguments`]).
    InspectThread,
    /// `InspectCaps`, its registers checked ([`inspect_arguments`]).
    InspectCaps,
    /// `DebugRseqCounters` into user address `address` (x2; 0: only
    /// printed). Images with the `rseq-counters` feature only.
    #[cfg(feature = "rseq-counters")]
    DebugRseqCounters {
        /// Where the counters go.
        address: u64,
    },
    /// `UserDispatchReturn`: restore the context saved in the frame at
    /// user address `frame` (x0; in the user half, 8-byte aligned).
    UserDispatchReturn {
        /// The frame's user address.
        frame: u64,
    },
    /// `Syscall::DebugPrint` of `len` bytes at user address `address`
    /// through the console capability at slot `console`.
    DebugPrint {
        /// The console capability's slot (x0).
        console: u64,
        /// User address of the text.
        address: u64,
        /// Its length (at most `DEBUG_PRINT_MAX`).
        len: usize,
    },
}

/// `TcbSetSpace`'s arguments, as decoded and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetSpaceArguments {
    /// The TCB capability's slot (x0).
    pub tcb: u64,
    /// The VSpace capability's slot (x2).
    pub vspace: u64,
    /// The IPC buffer's Frame capability slot (x3), if any.
    pub ipc_buffer: Option<u64>,
    /// Where the thread has that buffer mapped (x1: a page a frame can be
    /// mapped at; 0 without a buffer): its first `TPIDR_EL0`, where the
    /// SDK finds the buffer. The kernel reads and writes the buffer
    /// through the Frame, never through this address.
    pub ipc_buffer_address: u64,
    /// The fault endpoint's capability slot (x4), if any.
    pub fault_endpoint: Option<u64>,
    /// Its first PC (x5): 4-byte aligned, in the user half.
    pub pc: u64,
    /// Its first SP (x6): 16-byte aligned, in the user half (its top
    /// included).
    pub sp: u64,
    /// Its first x0 (x7).
    pub x0: u64,
}

/// What the kernel does once a call is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyscallResult {
    /// Return to the caller with this code in x0.
    Return(ErrorCode),
    /// Return Ok, but let another thread run first.
    Yield,
    /// The caller has ended; never return to it.
    Exited(i64),
    /// An IPC operation ran; apply its effects on the scheduler. It wrote
    /// the caller's registers itself, as part of the messages it moved (a
    /// receive's message, a send's or a signal's `Ok`), or none (the caller
    /// blocked).
    Ipc(crate::ipc::Effects),
    /// The call replaced the caller's registers (`UserDispatchReturn`):
    /// write no result over them.
    Restored,
    /// A long operation stopped at a preemption point with `progress` of
    /// it done at `at` (see `stopped_call::CallStop::Dispatch`): it goes
    /// on from there, with no result yet.
    Preempted {
        /// How far it got.
        progress: u64,
        /// Where.
        at: u64,
    },
}

impl SyscallResult {
    /// The code the caller's `x0` gets, for a result that writes one
    /// (`Kernel::write_result` writes it).
    #[inline(always)]
    pub fn code(&self) -> Option<ErrorCode> {
        match *self {
            SyscallResult::Return(code) => Some(code),
            SyscallResult::Yield => Some(ErrorCode::Ok),
            SyscallResult::Exited(_)
            | SyscallResult::Ipc(_)
            | SyscallResult::Restored
            | SyscallResult::Preempted { .. } => None,
        }
    }
}

impl From<Result<(), ErrorCode>> for SyscallResult {
    /// A call that only succeeds or fails: `Ok` or the error, in `x0`.
    #[inline(always)]
    fn from(result: Result<(), ErrorCode>) -> Self {
        SyscallResult::Return(match result {
            Ok(()) => ErrorCode::Ok,
            Err(code) => code,
        })
    }
}

/// `TcbRestart`'s arguments, as decoded and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RestartArguments {
    /// The TCB capability.
    pub tcb: u64,
    /// The first PC.
    pub pc: u64,
    /// The first SP.
    pub sp: u64,
    /// The first `x0`.
    pub x0: u64,
    /// The first TPIDR_EL0.
    pub tpidr: u64,
}
