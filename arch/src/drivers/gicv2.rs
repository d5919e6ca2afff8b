//! GICv2 (QEMU virt with `gic-version=2`) and GIC-400 (Raspberry Pi 4).
//!
//! The kernel uses the non-secure view: on the Pi the firmware's armstub
//! (or our EL3 boot path) has put every interrupt in group 1. At init the
//! distributor is reset to a known state (`crate::gic`).
//!
//! Every core has its own CPU interface at the same address, and its own
//! bank of the distributor's SGI and PPI registers (enables, pending,
//! priorities, GICD_ITARGETSR0..7): the boot core resets the distributor
//! (`init`), each secondary only its own bank and interface
//! (`init_this_cpu`). Device interrupts (SPIs) stay aimed at the boot core.

use crate::gic::{distributor_reset, interrupt_lines, DistributorWrite};
use tock_registers::interfaces::{Readable, Writeable};
use tock_registers::register_structs;
use tock_registers::registers::{ReadOnly, ReadWrite, WriteOnly};

use crate::cpu::smp::this_cpu;
use crate::layout::MAX_CPUS;
use core::sync::atomic::{AtomicU8, Ordering};

register_structs! {
    DistributorRegisters {
        (0x000 => control: ReadWrite<u32>),
        (0x004 => interrupt_type: ReadOnly<u32>),
        (0x008 => _reserved0),
        (0x100 => set_enable: [ReadWrite<u32>; 32]),
        (0x180 => clear_enable: [ReadWrite<u32>; 32]),
        (0x200 => _reserved1),
        (0x280 => clear_pending: [WriteOnly<u32>; 32]),
        (0x300 => _reserved2),
        (0x380 => clear_active: [WriteOnly<u32>; 32]),
        (0x400 => priority: [ReadWrite<u32>; 255]),
        (0x7fc => _reserved3),
        (0x800 => targets: [ReadWrite<u32>; 255]),
        (0xbfc => _reserved4),
        (0xf00 => software_interrupt: WriteOnly<u32>),
        (0xf04 => _reserved5),
        (0xf10 => clear_sgi_pending: [WriteOnly<u32>; 4]),
        (0xf20 => @END),
    }
}

register_structs! {
    CpuInterfaceRegisters {
        (0x00 => control: ReadWrite<u32>),
        (0x04 => priority_mask: ReadWrite<u32>),
        (0x08 => binary_point: ReadWrite<u32>),
        (0x0c => acknowledge: ReadOnly<u32>),
        (0x10 => end_of_interrupt: WriteOnly<u32>),
        (0x14 => @END),
    }
}

/// Interrupt IDs at and above this are spurious (1022, 1023).
const SPURIOUS_FIRST: u32 = 1020;
/// Default priority for enabled interrupts (lower is more urgent).
const DEFAULT_PRIORITY: u32 = 0xa0;
/// Let every priority above the lowest through.
const PRIORITY_MASK_ALL: u32 = 0xf0;

/// Each core's CPU-interface bit in a target list, by core index (0: not
/// set up yet). On GICv2 a core's interface number need not be its index:
/// each core reads its own (GICD_ITARGETSR0 is banked) when it sets its
/// interface up.
static CPU_INTERFACE_MASKS: [AtomicU8; MAX_CPUS] = [const { AtomicU8::new(0) }; MAX_CPUS];

/// SGI and PPI IDs: the banked first 32 interrupt IDs.
const BANKED_IDS: u32 = 32;

/// An acknowledged interrupt, to be completed with `end_of_interrupt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acknowledged {
    raw: u32,
}

impl Acknowledged {
    /// The interrupt ID.
    pub fn id(self) -> u32 {
        self.raw & 0x3ff
    }
}

/// A GICv2 distributor and the running core's interface, both mapped.
pub struct GicV2 {
    distributor: &'static DistributorRegisters,
    cpu: &'static CpuInterfaceRegisters,
}

// SAFETY: the registers are MMIO; the CPU-interface registers reached are
// those of whichever core uses the handle (they are banked), so moving
// the handle between owners is fine.
unsafe impl Send for GicV2 {}

impl GicV2 {
    /// Wraps the GIC whose distributor and CPU interface are mapped as
    /// device memory at `distributor_va` and `cpu_va`.
    ///
    /// # Safety
    /// Both addresses must map the GIC's registers for the kernel's life.
    /// Only the boot core's handle may change the distributor's shared
    /// registers (`init`, `enable` and `disable` of an SPI); a
    /// secondary's handle only touches its own banked registers
    /// (`init_this_cpu`, SGIs and PPIs) and sends SGIs.
    pub unsafe fn new(distributor_va: u64, cpu_va: u64) -> Self {
        GicV2 {
            // SAFETY: guaranteed by the caller.
            distributor: unsafe { &*(distributor_va as *const DistributorRegisters) },
            // SAFETY: guaranteed by the caller.
            cpu: unsafe { &*(cpu_va as *const CpuInterfaceRegisters) },
        }
    }

    /// Resets the distributor (every interrupt disabled, not pending, not
    /// active, at the default priority, SPIs aimed at this CPU), then turns
    /// it and this CPU's interface on.
    pub fn init(&self) {
        let d = self.distributor;
        // GICD_ITARGETSR0 is banked: each byte reads this CPU's mask.
        let this_cpu = d.targets[0].get() as u8;
        let typer = d.interrupt_type.get();
        let write = |array: &[ReadWrite<u32>], n: usize, value: u32| {
            if let Some(register) = array.get(n) {
                register.set(value);
            }
        };
        let write_only = |array: &[WriteOnly<u32>], n: usize, value: u32| {
            if let Some(register) = array.get(n) {
                register.set(value);
            }
        };
        if let Some(mask) = CPU_INTERFACE_MASKS.get(crate::cpu::smp::this_cpu()) {
            mask.store(this_cpu, Ordering::Relaxed);
        }
        for step in distributor_reset(typer, DEFAULT_PRIORITY as u8, this_cpu) {
            match step {
                DistributorWrite::Control(value) => d.control.set(value),
                DistributorWrite::ClearEnable(n, v) => write(&d.clear_enable, n, v),
                DistributorWrite::ClearPending(n, v) => write_only(&d.clear_pending, n, v),
                DistributorWrite::ClearActive(n, v) => write_only(&d.clear_active, n, v),
                DistributorWrite::ClearSgiPending(n, v) => write_only(&d.clear_sgi_pending, n, v),
                DistributorWrite::Priority(n, v) => write(&d.priority, n, v),
                DistributorWrite::Targets(n, v) => write(&d.targets, n, v),
            }
        }
        self.distributor.control.set(1);
        self.cpu.priority_mask.set(PRIORITY_MASK_ALL);
        self.cpu.binary_point.set(0);
        self.cpu.control.set(1);
    }

    /// Sets up this core's bank of the distributor (every SGI and PPI
    /// disabled, not pending, not active, at the default priority) and
    /// turns its CPU interface on: a secondary's part of `init`, which
    /// the boot core ran for itself. Records the core's interface number
    /// for `send_sgi`.
    pub fn init_this_cpu(&self) {
        let d = self.distributor;
        let mask = d.targets[0].get() as u8;
        if let Some(slot) = CPU_INTERFACE_MASKS.get(this_cpu()) {
            slot.store(mask, Ordering::Relaxed);
        }
        d.clear_enable[0].set(u32::MAX);
        d.clear_pending[0].set(u32::MAX);
        d.clear_active[0].set(u32::MAX);
        for register in &d.clear_sgi_pending {
            register.set(u32::MAX);
        }
        let priority = DEFAULT_PRIORITY * 0x0101_0101;
        for register in &d.priority[..(BANKED_IDS / 4) as usize] {
            register.set(priority);
        }
        self.cpu.priority_mask.set(PRIORITY_MASK_ALL);
        self.cpu.binary_point.set(0);
        self.cpu.control.set(1);
    }

    /// Sends software-generated interrupt `intid` (0..15) to core `cpu`
    /// (GICD_SGIR, its interface's bit in the target list). Returns false,
    /// sending nothing, if that core has not set its interface up.
    pub fn send_sgi(&self, cpu: usize, intid: u32) -> bool {
        let mask = CPU_INTERFACE_MASKS
            .get(cpu)
            .map_or(0, |mask| mask.load(Ordering::Relaxed));
        if mask == 0 || intid >= crate::boards::SGI_COUNT {
            return false;
        }
        // The target must see what this core wrote before the SGI.
        aarch64_cpu::asm::barrier::dsb(aarch64_cpu::asm::barrier::ISHST);
        self.distributor
            .software_interrupt
            .set((u32::from(mask) << 16) | intid);
        true
    }

    /// How many interrupt IDs the distributor has (GICD_TYPER).
    pub fn lines(&self) -> u32 {
        interrupt_lines(self.distributor.interrupt_type.get())
    }

    /// Enables interrupt `id` at the default priority.
    pub fn enable(&self, id: u32) {
        let word = (id / 4) as usize;
        let shift = (id % 4) * 8;
        if let Some(priority) = self.distributor.priority.get(word) {
            let value = priority.get() & !(0xff << shift);
            priority.set(value | (DEFAULT_PRIORITY << shift));
        }
        if let Some(enable) = self.distributor.set_enable.get((id / 32) as usize) {
            enable.set(1 << (id % 32));
        }
    }

    /// Stops forwarding interrupt `id` (it stays pending until enabled).
    pub fn disable(&self, id: u32) {
        if let Some(clear) = self.distributor.clear_enable.get((id / 32) as usize) {
            clear.set(1 << (id % 32));
        }
    }

    /// Acknowledges the highest-priority pending interrupt, if any.
    pub fn acknowledge(&self) -> Option<Acknowledged> {
        let raw = self.cpu.acknowledge.get();
        if raw & 0x3ff >= SPURIOUS_FIRST {
            None
        } else {
            Some(Acknowledged { raw })
        }
    }

    /// Signals that handling `irq` is complete.
    pub fn end_of_interrupt(&self, irq: Acknowledged) {
        self.cpu.end_of_interrupt.set(irq.raw);
    }
}
