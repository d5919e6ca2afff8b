//! MMIO drivers: the PL011 console and the GICv2 / GIC-400.

pub mod gicv2;
pub mod pl011;
