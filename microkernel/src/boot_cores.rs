//! Starting the other cores (`arch::cpu::smp`) and what each runs first
//! (`secondary_main`): the kernel binary's glue for them, out of
//! `main.rs` to keep each file one idea.

use crate::{go, locked, STATE};
use arch::boards::{BoardInfo, CpuStart, Loader, RESCHEDULE_SGI};
use arch::cpu::cross_core::Waiting;
use arch::cpu::smp::{self, Start, StartError};
use arch::cpu::{early_map, power, registers, timer};
use arch::drivers::gicv2::GicV2;
use arch::layout::MAX_CPUS;
use core::fmt::Write;
use core::sync::atomic::{AtomicU64, Ordering};

/// The GIC's distributor and CPU interface in the device window, for the
/// secondaries, which set up their own banked registers without the
/// kernel's state (`secondary_main`). Written by the boot core before it
/// starts them.
pub(crate) static GIC_WINDOW: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
/// How long the boot core waits for a core it started to say it is
/// online, or to take an SGI, in counter ticks per second's fraction.
const CORE_START_TIMEOUT_DIVISOR: u64 = 10;

/// How many cores to run: `portcullis.cpus=N` (1 to `MAX_CPUS`), else
/// as many as the board has, up to `MAX_CPUS`.
fn cores_wanted(info: &BoardInfo) -> usize {
    let Some(value) = info.boot_option("portcullis.cpus") else {
        return MAX_CPUS;
    };
    match value.parse::<usize>() {
        Ok(n) if (1..=MAX_CPUS).contains(&n) => n,
        _ => {
            kprintln!("[kernel] portcullis.cpus={value} ignored: 1 to {MAX_CPUS} cores");
            MAX_CPUS
        }
    }
}

/// Starts the board's other cores, one at a time, each as the next core
/// index, and waits (bounded) for each to say it is online and to take
/// a reschedule SGI; then says how many cores run. A core that does not
/// come up is named, and the kernel goes on without it.
pub(crate) fn start_secondaries(info: &BoardInfo, loader: Loader, frequency: u64) {
    let wanted = cores_wanted(info);
    let boot_mpidr = smp::this_mpidr();
    let mut running = 1;
    let mut methods: heapless::Vec<&'static str, 3> = heapless::Vec::new();
    let others = info.cpus.iter().filter(|c| c.mpidr != boot_mpidr);
    for (cpu, entry) in (1..wanted).zip(others) {
        // A loader that started every core at `_start` (QEMU raspi4b's
        // ELF, at EL3) left them in the kernel's park, whatever the tree
        // says the firmware would do.
        let how = match (loader, entry.start, info.psci) {
            (Loader::Raspi4bElf, _, _) => Some(Start::Park),
            (_, CpuStart::Psci, Some(conduit)) => Some(Start::Psci(conduit)),
            (_, CpuStart::SpinTable { release_address }, _) => {
                Some(Start::SpinTable(release_address))
            }
            _ => None,
        };
        let Some(how) = how else {
            kprintln!(
                "[kernel] core {cpu} (MPIDR {:#x}) did not start: no way to start it",
                entry.mpidr
            );
            continue;
        };
        if let Err(error) = smp::start(cpu, entry.mpidr, how) {
            let why = match error {
                StartError::Psci(code) => {
                    let mut text: heapless::String<32> = heapless::String::new();
                    let _ = write!(text, "PSCI CPU_ON error {code}");
                    text
                }
                StartError::BadReleaseAddress => {
                    "unusable spin-table address".try_into().unwrap_or_default()
                }
                StartError::NotParked => "not in the boot park".try_into().unwrap_or_default(),
            };
            kprintln!(
                "[kernel] core {cpu} (MPIDR {:#x}) did not start: {why}",
                entry.mpidr
            );
            continue;
        }
        if !wait_until(frequency, || smp::is_online(cpu)) {
            kprintln!(
                "[kernel] core {cpu} (MPIDR {:#x}) did not start: not online after {} ms ({})",
                entry.mpidr,
                1000 / CORE_START_TIMEOUT_DIVISOR,
                how.name()
            );
            continue;
        }
        // The one interrupt a core is sent: it must arrive.
        let sent = STATE.with(|state| state.machine.signal_reschedule(cpu));
        if !sent || !wait_until(frequency, || smp::reschedules(cpu) > 0) {
            kprintln!("[kernel] core {cpu} is online but took no reschedule SGI");
        }
        running += 1;
        if !methods.contains(&how.name()) {
            let _ = methods.push(how.name());
        }
    }
    let mut line: heapless::String<128> = heapless::String::new();
    let plural = if running == 1 { "" } else { "s" };
    let _ = write!(line, "[kernel] {running} core{plural} running");
    for (i, method) in methods.iter().enumerate() {
        let _ = write!(line, "{}{method}", if i == 0 { " (" } else { ", " });
    }
    if !methods.is_empty() {
        let _ = write!(line, ")");
    }
    kprintln!("{line}");
}

/// Spins until `done` or a tenth of a second of counter time has passed;
/// returns whether `done` said so.
fn wait_until(frequency: u64, done: impl Fn() -> bool) -> bool {
    let start = registers::counter();
    let limit = frequency / CORE_START_TIMEOUT_DIVISOR;
    loop {
        if done() {
            return true;
        }
        if registers::counter().wrapping_sub(start) > limit {
            return done();
        }
        core::hint::spin_loop();
    }
}

/// A secondary core, from `boot.s` at the link address on its own stack
/// (TPIDR_EL1 and its record set, TPIDRRO_EL0 its index: `this_cpu`
/// works). Sets up what each core has of its own (its GIC interface and
/// banked SGIs and PPIs, its timer tick, PMU cycle counter, EL0 counter
/// access, debug lock), says it is online, then runs the kernel: it idles
/// until a thread is made ready in its run queue (the reschedule SGI that
/// says so wakes it). The boot core waits for the first SGI before it
/// starts the root task, so the kernel's own state is untouched until
/// then.
#[no_mangle]
extern "C" fn secondary_main(cpu: usize) -> ! {
    // The boot identity map has done its job here too.
    early_map::remove_identity_map();
    let (distributor, cpu_interface) = (
        GIC_WINDOW[0].load(Ordering::Relaxed),
        GIC_WINDOW[1].load(Ordering::Relaxed),
    );
    // SAFETY: the boot core mapped both windows for good before it
    // started this core (`start_devices`); this handle only touches this
    // core's banked registers and its own CPU interface.
    let gic = unsafe { GicV2::new(distributor, cpu_interface) };
    gic.init_this_cpu();
    gic.enable(timer::VIRTUAL_TIMER_INTID);
    gic.enable(RESCHEDULE_SGI);
    registers::enable_cycle_counter();
    registers::allow_user_counter();
    registers::unlock_debug();
    smp::mark_online(cpu);
    // The boot core's check that this core takes SGIs: answered here,
    // before the kernel's state is touched (the boot core holds none of
    // it yet, but it may still be starting the next core).
    while smp::reschedules(cpu) == 0 {
        power::wait_for_interrupt();
        while let Some(irq) = gic.acknowledge() {
            if irq.id() == RESCHEDULE_SGI {
                smp::note_reschedule(cpu);
            }
            gic.end_of_interrupt(irq);
        }
    }
    let resume = locked(Waiting::Other, |state| {
        state.kernel.core_online(cpu);
        let machine = &mut state.machine;
        machine.tick_due[cpu] = registers::counter().wrapping_add(machine.tick_interval);
        timer::arm_at(machine.tick_due[cpu]);
        state.kernel.start_core(machine)
    });
    go(resume)
}
