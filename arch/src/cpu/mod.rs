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

core::arch::global_asm!(include_str!("boot.s"));
core::arch::global_asm!(include_str!("vectors.s"));
