//! What the kernel hands the root task, and where it says so.
//!
//! The root task is the first thread of a root-task case (the first step
//! of the demo, and a case of the in-guest suite). Before it runs, the
//! kernel fills its CNode (`2^ROOT_CNODE_RADIX` slots) with:
//!
//! | slot | capability | rights |
//! |------|------------|--------|
//! | [`ROOT_CNODE_SLOT`] (0) | its own CNode | read, write |
//! | [`ROOT_CONSOLE_SLOT`] (1) | the debug console | read (its input), write |
//! | [`ROOT_TCB_SLOT`] | its own TCB | all |
//! | [`ROOT_VSPACE_SLOT`] | its own VSpace | all |
//! | [`ROOT_IPC_BUFFER_SLOT`] | the Frame of its IPC buffer (mapped at `IPC_BUFFER_ADDRESS`) | read, write |
//! | [`ROOT_IRQ_SLOT`] | an IrqHandler for the interrupt `BootInfo::irq` names | all |
//! | [`ROOT_IRQ_CONTROL_SLOT`] | the IrqControl: an IrqHandler for any interrupt the kernel does not keep (`IrqControlGet`) | all |
//! | [`ROOT_INSPECTOR_SLOT`] | the Inspector: reads every thread and CSpace ([`crate::inspect`]) | read |
//! | [`ROOT_FIRST_UNTYPED_SLOT`].. | one Untyped per block of free RAM | all |
//! | [`ROOT_FIRST_DEVICE_UNTYPED_SLOT`].. | one device Untyped per block of device memory the kernel does not use | all |
//!
//! Every other slot is empty. The free RAM is all RAM the kernel had not
//! used when the root started, cut into naturally aligned power-of-two
//! blocks (what an Untyped is), lowest address first within each free
//! range; at most [`MAX_BOOT_UNTYPEDS`] of them. If the free RAM needs
//! more blocks than that, the smallest stay with the kernel, and so do
//! the fewest smallest blocks that make up
//! `abi::vspace::MAX_TABLE_PAGES` pages (the page tables of the root's
//! own, kernel-made address space come from the kernel's pool):
//! `kernel_kept_pages` says how much.
//!
//! Device memory (MMIO) the kernel does not use is cut the same way, at
//! most [`MAX_BOOT_DEVICE_UNTYPEDS`] blocks, lowest address first: each is
//! a *device* Untyped, from which `Retype` makes only Frames (never
//! zeroed), their records paid by a RAM Untyped named in `x6`, and which
//! `FrameMap` maps as Device-nGnRE memory, never executable.
//!
//! Its address space holds, besides its program, a read-only copy of its
//! whole ELF file at [`ROOT_IMAGE_ADDRESS`] (`BootInfo::image_bytes` long),
//! so it can load its own programs into the spaces it builds, and
//! `BootInfo::command_line` has the kernel's command line (the device
//! tree's `/chosen/bootargs`), which the kernel passes on without reading
//! more of it than its own `portcullis.*` options.
//!
//! When the loader placed a system image beside the kernel
//! (`crate::system::image`: the device tree's initrd, else the board's
//! fixed load address), the root also finds it, read-only, at
//! [`SYSTEM_IMAGE_ADDRESS`] (`BootInfo::system_image_bytes` long; 0: there
//! is none). The kernel checked only its header's magic and sizes; the
//! checksum and the plan are the root's to check. Its pages are the very
//! RAM the loader put it in (kept from the Untypeds, never freed), mapped
//! in place rather than copied: an image may be 64 MiB.
//!
//! The root's fixed addresses, lowest first:
//!
//! | address | what |
//! |---|---|
//! | the ELF's segments | its program |
//! | `abi::vspace::FRAME_MAP_START`..`FRAME_MAP_END` | the frame window (`FrameMap`) |
//! | [`ROOT_IMAGE_ADDRESS`] | its own ELF file (under 2 MiB: a kernel-built space owns at most 512 frames) |
//! | [`SYSTEM_IMAGE_ADDRESS`] | the system image (at most `MAX_IMAGE_BYTES`, 64 MiB) |
//! | `abi::USER_STACK_TOP` - 16 pages | the stack |
//! | `abi::IPC_BUFFER_ADDRESS` | the IPC buffer |
//!
//! The [`BootInfo`] itself is written into the root's IPC buffer as words
//! (little-endian u64, from word 0) before it starts. The buffer is also
//! where long messages go, so the root reads it first thing, before its
//! first IPC.

/// The root's own CNode.
pub const ROOT_CNODE_SLOT: u64 = 0;
/// The debug console.
pub const ROOT_CONSOLE_SLOT: u64 = 1;
/// The root's own TCB.
pub const ROOT_TCB_SLOT: u64 = 2;
/// The root's own VSpace.
pub const ROOT_VSPACE_SLOT: u64 = 3;
/// The Frame of the root's IPC buffer.
pub const ROOT_IPC_BUFFER_SLOT: u64 = 4;
/// The IrqHandler the root is given.
pub const ROOT_IRQ_SLOT: u64 = 5;
/// The IrqControl capability: `IrqControlGet` through it makes an
/// IrqHandler for any interrupt the kernel does not keep.
pub const ROOT_IRQ_CONTROL_SLOT: u64 = 6;
/// The Inspector capability (`Syscall::InspectThread`, `InspectCaps`).
pub const ROOT_INSPECTOR_SLOT: u64 = 7;
/// The first Untyped; the others follow in consecutive slots.
pub const ROOT_FIRST_UNTYPED_SLOT: u64 = 16;
/// Most Untyped capabilities the root is given.
pub const MAX_BOOT_UNTYPEDS: usize = 64;
/// The first device Untyped; the others follow in consecutive slots.
pub const ROOT_FIRST_DEVICE_UNTYPED_SLOT: u64 = ROOT_FIRST_UNTYPED_SLOT + MAX_BOOT_UNTYPEDS as u64;
/// Most device Untyped capabilities the root is given.
pub const MAX_BOOT_DEVICE_UNTYPEDS: usize = 48;
/// The root's CNode has `2^ROOT_CNODE_RADIX` slots.
pub const ROOT_CNODE_RADIX: u8 = 12;
/// The root task's `x0` at its first instruction: it tells the root
/// from the other threads an ELF's entry may be started as (by the
/// root itself, which picks their `x0`).
pub const ROOT_ARGUMENT: u64 = 0x524f_4f54_5441_534b;
/// The first slot the root finds empty after the Untypeds, whatever
/// their number.
pub const ROOT_FIRST_FREE_SLOT: u64 =
    ROOT_FIRST_DEVICE_UNTYPED_SLOT + MAX_BOOT_DEVICE_UNTYPEDS as u64;

/// Where the root finds the read-only copy of its own ELF file: just past
/// the frame window (`abi::vspace::FRAME_MAP_END`), below the stack.
pub const ROOT_IMAGE_ADDRESS: u64 = 0x0000_7000_0000_0000;
/// Where the root finds the system image, read-only: 8 TiB above
/// [`ROOT_IMAGE_ADDRESS`] (far past any ELF copy), and
/// [`crate::system::image::MAX_IMAGE_BYTES`] from here end far below the
/// stack; 1 GiB-aligned, so the image's page tables are the fewest.
pub const SYSTEM_IMAGE_ADDRESS: u64 = 0x0000_7800_0000_0000;
const _: () = assert!(
    SYSTEM_IMAGE_ADDRESS >= ROOT_IMAGE_ADDRESS + (1 << 40)
        && SYSTEM_IMAGE_ADDRESS + crate::system::image::MAX_IMAGE_BYTES
            < crate::USER_STACK_TOP - (1 << 30)
        && SYSTEM_IMAGE_ADDRESS.is_multiple_of(1 << 30)
);
/// The longest command line passed on (longer ones are cut there).
pub const MAX_COMMAND_LINE: usize = 512;

/// Word 0 of a boot-info block ("PCBOOT" and a version byte).
pub const BOOT_INFO_MAGIC: u64 = 0x5043_424f_4f54_0004;
/// Words before the Untyped descriptors.
const HEADER_WORDS: usize = 8;
/// Words of the command line.
const COMMAND_LINE_WORDS: usize = MAX_COMMAND_LINE / 8;
/// Words a boot-info block takes at most.
pub const BOOT_INFO_WORDS: usize =
    HEADER_WORDS + MAX_BOOT_UNTYPEDS + MAX_BOOT_DEVICE_UNTYPEDS + COMMAND_LINE_WORDS;
// The block fits in the IPC buffer (512 words).
const _: () = assert!(BOOT_INFO_WORDS <= 512);

/// One Untyped the root is given (of RAM, or of device memory): a
/// naturally aligned block of `2^size_bits` bytes at physical address
/// `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BootUntyped {
    /// Physical address of the block (aligned to its size).
    pub base: u64,
    /// log2 of the block's size in bytes (12 ..= 47).
    pub size_bits: u8,
}

impl BootUntyped {
    /// The block's size in bytes.
    pub const fn bytes(self) -> u64 {
        1 << self.size_bits
    }

    /// Packs the descriptor in one word: the base's page-aligned address
    /// with the size in the low bits, which the alignment leaves free.
    const fn encode(self) -> u64 {
        self.base | self.size_bits as u64
    }

    fn decode(word: u64) -> Result<BootUntyped, BootInfoError> {
        let size_bits = (word & 0xfff) as u8;
        let base = word & !0xfff;
        if !(12..=47).contains(&size_bits) || base & ((1 << size_bits) - 1) != 0 {
            return Err(BootInfoError::BadUntyped);
        }
        Ok(BootUntyped { base, size_bits })
    }
}

/// What the kernel tells the root task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootInfo {
    /// The interrupt the IrqHandler in [`ROOT_IRQ_SLOT`] is for.
    pub irq: u32,
    /// Pages of free RAM the kernel kept: the smallest blocks, those that
    /// did not fit in [`MAX_BOOT_UNTYPEDS`] and those that make up
    /// `abi::vspace::MAX_TABLE_PAGES` for the root's own page tables.
    pub kernel_kept_pages: u64,
    /// The Untypeds, in slot order from [`ROOT_FIRST_UNTYPED_SLOT`].
    pub untypeds: heapless::Vec<BootUntyped, MAX_BOOT_UNTYPEDS>,
    /// The device Untypeds, in slot order from
    /// [`ROOT_FIRST_DEVICE_UNTYPED_SLOT`].
    pub devices: heapless::Vec<BootUntyped, MAX_BOOT_DEVICE_UNTYPEDS>,
    /// Bytes of the ELF copy at [`ROOT_IMAGE_ADDRESS`] (0: none).
    pub image_bytes: u64,
    /// Bytes of the system image at [`SYSTEM_IMAGE_ADDRESS`] (0: none):
    /// its header's total size.
    pub system_image_bytes: u64,
    /// The kernel's command line (at most [`MAX_COMMAND_LINE`] bytes).
    pub command_line: heapless::Vec<u8, MAX_COMMAND_LINE>,
}

/// Why a boot-info block could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootInfoError {
    /// Fewer words than the block needs.
    Truncated,
    /// Word 0 is not [`BOOT_INFO_MAGIC`].
    BadMagic,
    /// More Untypeds than [`MAX_BOOT_UNTYPEDS`], or device Untypeds than
    /// [`MAX_BOOT_DEVICE_UNTYPEDS`].
    TooManyUntypeds,
    /// An Untyped descriptor is not a naturally aligned block.
    BadUntyped,
    /// The command line is longer than [`MAX_COMMAND_LINE`].
    BadCommandLine,
}

impl BootInfo {
    /// The slot of the `index`th Untyped.
    pub const fn untyped_slot(index: usize) -> u64 {
        ROOT_FIRST_UNTYPED_SLOT + index as u64
    }

    /// The slot of the `index`th device Untyped.
    pub const fn device_untyped_slot(index: usize) -> u64 {
        ROOT_FIRST_DEVICE_UNTYPED_SLOT + index as u64
    }

    /// The index of the device Untyped whose block holds physical
    /// address `phys`, if one does.
    pub fn device_covering(&self, phys: u64) -> Option<usize> {
        self.devices
            .iter()
            .position(|d| d.base <= phys && phys - d.base < d.bytes())
    }

    /// Total bytes of the Untypeds.
    pub fn untyped_bytes(&self) -> u64 {
        self.untypeds.iter().map(|u| u.bytes()).sum()
    }

    /// Writes the block into `words` (at least [`BOOT_INFO_WORDS`] long);
    /// returns the number of words written.
    pub fn encode(&self, words: &mut [u64; BOOT_INFO_WORDS]) -> usize {
        words[0] = BOOT_INFO_MAGIC;
        words[1] = u64::from(self.irq);
        words[2] = self.kernel_kept_pages;
        words[3] = self.untypeds.len() as u64;
        words[4] = self.image_bytes;
        words[5] = self.command_line.len() as u64;
        words[6] = self.devices.len() as u64;
        words[7] = self.system_image_bytes;
        let blocks = self.untypeds.iter().chain(&self.devices);
        for (word, untyped) in words[HEADER_WORDS..].iter_mut().zip(blocks) {
            *word = untyped.encode();
        }
        let line = HEADER_WORDS + self.untypeds.len() + self.devices.len();
        for (word, bytes) in words[line..].iter_mut().zip(self.command_line.chunks(8)) {
            let mut le = [0u8; 8];
            le[..bytes.len()].copy_from_slice(bytes);
            *word = u64::from_le_bytes(le);
        }
        line + self.command_line.len().div_ceil(8)
    }

    /// The value of the `key=value` word of the command line whose key is
    /// `key`, if there is one (the first).
    pub fn option(&self, key: &str) -> Option<&str> {
        let line = core::str::from_utf8(&self.command_line).ok()?;
        line.split_ascii_whitespace()
            .filter_map(|word| word.split_once('='))
            .find(|(k, _)| *k == key)
            .map(|(_, value)| value)
    }

    /// Reads a block the kernel wrote; every field is checked.
    pub fn decode(words: &[u64]) -> Result<BootInfo, BootInfoError> {
        let header = words.get(..HEADER_WORDS).ok_or(BootInfoError::Truncated)?;
        if header[0] != BOOT_INFO_MAGIC {
            return Err(BootInfoError::BadMagic);
        }
        let count = usize::try_from(header[3]).map_err(|_| BootInfoError::TooManyUntypeds)?;
        let device_count =
            usize::try_from(header[6]).map_err(|_| BootInfoError::TooManyUntypeds)?;
        if count > MAX_BOOT_UNTYPEDS || device_count > MAX_BOOT_DEVICE_UNTYPEDS {
            return Err(BootInfoError::TooManyUntypeds);
        }
        let descriptors = words
            .get(HEADER_WORDS..HEADER_WORDS + count + device_count)
            .ok_or(BootInfoError::Truncated)?;
        let mut untypeds = heapless::Vec::new();
        let mut devices = heapless::Vec::new();
        for (index, &word) in descriptors.iter().enumerate() {
            let block = BootUntyped::decode(word)?;
            // Cannot overflow: both counts were checked against the
            // capacities.
            let _ = if index < count {
                untypeds.push(block)
            } else {
                devices.push(block)
            };
        }
        let length = usize::try_from(header[5]).map_err(|_| BootInfoError::BadCommandLine)?;
        if length > MAX_COMMAND_LINE {
            return Err(BootInfoError::BadCommandLine);
        }
        let first = HEADER_WORDS + count + device_count;
        let line_words = words
            .get(first..first + length.div_ceil(8))
            .ok_or(BootInfoError::Truncated)?;
        let mut command_line = heapless::Vec::new();
        for byte in line_words.iter().flat_map(|w| w.to_le_bytes()).take(length) {
            // Cannot overflow: `length` was checked against the capacity.
            let _ = command_line.push(byte);
        }
        Ok(BootInfo {
            irq: u32::try_from(header[1]).map_err(|_| BootInfoError::BadUntyped)?,
            kernel_kept_pages: header[2],
            untypeds,
            devices,
            image_bytes: header[4],
            system_image_bytes: header[7],
            command_line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BootInfo {
        let mut untypeds = heapless::Vec::new();
        untypeds
            .push(BootUntyped {
                base: 0x4800_0000,
                size_bits: 27,
            })
            .unwrap();
        untypeds
            .push(BootUntyped {
                base: 0x4060_1000,
                size_bits: 12,
            })
            .unwrap();
        let mut devices = heapless::Vec::new();
        devices
            .push(BootUntyped {
                base: 0x0a00_0000,
                size_bits: 25,
            })
            .unwrap();
        BootInfo {
            irq: 30,
            kernel_kept_pages: 3,
            untypeds,
            devices,
            image_bytes: 635_480,
            system_image_bytes: 123_456,
            command_line: heapless::Vec::from_slice(b"portcullis.mode=test console=ttyAMA0")
                .unwrap(),
        }
    }

    #[test]
    fn encode_then_decode_is_identity() {
        let info = sample();
        let mut words = [0; BOOT_INFO_WORDS];
        let used = info.encode(&mut words);
        assert_eq!(used, 8 + 2 + 1 + 5);
        assert_eq!(words[6], 1, "one device Untyped");
        assert_eq!(words[7], 123_456, "the system image's bytes");
        assert_eq!(words[10], 0x0a00_0000 | 25, "after the RAM Untypeds");
        assert_eq!(BootInfo::decode(&words[..used]), Ok(info.clone()));
        assert_eq!(info.device_covering(0x0a00_0200), Some(0));
        assert_eq!(info.device_covering(0x0c00_0000), None);
        assert_eq!(
            BootInfo::device_untyped_slot(1),
            ROOT_FIRST_DEVICE_UNTYPED_SLOT + 1
        );
        assert_eq!(info.untyped_bytes(), (1 << 27) + 4096);
        assert_eq!(info.option("portcullis.mode"), Some("test"));
        assert_eq!(info.option("console"), Some("ttyAMA0"));
        assert_eq!(info.option("portcullis"), None);
    }

    #[test]
    fn no_system_image_is_zero_bytes_and_round_trips() {
        let info = BootInfo {
            system_image_bytes: 0,
            ..sample()
        };
        let mut words = [0; BOOT_INFO_WORDS];
        let used = info.encode(&mut words);
        assert_eq!(words[7], 0);
        assert_eq!(BootInfo::decode(&words[..used]), Ok(info));
        // A block of the version before (no system image word) is refused,
        // not misread.
        words[0] = 0x5043_424f_4f54_0003;
        assert_eq!(BootInfo::decode(&words), Err(BootInfoError::BadMagic));
    }

    #[test]
    fn a_full_command_line_fits() {
        let mut info = sample();
        info.command_line.clear();
        info.command_line.resize(MAX_COMMAND_LINE, b'x').unwrap();
        let mut words = [0; BOOT_INFO_WORDS];
        let used = info.encode(&mut words);
        assert_eq!(BootInfo::decode(&words[..used]), Ok(info));
    }

    #[test]
    fn malformed_blocks_are_refused() {
        let info = sample();
        let mut words = [0; BOOT_INFO_WORDS];
        let used = info.encode(&mut words);
        assert_eq!(
            BootInfo::decode(&words[..used - 1]),
            Err(BootInfoError::Truncated)
        );
        assert_eq!(BootInfo::decode(&[]), Err(BootInfoError::Truncated));
        let mut bad = words;
        bad[0] ^= 1;
        assert_eq!(BootInfo::decode(&bad), Err(BootInfoError::BadMagic));
        let mut bad = words;
        bad[5] = MAX_COMMAND_LINE as u64 + 1;
        assert_eq!(BootInfo::decode(&bad), Err(BootInfoError::BadCommandLine));
        let mut bad = words;
        bad[3] = MAX_BOOT_UNTYPEDS as u64 + 1;
        assert_eq!(BootInfo::decode(&bad), Err(BootInfoError::TooManyUntypeds));
        let mut bad = words;
        bad[6] = MAX_BOOT_DEVICE_UNTYPEDS as u64 + 1;
        assert_eq!(BootInfo::decode(&bad), Err(BootInfoError::TooManyUntypeds));
        let mut bad = words;
        bad[10] = 0x0a00_1000 | 25; // a device block not aligned to its size
        assert_eq!(BootInfo::decode(&bad), Err(BootInfoError::BadUntyped));
        let mut bad = words;
        bad[6] = 40; // more device descriptors than there are words
        assert_eq!(
            BootInfo::decode(&bad[..used]),
            Err(BootInfoError::Truncated)
        );
        let mut bad = words;
        bad[8] = 0x4800_1000 | 27; // not aligned to 128 MiB
        assert_eq!(BootInfo::decode(&bad), Err(BootInfoError::BadUntyped));
        let mut bad = words;
        bad[8] = 0x4800_0000 | 11; // smaller than a page
        assert_eq!(BootInfo::decode(&bad), Err(BootInfoError::BadUntyped));
    }
}
