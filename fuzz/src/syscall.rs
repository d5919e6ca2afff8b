//! Syscall decoding: the saved registers of any user thread, turned into a
//! typed call before anything else looks at them.

use super::bytes::Bytes;
use abi::cap::CapType;
use abi::policy::MAX_DESCRIPTION_BYTES;
use abi::tcb::{Register, NZCV_MASK};
use abi::vspace::MapRights;
use abi::{ErrorCode, MessageInfo, Syscall, DEBUG_PRINT_MAX};
use arch::context::UserContext;
use arch::layout::is_user_range;
use microkernel::ipc::message::MAX_MESSAGE_WORDS;
use microkernel::syscall::{
    decode, Call, CapOperation, IpcOperation, NotificationOperation, TcbOperation,
};

/// The registers `decode` may read: `x0..=x8`.
const ARGUMENT_REGISTERS: usize = 9;

/// Decodes register sets read from `data`.
///
/// Input, repeated until it ends: a byte choosing the syscall number
/// (below 128: that byte modulo the highest syscall number plus three, so mostly a
/// real syscall; otherwise the next eight bytes, any number), then
/// `x0..x7`, then the other registers' eight bytes.
///
/// Checks: decoding never panics; an unknown number is `InvalidSyscall`
/// and a known one never is; a decoded call is the syscall the number
/// names; its arguments are in range (a debug print's buffer is in the user
/// half and at most `DEBUG_PRINT_MAX` bytes, a sending IPC's message info
/// at most `MAX_MESSAGE_WORDS` words and capabilities only where allowed, a
/// mint's rights defined bits only, its badge set exactly when `x6` is 1,
/// a retype's type the one `x2` names); registers above `x8`, `sp`, `pc`
/// and `tpidr` do not change the result.
pub fn syscall_registers(data: &[u8]) {
    let mut input = Bytes::new(data);
    while !input.is_empty() {
        let mut context = UserContext::zeroed();
        let choice = input.u8();
        context.x[8] = if choice < 128 {
            u64::from(choice) % (Syscall::END + 2)
        } else {
            input.u64()
        };
        for register in &mut context.x[..8] {
            *register = input.u64();
        }
        let decoded = decode(&context);
        check_call(&context, decoded);
        let noise = input.u64();
        let mut other = context;
        for register in &mut other.x[ARGUMENT_REGISTERS..] {
            *register = noise;
        }
        other.sp = noise;
        other.pc = noise;
        other.tpidr = noise;
        assert_eq!(decode(&other), decoded, "a non-argument register mattered");
    }
}

fn check_call(context: &UserContext, decoded: Result<Call, ErrorCode>) {
    let x = &context.x;
    let Some(syscall) = Syscall::from_number(x[8]) else {
        assert_eq!(decoded, Err(ErrorCode::InvalidSyscall));
        return;
    };
    let call = match decoded {
        Ok(call) => call,
        Err(code) => {
            assert!(code != ErrorCode::InvalidSyscall && code != ErrorCode::Ok);
            return;
        }
    };
    assert_eq!(
        syscall_of(&call),
        syscall,
        "decoded {call:?} from {syscall:?}"
    );
    match call {
        Call::DebugPrint { address, len, .. } => {
            assert!(len <= DEBUG_PRINT_MAX && is_user_range(address, len as u64));
        }
        Call::TcbSetName => {
            let (tcb, address, len) =
                microkernel::syscall::name_arguments(context).expect("decode accepted it");
            assert_eq!([tcb, address, len as u64], [x[0], x[2], x[3]]);
            assert!((1..=abi::tcb::MAX_NAME_BYTES).contains(&len));
            assert!(is_user_range(address, len as u64));
        }
        Call::ConsoleRead | Call::ConsoleWriteFrame => {
            let (console, address, len) =
                microkernel::syscall::console_read_arguments(context).expect("decode accepted it");
            assert_eq!([console, address, len as u64], [x[0], x[2], x[3]]);
            assert!(len <= DEBUG_PRINT_MAX && is_user_range(address, len as u64));
            assert!(len > 0 || call == Call::ConsoleRead, "an empty frame");
        }
        Call::ConsoleSetNotification => {
            let (console, notification) = microkernel::syscall::console_binding_arguments(context)
                .expect("decode accepted it");
            assert_eq!(console, x[0]);
            assert_eq!(notification, (x[3] == 1).then_some(x[2]));
            assert!(x[3] <= 1);
        }
        Call::InspectThread | Call::InspectCaps => {
            let inspected = if call == Call::InspectThread {
                microkernel::syscall::Inspected::Thread
            } else {
                microkernel::syscall::Inspected::Caps
            };
            let (inspector, _, _, address) =
                microkernel::syscall::inspect_arguments(context, inspected)
                    .expect("decode accepted it");
            assert_eq!(inspector, x[0]);
            assert!(address % 8 == 0 && is_user_range(address, 8));
        }
        Call::FilterLoad { address, len, .. } => {
            assert!(len <= MAX_DESCRIPTION_BYTES && is_user_range(address, len as u64));
        }
        Call::BindNotification { notification, .. } => {
            assert_eq!(notification, (x[3] == 1).then_some(x[2]));
        }
        Call::SetAudit { mode, badge, .. } => {
            assert_eq!(Some(mode), abi::audit::AuditMode::from_raw(x[4]));
            assert_eq!(badge, x[5]);
        }
        Call::AttachFilter {
            server,
            server_thread,
            ..
        } => {
            assert_eq!(server, (x[4] == 1).then_some(x[3]));
            assert_eq!(server_thread, x[5]);
            assert!(x[4] <= 1);
        }
        Call::FilterSetServer {
            filter,
            endpoint,
            thread,
        } => assert_eq!([filter, endpoint, thread], [x[0], x[2], x[3]]),
        Call::SetUserDispatch => {
            assert_eq!(x[0], 0, "x0 is reserved");
            match microkernel::syscall::user_dispatch_config(context).expect("decode accepted it") {
                None => assert_eq!(x[2..7], [0; 5]),
                Some(c) => {
                    assert_eq!([c.start, c.end, c.handler, c.buffer, c.selector], x[2..7]);
                    assert!(c.start <= c.end && is_user_range(c.start, c.end - c.start));
                    assert!(is_user_range(c.handler, 4) && c.handler % 4 == 0);
                    let frame = abi::user_dispatch::FRAME_BYTES;
                    assert!(is_user_range(c.buffer, frame) && c.buffer % 8 == 0);
                    assert!(is_user_range(c.selector, 1));
                }
            }
        }
        Call::UserDispatchReturn { frame } => {
            assert_eq!(frame, x[0]);
            assert!(is_user_range(frame, abi::user_dispatch::FRAME_BYTES) && frame % 8 == 0);
        }
        Call::Ipc { operation, .. } if operation.sends() => {
            let info = MessageInfo::from(x[1]);
            assert!(usize::from(info.length()) <= MAX_MESSAGE_WORDS);
            let may_carry = matches!(
                operation,
                IpcOperation::Send | IpcOperation::NBSend | IpcOperation::Call
            );
            assert!(info.caps() == 0 || may_carry, "caps with {operation:?}");
        }
        Call::Cap {
            operation:
                CapOperation::Mint { rights, badge } | CapOperation::MintInto { rights, badge },
            ..
        } => {
            assert_eq!(u64::from(rights.raw()), x[4], "rights not as asked");
            assert_eq!(badge, (x[6] == 1).then_some(x[5]));
            assert!(x[6] <= 1);
        }
        Call::TcbConfigure {
            tcb,
            cnode,
            priority,
        } => {
            assert_eq!((tcb, cnode, u64::from(priority)), (x[0], x[2], x[3]));
            // The kernel loads no program for user space.
            assert_eq!(x[4], abi::tcb::NO_PROGRAM, "a program selector accepted");
        }
        Call::TcbSetSpace => {
            let a = microkernel::syscall::set_space_arguments(context).expect("decode accepted it");
            let optional = |x: u64| (x != abi::tcb::NO_CAP).then_some(x);
            assert_eq!(
                (a.tcb, a.vspace, a.ipc_buffer, a.fault_endpoint),
                (x[0], x[2], optional(x[3]), optional(x[4]))
            );
            assert_eq!([a.pc, a.sp, a.x0], x[5..8]);
            assert!(a.pc.is_multiple_of(4) && a.sp.is_multiple_of(16));
            assert!(a.pc < abi::vspace::USER_MAP_END);
            assert!(a.sp <= abi::vspace::USER_MAP_END);
        }
        Call::Retype { object_type, .. } => {
            assert_eq!(Some(object_type), CapType::from_raw(x[2]));
        }
        Call::FrameMap { va, rights, .. } => {
            assert_eq!(Some(rights), MapRights::from_raw(x[4]));
            assert!(rights.raw() != 7, "write+execute decoded");
            assert!(abi::vspace::is_user_map_address(va) && va == x[3]);
        }
        Call::Tcb { operation, .. } => match operation {
            TcbOperation::SetPriority(p) | TcbOperation::SetMcp(p) => {
                assert_eq!(u64::from(p), x[2], "priority not as asked");
            }
            TcbOperation::ReadRegister(r) => assert_eq!(r.number(), x[2]),
            TcbOperation::WriteRegister(r, value) => {
                assert_eq!((r.number(), value), (x[2], x[3]));
                assert!(r != Register::Nzcv || value & !NZCV_MASK == 0);
            }
            TcbOperation::AttachTracer(endpoint) | TcbOperation::DetachTracer(endpoint) => {
                assert_eq!(endpoint, x[2])
            }
            TcbOperation::SetAffinity(cpu) => assert_eq!(cpu, x[2], "CPU not as asked"),
            TcbOperation::Suspend | TcbOperation::Resume => {}
        },
        _ => {}
    }
}

/// The syscall a decoded call carries out.
fn syscall_of(call: &Call) -> Syscall {
    match *call {
        Call::Null => Syscall::Null,
        Call::Yield => Syscall::Yield,
        Call::Exit { .. } => Syscall::Exit,
        Call::BenchFloor { .. } => Syscall::BenchFloor,
        Call::DebugThreadStats { .. } => Syscall::DebugThreadStats,
        Call::DebugCheckInvariants { .. } => Syscall::DebugCheckInvariants,
        Call::DebugPrint { .. } => Syscall::DebugPrint,
        Call::IrqSetNotification { .. } => Syscall::IrqSetNotification,
        Call::IrqAck { .. } => Syscall::IrqAck,
        Call::IrqSetTimer { .. } => Syscall::IrqSetTimer,
        Call::IrqControlGet { .. } => Syscall::IrqControlGet,
        Call::TcbRestart => Syscall::TcbRestart,
        Call::TcbSetName => Syscall::TcbSetName,
        Call::Retype { .. } => Syscall::Retype,
        Call::FrameMap { .. } => Syscall::FrameMap,
        Call::FrameUnmap { .. } => Syscall::FrameUnmap,
        Call::Ipc { operation, .. } => match operation {
            IpcOperation::Send => Syscall::Send,
            IpcOperation::NBSend => Syscall::NBSend,
            IpcOperation::Recv => Syscall::Recv,
            IpcOperation::NBRecv => Syscall::NBRecv,
            IpcOperation::Call => Syscall::Call,
            IpcOperation::Reply => Syscall::Reply,
            IpcOperation::ReplyRecv => Syscall::ReplyRecv,
        },
        Call::Notification { operation, .. } => match operation {
            NotificationOperation::Signal => Syscall::Signal,
            NotificationOperation::Wait => Syscall::Wait,
            NotificationOperation::Poll => Syscall::Poll,
        },
        Call::FilterLoad { .. } => Syscall::FilterLoad,
        Call::SetAudit { .. } => Syscall::TcbSetAudit,
        Call::BindNotification { .. } => Syscall::TcbBindNotification,
        Call::AttachFilter { .. } => Syscall::TcbAttachFilter,
        Call::FilterSetServer { .. } => Syscall::FilterSetServer,
        Call::SetUserDispatch => Syscall::SetUserDispatch,
        Call::TcbConfigure { .. } => Syscall::TcbConfigure,
        Call::TcbSetSpace => Syscall::TcbSetSpace,
        Call::SetRseq => Syscall::SetRseq,
        Call::SliceYield => Syscall::SliceYield,
        Call::ConsoleRead => Syscall::ConsoleRead,
        Call::ConsoleSetNotification => Syscall::ConsoleSetNotification,
        Call::ConsoleWriteFrame => Syscall::ConsoleWriteFrame,
        Call::InspectThread => Syscall::InspectThread,
        Call::InspectCaps => Syscall::InspectCaps,
        Call::DebugRseqCounters { .. } => Syscall::DebugRseqCounters,
        Call::UserDispatchReturn { .. } => Syscall::UserDispatchReturn,
        Call::Tcb { operation, .. } => match operation {
            TcbOperation::SetPriority(_) => Syscall::TcbSetPriority,
            TcbOperation::SetMcp(_) => Syscall::TcbSetMcp,
            TcbOperation::Suspend => Syscall::TcbSuspend,
            TcbOperation::Resume => Syscall::TcbResume,
            TcbOperation::ReadRegister(_) => Syscall::TcbReadRegister,
            TcbOperation::WriteRegister(..) => Syscall::TcbWriteRegister,
            TcbOperation::AttachTracer(_) => Syscall::TcbAttachTracer,
            TcbOperation::DetachTracer(_) => Syscall::TcbDetachTracer,
            TcbOperation::SetAffinity(_) => Syscall::TcbSetAffinity,
        },
        Call::Cap { operation, .. } => match operation {
            CapOperation::Copy => Syscall::CapCopy,
            CapOperation::Mint { .. } => Syscall::CapMint,
            CapOperation::MintInto { .. } => Syscall::CapMintInto,
            CapOperation::MoveInto => Syscall::CapMoveInto,
            CapOperation::Move => Syscall::CapMove,
            CapOperation::Delete => Syscall::CapDelete,
            CapOperation::Revoke => Syscall::CapRevoke,
            CapOperation::ReplySave => Syscall::ReplySave,
        },
    }
}
