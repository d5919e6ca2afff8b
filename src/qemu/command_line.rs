//! The QEMU command line for each machine.
//!
//! Every run passes `-semihosting` together with `portcullis.exit=semihosting`
//! on the kernel command line, so the guest ends QEMU with its own status
//! (0 passed, 1 a test failed, 2 kernel panic) on both machines; raspi4b has
//! no PSCI, so this is the only way it can exit at all.
//!
//! The command line asks for the devices Portcullis drives and nothing
//! else. `-M virt` on its own adds a virtio network card whose option ROM
//! (`efi-virtio.rom`) comes from `ipxe-qemu`, a package QEMU only
//! recommends: without it QEMU refuses to start. Portcullis has no network
//! driver, so every machine gets `-nic none` ([`NO_NETWORK`]).

use std::ffi::OsString;
use std::path::PathBuf;

use crate::guest_mode::GuestMode;
use crate::machine::Machine;

/// The TCP port QEMU's gdb stub listens on with `-s`.
pub const GDB_PORT: u16 = 1234;

/// The words that take away the machine's default network card.
pub const NO_NETWORK: [&str; 2] = ["-nic", "none"];

/// What kind of file `-kernel` gets, which decides the entry exception level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelFormat {
    /// The kernel ELF: entered at EL1 on virt, at EL3 on raspi4b.
    Elf,
    /// The raw arm64 Image `kernel8.img`: on raspi4b loaded at 0x80000 and
    /// entered at EL2, as the Pi's firmware does.
    Image,
}

/// Everything that decides one QEMU invocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// The machine model.
    pub machine: Machine,
    /// Demo or tests.
    pub mode: GuestMode,
    /// The file passed with `-kernel`.
    pub kernel: PathBuf,
    /// Whether `kernel` is the ELF or the raw Image.
    pub format: KernelFormat,
    /// The device tree passed with `-dtb` (raspi4b only; virt makes its own).
    pub dtb: Option<PathBuf>,
    /// Start halted with a gdb stub on [`GDB_PORT`] (`-s -S`).
    pub gdb: bool,
    /// One virtual nanosecond per guest instruction (`-icount shift=0`),
    /// which makes cycle counts deterministic for benchmarks.
    pub icount: bool,
    /// More `key=value` words for the kernel command line (for example
    /// `portcullis.crash=data-abort`).
    pub boot_options: Vec<String>,
    /// A system image to load beside the kernel, at the board's fixed
    /// address ([`Machine::system_image_address`]).
    pub system_image: Option<PathBuf>,
    /// How many cores the guest runs (`None`: [`DEFAULT_CPUS`]). On virt
    /// QEMU gets that many (`-smp N`); raspi4b always has four, so the
    /// kernel is told to start only N (`portcullis.cpus=N`).
    pub cpus: Option<u32>,
}

/// The cores a guest runs unless told otherwise: all four of a raspi4b,
/// and as many on virt (the most the kernel starts).
pub const DEFAULT_CPUS: u32 = 4;

impl LaunchConfig {
    /// The kernel command line, which QEMU puts in `/chosen/bootargs`.
    /// (What runs is the system image's business: the project's own
    /// systems name their mode in their description, `systems/*.toml`.)
    pub fn boot_args(&self) -> String {
        let mut args = String::from("portcullis.exit=semihosting");
        if let (Machine::Raspi4b, Some(cpus)) = (self.machine, self.cpus) {
            args.push_str(&format!(" portcullis.cpus={cpus}"));
        }
        for option in &self.boot_options {
            args.push(' ');
            args.push_str(option);
        }
        args
    }

    /// [`LaunchConfig::qemu_args`] for a person at this terminal: the
    /// serial line is the terminal through QEMU's multiplexer, so Ctrl-C
    /// reaches the guest (`signal=off`) and Ctrl-A x quits QEMU (its
    /// monitor is on the same line, behind Ctrl-A c).
    pub fn interactive_qemu_args(&self) -> Vec<OsString> {
        let plain = self.qemu_args();
        let mut args = Vec::with_capacity(plain.len() + 2);
        let mut words = plain.into_iter().peekable();
        while let Some(word) = words.next() {
            match word.to_str() {
                Some("-monitor") if words.peek().is_some_and(|w| w == "none") => {
                    words.next();
                }
                Some("-serial") if words.peek().is_some_and(|w| w == "stdio") => {
                    words.next();
                    for interactive in [
                        "-chardev",
                        "stdio,id=console,mux=on,signal=off",
                        "-serial",
                        "chardev:console",
                        "-mon",
                        "chardev=console",
                    ] {
                        args.push(OsString::from(interactive));
                    }
                }
                _ => args.push(word),
            }
        }
        args
    }

    /// The arguments after `qemu-system-aarch64`.
    pub fn qemu_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let smp = self.cpus.unwrap_or(DEFAULT_CPUS).to_string();
        let mut push = |words: &[&str]| args.extend(words.iter().map(OsString::from));
        match self.machine {
            Machine::Virt => push(&[
                "-M",
                "virt,gic-version=2",
                "-cpu",
                "cortex-a72",
                "-smp",
                &smp,
                "-m",
                "1G",
            ]),
            // raspi4b fixes its CPU (4 x Cortex-A72) and RAM (2 GiB).
            Machine::Raspi4b => push(&["-M", "raspi4b"]),
        }
        push(&NO_NETWORK);
        push(&[
            "-display",
            "none",
            "-monitor",
            "none",
            "-serial",
            "stdio",
            "-no-reboot",
            "-semihosting",
        ]);
        if self.icount {
            push(&["-icount", "shift=0"]);
        }
        if self.gdb {
            push(&["-s", "-S"]);
        }
        args.push("-kernel".into());
        args.push(self.kernel.clone().into_os_string());
        if let Some(dtb) = &self.dtb {
            args.push("-dtb".into());
            args.push(dtb.clone().into_os_string());
        }
        if let Some(image) = &self.system_image {
            // Raw bytes at the board's address, on every machine and entry
            // path (`-initrd` is only placed for a Linux-style boot, and
            // not where the kernel looks); QEMU names it nowhere in the
            // device tree, so the kernel finds it at that address.
            let mut device = OsString::from("loader,file=");
            device.push(image.as_os_str());
            device.push(format!(
                ",addr={:#x},force-raw=on",
                self.machine.system_image_address()
            ));
            args.push("-device".into());
            args.push(device);
        }
        args.push("-append".into());
        args.push(self.boot_args().into());
        args
    }
}

/// Renders a command so that it can be pasted into a shell.
pub fn shell_command(program: &std::path::Path, args: &[OsString]) -> String {
    std::iter::once(program.as_os_str())
        .chain(args.iter().map(OsString::as_os_str))
        .map(|word| shell_quote(&word.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// What the tests of every command line the runner builds share: all the
/// configurations, and the check that none asks for a network device.
#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// Every launch configuration the runner can build: each machine and
    /// kernel format, each mode, with and without gdb, icount, a DTB and
    /// boot options.
    pub(crate) fn every_config() -> Vec<LaunchConfig> {
        let mut configs = Vec::new();
        for machine in Machine::ALL {
            for format in [KernelFormat::Elf, KernelFormat::Image] {
                for mode in GuestMode::ALL {
                    for flags in 0..8u8 {
                        configs.push(LaunchConfig {
                            machine,
                            mode,
                            kernel: PathBuf::from("/k/kernel"),
                            format,
                            dtb: (flags & 4 != 0).then(|| PathBuf::from("/f/rpi.dtb")),
                            gdb: flags & 1 != 0,
                            icount: flags & 2 != 0,
                            boot_options: vec!["portcullis.counter=instructions".into()],
                            system_image: (flags & 2 != 0).then(|| PathBuf::from("/s/system.img")),
                            cpus: (flags & 1 != 0).then_some(2),
                        });
                    }
                }
            }
        }
        configs
    }

    /// Why `args` would give the guest a network device, if they would:
    /// QEMU adds a default network card unless told `-nic none` (or
    /// `-nodefaults`), and `-net`, `-netdev` or a NIC `-device` add one.
    pub(crate) fn network_requests(args: &[String]) -> Vec<String> {
        let mut problems = Vec::new();
        let no_default = args.windows(2).any(|pair| pair == NO_NETWORK)
            || args.iter().any(|word| word == "-nodefaults");
        if !no_default {
            problems.push("neither `-nic none` nor `-nodefaults`".to_string());
        }
        for (i, word) in args.iter().enumerate() {
            let value = args.get(i + 1).map(String::as_str).unwrap_or_default();
            let nic_driver = ["net", "e1000", "rtl8139", "ne2k", "pcnet", "i825", "eepro"];
            match word.as_str() {
                "-net" | "-netdev" => problems.push(format!("{word} {value}")),
                "-nic" if value != "none" => problems.push(format!("-nic {value}")),
                "-device" if nic_driver.iter().any(|d| value.contains(d)) => {
                    problems.push(format!("-device {value}"))
                }
                _ => {}
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{every_config, network_requests};
    use super::*;

    fn words(config: &LaunchConfig) -> Vec<String> {
        config
            .qemu_args()
            .iter()
            .map(|word| word.to_string_lossy().into_owned())
            .collect()
    }

    fn virt_test() -> LaunchConfig {
        LaunchConfig {
            machine: Machine::Virt,
            mode: GuestMode::Test,
            kernel: PathBuf::from("/k/portcullis-kernel"),
            format: KernelFormat::Elf,
            dtb: None,
            gdb: false,
            icount: false,
            boot_options: Vec::new(),
            system_image: None,
            cpus: None,
        }
    }

    #[test]
    fn virt_command_line_is_the_documented_one() {
        assert_eq!(
            words(&virt_test()).join(" "),
            "-M virt,gic-version=2 -cpu cortex-a72 -smp 4 -m 1G -nic none -display none \
             -monitor none -serial stdio -no-reboot -semihosting -kernel /k/portcullis-kernel \
             -append portcullis.exit=semihosting"
        );
    }

    #[test]
    fn an_interactive_run_puts_the_serial_line_and_monitor_on_the_terminal() {
        let args: Vec<String> = virt_test()
            .interactive_qemu_args()
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args.join(" "),
            "-M virt,gic-version=2 -cpu cortex-a72 -smp 4 -m 1G -nic none -display none \
             -chardev stdio,id=console,mux=on,signal=off -serial chardev:console \
             -mon chardev=console -no-reboot -semihosting -kernel /k/portcullis-kernel \
             -append portcullis.exit=semihosting"
        );
    }

    #[test]
    fn raspi4b_passes_the_dtb_and_no_cpu_or_memory() {
        let config = LaunchConfig {
            machine: Machine::Raspi4b,
            mode: GuestMode::Demo,
            kernel: PathBuf::from("/k/kernel8.img"),
            format: KernelFormat::Image,
            dtb: Some(PathBuf::from("/f/bcm2711-rpi-4-b.dtb")),
            ..virt_test()
        };
        assert_eq!(
            words(&config).join(" "),
            "-M raspi4b -nic none -display none -monitor none -serial stdio -no-reboot \
             -semihosting -kernel /k/kernel8.img -dtb /f/bcm2711-rpi-4-b.dtb \
             -append portcullis.exit=semihosting"
        );
    }

    #[test]
    fn no_command_line_asks_for_a_network_device() {
        let configs = every_config();
        assert_eq!(configs.len(), 2 * 2 * GuestMode::ALL.len() * 8);
        for config in configs {
            let args = words(&config);
            assert_eq!(
                network_requests(&args),
                Vec::<String>::new(),
                "{}",
                args.join(" ")
            );
        }
    }

    #[test]
    fn the_network_check_catches_each_way_of_asking_for_a_card() {
        let with = |extra: &[&str]| {
            let mut args = words(&virt_test());
            args.extend(extra.iter().map(|word| word.to_string()));
            network_requests(&args)
        };
        assert!(with(&[]).is_empty());
        assert_eq!(with(&["-nic", "user"]), ["-nic user"]);
        assert_eq!(with(&["-netdev", "user,id=n0"]), ["-netdev user,id=n0"]);
        assert_eq!(with(&["-net", "nic"]), ["-net nic"]);
        assert_eq!(
            with(&["-device", "virtio-net-device,netdev=n0"]),
            ["-device virtio-net-device,netdev=n0"]
        );
        let without: Vec<String> = words(&virt_test())
            .into_iter()
            .filter(|word| word != "-nic" && word != "none")
            .collect();
        assert_eq!(
            network_requests(&without),
            ["neither `-nic none` nor `-nodefaults`"]
        );
    }

    #[test]
    fn a_system_image_is_loaded_raw_at_the_boards_address_on_every_path() {
        let with_image = |machine, format, dtb: Option<&str>| {
            let config = LaunchConfig {
                machine,
                format,
                dtb: dtb.map(PathBuf::from),
                system_image: Some(PathBuf::from("/s/system.img")),
                ..virt_test()
            };
            words(&config).join(" ")
        };
        let virt = with_image(Machine::Virt, KernelFormat::Elf, None);
        assert!(
            virt.ends_with(
                " -kernel /k/portcullis-kernel \
                 -device loader,file=/s/system.img,addr=0x42000000,force-raw=on \
                 -append portcullis.exit=semihosting"
            ),
            "{virt}"
        );
        let loader = "-device loader,file=/s/system.img,addr=0x2000000,force-raw=on";
        for (format, dtb) in [
            (KernelFormat::Image, Some("/f/rpi.dtb")),
            (KernelFormat::Elf, None),
        ] {
            let line = with_image(Machine::Raspi4b, format, dtb);
            assert!(line.contains(loader), "{line}");
        }
        assert!(!words(&virt_test()).iter().any(|w| w == "-device"));
    }

    #[test]
    fn the_cores_are_qemus_on_virt_and_the_kernels_choice_on_raspi4b() {
        let virt = LaunchConfig {
            cpus: Some(1),
            ..virt_test()
        };
        let line = words(&virt).join(" ");
        assert!(line.contains(" -smp 1 "), "{line}");
        assert_eq!(virt.boot_args(), "portcullis.exit=semihosting");
        let raspi = LaunchConfig {
            machine: Machine::Raspi4b,
            cpus: Some(2),
            ..virt_test()
        };
        let line = words(&raspi).join(" ");
        assert!(!line.contains("-smp"), "{line}");
        assert_eq!(
            raspi.boot_args(),
            "portcullis.exit=semihosting portcullis.cpus=2"
        );
    }

    #[test]
    fn gdb_and_icount_add_their_flags() {
        let config = LaunchConfig {
            gdb: true,
            icount: true,
            ..virt_test()
        };
        let words = words(&config).join(" ");
        assert!(words.contains(" -icount shift=0 "));
        assert!(words.contains(" -s -S "));
    }

    #[test]
    fn the_append_string_stays_one_argument() {
        let args = words(&virt_test());
        let append = args.iter().position(|word| word == "-append");
        assert_eq!(
            append.map(|i| args[i + 1].as_str()),
            Some("portcullis.exit=semihosting")
        );
    }

    #[test]
    fn shell_command_quotes_words_with_spaces() {
        let rendered = shell_command(
            std::path::Path::new("qemu-system-aarch64"),
            &virt_test().qemu_args(),
        );
        assert!(rendered.starts_with("qemu-system-aarch64 -M virt,gic-version=2 "));
        assert!(rendered.ends_with(" -append portcullis.exit=semihosting"));
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
