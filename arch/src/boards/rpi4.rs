//! Raspberry Pi 4 (BCM2711) defaults, low-peripheral mode.

use super::{Board, BoardInfo, CpuEntry, CpuStart, PhysRange, MAX_CPUS};

/// GPIO block (function select and pull registers).
pub const GPIO: u64 = 0xFE20_0000;
/// PL011 UART0. The SD card's config.txt puts it on GPIO14/15 with
/// `gpio=14,15=a0` (no overlay: Debian ships none), and the kernel routes
/// those pins to it itself before its first line (`bcm2711_gpio`).
pub const UART: u64 = 0xFE20_1000;
/// PL011 UART0's interrupt ID (VideoCore IRQ 57 = GIC SPI 121, as the
/// BCM2711 device tree says).
pub const UART_INTID: u32 = 32 + 121;
/// The PL011 reference clock the firmware sets.
pub const UART_CLOCK_HZ: u32 = 48_000_000;
/// GIC-400 distributor.
pub const GIC_DISTRIBUTOR: u64 = 0xFF84_1000;
/// GIC-400 CPU interface.
pub const GIC_CPU_INTERFACE: u64 = 0xFF84_2000;
/// The peripheral window in low-peripheral mode: the main peripherals
/// (0xFC00_0000..0xFF80_0000) and the ARM-local ones up to 4 GiB.
pub const DEVICE_WINDOW: PhysRange = PhysRange {
    start: 0xFC00_0000,
    size: 0x1_0000_0000 - 0xFC00_0000,
};
/// The ARM-local registers the kernel sets at boot (the counter's
/// source and prescaler): kept from user space.
pub const LOCAL_PERIPHERALS: PhysRange = PhysRange {
    start: LOCAL_CONTROL,
    size: 0x1000,
};
/// The system timer (free-running 1 MHz counter: CLO at +0x04, CHI at
/// +0x08).
pub const SYSTEM_TIMER: u64 = 0xFE00_3000;
/// ARM-local control register: the generic counter's clock source and
/// increment (0: the crystal, by 1).
pub const LOCAL_CONTROL: u64 = 0xFF80_0000;
/// ARM-local timer prescaler: the counter advances by value / 2^31 per
/// crystal tick (0x8000_0000: one count per tick).
pub const LOCAL_PRESCALER: u64 = 0xFF80_0008;
/// The crystal the generic counter counts once the firmware's armstub
/// (or the kernel's EL3 entry) has set the prescaler 1:1; what CNTFRQ_EL0
/// must then say.
pub const COUNTER_HZ: u64 = 54_000_000;
/// RAM assumed without a device tree: what the first GiB leaves the ARM
/// under the largest `gpu_mem` the firmware documentation recommends for
/// a Pi 4 (768 MiB; *config.txt → Memory options*). The firmware carves
/// the VideoCore's memory off the top of the first GiB, so the split
/// decides where ARM RAM ends: 948 MiB with the default 76, less with a
/// larger one. Only the device tree says which; without it, handing out
/// the VideoCore's memory would corrupt the firmware's.
pub const RAM_WITHOUT_DEVICE_TREE: u64 = 0x1000_0000;
/// The firmware's spin table and stub live in the first page.
pub const FIRMWARE_RESERVED: u64 = 0x1000;
/// Where the firmware's spin table has core N (N = 0..3, MPIDR Aff0 = N)
/// wait for its entry address: `SPIN_TABLE + 8 * N` (the Pi 4 tree's
/// `cpu-release-addr`s, 0xd8 to 0xf0).
pub const SPIN_TABLE: u64 = 0xd8;
/// The cores of a BCM2711.
pub const CORES: usize = 4;

/// Where the kernel looks for a system image when the device tree names
/// no initrd (`abi::system::image`), and where the SD card's config.txt
/// has the firmware load it (`initramfs portcullis-system.img
/// 0x2000000`, which also names it in the tree): 32 MiB into RAM. Up to
/// `MAX_IMAGE_BYTES` (64 MiB) from here collides with nothing placed in
/// RAM: the firmware's spin table (the first page), the kernel at
/// 0x80000 (under 2 MiB), the device tree QEMU puts 128 MiB in for a raw
/// Image (`-M raspi4b -kernel kernel8.img -dtb`) or at 0 for the ELF,
/// and what the firmware keeps near the top of the first GiB (its copy
/// of the device tree, `/reserved-memory`, the VideoCore's memory). It
/// lies in [`RAM_WITHOUT_DEVICE_TREE`], so a boot without a tree (QEMU's
/// ELF without `-dtb`) finds it too.
pub const SYSTEM_IMAGE_ADDRESS: u64 = 0x0200_0000;

/// The board's defaults, used when there is no device tree.
pub fn defaults() -> BoardInfo {
    let mut ram = heapless::Vec::new();
    let _ = ram.push(PhysRange {
        start: 0,
        size: RAM_WITHOUT_DEVICE_TREE,
    });
    let mut reserved = heapless::Vec::new();
    let _ = reserved.push(PhysRange {
        start: 0,
        size: FIRMWARE_RESERVED,
    });
    BoardInfo {
        board: Board::RaspberryPi4,
        ram,
        reserved,
        no_map: heapless::Vec::new(),
        uart: UART,
        uart_clock_hz: UART_CLOCK_HZ,
        gic_distributor: GIC_DISTRIBUTOR,
        gic_cpu_interface: GIC_CPU_INTERFACE,
        gpio: Some(GPIO),
        psci: None,
        cpus: spin_table_cores(),
        bootargs: heapless::String::new(),
        initrd: None,
        from_device_tree: false,
    }
}

/// The four cores, each on the firmware's spin table.
fn spin_table_cores() -> heapless::Vec<CpuEntry, MAX_CPUS> {
    (0..CORES.min(MAX_CPUS) as u64)
        .map(|n| CpuEntry {
            mpidr: n,
            start: CpuStart::SpinTable {
                release_address: SPIN_TABLE + 8 * n,
            },
        })
        .collect()
}
