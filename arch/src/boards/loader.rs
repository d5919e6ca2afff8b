//! Who started the kernel, as far as its entry state tells: the exception
//! level it was entered at (docs/boot.md, "Entry conditions accepted").
//!
//! That decides three things before any device tree has been read: which
//! board's defaults apply (and so which UART a failure before the console
//! is reported on), and where a device tree may be looked for besides
//! `x0`. Guessing places a loader never uses is not harmless: on a Pi,
//! physical 0 holds the firmware's spin table and a warm reboot may leave
//! an old tree in RAM.

use super::{virt, Board};

/// The loaders Portcullis knows, by the level they enter it at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loader {
    /// EL1: QEMU `virt`. With the ELF, `x0` is 0 and QEMU leaves the tree
    /// at the start of RAM (when it fits below the image); a raw Image
    /// gets it in `x0`.
    QemuVirt,
    /// EL2: the Raspberry Pi firmware (through its armstub), or QEMU
    /// `raspi4b` booting `kernel8.img`. The tree is in `x0`, or there is
    /// none (QEMU without `-dtb` passes ATAGs there).
    PiFirmware,
    /// EL3: QEMU `raspi4b` booting the ELF, which copies `-dtb` to
    /// physical 0 and passes `x0` = 0 (a Pi whose config.txt skips the
    /// armstub would enter here too, with no tree at 0).
    Raspi4bElf,
}

impl Loader {
    /// The loader that enters at `level` (CurrentEL.EL at the entry).
    pub const fn from_entry_level(level: u64) -> Loader {
        match level {
            1 => Loader::QemuVirt,
            3 => Loader::Raspi4bElf,
            _ => Loader::PiFirmware,
        }
    }

    /// The board this loader starts: whose defaults apply until a device
    /// tree says more, and whose UART speaks before the console is up.
    pub const fn board(self) -> Board {
        match self {
            Loader::QemuVirt => Board::QemuVirt,
            Loader::PiFirmware | Loader::Raspi4bElf => Board::RaspberryPi4,
        }
    }

    /// Where to look for a device tree, in order: `x0`, then the place
    /// this loader leaves one without saying so, if it has one.
    pub const fn device_tree_candidates(self, x0: u64) -> [Option<u64>; 2] {
        let unannounced = match self {
            Loader::QemuVirt => Some(virt::RAM_START),
            Loader::Raspi4bElf => Some(0),
            Loader::PiFirmware => None,
        };
        [Some(x0), unannounced]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_entry_level_names_its_loader_and_board() {
        assert_eq!(Loader::from_entry_level(1), Loader::QemuVirt);
        assert_eq!(Loader::from_entry_level(2), Loader::PiFirmware);
        assert_eq!(Loader::from_entry_level(3), Loader::Raspi4bElf);
        assert_eq!(Loader::QemuVirt.board(), Board::QemuVirt);
        assert_eq!(Loader::PiFirmware.board(), Board::RaspberryPi4);
        assert_eq!(Loader::Raspi4bElf.board(), Board::RaspberryPi4);
    }

    #[test]
    fn qemus_unannounced_trees_are_looked_for_only_as_qemu_enters() {
        // The Pi firmware always passes the tree: nothing else is probed,
        // neither physical 0 (its spin table) nor QEMU virt's RAM start.
        assert_eq!(
            Loader::PiFirmware.device_tree_candidates(0x2eff_2c00),
            [Some(0x2eff_2c00), None]
        );
        assert_eq!(
            Loader::QemuVirt.device_tree_candidates(0),
            [Some(0), Some(0x4000_0000)]
        );
        assert_eq!(
            Loader::Raspi4bElf.device_tree_candidates(0),
            [Some(0), Some(0)]
        );
    }
}
