//! The AArch64 CPU side: boot, exception vectors, returning to EL0, system
//! registers, the generic timer, the PMU, TLB maintenance, user-memory
//! access and ending a run. Built for the target only.

pub mod console;
pub mod crash;
pub mod early_map;
pub mod kernel_cell;
mod kernel_fault;
pub mod phys;
pub mod power;
pub mod registers;
pub mod timer;
pub mod tlb;
pub mod user_return;

use crate::boards::{rpi4, virt};

core::arch::global_asm!(
    include_str!("boot.s"),
    RPI4_GICD = const rpi4::GIC_DISTRIBUTOR,
    RPI4_GICC = const rpi4::GIC_CPU_INTERFACE,
    RPI4_LOCAL_CONTROL = const rpi4::LOCAL_CONTROL,
    RPI4_LOCAL_PRESCALER = const rpi4::LOCAL_PRESCALER,
    RPI4_COUNTER_HZ = const rpi4::COUNTER_HZ,
    RPI4_UART = const rpi4::UART,
    VIRT_UART = const virt::UART,
);
// The benchmark floor's second vector table is only in a bench image
// (`bench-floor`): it is one more way for an SVC to go, and no other image
// needs it.
#[cfg(not(feature = "bench-floor"))]
core::arch::global_asm!(include_str!("vectors.s"));
#[cfg(feature = "bench-floor")]
core::arch::global_asm!(include_str!("vectors.s"), include_str!("floor_vectors.s"));
