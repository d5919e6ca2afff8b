//! The QEMU machines Portcullis boots on.

use std::fmt;
use std::str::FromStr;

/// A QEMU machine model the runner knows how to boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Machine {
    /// `-M virt,gic-version=2` with a Cortex-A72: the kernel ELF is entered at EL1.
    #[default]
    Virt,
    /// `-M raspi4b` (QEMU 9 or newer): a Raspberry Pi 4 model B.
    Raspi4b,
}

impl Machine {
    /// Every machine, in the order `--help` lists them.
    pub const ALL: [Machine; 2] = [Machine::Virt, Machine::Raspi4b];

    /// The name used on the command line (`--machine NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Machine::Virt => "virt",
            Machine::Raspi4b => "raspi4b",
        }
    }

    /// Where a system image is loaded (`-device loader,...,addr=`): the
    /// board's fixed address, where the kernel looks when the device tree
    /// names no initrd (`arch::boards::virt::SYSTEM_IMAGE_ADDRESS` and
    /// `rpi4::SYSTEM_IMAGE_ADDRESS`, which say why there).
    pub fn system_image_address(self) -> u64 {
        match self {
            Machine::Virt => 0x4200_0000,
            Machine::Raspi4b => 0x0200_0000,
        }
    }

    /// The oldest QEMU major version that has this machine model.
    pub fn minimum_qemu_major(self) -> u32 {
        match self {
            // virt with GICv2 and Cortex-A72 has been in QEMU for many
            // years; nothing newer is needed.
            Machine::Virt => 2,
            // The raspi4b model arrived in QEMU 9.0.
            Machine::Raspi4b => 9,
        }
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--machine` value that names no machine the runner knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownMachine(pub String);

impl fmt::Display for UnknownMachine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown machine `{}` (expected virt or raspi4b)", self.0)
    }
}

impl std::error::Error for UnknownMachine {}

impl FromStr for Machine {
    type Err = UnknownMachine;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Machine::ALL
            .into_iter()
            .find(|machine| machine.name() == text)
            .ok_or_else(|| UnknownMachine(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_machine_name_back() {
        for machine in Machine::ALL {
            assert_eq!(machine.name().parse::<Machine>(), Ok(machine));
        }
    }

    #[test]
    fn rejects_unknown_names() {
        assert_eq!(
            "raspi3b".parse::<Machine>(),
            Err(UnknownMachine("raspi3b".into()))
        );
        assert!("Virt".parse::<Machine>().is_err());
    }

    #[test]
    fn system_images_load_where_the_kernel_looks() {
        use arch::boards::Board;
        assert_eq!(
            Machine::Virt.system_image_address(),
            Board::QemuVirt.system_image_address()
        );
        assert_eq!(
            Machine::Raspi4b.system_image_address(),
            Board::RaspberryPi4.system_image_address()
        );
    }

    #[test]
    fn raspi4b_needs_qemu_9() {
        assert_eq!(Machine::Raspi4b.minimum_qemu_major(), 9);
    }
}
