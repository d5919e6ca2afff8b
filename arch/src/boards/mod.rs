//! The boards Portcullis runs on, and what the kernel needs to know of one.
//!
//! Addresses here are only defaults: the device tree, when the loader
//! passes one, is the authority (see `device_tree`).

pub mod loader;
pub mod rpi4;
pub mod virt;

pub use loader::Loader;

use heapless::Vec;

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

impl PhysRange {
    /// One past the last byte (saturating).
    pub const fn end(&self) -> u64 {
        self.start.saturating_add(self.size)
    }
}

/// Most RAM ranges a board description may list.
pub const MAX_RAM_RANGES: usize = 8;
/// Most reserved ranges (device-tree `/memreserve/` entries) kept.
pub const MAX_RESERVED_RANGES: usize = 8;
/// Longest kernel command line kept, in bytes.
pub const MAX_BOOTARGS: usize = 256;

/// Where the kernel's devices and RAM are, and how to power off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardInfo {
    /// Which board this is.
    pub board: Board,
    /// RAM, in ascending order.
    pub ram: Vec<PhysRange, MAX_RAM_RANGES>,
    /// Ranges of RAM the firmware reserved (not to be handed out).
    pub reserved: Vec<PhysRange, MAX_RESERVED_RANGES>,
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
    /// Whether PSCI is reachable through `hvc` (QEMU virt at EL1).
    pub psci_hvc: bool,
    /// The kernel command line (`/chosen/bootargs`).
    pub bootargs: heapless::String<MAX_BOOTARGS>,
    /// True when these values came from a device tree.
    pub from_device_tree: bool,
}

impl BoardInfo {
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

    #[test]
    fn defaults_are_sane() {
        for board in [Board::QemuVirt, Board::RaspberryPi4] {
            let info = board.defaults();
            assert!(info.ram_bytes() >= 128 << 20);
            assert!(!info.from_device_tree);
        }
    }
}
