//! The boards Portcullis runs on, and what the kernel needs to know of one.
//!
//! Addresses here are only defaults: the device tree, when the loader
//! passes one, is the authority (see `device_tree`).

pub mod loader;
pub mod rpi4;
pub mod virt;

pub use loader::Loader;

use heapless::Vec;

/// The EL1 physical timer's interrupt ID (a PPI), the same on every board:
/// a device the kernel programs for the holder of its IrqHandler.
pub const PHYSICAL_TIMER_INTID: u32 = 30;
/// The kernel's tick: the EL1 virtual timer's interrupt ID (a PPI), the
/// same on every board (`cpu::timer::VIRTUAL_TIMER_INTID`).
pub const KERNEL_TICK_INTID: u32 = 27;
/// Interrupt IDs below this are SGIs, kept by the kernel for the
/// inter-processor interrupts of a multi-core kernel.
pub const SGI_COUNT: u32 = 16;
/// The SGI one core sends another to make it look at its run queue
/// again (`GicV2::send_sgi`).
pub const RESCHEDULE_SGI: u32 = 0;

pub use crate::layout::MAX_CPUS;

/// How PSCI is called (`/psci`'s `method`): from EL1, `hvc` reaches a
/// hypervisor's (QEMU virt's) PSCI, `smc` the secure firmware's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsciConduit {
    /// `hvc #0`.
    Hvc,
    /// `smc #0`.
    Smc,
}

/// How a core is started (a `/cpus/cpu@N` node's `enable-method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuStart {
    /// PSCI CPU_ON, through [`BoardInfo::psci`].
    Psci,
    /// The firmware's spin table: the core waits for an entry address at
    /// this physical address (`cpu-release-addr`).
    SpinTable {
        /// Where to write the entry address.
        release_address: u64,
    },
    /// A method the kernel does not know, or a spin table without its
    /// address: the core cannot be started.
    Unknown,
}

/// One core the board has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuEntry {
    /// Its affinity fields as MPIDR_EL1 reports them (the node's `reg`).
    pub mpidr: u64,
    /// How it is started.
    pub start: CpuStart,
}

/// A supported board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Board {
    /// QEMU `-M virt` (with `gic-version=2`).
    QemuVirt,
    /// Raspberry Pi 4 Model B, real or QEMU `-M raspi4b`.
    RaspberryPi4,
}

impl Board {
    /// A name for the boot banner.
    pub const fn name(self) -> &'static str {
        match self {
            Board::QemuVirt => "QEMU virt",
            Board::RaspberryPi4 => "Raspberry Pi 4",
        }
    }

    /// The interrupt ID of the console UART the kernel writes to (it
    /// polls it and never enables the line, but keeps it all the same:
    /// the UART is the kernel's).
    pub const fn console_intid(self) -> u32 {
        match self {
            Board::QemuVirt => virt::UART_INTID,
            Board::RaspberryPi4 => rpi4::UART_INTID,
        }
    }

    /// Where the kernel looks for a system image the device tree does
    /// not name ([`virt::SYSTEM_IMAGE_ADDRESS`],
    /// [`rpi4::SYSTEM_IMAGE_ADDRESS`]).
    pub const fn system_image_address(self) -> u64 {
        match self {
            Board::QemuVirt => virt::SYSTEM_IMAGE_ADDRESS,
            Board::RaspberryPi4 => rpi4::SYSTEM_IMAGE_ADDRESS,
        }
    }

    /// The board's documented defaults.
    pub fn defaults(self) -> BoardInfo {
        match self {
            Board::QemuVirt => virt::defaults(),
            Board::RaspberryPi4 => rpi4::defaults(),
        }
    }
}

/// A physical memory range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhysRange {
    /// First byte.
    pub start: u64,
    /// Length in bytes.
    pub size: u64,
}

/// Most pieces [`PhysRange::without`] returns: one more than holes can
/// cut (the kernel image and every no-map range).
pub const MAX_PIECES: usize = MAX_RESERVED_RANGES + 2;

impl PhysRange {
    /// One past the last byte (saturating).
    pub const fn end(&self) -> u64 {
        self.start.saturating_add(self.size)
    }

    /// The whole pages of this range that no page of `holes` touches, in
    /// ascending order: the range is rounded inwards to pages, each hole
    /// outwards. With more pieces than [`MAX_PIECES`], the last are left
    /// out (memory unused, never memory misused).
    pub fn without(self, holes: &[PhysRange]) -> heapless::Vec<PhysRange, MAX_PIECES> {
        const PAGE: u64 = crate::layout::PAGE_SIZE;
        let mut pieces = heapless::Vec::new();
        // Saturating: a range or hole at the top of the address space
        // (a tree may say anything) rounds to its end, not past it.
        let mut start = self.start.div_ceil(PAGE).saturating_mul(PAGE);
        let end = self.end() & !(PAGE - 1);
        while start < end {
            // The first hole that covers or follows `start`, page-rounded.
            let next = holes
                .iter()
                .filter(|h| h.size > 0)
                .map(|h| {
                    let end = h.end().div_ceil(PAGE).saturating_mul(PAGE);
                    (h.start & !(PAGE - 1), end)
                })
                .filter(|&(_, hole_end)| hole_end > start)
                .min_by_key(|&(hole_start, _)| hole_start);
            let (piece_end, resume) = match next {
                Some((hole_start, hole_end)) => (hole_start.min(end), hole_end),
                None => (end, end),
            };
            if piece_end > start
                && pieces
                    .push(PhysRange {
                        start,
                        size: piece_end - start,
                    })
                    .is_err()
            {
                break;
            }
            start = resume.max(start);
        }
        pieces
    }
}

/// Most RAM ranges a board description may list.
pub const MAX_RAM_RANGES: usize = 8;
/// Most reserved ranges kept (`/memreserve/` entries and `reg` ranges of
/// `/reserved-memory` nodes); a tree with more is refused.
pub const MAX_RESERVED_RANGES: usize = 16;
/// Longest kernel command line kept, in bytes.
pub const MAX_BOOTARGS: usize = 256;

/// Where the kernel's devices and RAM are, and how to power off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardInfo {
    /// Which board this is.
    pub board: Board,
    /// RAM, in ascending order.
    pub ram: Vec<PhysRange, MAX_RAM_RANGES>,
    /// Ranges of RAM the firmware reserved (not to be handed out):
    /// `/memreserve/` entries and every `/reserved-memory` range.
    pub reserved: Vec<PhysRange, MAX_RESERVED_RANGES>,
    /// The reserved ranges marked `no-map`: not even to be mapped (a
    /// cacheable alias could be written back over what the firmware or
    /// another master keeps there).
    pub no_map: Vec<PhysRange, MAX_RESERVED_RANGES>,
    /// PL011 UART registers.
    pub uart: u64,
    /// PL011 reference clock in Hz (for the baud-rate divisor).
    pub uart_clock_hz: u32,
    /// GICv2 distributor registers.
    pub gic_distributor: u64,
    /// GICv2 CPU-interface registers.
    pub gic_cpu_interface: u64,
    /// The GPIO block whose pins the console needs routed (Pi 4: GPIO14/15
    /// to UART0), if the board has one.
    pub gpio: Option<u64>,
    /// How PSCI is called, if the board has it (`/psci`'s `method`).
    pub psci: Option<PsciConduit>,
    /// The cores, in the tree's order (at most [`MAX_CPUS`]: the rest
    /// are never started), the boot core among them.
    pub cpus: Vec<CpuEntry, MAX_CPUS>,
    /// The kernel command line (`/chosen/bootargs`).
    pub bootargs: heapless::String<MAX_BOOTARGS>,
    /// What the loader placed as an initial RAM disk (`/chosen`'s
    /// `linux,initrd-start` and `linux,initrd-end`: QEMU's `-initrd`, the
    /// Pi firmware's `initramfs` line), where the kernel looks for a
    /// system image first. Only where it is: nothing here says it is one.
    pub initrd: Option<PhysRange>,
    /// True when these values came from a device tree.
    pub from_device_tree: bool,
}

/// Most ranges of device memory [`BoardInfo::user_device_memory`] gives.
pub const MAX_DEVICE_RANGES: usize = MAX_PIECES;

impl BoardInfo {
    /// The device memory (MMIO) the kernel does not use, for user space:
    /// the board's device window ([`virt::DEVICE_WINDOW`],
    /// [`rpi4::DEVICE_WINDOW`]) without the kernel's devices (its UART's
    /// page, the GIC's distributor and CPU interface, and on the Pi 4 the
    /// ARM-local registers it sets at boot) and without any RAM, in whole
    /// pages, lowest address first.
    pub fn user_device_memory(&self) -> Vec<PhysRange, MAX_DEVICE_RANGES> {
        /// What a GIC register frame is given (QEMU maps 64 KiB for each).
        const GIC_FRAME: u64 = 0x1_0000;
        let (window, local) = match self.board {
            Board::QemuVirt => (virt::DEVICE_WINDOW, None),
            Board::RaspberryPi4 => (rpi4::DEVICE_WINDOW, Some(rpi4::LOCAL_PERIPHERALS)),
        };
        let mut holes: Vec<PhysRange, { MAX_RAM_RANGES + 4 }> = Vec::new();
        for ram in &self.ram {
            let _ = holes.push(*ram);
        }
        let _ = holes.push(PhysRange {
            start: self.uart,
            size: crate::layout::PAGE_SIZE,
        });
        for gic in [self.gic_distributor, self.gic_cpu_interface] {
            let _ = holes.push(PhysRange {
                start: gic & !(GIC_FRAME - 1),
                size: GIC_FRAME,
            });
        }
        if let Some(local) = local {
            let _ = holes.push(local);
        }
        window.without(&holes)
    }

    /// Total RAM in bytes.
    pub fn ram_bytes(&self) -> u64 {
        self.ram.iter().map(|r| r.size).sum()
    }

    /// Looks up `key=value` in the command line.
    pub fn boot_option(&self, key: &str) -> Option<&str> {
        self.bootargs
            .split_ascii_whitespace()
            .filter_map(|word| word.split_once('='))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_options_are_found_by_key() {
        let mut info = Board::QemuVirt.defaults();
        info.bootargs.clear();
        info.bootargs
            .push_str("console=x portcullis.mode=test portcullis.exit=semihosting")
            .unwrap();
        assert_eq!(info.boot_option("portcullis.mode"), Some("test"));
        assert_eq!(info.boot_option("portcullis.exit"), Some("semihosting"));
        assert_eq!(info.boot_option("portcullis"), None);
    }

    #[test]
    fn only_the_kernels_own_words_are_kept_from_a_long_firmware_command_line() {
        // What a Pi 4's firmware puts before cmdline.txt, and then ours.
        let firmware = "coherent_pool=1M 8250.nr_uarts=1 snd_bcm2835.enable_compat_alsa=0 \
            snd_bcm2835.enable_hdmi=1 bcm2708_fb.fbwidth=1920 bcm2708_fb.fbheight=1080 \
            bcm2708_fb.fbswap=1 smsc95xx.macaddr=DC:A6:32:00:00:00 vc_mem.mem_base=0x3eb00000 \
            vc_mem.mem_size=0x3ff00000 console=ttyS0,115200 console=tty1";
        let mut info = Board::RaspberryPi4.defaults();
        info.bootargs.clear();
        for word in firmware
            .split_ascii_whitespace()
            .chain(["portcullis.mode=test"])
            .filter(|w| w.starts_with("portcullis."))
        {
            info.bootargs.push_str(word).unwrap();
        }
        assert_eq!(info.boot_option("portcullis.mode"), Some("test"));
    }

    fn range(start: u64, end: u64) -> PhysRange {
        PhysRange {
            start,
            size: end - start,
        }
    }

    #[test]
    fn holes_take_whole_pages_out_of_a_range() {
        let ram = range(0, 0x10_0000);
        let pieces = ram.without(&[range(0x3000, 0x3001), range(0x8ff0, 0x9010)]);
        assert_eq!(
            pieces.as_slice(),
            &[
                range(0, 0x3000),
                range(0x4000, 0x8000),
                range(0xa000, 0x10_0000)
            ]
        );
        // Unsorted, overlapping, outside, empty, at the edges: the same rule.
        let pieces = ram.without(&[
            range(0xf_f000, 0x20_0000),
            range(0x5000, 0x7000),
            range(0x6000, 0x6800),
            range(0x30_0000, 0x30_1000),
            range(0x9000, 0x9000),
            range(0, 0x800),
        ]);
        assert_eq!(
            pieces.as_slice(),
            &[range(0x1000, 0x5000), range(0x7000, 0xf_f000)]
        );
        // The range itself is rounded inwards.
        assert_eq!(
            range(0x800, 0x2800).without(&[]).as_slice(),
            &[range(0x1000, 0x2000)]
        );
        assert!(range(0x800, 0xf00).without(&[]).is_empty());
        // At the top of the address space nothing overflows.
        let top = PhysRange {
            start: u64::MAX - 0x2fff,
            size: 0x3000,
        };
        assert_eq!(
            top.without(&[]).as_slice(),
            &[range(u64::MAX - 0x2fff, u64::MAX - 0xfff)]
        );
        let everything = PhysRange {
            start: 0x1000,
            size: u64::MAX,
        };
        assert_eq!(
            range(0, 0x4000).without(&[everything]).as_slice(),
            &[range(0, 0x1000)]
        );
    }

    #[test]
    fn defaults_are_sane() {
        for board in [Board::QemuVirt, Board::RaspberryPi4] {
            let info = board.defaults();
            assert!(info.ram_bytes() >= 128 << 20);
            assert!(!info.from_device_tree);
            assert_eq!(info.initrd, None);
            // The whole largest image fits in the RAM assumed without a
            // device tree, past the kernel's first 2 MiB.
            let image = PhysRange {
                start: board.system_image_address(),
                size: abi::system::image::MAX_IMAGE_BYTES,
            };
            assert!(info
                .ram
                .iter()
                .any(|ram| ram.start + (2 << 20) <= image.start && image.end() <= ram.end()));
        }
    }

    #[test]
    fn user_device_memory_leaves_out_the_kernels_devices_and_ram() {
        let touches = |ranges: &[PhysRange], address: u64| {
            ranges
                .iter()
                .any(|r| r.start <= address && address < r.end())
        };
        let virt = Board::QemuVirt.defaults().user_device_memory();
        assert_eq!(
            virt[0].start, 0x0802_0000,
            "past the distributor and CPU interface"
        );
        assert!(touches(&virt, 0x0a00_0000), "virtio-mmio is user space's");
        for kernel in [
            0x0800_0000,
            0x0801_0000,
            0x0900_0000,
            0x4000_0000,
            0x0000_1000,
        ] {
            assert!(!touches(&virt, kernel), "{kernel:#x}");
        }
        let pi = Board::RaspberryPi4.defaults().user_device_memory();
        assert!(touches(&pi, rpi4::SYSTEM_TIMER));
        assert!(touches(&pi, rpi4::GPIO));
        for kernel in [
            rpi4::UART,
            rpi4::GIC_DISTRIBUTOR,
            rpi4::GIC_CPU_INTERFACE,
            rpi4::LOCAL_CONTROL,
        ] {
            assert!(!touches(&pi, kernel), "{kernel:#x}");
        }
        assert_eq!(pi.last().map(|r| r.end()), Some(0x1_0000_0000));
    }
}
