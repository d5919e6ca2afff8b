//! EL0 and the devices it must not program (issue 13, points 5 and 6):
//! the EL1 physical timer belongs to the holder of its IrqHandler, which
//! arms it through the kernel (`IrqSetTimer`), and of the PMU EL0 may only
//! read the cycle counter. Every other access is an attack: a thread with
//! no capabilities disarming a timer someone else holds, firing an
//! interrupt nobody asked for, or stopping and resetting the counter every
//! benchmark reads. Each must trap (exception class 0x18) and change
//! nothing. Each program returns the number of its first failed check.

use crate::programs::{CONSOLE_SLOT, ENDPOINT_SLOT};
use abi::ErrorCode;
use sdk::ipc::{self, Cptr};
use sdk::probe;
use sdk::supervision::{self, FaultMessage, FaultReply};
use sdk::syscall::{irq_ack, irq_set_notification, irq_set_timer};

/// Exception class of a trapped MSR/MRS.
const TRAPPED_SYSTEM_REGISTER: u64 = 0x18;

/// The ESR ISS of a trapped MSR/MRS of the register `op0, op1, CRn, CRm,
/// op2` (`read`: an MRS), without the transfer register `Rt` (bits 9..5,
/// the compiler's choice).
const fn sysreg(op0: u64, op1: u64, crn: u64, crm: u64, op2: u64, read: bool) -> u64 {
    (op0 << 20) | (op2 << 17) | (op1 << 14) | (crn << 10) | (crm << 1) | read as u64
}

/// The ISS bits `sysreg` names: ISS[21:0] but `Rt`.
const SYSREG_ISS_MASK: u64 = ((1 << 22) - 1) & !(0x1f << 5);

/// One probe of `prober`, in order: what it touches, the ISS its trap
/// must carry.
const PROBES: [(&str, u64); 9] = [
    ("write CNTP_TVAL_EL0", sysreg(3, 3, 14, 2, 0, false)),
    ("write CNTP_CTL_EL0", sysreg(3, 3, 14, 2, 1, false)),
    ("read CNTP_CTL_EL0", sysreg(3, 3, 14, 2, 1, true)),
    ("read CNTP_CVAL_EL0", sysreg(3, 3, 14, 2, 2, true)),
    ("read CNTPCT_EL0", sysreg(3, 3, 14, 0, 1, true)),
    ("write PMCR_EL0", sysreg(3, 3, 9, 12, 0, false)),
    ("read PMCR_EL0", sysreg(3, 3, 9, 12, 0, true)),
    ("write PMCNTENCLR_EL0", sysreg(3, 3, 9, 12, 2, false)),
    ("write PMCCNTR_EL0", sysreg(3, 3, 9, 13, 0, false)),
];

/// `TimerRegisterWriter`'s IrqHandler: one for another interrupt than the
/// physical timer's.
const OTHER_IRQ: u64 = ENDPOINT_SLOT;

/// Refusals of `IrqSetTimer`, then a write of CNTP_CTL_EL0 from EL0: the
/// thread must fault there (the case expects a trapped system register
/// access), so returning at all is a failure.
pub fn timer_register_writer() -> i32 {
    expect!(
        1,
        irq_set_timer(OTHER_IRQ, 1),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(
        2,
        irq_set_timer(CONSOLE_SLOT, 1),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(3, irq_set_timer(9, 1), Err(ErrorCode::InvalidCapability));
    // Disarm a timer this thread holds no capability to.
    probe::write_physical_timer_control(0);
    sdk::println!("CNTP_CTL_EL0 was written from EL0");
    4
}

/// Reads the cycle counter (EL0 may), then writes PMCR_EL0: the thread
/// must fault there.
pub fn pmu_writer() -> i32 {
    let before = sdk::timing::now();
    probe::spin_ms(1);
    expect!(1, sdk::timing::now() > before, true);
    // Stop and reset every counter.
    probe::write_pmu_control(1 << 2);
    sdk::println!("PMCR_EL0 was written from EL0");
    2
}

/// The holder's capabilities: the IrqHandler of the physical timer (read
/// and write; read only), the notification it is bound to (badge
/// `TIMER_BITS`), the endpoint the prober's faults arrive on.
const HANDLER: u64 = ENDPOINT_SLOT;
const NOTIFICATION: u64 = 3;
const FAULTS: Cptr = Cptr(4);
const HANDLER_READ_ONLY: u64 = 5;
/// The badge of the holder's notification capability.
pub const TIMER_BITS: u64 = 0x100;

/// Holds the physical timer's IrqHandler: checks the refusals of
/// `IrqSetTimer`, answers each of the prober's trapped accesses (class,
/// register, direction) by resuming it after the instruction, then checks
/// the prober changed nothing (no interrupt came although it "armed" the
/// timer) and that the timer is armed, disarmed and armed again through
/// the capability.
pub fn timer_holder() -> i32 {
    let (_, frequency) = probe::counter();
    let millisecond = frequency / 1000;
    expect!(
        1,
        irq_set_timer(HANDLER_READ_ONLY, millisecond),
        Err(ErrorCode::MissingRights)
    );
    expect!(
        2,
        irq_set_timer(FAULTS.0, millisecond),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        3,
        irq_set_timer(12, millisecond),
        Err(ErrorCode::InvalidCapability)
    );
    expect!(4, irq_set_notification(HANDLER, NOTIFICATION), Ok(()));
    let mut answer = None;
    for (index, &(what, iss)) in PROBES.iter().enumerate() {
        let check = 10 * (index as i32 + 1);
        let received = match answer {
            None => ipc::recv(FAULTS),
            Some(answer) => ipc::reply_recv(FAULTS, &answer),
        };
        let Ok(fault) = received else {
            sdk::println!("no fault for the probe {what:?}");
            return check;
        };
        let Some(FaultMessage { class, esr, pc, .. }) = supervision::fault_of(&fault.message)
        else {
            return check + 1;
        };
        expect!(check + 2, class, TRAPPED_SYSTEM_REGISTER);
        if esr & SYSREG_ISS_MASK != iss {
            sdk::println!("the probe {what:?} trapped with ESR {esr:#x}, not ISS {iss:#x}");
            return check + 3;
        }
        answer = Some(supervision::fault_reply(FaultReply::SetPc(pc + 4)));
    }
    let Some(last) = answer else {
        return 99;
    };
    expect!(100, ipc::reply(&last), Ok(()));
    // The prober wrote CNTP_TVAL_EL0 = 1 and CNTP_CTL_EL0 = 1 (armed to
    // fire at once): nothing came.
    expect!(101, ipc::poll(Cptr(NOTIFICATION)), Ok(0));
    // Through the capability the timer works.
    expect!(102, irq_set_timer(HANDLER, millisecond), Ok(()));
    expect!(103, ipc::wait(Cptr(NOTIFICATION)), Ok(TIMER_BITS));
    expect!(104, irq_set_timer(HANDLER, 0), Ok(()));
    expect!(105, irq_ack(HANDLER), Ok(()));
    // Armed, then disarmed (ticks 0) before it fires: it never does.
    // QEMU follows host time: a host that stalls it between the two calls
    // for the 2 ms lets the timer fire first, which the counter shows;
    // then that attempt proves nothing and the next one is made.
    let mut disarmed_in_time = false;
    for _ in 0..5 {
        let (before, _) = probe::counter();
        expect!(106, irq_set_timer(HANDLER, 2 * millisecond), Ok(()));
        expect!(107, irq_set_timer(HANDLER, 0), Ok(()));
        let (after, _) = probe::counter();
        if after.wrapping_sub(before) < 2 * millisecond {
            disarmed_in_time = true;
            break;
        }
        // It may have fired: take it and start again.
        probe::spin_ms(5);
        let _ = ipc::poll(Cptr(NOTIFICATION));
        expect!(113, irq_ack(HANDLER), Ok(()));
    }
    expect!(114, disarmed_in_time, true);
    probe::spin_ms(20);
    expect!(108, ipc::poll(Cptr(NOTIFICATION)), Ok(0));
    // And armed again, it fires again.
    expect!(109, irq_set_timer(HANDLER, millisecond), Ok(()));
    expect!(110, ipc::wait(Cptr(NOTIFICATION)), Ok(TIMER_BITS));
    expect!(111, irq_set_timer(HANDLER, 0), Ok(()));
    expect!(112, irq_ack(HANDLER), Ok(()));
    0
}

/// Holds no capability but the console: touches the physical timer and
/// the PMU (each access trapped and resumed after by the holder, in the
/// order of `PROBES`), then reads what EL0 may read.
pub fn device_prober() -> i32 {
    probe::write_physical_timer_value(1);
    probe::write_physical_timer_control(1);
    let _ = probe::read_physical_timer_control();
    let _ = probe::read_physical_timer_compare();
    let _ = probe::read_physical_counter();
    probe::write_pmu_control(1 << 2);
    let _ = probe::read_pmu_control();
    probe::write_pmu_counter_disable(1 << 31);
    probe::write_cycle_counter(0);
    // Still readable: the virtual counter and the cycle counter, which
    // the writes above did not stop.
    let (start, frequency) = probe::counter();
    expect!(1, frequency > 0, true);
    let cycles = sdk::timing::now();
    probe::spin_ms(1);
    expect!(2, probe::counter().0 > start, true);
    expect!(3, sdk::timing::now() > cycles, true);
    0
}
