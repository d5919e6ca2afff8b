//! Syscall stubs: the only place user space executes `svc`.
//!
//! Each stub follows the register convention in `abi` (x8 = number,
//! x0 = capability, x1 = message info, x2..x7 = arguments; x0 = error code
//! on return).

use abi::{ErrorCode, Syscall};

/// The raw result of a syscall: the error code register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawResult(pub u64);

impl RawResult {
    /// `Ok(())` for success, else the decoded error (unknown codes map to
    /// `InvalidSyscall`, which no successful call returns).
    pub fn into_result(self) -> Result<(), ErrorCode> {
        match ErrorCode::from_raw(self.0) {
            Some(ErrorCode::Ok) => Ok(()),
            Some(code) => Err(code),
            None => Err(ErrorCode::InvalidSyscall),
        }
    }
}

/// Makes syscall `number` with `x0`, `x2`, `x3` and returns x0.
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn raw_syscall(number: u64, x0: u64, x2: u64, x3: u64) -> RawResult {
    let result: u64;
    // SAFETY: `svc` enters the kernel, which reads the registers given
    // here and writes x0 (and may write x1..x7 for future calls, hence
    // their clobbers, and x9..x18 for `Call` and `ReplyRecv`, docs/abi.md);
    // it never touches this program's memory.
    unsafe {
        core::arch::asm!(
            "svc #0",
            inout("x0") x0 => result,
            inout("x1") 0u64 => _,
            inout("x2") x2 => _,
            inout("x3") x3 => _,
            out("x4") _, out("x5") _, out("x6") _, out("x7") _,
            in("x8") number,
            out("x9") _, out("x10") _, out("x11") _, out("x12") _, out("x13") _,
            out("x14") _, out("x15") _, out("x16") _, out("x17") _, out("x18") _,
            options(nostack),
        );
    }
    RawResult(result)
}

/// On the host (unit tests of code using the SDK) there is no kernel.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn raw_syscall(_number: u64, _x0: u64, _x2: u64, _x3: u64) -> RawResult {
    RawResult(ErrorCode::InvalidSyscall.raw())
}

/// The index of the CPU this thread runs on (0 is the boot CPU): the
/// kernel keeps it in TPIDRRO_EL0, which EL0 may read. It can change at
/// any moment after it is read (`Tcb::set_affinity` moves a thread; only
/// the thread's own affinity decides where it runs).
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn this_cpu() -> u64 {
    let cpu: u64;
    // SAFETY: reading TPIDRRO_EL0 at EL0 is allowed and has no effect.
    unsafe {
        core::arch::asm!("mrs {0}, tpidrro_el0", out(reg) cpu, options(nomem, nostack, preserves_flags))
    };
    cpu
}

/// On the host there is one CPU.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn this_cpu() -> u64 {
    0
}

/// Does nothing in the kernel: measures the entry path.
pub fn null() -> Result<(), ErrorCode> {
    raw_syscall(Syscall::Null.number(), 0, 0, 0).into_result()
}

/// Lets another ready thread of the same priority run.
pub fn yield_now() -> Result<(), ErrorCode> {
    raw_syscall(Syscall::Yield.number(), 0, 0, 0).into_result()
}

/// Ends the calling thread with `status`.
pub fn exit(status: i32) -> ! {
    raw_syscall(Syscall::Exit.number(), 0, status as i64 as u64, 0);
    // The kernel never returns from exit; if it did, stop here.
    loop {
        core::hint::spin_loop();
    }
}

/// Ends the calling thread with a full 64-bit status.
pub fn exit_with(status: i64) -> ! {
    raw_syscall(Syscall::Exit.number(), 0, status as u64, 0);
    loop {
        core::hint::spin_loop();
    }
}

/// Prints `text` (at most `abi::DEBUG_PRINT_MAX` bytes) on the kernel
/// console.
pub fn debug_print(text: &[u8]) -> Result<(), ErrorCode> {
    debug_print_raw(text.as_ptr() as u64, text.len() as u64)
}

/// `debug_print` with an arbitrary pointer and length (for tests of the
/// kernel's checks), through the console capability every task gets in
/// `abi::task::CONSOLE_SLOT`.
pub fn debug_print_raw(address: u64, len: u64) -> Result<(), ErrorCode> {
    raw_syscall(
        Syscall::DebugPrint.number(),
        abi::task::CONSOLE_SLOT,
        address,
        len,
    )
    .into_result()
}

/// Bench image only: turn the syscall floor on or off for this thread
/// (see `abi::Syscall::BenchFloor`; off says `Interrupted` when an
/// interrupt ended the floor first).
pub fn bench_floor(on: bool) -> Result<(), ErrorCode> {
    raw_syscall(Syscall::BenchFloor.number(), 0, u64::from(on), 0).into_result()
}

/// The CNode operations, through the CNode capability at `cnode`.
pub mod cnode {
    use abi::cap::Rights;
    use abi::{ErrorCode, Syscall};

    fn op(
        number: Syscall,
        cnode: u64,
        x2: u64,
        x3: u64,
        x4: u64,
        x5: u64,
        x6: u64,
    ) -> Result<(), ErrorCode> {
        super::raw_syscall6(number.number(), cnode, [x2, x3, x4, x5, x6]).into_result()
    }

    /// Copies the capability at `source` to the empty slot `target`.
    pub fn copy(cnode: u64, source: u64, target: u64) -> Result<(), ErrorCode> {
        op(Syscall::CapCopy, cnode, source, target, 0, 0, 0)
    }

    /// Mints `source` into `target` with `rights` and maybe a badge.
    pub fn mint(
        cnode: u64,
        source: u64,
        target: u64,
        rights: Rights,
        badge: Option<u64>,
    ) -> Result<(), ErrorCode> {
        mint_with(Syscall::CapMint, cnode, source, target, rights, badge)
    }

    /// Mints `source` of the caller's own CSpace into the empty slot
    /// `target` of the CNode capability `cnode` (another CNode, e.g. the
    /// CSpace of a thread being set up) with `rights` and maybe a badge.
    pub fn mint_into(
        cnode: u64,
        source: u64,
        target: u64,
        rights: Rights,
        badge: Option<u64>,
    ) -> Result<(), ErrorCode> {
        mint_with(Syscall::CapMintInto, cnode, source, target, rights, badge)
    }

    /// `CapMint` or `CapMintInto`: the same registers.
    fn mint_with(
        syscall: Syscall,
        cnode: u64,
        source: u64,
        target: u64,
        rights: Rights,
        badge: Option<u64>,
    ) -> Result<(), ErrorCode> {
        let (badge, has_badge) = badge.map_or((0, 0), |b| (b, 1));
        op(
            syscall,
            cnode,
            source,
            target,
            rights.raw().into(),
            badge,
            has_badge,
        )
    }

    /// Moves the capability at `source` to the empty slot `target`.
    pub fn move_cap(cnode: u64, source: u64, target: u64) -> Result<(), ErrorCode> {
        op(Syscall::CapMove, cnode, source, target, 0, 0, 0)
    }

    /// Moves `source` of the caller's own CSpace to `target` of the CNode
    /// `cnode` names, keeping its place in the derivation tree.
    pub fn move_into(cnode: u64, source: u64, target: u64) -> Result<(), ErrorCode> {
        op(Syscall::CapMoveInto, cnode, source, target, 0, 0, 0)
    }

    /// Deletes the capability at `slot` and everything derived from it.
    pub fn delete(cnode: u64, slot: u64) -> Result<(), ErrorCode> {
        op(Syscall::CapDelete, cnode, slot, 0, 0, 0, 0)
    }

    /// Deletes everything derived from the capability at `slot`.
    pub fn revoke(cnode: u64, slot: u64) -> Result<(), ErrorCode> {
        op(Syscall::CapRevoke, cnode, slot, 0, 0, 0, 0)
    }

    /// `ReplySave`: the reply this thread owes (it received a `Call`)
    /// becomes a Reply capability in the empty slot `slot`.
    pub fn reply_save(cnode: u64, slot: u64) -> Result<(), ErrorCode> {
        op(Syscall::ReplySave, cnode, slot, 0, 0, 0, 0)
    }
}

/// Makes syscall `number` with `x0` and arguments `x2..x6`; returns x0.
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn raw_syscall6(number: u64, x0: u64, args: [u64; 5]) -> RawResult {
    let result: u64;
    // SAFETY: as `raw_syscall`: the kernel reads these registers and
    // writes x0..x7 (and x9..x18 for `Call` and `ReplyRecv`) only.
    unsafe {
        core::arch::asm!(
            "svc #0",
            inout("x0") x0 => result,
            inout("x1") 0u64 => _,
            inout("x2") args[0] => _,
            inout("x3") args[1] => _,
            inout("x4") args[2] => _,
            inout("x5") args[3] => _,
            inout("x6") args[4] => _,
            out("x7") _,
            in("x8") number,
            out("x9") _, out("x10") _, out("x11") _, out("x12") _, out("x13") _,
            out("x14") _, out("x15") _, out("x16") _, out("x17") _, out("x18") _,
            options(nostack),
        );
    }
    RawResult(result)
}

/// On the host there is no kernel.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn raw_syscall6(_number: u64, _x0: u64, _args: [u64; 5]) -> RawResult {
    RawResult(ErrorCode::InvalidSyscall.raw())
}

/// Makes `count` objects of `object_type` (size parameter `size`) from the
/// Untyped capability at `untyped`, their capabilities at `target ..` in
/// this thread's CNode.
pub fn retype(
    untyped: u64,
    object_type: abi::cap::CapType,
    size: u64,
    target: u64,
    count: u64,
) -> Result<(), ErrorCode> {
    raw_syscall6(
        Syscall::Retype.number(),
        untyped,
        [u64::from(object_type.raw()), size, target, count, 0],
    )
    .into_result()
}

/// Makes `count` Frames of device memory from the device Untyped at
/// `device`, their records paid by the RAM Untyped at `payer` (`x6`),
/// their capabilities at `target ..` in this thread's CNode. The pages are
/// the device's, lowest first, never zeroed; `FrameMap` maps them as
/// Device memory, never executable.
pub fn retype_device_frames(
    device: u64,
    payer: u64,
    target: u64,
    count: u64,
) -> Result<(), ErrorCode> {
    retype_paid_by(device, abi::cap::CapType::Frame, 0, target, count, payer)
}

/// `Retype` with `x6` = `payer`, for any type (a device Untyped makes
/// only Frames: the other types are `InvalidArgument`, as tests check).
pub fn retype_paid_by(
    untyped: u64,
    object_type: abi::cap::CapType,
    size: u64,
    target: u64,
    count: u64,
    payer: u64,
) -> Result<(), ErrorCode> {
    raw_syscall6(
        Syscall::Retype.number(),
        untyped,
        [u64::from(object_type.raw()), size, target, count, payer],
    )
    .into_result()
}

/// `TcbSetSpace` with raw registers: the TCB capability `tcb`, the
/// VSpace capability `vspace`, the IPC buffer Frame capability
/// `ipc_buffer` and the fault endpoint capability `fault_endpoint` (each
/// `abi::tcb::NO_CAP` for none), where the buffer is mapped
/// (`ipc_buffer_address`, 0 without one), the first `pc`, `sp` and `x0`.
/// See `crate::tcb::Tcb::set_space` for the typed form.
pub fn tcb_set_space(
    tcb: u64,
    vspace: u64,
    ipc_buffer: u64,
    ipc_buffer_address: u64,
    fault_endpoint: u64,
    [pc, sp, x0]: [u64; 3],
) -> Result<(), ErrorCode> {
    let x = raw_syscall_registers(
        Syscall::TcbSetSpace.number(),
        [
            tcb,
            ipc_buffer_address,
            vspace,
            ipc_buffer,
            fault_endpoint,
            pc,
            sp,
            x0,
        ],
    );
    RawResult(x[0]).into_result()
}

/// Makes syscall `number` with every argument register `x0..x7` as given
/// and returns `x0..x8` as the kernel left them (for the fuzzer and for
/// tests that need arbitrary register contents).
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn raw_syscall_registers(number: u64, args: [u64; 8]) -> [u64; 9] {
    let mut x = [
        args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], number,
    ];
    // SAFETY: a syscall reads and writes x0..x8 (and x9..x18 for `Call`
    // and `ReplyRecv`, declared clobbered) and nothing else of this
    // program's state (the IPC buffer page aside, which it owns).
    unsafe {
        core::arch::asm!(
            "svc #0",
            inout("x0") x[0], inout("x1") x[1], inout("x2") x[2],
            inout("x3") x[3], inout("x4") x[4], inout("x5") x[5],
            inout("x6") x[6], inout("x7") x[7], inout("x8") x[8],
            out("x9") _, out("x10") _, out("x11") _, out("x12") _, out("x13") _,
            out("x14") _, out("x15") _, out("x16") _, out("x17") _, out("x18") _,
            options(nostack),
        )
    };
    x
}

/// On the host there is no kernel: every call fails with `InvalidSyscall`.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn raw_syscall_registers(number: u64, args: [u64; 8]) -> [u64; 9] {
    let mut x = [
        args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], number,
    ];
    x[0] = ErrorCode::InvalidSyscall.raw();
    x
}

/// `raw_syscall_registers` with `x9` (which a syscall other than `Call`
/// and `ReplyRecv` never changes) holding `x9` too; returns `x0..x8` and `x9` as the thread has them
/// after the call (for tests in which another thread writes this one's
/// `x9` through its TCB while it is stopped in the call).
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn raw_syscall_registers_and_x9(number: u64, args: [u64; 8], x9: u64) -> ([u64; 9], u64) {
    let mut x = [
        args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], number,
    ];
    let mut x9 = x9;
    // SAFETY: as `raw_syscall_registers`; x9 is declared read and written
    // so the compiler keeps nothing of its own there.
    unsafe {
        core::arch::asm!(
            "svc #0",
            inout("x0") x[0], inout("x1") x[1], inout("x2") x[2],
            inout("x3") x[3], inout("x4") x[4], inout("x5") x[5],
            inout("x6") x[6], inout("x7") x[7], inout("x8") x[8],
            inout("x9") x9,
            out("x10") _, out("x11") _, out("x12") _, out("x13") _, out("x14") _,
            out("x15") _, out("x16") _, out("x17") _, out("x18") _,
            options(nostack),
        )
    };
    (x, x9)
}

/// On the host there is no kernel: the call fails with `InvalidSyscall`.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn raw_syscall_registers_and_x9(number: u64, args: [u64; 8], x9: u64) -> ([u64; 9], u64) {
    (raw_syscall_registers(number, args), x9)
}

/// `debug_print_raw` through the console capability at `console`.
pub fn debug_print_raw_via(console: u64, address: u64, len: u64) -> Result<(), ErrorCode> {
    raw_syscall(Syscall::DebugPrint.number(), console, address, len).into_result()
}

/// Binds the IrqHandler capability `handler` to the notification
/// capability `notification`: each interrupt signals it.
pub fn irq_set_notification(handler: u64, notification: u64) -> Result<(), ErrorCode> {
    raw_syscall(
        Syscall::IrqSetNotification.number(),
        handler,
        notification,
        0,
    )
    .into_result()
}

/// Makes an IrqHandler for interrupt `intid` in the empty slot `slot` of
/// the caller's own CNode, through the IrqControl capability `control`
/// (the root task's is `abi::bootinfo::ROOT_IRQ_CONTROL_SLOT`). Refused:
/// `InvalidArgument` for an interrupt the GIC does not have or a slot
/// past the CNode, `Denied` for one the kernel keeps (SGIs, its tick,
/// its console's), `SlotOccupied`, and `IrqInUse` while the interrupt has
/// another IrqHandler.
pub fn irq_control_get(control: u64, intid: u32, slot: u64) -> Result<(), ErrorCode> {
    raw_syscall(
        Syscall::IrqControlGet.number(),
        control,
        u64::from(intid),
        slot,
    )
    .into_result()
}

/// Acknowledges the interrupt of `handler`: it may arrive again.
pub fn irq_ack(handler: u64) -> Result<(), ErrorCode> {
    raw_syscall(Syscall::IrqAck.number(), handler, 0, 0).into_result()
}

/// Arms the EL1 physical timer to fire `ticks` counter ticks from now
/// (`0` disarms it), through `handler`, the IrqHandler for its interrupt:
/// the kernel programs the timer for its holder (EL0 cannot reach it).
pub fn irq_set_timer(handler: u64, ticks: u64) -> Result<(), ErrorCode> {
    raw_syscall(Syscall::IrqSetTimer.number(), handler, ticks, 0).into_result()
}
