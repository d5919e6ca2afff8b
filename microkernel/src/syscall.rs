//! Syscall dispatch: raw registers → typed call → safe handler → result.
//!
//! `decode` turns the saved registers into a `Call` (checking everything
//! that can be checked without kernel state); the kernel then carries the
//! call out and writes one `SyscallResult` back in one place.

use crate::ipc::message::MAX_MESSAGE_WORDS;
use crate::scheduler::Priority;
pub use crate::thread::UserDispatchConfig;
use abi::audit::AuditMode;
use abi::cap::{CapType, Rights};
use abi::policy::MAX_DESCRIPTION_BYTES;
use abi::tcb::{Register, MAX_PRIORITY, NO_CAP, NO_PROGRAM, NZCV_MASK};
use abi::user_dispatch::FRAME_BYTES;
use abi::vspace::{is_user_map_address, MapRights};
use abi::{ErrorCode, MessageInfo, Syscall, DEBUG_PRINT_MAX};
use arch::context::UserContext;
use arch::layout::PAGE_SIZE;

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
    /// An IPC operation ran; apply its effects on the scheduler.
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

/// Decodes the caller's registers into a call, or the error to return.
pub fn decode(context: &UserContext) -> Result<Call, ErrorCode> {
    decode_copy::<SHARED_COPY>(context)
}

/// Which copy of [`decode_copy`] a caller uses (see there).
pub type Copy = usize;
/// The copy the syscall path without entry work uses.
pub const HOT_PATH_COPY: Copy = 0;
/// The copy the generic entry (`Kernel::syscall_with_work`) uses.
pub const ENTRY_WORK_COPY: Copy = 1;
/// The copy [`decode`] uses (tests, the fuzzer).
pub const SHARED_COPY: Copy = 2;

/// [`decode`], one copy per `COPY`. The syscall path without entry work
/// is the hot one: with a copy of its own (and one of `Kernel::dispatch`)
/// that has one caller, the compiler folds the decoding into the dispatch
/// (the `Call` never exists in memory), as long as no case of the
/// dispatch passes part of the call to a function the compiler does not
/// inline (hence `tcb_syscall` and `cap_syscall` are inlined). Measured
/// on `yield_no_switch`: 356 instructions; 393 with one shared copy, or
/// with either of those functions called.
pub fn decode_copy<const COPY: Copy>(context: &UserContext) -> Result<Call, ErrorCode> {
    let syscall = Syscall::from_number(context.x[8]).ok_or(ErrorCode::InvalidSyscall)?;
    let capability = context.x[0];
    match syscall {
        Syscall::Null => Ok(Call::Null),
        Syscall::Yield => Ok(Call::Yield),
        Syscall::Exit => {
            let status = context.x[2] as i64;
            if KERNEL_STATUSES.contains(&status) {
                return Err(ErrorCode::InvalidArgument);
            }
            Ok(Call::Exit { status })
        }
        Syscall::Send => ipc(context, IpcOperation::Send),
        Syscall::NBSend => ipc(context, IpcOperation::NBSend),
        Syscall::Recv => ipc(context, IpcOperation::Recv),
        Syscall::NBRecv => ipc(context, IpcOperation::NBRecv),
        Syscall::Call => ipc(context, IpcOperation::Call),
        Syscall::Reply => ipc(context, IpcOperation::Reply),
        Syscall::ReplyRecv => ipc(context, IpcOperation::ReplyRecv),
        Syscall::Signal => notification(context, NotificationOperation::Signal),
        Syscall::Wait => notification(context, NotificationOperation::Wait),
        Syscall::Poll => notification(context, NotificationOperation::Poll),
        Syscall::IrqSetNotification => Ok(Call::IrqSetNotification {
            handler: context.x[0],
            notification: context.x[2],
        }),
        Syscall::IrqAck => Ok(Call::IrqAck {
            handler: context.x[0],
        }),
        Syscall::IrqSetTimer => Ok(Call::IrqSetTimer {
            handler: context.x[0],
            ticks: context.x[2],
        }),
        Syscall::IrqControlGet => Ok(Call::IrqControlGet {
            control: context.x[0],
            intid: context.x[2],
            slot: context.x[3],
        }),
        Syscall::Retype => Ok(Call::Retype {
            untyped: context.x[0],
            object_type: CapType::from_raw(context.x[2]).ok_or(ErrorCode::InvalidArgument)?,
            size: context.x[3],
            target: context.x[4],
            count: context.x[5],
            payer: context.x[6],
        }),
        Syscall::TcbSetPriority => tcb(context, TcbOperation::SetPriority(priority(context)?)),
        Syscall::TcbSetMcp => tcb(context, TcbOperation::SetMcp(priority(context)?)),
        Syscall::TcbSuspend => tcb(context, TcbOperation::Suspend),
        Syscall::TcbResume => tcb(context, TcbOperation::Resume),
        Syscall::TcbReadRegister => tcb(context, TcbOperation::ReadRegister(register(context)?)),
        Syscall::TcbWriteRegister => {
            let register = register(context)?;
            let value = context.x[3];
            if register == Register::Nzcv && value & !NZCV_MASK != 0 {
                return Err(ErrorCode::InvalidArgument);
            }
            tcb(context, TcbOperation::WriteRegister(register, value))
        }
        Syscall::FilterLoad => {
            let (address, len) = user_buffer(context, MAX_DESCRIPTION_BYTES)?;
            Ok(Call::FilterLoad {
                filter: capability,
                address,
                len,
            })
        }
        Syscall::TcbAttachFilter => Ok(Call::AttachFilter {
            tcb: capability,
            filter: context.x[2],
            server: match context.x[4] {
                0 => None,
                1 => Some(context.x[3]),
                _ => return Err(ErrorCode::InvalidArgument),
            },
        }),
        Syscall::TcbBindNotification => Ok(Call::BindNotification {
            tcb: capability,
            notification: match context.x[3] {
                0 => None,
                1 => Some(context.x[2]),
                _ => return Err(ErrorCode::InvalidArgument),
            },
        }),
        Syscall::TcbSetAudit => Ok(Call::SetAudit {
            tcb: capability,
            frame: context.x[2],
            notification: context.x[3],
            mode: AuditMode::from_raw(context.x[4]).ok_or(ErrorCode::InvalidArgument)?,
            badge: context.x[5],
        }),
        Syscall::FrameMap => {
            let rights = MapRights::from_raw(context.x[4]).ok_or(ErrorCode::InvalidArgument)?;
            let va = context.x[3];
            if !va.is_multiple_of(arch::layout::PAGE_SIZE) {
                return Err(ErrorCode::InvalidArgument);
            }
            // The widest window (a space made by `Retype`); the kernel
            // checks the narrower one of a space it built.
            if !is_user_map_address(va) {
                return Err(ErrorCode::InvalidAddress);
            }
            Ok(Call::FrameMap {
                frame: capability,
                vspace: context.x[2],
                va,
                rights,
            })
        }
        Syscall::FrameUnmap => Ok(Call::FrameUnmap { frame: capability }),
        Syscall::TcbAttachTracer => tcb(context, TcbOperation::AttachTracer(context.x[2])),
        Syscall::TcbDetachTracer => tcb(context, TcbOperation::DetachTracer(context.x[2])),
        Syscall::CapCopy => cap(context, CapOperation::Copy),
        Syscall::CapMint => {
            let (rights, badge) = mint_arguments(context)?;
            cap(context, CapOperation::Mint { rights, badge })
        }
        Syscall::CapMintInto => {
            let (rights, badge) = mint_arguments(context)?;
            cap(context, CapOperation::MintInto { rights, badge })
        }
        Syscall::CapMoveInto => cap(context, CapOperation::MoveInto),
        Syscall::TcbConfigure => {
            let priority = match context.x[3] {
                value @ 0..=MAX_PRIORITY => value as Priority,
                _ => return Err(ErrorCode::InvalidArgument),
            };
            // The kernel loads no program for user space: a thread's
            // code is mapped by its creator (`TcbSetSpace`).
            if context.x[4] != NO_PROGRAM {
                return Err(ErrorCode::InvalidArgument);
            }
            Ok(Call::TcbConfigure {
                tcb: context.x[0],
                cnode: context.x[2],
                priority,
            })
        }
        Syscall::TcbSetSpace => {
            set_space_arguments(context)?;
            Ok(Call::TcbSetSpace)
        }
        // Checked here, read again by the handler (as `TcbSetSpace`): a
        // payload passed to a function the compiler does not inline would
        // keep the decoded call in memory on every syscall.
        Syscall::TcbRestart => {
            restart_arguments(context)?;
            Ok(Call::TcbRestart)
        }
        Syscall::TcbSetName => {
            name_arguments(context)?;
            Ok(Call::TcbSetName)
        }
        Syscall::CapMove => cap(context, CapOperation::Move),
        Syscall::CapDelete => cap(context, CapOperation::Delete),
        Syscall::CapRevoke => cap(context, CapOperation::Revoke),
        Syscall::ReplySave => cap(context, CapOperation::ReplySave),
        #[cfg(not(feature = "bench-calls"))]
        Syscall::BenchFloor => Err(ErrorCode::InvalidSyscall),
        #[cfg(not(feature = "test-calls"))]
        Syscall::DebugThreadStats | Syscall::DebugCheckInvariants => Err(ErrorCode::InvalidSyscall),
        #[cfg(feature = "test-calls")]
        Syscall::DebugThreadStats => Ok(Call::DebugThreadStats { tcb: context.x[0] }),
        #[cfg(feature = "test-calls")]
        Syscall::DebugCheckInvariants => match context.x[2] {
            0 => Ok(Call::DebugCheckInvariants { at_ticks: false }),
            1 => Ok(Call::DebugCheckInvariants { at_ticks: true }),
            _ => Err(ErrorCode::InvalidArgument),
        },
        #[cfg(feature = "bench-calls")]
        Syscall::BenchFloor => match context.x[2] {
            0 => Ok(Call::BenchFloor { on: false }),
            1 => Ok(Call::BenchFloor { on: true }),
            _ => Err(ErrorCode::InvalidArgument),
        },
        Syscall::SetUserDispatch => {
            user_dispatch_config(context)?;
            Ok(Call::SetUserDispatch)
        }
        Syscall::UserDispatchReturn => {
            let frame = context.x[0];
            if !arch::layout::is_user_range(frame, FRAME_BYTES) {
                return Err(ErrorCode::InvalidAddress);
            }
            if !frame.is_multiple_of(8) {
                return Err(ErrorCode::InvalidArgument);
            }
            Ok(Call::UserDispatchReturn { frame })
        }
        Syscall::DebugPrint => {
            let (address, len) = user_buffer(context, DEBUG_PRINT_MAX)?;
            Ok(Call::DebugPrint {
                console: capability,
                address,
                len,
            })
        }
    }
}

/// The user buffer `x2` (address) and `x3` (length) name: at most `max`
/// bytes (`InvalidArgument`), all in the user half (`InvalidAddress`).
#[inline(always)]
fn user_buffer(context: &UserContext, max: usize) -> Result<(u64, usize), ErrorCode> {
    let len = context.x[3];
    if len > max as u64 {
        return Err(ErrorCode::InvalidArgument);
    }
    let address = context.x[2];
    if !arch::layout::is_user_range(address, len) {
        return Err(ErrorCode::InvalidAddress);
    }
    Ok((address, len as usize))
}

/// Checks `SetUserDispatch`'s registers (see `abi::user_dispatch`): `x0`
/// reserved; `x2..x6` all 0 is off; else an ordered PC range in the user
/// half, an aligned handler, an aligned buffer big enough for a frame and a
/// selector address, all in the user half. Whether the buffer is writable
/// and the selector readable is the kernel's check (it needs the tables).
pub fn user_dispatch_config(
    context: &UserContext,
) -> Result<Option<UserDispatchConfig>, ErrorCode> {
    if context.x[0] != 0 {
        return Err(ErrorCode::InvalidArgument);
    }
    let [start, end, handler, buffer, selector] = [
        context.x[2],
        context.x[3],
        context.x[4],
        context.x[5],
        context.x[6],
    ];
    if [start, end, handler, buffer, selector] == [0; 5] {
        return Ok(None);
    }
    if start > end {
        return Err(ErrorCode::InvalidArgument);
    }
    if !arch::layout::is_user_range(start, end - start)
        || !arch::layout::is_user_range(handler, 4)
        || !arch::layout::is_user_range(buffer, FRAME_BYTES)
        || !arch::layout::is_user_range(selector, 1)
    {
        return Err(ErrorCode::InvalidAddress);
    }
    if !handler.is_multiple_of(4) || !buffer.is_multiple_of(8) {
        return Err(ErrorCode::InvalidArgument);
    }
    Ok(Some(UserDispatchConfig {
        start,
        end,
        handler,
        buffer,
        selector,
    }))
}

fn notification(
    context: &UserContext,
    operation: NotificationOperation,
) -> Result<Call, ErrorCode> {
    Ok(Call::Notification {
        operation,
        capability: context.x[0],
    })
}

fn tcb(context: &UserContext, operation: TcbOperation) -> Result<Call, ErrorCode> {
    Ok(Call::Tcb {
        operation,
        tcb: context.x[0],
    })
}

/// `x2` as a priority: `InvalidArgument` above `MAX_PRIORITY`.
fn priority(context: &UserContext) -> Result<Priority, ErrorCode> {
    match context.x[2] {
        value @ 0..=MAX_PRIORITY => Ok(value as Priority),
        _ => Err(ErrorCode::InvalidArgument),
    }
}

/// `x2` as a register number.
fn register(context: &UserContext) -> Result<Register, ErrorCode> {
    Register::from_number(context.x[2]).ok_or(ErrorCode::InvalidArgument)
}

/// `CapMint`'s rights (x4) and badge (x5 if x6 == 1).
fn mint_arguments(context: &UserContext) -> Result<(Rights, Option<u64>), ErrorCode> {
    let rights = Rights::from_raw(context.x[4]).ok_or(ErrorCode::InvalidArgument)?;
    let badge = match context.x[6] {
        0 => None,
        1 => Some(context.x[5]),
        _ => return Err(ErrorCode::InvalidArgument),
    };
    Ok((rights, badge))
}

fn cap(context: &UserContext, operation: CapOperation) -> Result<Call, ErrorCode> {
    Ok(Call::Cap {
        operation,
        cnode: context.x[0],
        source: context.x[2],
        target: context.x[3],
    })
}

/// Checks an IPC syscall's message info: at most `MAX_MESSAGE_WORDS`
/// words; capabilities only with `Send`, `NBSend` and `Call`.
/// Exit statuses the kernel records for ends of its own (a policy or
/// user-dispatch kill, a TCB, address space or filter
/// memory destroyed): `Exit` refuses them (`InvalidArgument`), so an end
/// recorded with one, and the console line it gets, is the kernel's.
pub const KERNEL_STATUSES: [i64; 5] = [
    crate::kernel::TCB_DESTROYED_STATUS,
    crate::kernel::VSPACE_DESTROYED_STATUS,
    crate::kernel::FILTER_DESTROYED_STATUS,
    abi::policy_request::KILLED_BY_POLICY,
    abi::user_dispatch::KILLED_BY_USER_DISPATCH,
];

/// Checks `TcbRestart`'s registers: the PC 4-byte and the SP 16-byte
/// aligned (else `InvalidArgument`), both in the user half (else
/// `InvalidAddress`), as `TcbSetSpace` checks them.
pub fn restart_arguments(
    context: &UserContext,
) -> Result<crate::kernel::RestartArguments, ErrorCode> {
    let (pc, sp) = (context.x[2], context.x[3]);
    if !pc.is_multiple_of(4) || !sp.is_multiple_of(16) {
        return Err(ErrorCode::InvalidArgument);
    }
    let user_end = abi::vspace::USER_MAP_END;
    if pc >= user_end || sp > user_end {
        return Err(ErrorCode::InvalidAddress);
    }
    Ok(crate::kernel::RestartArguments {
        tcb: context.x[0],
        pc,
        sp,
        x0: context.x[4],
        tpidr: context.x[5],
    })
}

/// `TcbSetName`'s arguments as far as registers tell: the TCB capability
/// slot (x0), then the name's user address (x2) and length (x3): 1 ..=
/// `abi::tcb::MAX_NAME_BYTES` (`InvalidArgument`), in the user half
/// (`InvalidAddress`). Its bytes are the kernel's check (it reads them).
pub fn name_arguments(context: &UserContext) -> Result<(u64, u64, usize), ErrorCode> {
    if context.x[3] == 0 {
        return Err(ErrorCode::InvalidArgument);
    }
    let (address, len) = user_buffer(context, abi::tcb::MAX_NAME_BYTES)?;
    Ok((context.x[0], address, len))
}

/// Checks `TcbSetSpace`'s registers: the optional capabilities
/// (`abi::tcb::NO_CAP`: none) and the first registers (misaligned:
/// `InvalidArgument`; outside the user half: `InvalidAddress`).
pub fn set_space_arguments(context: &UserContext) -> Result<SetSpaceArguments, ErrorCode> {
    let optional = |cptr: u64| (cptr != NO_CAP).then_some(cptr);
    let (pc, sp) = (context.x[5], context.x[6]);
    if !pc.is_multiple_of(4) || !sp.is_multiple_of(16) {
        return Err(ErrorCode::InvalidArgument);
    }
    let user_end = abi::vspace::USER_MAP_END;
    if pc >= user_end || sp > user_end {
        return Err(ErrorCode::InvalidAddress);
    }
    let ipc_buffer = optional(context.x[3]);
    let ipc_buffer_address = context.x[1];
    match ipc_buffer {
        // A page a frame can be mapped at (the user half but page 0).
        Some(_) if !ipc_buffer_address.is_multiple_of(PAGE_SIZE) => {
            return Err(ErrorCode::InvalidArgument)
        }
        Some(_) if !is_user_map_address(ipc_buffer_address) => {
            return Err(ErrorCode::InvalidAddress)
        }
        // No buffer, no address: a nonzero one is a mistake to report.
        None if ipc_buffer_address != 0 => return Err(ErrorCode::InvalidArgument),
        _ => {}
    }
    Ok(SetSpaceArguments {
        tcb: context.x[0],
        vspace: context.x[2],
        ipc_buffer,
        ipc_buffer_address,
        fault_endpoint: optional(context.x[4]),
        pc,
        sp,
        x0: context.x[7],
    })
}

fn ipc(context: &UserContext, operation: IpcOperation) -> Result<Call, ErrorCode> {
    if operation.sends() {
        let info = MessageInfo::from(context.x[1]);
        // Capabilities travel with sends and calls, not with replies.
        let may_carry_caps = matches!(
            operation,
            IpcOperation::Send | IpcOperation::NBSend | IpcOperation::Call
        );
        if info.length() as usize > MAX_MESSAGE_WORDS || (info.caps() != 0 && !may_carry_caps) {
            return Err(ErrorCode::InvalidArgument);
        }
    }
    Ok(Call::Ipc {
        operation,
        capability: context.x[0],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel address (the kernel's image in the high half).
    const KERNEL_PROBE_ADDRESS: u64 = 0xFFFF_FFFF_C008_0000;

    fn regs(number: u64, x0: u64, x2: u64, x3: u64) -> UserContext {
        let mut ctx = UserContext::default();
        ctx.x[8] = number;
        ctx.x[0] = x0;
        ctx.x[2] = x2;
        ctx.x[3] = x3;
        ctx
    }

    #[test]
    fn decodes_each_syscall() {
        assert_eq!(decode(&regs(0, 0, 0, 0)), Ok(Call::Null));
        assert_eq!(decode(&regs(1, 0, 0, 0)), Ok(Call::Yield));
        assert_eq!(
            decode(&regs(2, 0, (-7i64) as u64, 0)),
            Ok(Call::Exit { status: -7 })
        );
        assert_eq!(
            decode(&regs(3, 1, 0x40_0000, 5)),
            Ok(Call::DebugPrint {
                console: 1,
                address: 0x40_0000,
                len: 5
            })
        );
    }

    #[test]
    fn mint_arguments_are_checked() {
        let mut ctx = regs(13, 0, 2, 3);
        ctx.x[4] = Rights::READ.raw().into();
        ctx.x[5] = 0x77;
        ctx.x[6] = 1;
        assert_eq!(
            decode(&ctx),
            Ok(Call::Cap {
                operation: CapOperation::Mint {
                    rights: Rights::READ,
                    badge: Some(0x77)
                },
                cnode: 0,
                source: 2,
                target: 3
            })
        );
        ctx.x[6] = 2;
        assert_eq!(decode(&ctx), Err(ErrorCode::InvalidArgument));
        ctx.x[6] = 0;
        ctx.x[4] = 1 << 7;
        assert_eq!(
            decode(&ctx),
            Err(ErrorCode::InvalidArgument),
            "reserved right bit"
        );
    }

    #[test]
    fn ipc_messages_are_checked() {
        let mut ctx = regs(9, 4, 0, 0);
        ctx.x[1] = MessageInfo::with(3, 64).into();
        assert_eq!(
            decode(&ctx),
            Ok(Call::Ipc {
                operation: IpcOperation::Call,
                capability: 4
            })
        );
        ctx.x[1] = MessageInfo::with(3, 65).into();
        assert_eq!(decode(&ctx), Err(ErrorCode::InvalidArgument));
        ctx.x[1] = MessageInfo::with(3, 1).with_caps(1).into();
        assert!(decode(&ctx).is_ok(), "a call may carry capabilities");
        ctx.x[8] = 10;
        ctx.x[1] = MessageInfo::with(3, 1).with_caps(1).into();
        assert_eq!(
            decode(&{
                let mut c = ctx;
                c.x[8] = 10;
                c
            }),
            Err(ErrorCode::InvalidArgument),
            "a reply may not"
        );
        // A receive ignores x1 (it is an output).
        ctx.x[8] = 7;
        assert!(decode(&ctx).is_ok());
    }

    #[test]
    fn tcb_configure_arguments_are_checked() {
        let mut ctx = regs(Syscall::TcbConfigure.number(), 7, 5, 100);
        ctx.x[4] = NO_PROGRAM;
        assert_eq!(
            decode(&ctx),
            Ok(Call::TcbConfigure {
                tcb: 7,
                cnode: 5,
                priority: 100,
            })
        );
        ctx.x[3] = 256;
        assert_eq!(decode(&ctx), Err(ErrorCode::InvalidArgument), "priority");
        ctx.x[3] = 100;
        // No program selector of any shape (init's once were a program
        // number with a parameter above it): the kernel loads nothing for
        // user space.
        for x4 in [0x4d, 0x0358, 0x1c, 0, 0xff, NO_PROGRAM - 1] {
            ctx.x[4] = x4;
            assert_eq!(decode(&ctx), Err(ErrorCode::InvalidArgument), "x4 {x4:#x}");
        }
    }

    #[test]
    fn reply_save_names_a_cnode_and_one_slot() {
        let ctx = regs(Syscall::ReplySave.number(), 0, 5, 9);
        assert_eq!(
            decode(&ctx),
            Ok(Call::Cap {
                operation: CapOperation::ReplySave,
                cnode: 0,
                source: 5,
                target: 9
            })
        );
    }

    #[test]
    fn exit_refuses_the_statuses_the_kernel_records_itself() {
        let exit = |status: i64| decode(&regs(Syscall::Exit.number(), 0, status as u64, 0));
        for status in KERNEL_STATUSES {
            assert_eq!(exit(status), Err(ErrorCode::InvalidArgument), "{status}");
        }
        for status in [0, 1, -1, 101, i64::MIN, i64::MAX] {
            assert_eq!(exit(status), Ok(Call::Exit { status }), "{status}");
        }
    }

    #[test]
    fn tcb_set_space_arguments_are_checked() {
        let set = |x3: u64, x4: u64, pc: u64, sp: u64| {
            let mut ctx = regs(Syscall::TcbSetSpace.number(), 7, 5, x3);
            ctx.x[1] = if x3 == NO_CAP { 0 } else { 0x7000_0000 };
            ctx.x[4] = x4;
            ctx.x[5] = pc;
            ctx.x[6] = sp;
            ctx.x[7] = 0x42;
            decode(&ctx)?;
            set_space_arguments(&ctx)
        };
        assert_eq!(
            set(9, 10, 0x40_0000, 0x80_0000),
            Ok(SetSpaceArguments {
                tcb: 7,
                vspace: 5,
                ipc_buffer: Some(9),
                ipc_buffer_address: 0x7000_0000,
                fault_endpoint: Some(10),
                pc: 0x40_0000,
                sp: 0x80_0000,
                x0: 0x42
            })
        );
        assert!(matches!(
            set(NO_CAP, NO_CAP, 0x40_0000, 0x80_0000),
            Ok(SetSpaceArguments {
                ipc_buffer: None,
                fault_endpoint: None,
                ..
            })
        ));
        let end = abi::vspace::USER_MAP_END;
        assert!(set(9, 10, end - 4, end).is_ok(), "the top of the user half");
        let bad = ErrorCode::InvalidArgument;
        assert_eq!(set(9, 10, 0x40_0002, 0x80_0000), Err(bad), "PC");
        assert_eq!(set(9, 10, 0x40_0000, 0x80_0008), Err(bad), "SP");
        let outside = ErrorCode::InvalidAddress;
        assert_eq!(set(9, 10, end, 0x80_0000), Err(outside), "PC");
        assert_eq!(set(9, 10, 0x40_0000, end + 16), Err(outside), "SP");
        assert_eq!(set(9, 10, !3, 0x80_0000), Err(outside), "kernel PC");
        assert_eq!(set(9, 10, 0x40_0000, !15), Err(outside), "kernel SP");
        // x1: where the buffer is mapped, the thread's first TPIDR_EL0.
        let with_address = |x1: u64, x3: u64| {
            let mut ctx = regs(Syscall::TcbSetSpace.number(), 7, 5, x3);
            ctx.x[1] = x1;
            ctx.x[4] = NO_CAP;
            ctx.x[5] = 0x40_0000;
            ctx.x[6] = 0x80_0000;
            set_space_arguments(&ctx).map(|a| a.ipc_buffer_address)
        };
        assert_eq!(with_address(0x7000_0000, 9), Ok(0x7000_0000));
        assert_eq!(with_address(end - 0x1000, 9), Ok(end - 0x1000));
        assert_eq!(with_address(0x7000_0008, 9), Err(bad), "not a page");
        assert_eq!(with_address(end, 9), Err(outside), "past the user half");
        assert_eq!(with_address(!0xfff, 9), Err(outside), "a kernel address");
        assert_eq!(with_address(0, 9), Err(outside), "page 0, never mapped");
        assert_eq!(with_address(0x7000_0000, NO_CAP), Err(bad), "no buffer");
        assert_eq!(with_address(0, NO_CAP), Ok(0));
    }

    #[test]
    fn cap_mint_into_decodes_like_mint() {
        let mut ctx = regs(Syscall::CapMintInto.number(), 5, 1, 2);
        ctx.x[4] = u64::from(Rights::WRITE.raw());
        ctx.x[5] = 0xb;
        ctx.x[6] = 1;
        assert_eq!(
            decode(&ctx),
            Ok(Call::Cap {
                operation: CapOperation::MintInto {
                    rights: Rights::WRITE,
                    badge: Some(0xb)
                },
                cnode: 5,
                source: 1,
                target: 2
            })
        );
        ctx.x[6] = 2;
        assert_eq!(decode(&ctx), Err(ErrorCode::InvalidArgument));
        ctx.x[6] = 0;
        ctx.x[4] = 0x100;
        assert_eq!(decode(&ctx), Err(ErrorCode::InvalidArgument));
    }

    #[test]
    fn tcb_arguments_are_checked() {
        assert_eq!(
            decode(&regs(23, 5, 255, 0)),
            Ok(Call::Tcb {
                operation: TcbOperation::SetPriority(255),
                tcb: 5
            })
        );
        assert_eq!(
            decode(&regs(23, 5, 256, 0)),
            Err(ErrorCode::InvalidArgument)
        );
        assert_eq!(
            decode(&regs(24, 5, u64::MAX, 0)),
            Err(ErrorCode::InvalidArgument)
        );
        assert_eq!(
            decode(&regs(27, 5, 32, 0)),
            Ok(Call::Tcb {
                operation: TcbOperation::ReadRegister(Register::Pc),
                tcb: 5
            })
        );
        assert_eq!(decode(&regs(27, 5, 34, 0)), Err(ErrorCode::InvalidArgument));
        assert_eq!(
            decode(&regs(28, 5, 33, 0x6000_0000)),
            Ok(Call::Tcb {
                operation: TcbOperation::WriteRegister(Register::Nzcv, 0x6000_0000),
                tcb: 5
            })
        );
        assert_eq!(
            decode(&regs(28, 5, 33, 1 << 21)),
            Err(ErrorCode::InvalidArgument),
            "only NZCV of PSTATE is writable"
        );
    }

    #[test]
    fn policy_arguments_are_checked() {
        assert_eq!(
            decode(&regs(29, 6, 0x40_0000, 8192)),
            Ok(Call::FilterLoad {
                filter: 6,
                address: 0x40_0000,
                len: 8192
            })
        );
        assert_eq!(
            decode(&regs(29, 6, 0x40_0000, 8193)),
            Err(ErrorCode::InvalidArgument)
        );
        assert_eq!(
            decode(&regs(29, 6, KERNEL_PROBE_ADDRESS, 8)),
            Err(ErrorCode::InvalidAddress)
        );
        let mut attach = regs(30, 7, 8, 2);
        assert_eq!(
            decode(&attach),
            Ok(Call::AttachFilter {
                tcb: 7,
                filter: 8,
                server: None
            })
        );
        attach.x[4] = 1;
        assert_eq!(
            decode(&attach),
            Ok(Call::AttachFilter {
                tcb: 7,
                filter: 8,
                server: Some(2)
            })
        );
        attach.x[4] = 2;
        assert_eq!(decode(&attach), Err(ErrorCode::InvalidArgument));
    }

    #[test]
    fn bind_arguments_are_checked() {
        assert_eq!(
            decode(&regs(36, 3, 5, 1)),
            Ok(Call::BindNotification {
                tcb: 3,
                notification: Some(5)
            })
        );
        assert_eq!(
            decode(&regs(36, 3, 5, 0)),
            Ok(Call::BindNotification {
                tcb: 3,
                notification: None
            })
        );
        assert_eq!(decode(&regs(36, 3, 5, 2)), Err(ErrorCode::InvalidArgument));
    }

    #[test]
    fn audit_arguments_are_checked() {
        let mut ctx = regs(35, 3, 8, 5);
        ctx.x[4] = 2;
        ctx.x[5] = 0xab;
        assert_eq!(
            decode(&ctx),
            Ok(Call::SetAudit {
                tcb: 3,
                frame: 8,
                notification: 5,
                mode: Some(AuditMode::Lossless),
                badge: 0xab
            })
        );
        ctx.x[4] = 3;
        assert_eq!(decode(&ctx), Err(ErrorCode::InvalidArgument));
    }

    #[test]
    fn frame_map_arguments_are_checked() {
        use abi::vspace::{FRAME_MAP_END, FRAME_MAP_START, USER_MAP_END};
        let map = |va: u64, rights: u64| {
            let mut ctx = regs(31, 6, 4, va);
            ctx.x[4] = rights;
            decode(&ctx)
        };
        assert_eq!(
            map(FRAME_MAP_START, 3),
            Ok(Call::FrameMap {
                frame: 6,
                vspace: 4,
                va: FRAME_MAP_START,
                rights: MapRights::ReadWrite
            })
        );
        assert_eq!(
            map(FRAME_MAP_END - 4096, 5).map(|c| matches!(c, Call::FrameMap { .. })),
            Ok(true)
        );
        for refused in [0, 2, 4, 6, 7, 8, u64::MAX] {
            assert_eq!(
                map(FRAME_MAP_START, refused),
                Err(ErrorCode::InvalidArgument),
                "permissions {refused}"
            );
        }
        assert_eq!(map(FRAME_MAP_START + 8, 1), Err(ErrorCode::InvalidArgument));
        // The kernel checks a kernel-made space's narrower window; decode
        // only the user half but page 0 (a user-made space's window).
        for inside in [0x1000, 0x40_0000, FRAME_MAP_END, abi::IPC_BUFFER_ADDRESS] {
            assert!(map(inside, 1).is_ok(), "{inside:#x}");
        }
        for outside in [0, USER_MAP_END, !0xfff] {
            assert_eq!(
                map(outside, 1),
                Err(ErrorCode::InvalidAddress),
                "{outside:#x}"
            );
        }
        assert_eq!(
            decode(&regs(32, 6, 0, 0)),
            Ok(Call::FrameUnmap { frame: 6 })
        );
    }

    #[test]
    fn tracer_calls_need_the_trace_right() {
        let attach = decode(&regs(33, 3, 5, 0));
        assert_eq!(
            attach,
            Ok(Call::Tcb {
                operation: TcbOperation::AttachTracer(5),
                tcb: 3
            })
        );
        assert_eq!(
            decode(&regs(34, 3, 5, 0)),
            Ok(Call::Tcb {
                operation: TcbOperation::DetachTracer(5),
                tcb: 3
            })
        );
        assert_eq!(TcbOperation::AttachTracer(5).needed_rights(), Rights::TRACE);
        assert_eq!(TcbOperation::DetachTracer(5).needed_rights(), Rights::TRACE);
    }

    #[test]
    fn user_dispatch_arguments_are_checked() {
        let set = |x0: u64, args: [u64; 5]| {
            let mut ctx = regs(37, x0, args[0], args[1]);
            ctx.x[4] = args[2];
            ctx.x[5] = args[3];
            ctx.x[6] = args[4];
            let config = user_dispatch_config(&ctx);
            assert_eq!(
                decode(&ctx),
                config.map(|_| Call::SetUserDispatch),
                "decode checks the same"
            );
            config
        };
        let good = [
            0x40_1000,
            0x40_1010,
            0x40_2000,
            0x7fff_fffe_f000,
            0x7fff_fffe_f200,
        ];
        assert_eq!(
            set(0, good),
            Ok(Some(UserDispatchConfig {
                start: 0x40_1000,
                end: 0x40_1010,
                handler: 0x40_2000,
                buffer: 0x7fff_fffe_f000,
                selector: 0x7fff_fffe_f200,
            }))
        );
        assert_eq!(set(0, [0; 5]), Ok(None));
        assert_eq!(
            set(1, [0; 5]),
            Err(ErrorCode::InvalidArgument),
            "x0 reserved"
        );
        assert_eq!(set(1, good), Err(ErrorCode::InvalidArgument), "x0 reserved");
        let with = |index: usize, value: u64| {
            let mut args = good;
            args[index] = value;
            set(0, args)
        };
        // An empty range is ordered: every syscall is outside it.
        assert!(with(1, 0x40_1000).is_ok());
        assert_eq!(
            with(1, 0x40_0ffc),
            Err(ErrorCode::InvalidArgument),
            "unordered"
        );
        assert_eq!(
            with(1, u64::MAX),
            Err(ErrorCode::InvalidAddress),
            "range end"
        );
        assert_eq!(
            with(2, 0x40_2002),
            Err(ErrorCode::InvalidArgument),
            "handler alignment"
        );
        assert_eq!(
            with(3, 0x7fff_fffe_f004),
            Err(ErrorCode::InvalidArgument),
            "buffer alignment"
        );
        let kernel = KERNEL_PROBE_ADDRESS;
        for index in 2..5 {
            assert_eq!(
                with(index, kernel),
                Err(ErrorCode::InvalidAddress),
                "x{}",
                index + 2
            );
        }
        // The whole frame must fit below the end of the user half.
        let last = arch::layout::USER_END - FRAME_BYTES;
        assert!(with(3, last).is_ok());
        assert_eq!(with(3, last + 8), Err(ErrorCode::InvalidAddress));
        assert_eq!(
            with(4, arch::layout::USER_END),
            Err(ErrorCode::InvalidAddress)
        );
        assert!(with(4, arch::layout::USER_END - 1).is_ok());

        assert_eq!(
            decode(&regs(38, 0x7fff_fffe_f000, 0, 0)),
            Ok(Call::UserDispatchReturn {
                frame: 0x7fff_fffe_f000
            })
        );
        assert_eq!(
            decode(&regs(38, 0x7fff_fffe_f001, 0, 0)),
            Err(ErrorCode::InvalidArgument)
        );
        assert_eq!(
            decode(&regs(38, kernel, 0, 0)),
            Err(ErrorCode::InvalidAddress)
        );
        assert_eq!(
            decode(&regs(38, arch::layout::USER_END - 8, 0, 0)),
            Err(ErrorCode::InvalidAddress)
        );
    }

    #[test]
    fn tcb_set_name_arguments_are_checked() {
        let name = |x0, address, len| regs(Syscall::TcbSetName.number(), x0, address, len);
        assert_eq!(decode(&name(7, 0x40_0000, 1)), Ok(Call::TcbSetName));
        assert_eq!(decode(&name(7, 0x40_0000, 16)), Ok(Call::TcbSetName));
        assert_eq!(
            name_arguments(&name(7, 0x40_0010, 5)),
            Ok((7, 0x40_0010, 5))
        );
        // 1 ..= 24 bytes, checked before the address.
        for len in [0, 25, 256, u64::MAX] {
            assert_eq!(
                decode(&name(7, 0x40_0000, len)),
                Err(ErrorCode::InvalidArgument),
                "{len}"
            );
        }
        // All in the user half.
        for address in [
            KERNEL_PROBE_ADDRESS,
            u64::MAX - 2,
            arch::layout::USER_END - 4,
        ] {
            assert_eq!(
                decode(&name(7, address, 8)),
                Err(ErrorCode::InvalidAddress),
                "{address:#x}"
            );
        }
    }

    #[test]
    fn bad_arguments_get_typed_errors() {
        assert_eq!(decode(&regs(999, 0, 0, 0)), Err(ErrorCode::InvalidSyscall));
        assert_eq!(
            decode(&regs(u64::MAX, 0, 0, 0)),
            Err(ErrorCode::InvalidSyscall)
        );
        assert_eq!(
            decode(&regs(3, 0, 0x40_0000, 257)),
            Err(ErrorCode::InvalidArgument)
        );
        assert_eq!(
            decode(&regs(3, 0, KERNEL_PROBE_ADDRESS, 8)),
            Err(ErrorCode::InvalidAddress)
        );
        assert_eq!(
            decode(&regs(3, 0, u64::MAX - 2, 8)),
            Err(ErrorCode::InvalidAddress)
        );
    }
}
