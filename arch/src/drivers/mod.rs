//! MMIO drivers: the PL011 console and the GICv2 / GIC-400.

pub mod bcm2711_gpio;
pub mod gicv2;
pub mod pl011;
