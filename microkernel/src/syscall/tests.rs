//! `decode`'s tests: every call's registers and every refusal.

use super::*;
use abi::audit::AuditMode;
use abi::cap::Rights;
use abi::tcb::{Register, NO_CAP, NO_PROGRAM};
use abi::user_dispatch::FRAME_BYTES;
use abi::vspace::MapRights;
use abi::{ErrorCode, MessageInfo, Syscall};
use arch::context::UserContext;
use entry::ArgIndex;

/// A kernel address (the kernel's image in the high half).
const KERNEL_PROBE_ADDRESS: u64 = 0xFFFF_FFFF_C008_0000;

fn regs(number: u64, x0: u64, x2: u64, x3: u64) -> UserContext {
    let mut ctx = UserContext::default();
    ctx.set_syscall_number(number);
    ctx.set_arg(ArgIndex::X0, x0);
    ctx.set_arg(ArgIndex::X2, x2);
    ctx.set_arg(ArgIndex::X3, x3);
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
    ctx.set_arg(ArgIndex::X4, Rights::READ.raw().into());
    ctx.set_arg(ArgIndex::X5, 0x77);
    ctx.set_arg(ArgIndex::X6, 1);
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
    ctx.set_arg(ArgIndex::X6, 2);
    assert_eq!(decode(&ctx), Err(ErrorCode::InvalidArgument));
    ctx.set_arg(ArgIndex::X6, 0);
    ctx.set_arg(ArgIndex::X4, 1 << 7);
    assert_eq!(
        decode(&ctx),
        Err(ErrorCode::InvalidArgument),
        "reserved right bit"
    );
}

/// Every length and capability count of every IPC syscall: a sending
/// one is refused exactly when its message is longer than any, or names
/// capabilities that only a send or call may carry (the decoder reads
/// both fields as one number where no capability may travel); a receive
/// ignores x1 (it is an output).
#[test]
fn every_ipc_message_length_and_count_is_checked_by_the_rule() {
    let ipc = [
        (Syscall::Send, IpcOperation::Send),
        (Syscall::NBSend, IpcOperation::NBSend),
        (Syscall::Call, IpcOperation::Call),
        (Syscall::Reply, IpcOperation::Reply),
        (Syscall::ReplyRecv, IpcOperation::ReplyRecv),
        (Syscall::Recv, IpcOperation::Recv),
        (Syscall::NBRecv, IpcOperation::NBRecv),
    ];
    for (syscall, operation) in ipc {
        let may_carry = matches!(syscall, Syscall::Send | Syscall::NBSend | Syscall::Call);
        assert_eq!(operation.may_carry_caps(), may_carry, "{syscall:?}");
        for length in 0..=127u8 {
            for caps in 0..=3u8 {
                let mut ctx = regs(syscall.number(), 4, 0, 0);
                ctx.set_message_info(MessageInfo::with(3, length).with_caps(caps));
                let refused = operation.sends()
                    && (usize::from(length) > crate::ipc::message::MAX_MESSAGE_WORDS
                        || (caps != 0 && !may_carry));
                let expected = if refused {
                    Err(ErrorCode::InvalidArgument)
                } else {
                    Ok(Call::Ipc {
                        operation,
                        capability: 4,
                    })
                };
                assert_eq!(decode(&ctx), expected, "{syscall:?} {length} {caps}");
                assert_eq!(
                    ipc_capability(&ctx, operation),
                    expected.map(|_| 4),
                    "{syscall:?} {length} {caps}"
                );
            }
        }
    }
}

#[test]
fn ipc_messages_are_checked() {
    let mut ctx = regs(9, 4, 0, 0);
    ctx.set_message_info(MessageInfo::with(3, 64));
    assert_eq!(
        decode(&ctx),
        Ok(Call::Ipc {
            operation: IpcOperation::Call,
            capability: 4
        })
    );
    ctx.set_message_info(MessageInfo::with(3, 65));
    assert_eq!(decode(&ctx), Err(ErrorCode::InvalidArgument));
    ctx.set_message_info(MessageInfo::with(3, 1).with_caps(1));
    assert!(decode(&ctx).is_ok(), "a call may carry capabilities");
    ctx.set_syscall_number(10);
    ctx.set_message_info(MessageInfo::with(3, 1).with_caps(1));
    assert_eq!(
        decode(&{
            let mut c = ctx;
            c.set_syscall_number(10);
            c
        }),
        Err(ErrorCode::InvalidArgument),
        "a reply may not"
    );
    // A receive ignores x1 (it is an output).
    ctx.set_syscall_number(7);
    assert!(decode(&ctx).is_ok());
}

#[test]
fn tcb_configure_arguments_are_checked() {
    let mut ctx = regs(Syscall::TcbConfigure.number(), 7, 5, 100);
    ctx.set_arg(ArgIndex::X4, NO_PROGRAM);
    assert_eq!(
        decode(&ctx),
        Ok(Call::TcbConfigure {
            tcb: 7,
            cnode: 5,
            priority: 100,
        })
    );
    ctx.set_arg(ArgIndex::X3, 256);
    assert_eq!(decode(&ctx), Err(ErrorCode::InvalidArgument), "priority");
    ctx.set_arg(ArgIndex::X3, 100);
    // No program selector of any shape (init's once were a program
    // number with a parameter above it): the kernel loads nothing for
    // user space.
    for x4 in [0x4d, 0x0358, 0x1c, 0, 0xff, NO_PROGRAM - 1] {
        ctx.set_arg(ArgIndex::X4, x4);
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
        ctx.set_arg(ArgIndex::X1, if x3 == NO_CAP { 0 } else { 0x7000_0000 });
        ctx.set_arg(ArgIndex::X4, x4);
        ctx.set_arg(ArgIndex::X5, pc);
        ctx.set_arg(ArgIndex::X6, sp);
        ctx.set_arg(ArgIndex::X7, 0x42);
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
        ctx.set_arg(ArgIndex::X1, x1);
        ctx.set_arg(ArgIndex::X4, NO_CAP);
        ctx.set_arg(ArgIndex::X5, 0x40_0000);
        ctx.set_arg(ArgIndex::X6, 0x80_0000);
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
    ctx.set_arg(ArgIndex::X4, u64::from(Rights::WRITE.raw()));
    ctx.set_arg(ArgIndex::X5, 0xb);
    ctx.set_arg(ArgIndex::X6, 1);
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
    ctx.set_arg(ArgIndex::X6, 2);
    assert_eq!(decode(&ctx), Err(ErrorCode::InvalidArgument));
    ctx.set_arg(ArgIndex::X6, 0);
    ctx.set_arg(ArgIndex::X4, 0x100);
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
        decode(&regs(29, 6, 0x40_0000, 16384)),
        Ok(Call::FilterLoad {
            filter: 6,
            address: 0x40_0000,
            len: 16384
        })
    );
    assert_eq!(
        decode(&regs(29, 6, 0x40_0000, 16385)),
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
            server: None,
            server_thread: 0
        })
    );
    attach.set_arg(ArgIndex::X4, 1);
    attach.set_arg(ArgIndex::X5, 9);
    assert_eq!(
        decode(&attach),
        Ok(Call::AttachFilter {
            tcb: 7,
            filter: 8,
            server: Some(2),
            server_thread: 9
        })
    );
    attach.set_arg(ArgIndex::X4, 2);
    assert_eq!(decode(&attach), Err(ErrorCode::InvalidArgument));
    // A handover names the filter, the endpoint and the server's TCB.
    assert_eq!(
        decode(&regs(Syscall::FilterSetServer.number(), 7, 8, 9)),
        Ok(Call::FilterSetServer {
            filter: 7,
            endpoint: 8,
            thread: 9
        })
    );
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
    ctx.set_arg(ArgIndex::X4, 2);
    ctx.set_arg(ArgIndex::X5, 0xab);
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
    ctx.set_arg(ArgIndex::X4, 3);
    assert_eq!(decode(&ctx), Err(ErrorCode::InvalidArgument));
}

#[test]
fn frame_map_arguments_are_checked() {
    use abi::vspace::{FRAME_MAP_END, FRAME_MAP_START, USER_MAP_END};
    let map = |va: u64, rights: u64| {
        let mut ctx = regs(31, 6, 4, va);
        ctx.set_arg(ArgIndex::X4, rights);
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
        ctx.set_arg(ArgIndex::X4, args[2]);
        ctx.set_arg(ArgIndex::X5, args[3]);
        ctx.set_arg(ArgIndex::X6, args[4]);
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

/// `lean_entry_takes`'s bit test is the list it is built from.
#[test]
fn the_bit_test_agrees_with_the_list_for_every_number() {
    for number in 0..200u64 {
        let expected = Syscall::from_number(number)
            .is_none_or(|syscall| !reads_or_writes_whole_context(syscall));
        assert_eq!(lean_entry_takes(number), expected, "number {number}");
    }
    assert!(lean_entry_takes(u64::MAX));
    assert!(!lean_entry_takes(Syscall::TcbWriteRegister.number()));
    assert!(lean_entry_takes(Syscall::CapCopy.number()));
}
