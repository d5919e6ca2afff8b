//! QEMU `virt` defaults (`-M virt,gic-version=2`), from QEMU's memory map.

use super::{Board, BoardInfo, CpuEntry, CpuStart, PhysRange, PsciConduit, MAX_CPUS};

/// PL011 UART0.
pub const UART: u64 = 0x0900_0000;
/// PL011 UART0's interrupt ID (SPI 1, as QEMU's device tree says).
pub const UART_INTID: u32 = 32 + 1;
/// The PL011 clock QEMU advertises (`apb-pclk`).
pub const UART_CLOCK_HZ: u32 = 24_000_000;
/// GICv2 distributor.
pub const GIC_DISTRIBUTOR: u64 = 0x0800_0000;
/// GICv2 CPU interface.
pub const GIC_CPU_INTERFACE: u64 = 0x0801_0000;
/// The MMIO below RAM, past the flash (0..0x0800_0000, which the kernel
/// does not hand out): the GIC, the UARTs, RTC, fw_cfg, GPIO, the
/// virtio-mmio transports (0x0a00_0000, 512 bytes each), the platform bus
/// and the PCIe windows. Addresses QEMU maps nothing at answer with an
/// external abort, which stops the EL0 thread that touched them.
pub const DEVICE_WINDOW: PhysRange = PhysRange {
    start: 0x0800_0000,
    size: RAM_START - 0x0800_0000,
};
/// Start of RAM.
pub const RAM_START: u64 = 0x4000_0000;
/// QEMU's default RAM size for `virt`.
pub const RAM_DEFAULT_SIZE: u64 = 128 << 20;
/// Where the kernel looks for a system image when the device tree names
/// no initrd (`abi::system::image`; the runner loads one here with
/// `-device loader,...,force-raw=on`): 32 MiB into RAM. Up to
/// `MAX_IMAGE_BYTES` (64 MiB) from here collides with nothing QEMU
/// places: the device tree QEMU writes at the start of RAM for an ELF
/// boot (at most 1 MiB), the kernel at 0x4020_0000 (`kernel.ld`, under
/// 2 MiB), and 0x4800_0000 (128 MiB in), where QEMU puts an `-initrd`
/// and, for a raw Image, the device tree. It lies in the 128 MiB of
/// QEMU's default RAM, so even `-m 128M` has it.
pub const SYSTEM_IMAGE_ADDRESS: u64 = RAM_START + 0x0200_0000;

/// The board's defaults, used when there is no device tree.
pub fn defaults() -> BoardInfo {
    let mut ram = heapless::Vec::new();
    let _ = ram.push(PhysRange {
        start: RAM_START,
        size: RAM_DEFAULT_SIZE,
    });
    BoardInfo {
        board: Board::QemuVirt,
        ram,
        reserved: heapless::Vec::new(),
        no_map: heapless::Vec::new(),
        uart: UART,
        uart_clock_hz: UART_CLOCK_HZ,
        gic_distributor: GIC_DISTRIBUTOR,
        gic_cpu_interface: GIC_CPU_INTERFACE,
        gpio: None,
        psci: Some(PsciConduit::Hvc),
        cpus: boot_core_only(),
        bootargs: heapless::String::new(),
        initrd: None,
        from_device_tree: false,
    }
}

/// Without a tree only the boot core is known: `-smp` decides how many
/// cores QEMU has, and only its tree says.
fn boot_core_only() -> heapless::Vec<CpuEntry, MAX_CPUS> {
    let mut cpus = heapless::Vec::new();
    let _ = cpus.push(CpuEntry {
        mpidr: 0,
        start: CpuStart::Psci,
    });
    cpus
}
