//! The saved registers decoded into a `Call`, with every check that
//! needs no kernel state.

use super::*;
use crate::ipc::message::MAX_MESSAGE_WORDS;
use crate::scheduler::Priority;
pub use crate::thread::UserDispatchConfig;
use abi::audit::AuditMode;
use abi::cap::{CapType, Rights};
use abi::policy::MAX_DESCRIPTION_BYTES;
use abi::tcb::{Register, MAX_PRIORITY, NO_CAP, NO_PROGRAM, NZCV_MASK};
use abi::user_dispatch::FRAME_BYTES;
use abi::vspace::{is_user_map_address, MapRights};
use abi::{ErrorCode, Syscall, DEBUG_PRINT_MAX};
use arch::context::UserContext;
use arch::layout::PAGE_SIZE;
use entry::ArgIndex;

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
/// The copy the audit-only path (`Kernel::syscall_audited`) uses.
pub const AUDITED_COPY: Copy = 3;
/// The copy the lean entry (`Kernel::lean_syscall`) uses.
pub const LEAN_COPY: Copy = 4;
/// The copy the policy-only path (`Kernel::syscall_judged`) uses.
pub const JUDGED_COPY: Copy = 5;
/// The copy the policy-only path uses for an answered call
/// (`Kernel::continue_judged`).
pub const ANSWERED_COPY: Copy = 6;
/// The copy the trace-only path uses for a call its tracer let go on
/// (`Kernel::continue_traced`).
pub const TRACED_COPY: Copy = 7;
/// The copy the policy-only path inside the lean entry uses
/// (`Kernel::lean_judged`).
pub const LEAN_JUDGED_COPY: Copy = 8;

/// [`decode`], one copy per `COPY`. The syscall path without entry work
/// is the hot one: with a copy of its own (and one of `Kernel::dispatch`)
/// that has one caller, the compiler folds the decoding into the dispatch
/// (the `Call` never exists in memory), as long as no case of the
/// dispatch passes part of the call to a function the compiler does not
/// inline (hence `tcb_syscall` and `cap_syscall` are inlined). Measured
/// on `yield_no_switch`: 356 instructions; 393 with one shared copy, or
/// with either of those functions called.
pub fn decode_copy<const COPY: Copy>(context: &UserContext) -> Result<Call, ErrorCode> {
    let syscall =
        Syscall::from_number(context.syscall_number()).ok_or(ErrorCode::InvalidSyscall)?;
    let capability = context.capability_pointer();
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
            handler: context.capability_pointer(),
            notification: context.x[2],
        }),
        Syscall::IrqAck => Ok(Call::IrqAck {
            handler: context.capability_pointer(),
        }),
        Syscall::IrqSetTimer => Ok(Call::IrqSetTimer {
            handler: context.capability_pointer(),
            ticks: context.x[2],
        }),
        Syscall::IrqControlGet => Ok(Call::IrqControlGet {
            control: context.capability_pointer(),
            intid: context.x[2],
            slot: context.x[3],
        }),
        Syscall::Retype => Ok(Call::Retype {
            untyped: context.capability_pointer(),
            object_type: CapType::from_raw(context.x[2]).ok_or(ErrorCode::InvalidArgument)?,
            size: context.x[3],
            target: context.x[4],
            count: context.x[5],
            payer: context.x[6],
        }),
        Syscall::TcbSetPriority => tcb(context, TcbOperation::SetPriority(priority(context)?)),
        Syscall::TcbSetMcp => tcb(context, TcbOperation::SetMcp(priority(context)?)),
        Syscall::TcbSuspend => tcb(context, TcbOperation::Suspend),
        Syscall::TcbSetAffinity => tcb(context, TcbOperation::SetAffinity(context.x[2])),
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
            server_thread: context.x[5],
        }),
        Syscall::FilterSetServer => Ok(Call::FilterSetServer {
            filter: capability,
            endpoint: context.x[2],
            thread: context.x[3],
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
                tcb: context.capability_pointer(),
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
        Syscall::DebugThreadStats => Ok(Call::DebugThreadStats {
            tcb: context.capability_pointer(),
        }),
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
        Syscall::SetRseq => {
            rseq_arguments(context)?;
            Ok(Call::SetRseq)
        }
        Syscall::SliceYield => Ok(Call::SliceYield),
        Syscall::ConsoleRead => {
            console_read_arguments(context)?;
            Ok(Call::ConsoleRead)
        }
        Syscall::ConsoleSetNotification => {
            console_binding_arguments(context)?;
            Ok(Call::ConsoleSetNotification)
        }
        Syscall::ConsoleWriteFrame => {
            console_frame_arguments(context)?;
            Ok(Call::ConsoleWriteFrame)
        }
        Syscall::InspectThread => {
            inspect_arguments(context, Inspected::Thread)?;
            Ok(Call::InspectThread)
        }
        Syscall::InspectCaps => {
            inspect_arguments(context, Inspected::Caps)?;
            Ok(Call::InspectCaps)
        }
        #[cfg(not(feature = "rseq-counters"))]
        Syscall::DebugRseqCounters => Err(ErrorCode::InvalidSyscall),
        #[cfg(feature = "rseq-counters")]
        Syscall::DebugRseqCounters => Ok(Call::DebugRseqCounters {
            address: context.x[2],
        }),
        Syscall::UserDispatchReturn => Ok(Call::UserDispatchReturn {
            frame: user_dispatch_frame(context)?,
        }),
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

/// `UserDispatchReturn`'s frame address (`x0`): the whole frame in the
/// user half (`InvalidAddress`), 8-aligned (`InvalidArgument`).
pub fn user_dispatch_frame(context: &UserContext) -> Result<u64, ErrorCode> {
    let frame = context.arg(ArgIndex::X0);
    if !arch::layout::is_user_range(frame, FRAME_BYTES) {
        return Err(ErrorCode::InvalidAddress);
    }
    if !frame.is_multiple_of(8) {
        return Err(ErrorCode::InvalidArgument);
    }
    Ok(frame)
}

/// Checks `SetUserDispatch`'s registers (see `abi::user_dispatch`): `x0`
/// reserved; `x2..x6` all 0 is off; else an ordered PC range in the user
/// half, an aligned handler, an aligned buffer big enough for a frame and a
/// selector address, all in the user half. Whether the buffer is writable
/// and the selector readable is the kernel's check (it needs the tables).
pub fn user_dispatch_config(
    context: &UserContext,
) -> Result<Option<UserDispatchConfig>, ErrorCode> {
    if context.arg(ArgIndex::X0) != 0 {
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
        capability: context.capability_pointer(),
    })
}

fn tcb(context: &UserContext, operation: TcbOperation) -> Result<Call, ErrorCode> {
    Ok(Call::Tcb {
        operation,
        tcb: context.capability_pointer(),
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
        cnode: context.capability_pointer(),
        source: context.x[2],
        target: context.x[3],
    })
}

/// Checks an IPC syscall's message info: at most `MAX_MESSAGE_WORDS`
/// words; capabilities only with `Send`, `NBSend` and `Call`.
/// Exit statuses the kernel records for ends of its own (a policy,
/// user-dispatch or rseq kill, a TCB, address space or filter
/// memory destroyed): `Exit` refuses them (`InvalidArgument`), so an end
/// recorded with one, and the console line it gets, is the kernel's.
pub const KERNEL_STATUSES: [i64; 6] = [
    crate::thread::TCB_DESTROYED_STATUS,
    crate::thread::VSPACE_DESTROYED_STATUS,
    crate::thread::FILTER_DESTROYED_STATUS,
    abi::policy_request::KILLED_BY_POLICY,
    abi::user_dispatch::KILLED_BY_USER_DISPATCH,
    abi::rseq::KILLED_BY_RSEQ,
];

/// Checks `SetRseq`'s registers (`abi::rseq`): `x0` reserved (0), `x4`
/// `REGISTER` or `UNREGISTER` and `x3` a `u32` (else `InvalidArgument`);
/// the area at `x2` 32-byte aligned, in the user half (else
/// `InvalidAddress`). Whether it is mapped the kernel checks.
pub fn rseq_arguments(context: &UserContext) -> Result<RseqArguments, ErrorCode> {
    let (area, signature, operation) = (context.x[2], context.x[3], context.x[4]);
    if context.x[0] != 0 || signature > u64::from(u32::MAX) {
        return Err(ErrorCode::InvalidArgument);
    }
    let unregister = match operation {
        abi::rseq::REGISTER => false,
        abi::rseq::UNREGISTER => true,
        _ => return Err(ErrorCode::InvalidArgument),
    };
    if !area.is_multiple_of(abi::rseq::AREA_ALIGN)
        || !arch::layout::is_user_range(area, abi::rseq::AREA_BYTES)
    {
        return Err(ErrorCode::InvalidAddress);
    }
    Ok(RseqArguments {
        area,
        signature: signature as u32,
        unregister,
    })
}

/// `SetRseq`'s arguments, checked by [`rseq_arguments`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RseqArguments {
    /// The area's user address (x2: 32-byte aligned, in the user half).
    pub area: u64,
    /// The signature (x3).
    pub signature: u32,
    /// `UNREGISTER` (x4) rather than `REGISTER`.
    pub unregister: bool,
}

/// Checks `TcbRestart`'s registers: the PC 4-byte and the SP 16-byte
/// aligned (else `InvalidArgument`), both in the user half (else
/// `InvalidAddress`), as `TcbSetSpace` checks them.
pub fn restart_arguments(context: &UserContext) -> Result<RestartArguments, ErrorCode> {
    let (pc, sp) = (context.x[2], context.x[3]);
    if !pc.is_multiple_of(4) || !sp.is_multiple_of(16) {
        return Err(ErrorCode::InvalidArgument);
    }
    let user_end = abi::vspace::USER_MAP_END;
    if pc >= user_end || sp > user_end {
        return Err(ErrorCode::InvalidAddress);
    }
    Ok(RestartArguments {
        tcb: context.capability_pointer(),
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
    Ok((context.capability_pointer(), address, len))
}

/// `ConsoleRead`'s arguments: the console capability slot (x0), the
/// user buffer (x2, x3: at most `DEBUG_PRINT_MAX` bytes, in the user half).
pub fn console_read_arguments(context: &UserContext) -> Result<(u64, u64, usize), ErrorCode> {
    let (address, len) = user_buffer(context, DEBUG_PRINT_MAX)?;
    Ok((context.capability_pointer(), address, len))
}

/// `ConsoleWriteFrame`'s arguments: as [`console_read_arguments`], and at
/// least one byte (an empty frame would be two delimiters, which read as
/// one frame's end and the next one's start).
pub fn console_frame_arguments(context: &UserContext) -> Result<(u64, u64, usize), ErrorCode> {
    if context.x[3] == 0 {
        return Err(ErrorCode::InvalidArgument);
    }
    console_read_arguments(context)
}

/// `ConsoleSetNotification`'s arguments: the console capability slot
/// (x0), the notification's (x2) when `x3 == 1`, `None` when `x3 == 0`;
/// another `x3` is `InvalidArgument`.
pub fn console_binding_arguments(context: &UserContext) -> Result<(u64, Option<u64>), ErrorCode> {
    let notification = match context.x[3] {
        0 => None,
        1 => Some(context.x[2]),
        _ => return Err(ErrorCode::InvalidArgument),
    };
    Ok((context.capability_pointer(), notification))
}

/// What an inspection syscall reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inspected {
    /// `InspectThread`: `x2` the first thread number wanted, `x3` where.
    Thread,
    /// `InspectCaps`: `x2` the thread's number, `x3` the first slot
    /// wanted, `x4` where.
    Caps,
}

/// An inspection's arguments (see [`Inspected`]): the Inspector slot
/// (x0), the two numbers and the user address the words go to, which
/// must be 8-byte aligned (`InvalidArgument`) and in the user half
/// (`InvalidAddress`).
pub fn inspect_arguments(
    context: &UserContext,
    inspected: Inspected,
) -> Result<(u64, u64, u64, u64), ErrorCode> {
    let (first, second, address, words) = match inspected {
        Inspected::Thread => (
            context.x[2],
            0,
            context.x[3],
            abi::inspect::THREAD_INFO_WORDS,
        ),
        Inspected::Caps => (
            context.x[2],
            context.x[3],
            context.x[4],
            abi::inspect::CAP_INFO_WORDS,
        ),
    };
    if !address.is_multiple_of(8) {
        return Err(ErrorCode::InvalidArgument);
    }
    if !arch::layout::is_user_range(address, 8 * words as u64) {
        return Err(ErrorCode::InvalidAddress);
    }
    Ok((context.capability_pointer(), first, second, address))
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
    let ipc_buffer_address = context.arg(ArgIndex::X1);
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
        tcb: context.capability_pointer(),
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
    Ok(Call::Ipc {
        operation,
        capability: ipc_capability(context, operation)?,
    })
}

/// The checks `decode` makes of an IPC syscall's registers, for
/// `operation`: the capability pointer it names, or the error to return
/// (a message longer than any, or capabilities sent with a reply).
#[inline(always)]
pub fn ipc_capability(context: &UserContext, operation: IpcOperation) -> Result<u64, ErrorCode> {
    if operation.sends() {
        let info = context.message_info();
        // One compare each way: the length alone for an operation whose
        // message may carry capabilities; else the length and the
        // capability count read as one number (the count sits above the
        // length, so any count makes it larger than any length).
        let checked = if operation.may_carry_caps() {
            u64::from(info.length())
        } else {
            u64::from(info) & abi::MESSAGE_LENGTH_AND_CAPS_MASK
        };
        if checked > MAX_MESSAGE_WORDS as u64 {
            return Err(ErrorCode::InvalidArgument);
        }
    }
    Ok(context.capability_pointer())
}
