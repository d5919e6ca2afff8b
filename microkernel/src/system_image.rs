//! Finding the system image the loader placed beside the kernel.
//!
//! A system image (`abi::system::image`) is a whole system in one file,
//! loaded into RAM next to the kernel so the kernel is never relinked per
//! system. The kernel looks in two places, in this order:
//!
//! 1. the initrd the device tree names (`/chosen`'s `linux,initrd-start`
//!    and `-end`: the Pi firmware's `initramfs FILE ADDRESS` line, QEMU's
//!    `-initrd`);
//! 2. the board's fixed load address (`arch::boards::Board::
//!    system_image_address`: QEMU's `-device loader`, which names nothing
//!    in the tree).
//!
//! A place holds an image only if its start is page-aligned (the root
//! gets those very pages, mapped in place), the header's magic and sizes
//! are acceptable (`ImageHeader::parse`: the first 64 bytes, all the
//! kernel reads), the whole image lies in one range of mapped RAM, and it
//! overlaps nothing the kernel keeps (its image, the device tree, the
//! firmware's reservations). Its checksum and plan are the root's to
//! check. Finding one is pure: the bytes are read through the caller's
//! `read`, so the rules are tested on the host.

use abi::system::image::{ImageError, ImageHeader, HEADER_BYTES};
use arch::boards::PhysRange;
use arch::layout::PAGE_SIZE;

/// Where an image was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageSource {
    /// The device tree's initrd.
    DeviceTree,
    /// The board's fixed load address.
    BoardAddress,
}

impl ImageSource {
    /// How the console line says it.
    pub const fn describe(self) -> &'static str {
        match self {
            ImageSource::DeviceTree => "from the device tree",
            ImageSource::BoardAddress => "at the board's load address",
        }
    }
}

/// A system image found in RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemImage {
    /// Its bytes: from its page-aligned start, its header's total size.
    pub range: PhysRange,
    /// Where it was found.
    pub source: ImageSource,
}

/// Why a place that looked like it held an image does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The header is not acceptable.
    Header(ImageError),
    /// The header says more bytes than the device tree's initrd holds.
    LongerThanInitrd,
    /// It does not start on a page (it is mapped in place).
    NotPageAligned,
    /// Some of it lies outside mapped RAM.
    OutsideRam,
    /// It overlaps memory the kernel or the firmware keeps.
    OverlapsKept,
}

impl Refusal {
    /// A short description for the console line.
    pub const fn describe(self) -> &'static str {
        match self {
            Refusal::Header(error) => error.describe(),
            Refusal::LongerThanInitrd => "its header says more bytes than the initrd holds",
            Refusal::NotPageAligned => "it does not start on a page",
            Refusal::OutsideRam => "it does not lie wholly in mapped RAM",
            Refusal::OverlapsKept => "it overlaps memory the kernel or the firmware keeps",
        }
    }
}

/// A refused place, for the console.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    /// Where it was looked for.
    pub address: u64,
    /// Which place it was.
    pub source: ImageSource,
    /// Why it holds no image.
    pub reason: Refusal,
}

/// What looking found: the image, if any, and a place that was refused
/// (a device-tree initrd that is not an image, or bytes at the board's
/// address with the magic but bad sizes), if any. Nothing at the board's
/// address (no magic, or no RAM there) is no refusal: it is the usual
/// boot without an image.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Search {
    /// The image.
    pub found: Option<SystemImage>,
    /// A place that was refused.
    pub refused: Option<Refused>,
}

/// Looks for the image: in `initrd` (the device tree's), then at
/// `board_address`. `mapped` is the RAM in the linear map, `kept` what
/// must not be handed to user space, and `read(address, out)` reads
/// mapped RAM.
pub fn locate(
    initrd: Option<PhysRange>,
    board_address: u64,
    mapped: &[PhysRange],
    kept: &[PhysRange],
    read: impl Fn(u64, &mut [u8]),
) -> Search {
    let mut search = Search::default();
    let candidates = [
        initrd.map(|range| (range.start, Some(range.size), ImageSource::DeviceTree)),
        Some((board_address, None, ImageSource::BoardAddress)),
    ];
    for (address, limit, source) in candidates.into_iter().flatten() {
        match look_at(address, limit, mapped, kept, &read) {
            Ok(Some(bytes)) => {
                search.found = Some(SystemImage {
                    range: PhysRange {
                        start: address,
                        size: bytes,
                    },
                    source,
                });
                return search;
            }
            Ok(None) => {}
            Err(reason) => {
                search.refused.get_or_insert(Refused {
                    address,
                    source,
                    reason,
                });
            }
        }
    }
    search
}

/// The image's bytes at `address` (at most `limit`, when the device tree
/// says how long the file is); `Ok(None)` for nothing there at all (only
/// at the board's address, where no image is the usual case).
fn look_at(
    address: u64,
    limit: Option<u64>,
    mapped: &[PhysRange],
    kept: &[PhysRange],
    read: &impl Fn(u64, &mut [u8]),
) -> Result<Option<u64>, Refusal> {
    let from_tree = limit.is_some();
    let in_mapped = |start: u64, bytes: u64| {
        start
            .checked_add(bytes)
            .is_some_and(|end| mapped.iter().any(|r| r.start <= start && end <= r.end()))
    };
    if !address.is_multiple_of(PAGE_SIZE) {
        return if from_tree {
            Err(Refusal::NotPageAligned)
        } else {
            Ok(None)
        };
    }
    if !in_mapped(address, HEADER_BYTES as u64) {
        return if from_tree {
            Err(Refusal::OutsideRam)
        } else {
            Ok(None)
        };
    }
    let mut header = [0u8; HEADER_BYTES];
    read(address, &mut header);
    let header = match ImageHeader::parse(&header) {
        Ok(header) => header,
        Err(ImageError::BadMagic) if !from_tree => return Ok(None),
        Err(error) => return Err(Refusal::Header(error)),
    };
    let bytes = header.total_bytes;
    if limit.is_some_and(|limit| bytes > limit) {
        return Err(Refusal::LongerThanInitrd);
    }
    if !in_mapped(address, bytes) {
        return Err(Refusal::OutsideRam);
    }
    let pages = PhysRange {
        start: address,
        size: bytes.div_ceil(PAGE_SIZE) * PAGE_SIZE,
    };
    if kept
        .iter()
        .any(|k| k.size > 0 && k.start < pages.end() && pages.start < k.end())
    {
        return Err(Refusal::OverlapsKept);
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::system::image::{checksum, MAX_IMAGE_BYTES};
    use std::collections::HashMap;
    use std::vec::Vec;

    const RAM: PhysRange = PhysRange {
        start: 0x4000_0000,
        size: 1 << 30,
    };
    const BOARD: u64 = 0x4200_0000;
    const KERNEL: PhysRange = PhysRange {
        start: 0x4020_0000,
        size: 0x20_0000,
    };

    /// RAM holding `images` (address, bytes); zero elsewhere.
    struct Memory(HashMap<u64, Vec<u8>>);

    impl Memory {
        fn with(images: &[(u64, Vec<u8>)]) -> Memory {
            Memory(images.iter().cloned().collect())
        }

        fn read(&self, address: u64, out: &mut [u8]) {
            out.fill(0);
            for (start, bytes) in &self.0 {
                if *start <= address && address < start + bytes.len() as u64 {
                    let offset = (address - start) as usize;
                    let n = out.len().min(bytes.len() - offset);
                    out[..n].copy_from_slice(&bytes[offset..offset + n]);
                }
            }
        }

        fn locate(&self, initrd: Option<PhysRange>) -> Search {
            locate(initrd, BOARD, &[RAM], &[KERNEL], |a, out| self.read(a, out))
        }
    }

    fn image(body: usize) -> Vec<u8> {
        let body: Vec<u8> = (0..body).map(|i| i as u8).collect();
        let header = ImageHeader {
            total_bytes: (HEADER_BYTES + body.len()) as u64,
            plan_offset: HEADER_BYTES as u64,
            plan_bytes: body.len() as u64,
            checksum: checksum(&body),
        };
        let mut bytes = header.encode().to_vec();
        bytes.extend_from_slice(&body);
        bytes
    }

    fn range(start: u64, size: u64) -> PhysRange {
        PhysRange { start, size }
    }

    #[test]
    fn nothing_anywhere_is_no_image_and_no_complaint() {
        assert_eq!(Memory::with(&[]).locate(None), Search::default());
    }

    #[test]
    fn the_device_trees_initrd_comes_first() {
        let memory = Memory::with(&[(0x4800_0000, image(5000)), (BOARD, image(10))]);
        let search = memory.locate(Some(range(0x4800_0000, 5064)));
        let found = search.found.expect("an image");
        assert_eq!(found.range, range(0x4800_0000, 5064));
        assert_eq!(found.source, ImageSource::DeviceTree);
        assert_eq!(search.refused, None);
        // The initrd may be longer than the image (the file was padded).
        let search = memory.locate(Some(range(0x4800_0000, 0x10_0000)));
        assert_eq!(search.found.map(|f| f.range.size), Some(5064));
    }

    #[test]
    fn the_boards_address_is_the_fallback() {
        let memory = Memory::with(&[(BOARD, image(100))]);
        let found = memory.locate(None).found.expect("an image");
        assert_eq!(found.range, range(BOARD, 164));
        assert_eq!(found.source, ImageSource::BoardAddress);
        // A device-tree initrd that is no image is named, and the board's
        // address still looked at.
        let search = memory.locate(Some(range(0x4800_0000, 0x1000)));
        assert_eq!(
            search.found.map(|f| f.source),
            Some(ImageSource::BoardAddress)
        );
        assert_eq!(
            search.refused,
            Some(Refused {
                address: 0x4800_0000,
                source: ImageSource::DeviceTree,
                reason: Refusal::Header(ImageError::BadMagic),
            })
        );
    }

    #[test]
    fn bad_places_are_refused_with_why() {
        let refusal = |memory: &Memory, initrd| {
            let search = memory.locate(Some(initrd));
            assert_eq!(search.found, None);
            search.refused.map(|r| r.reason)
        };
        let at = |address| Memory::with(&[(address, image(100))]);
        assert_eq!(
            refusal(&at(0x4800_0000), range(0x4800_0000, 100)),
            Some(Refusal::LongerThanInitrd)
        );
        assert_eq!(
            refusal(&at(0x4800_0010), range(0x4800_0010, 0x1000)),
            Some(Refusal::NotPageAligned)
        );
        assert_eq!(
            refusal(&at(0x9000_0000), range(0x9000_0000, 0x1000)),
            Some(Refusal::OutsideRam)
        );
        // It starts in RAM and runs past its end.
        let mut long = image(100);
        long[8..16].copy_from_slice(&(0x2000u64).to_le_bytes());
        let end = Memory::with(&[(RAM.end() - 0x1000, long)]);
        assert_eq!(
            refusal(&end, range(RAM.end() - 0x1000, 0x2000)),
            Some(Refusal::OutsideRam)
        );
        assert_eq!(
            refusal(
                &at(KERNEL.start + 0x1000),
                range(KERNEL.start + 0x1000, 0x1000)
            ),
            Some(Refusal::OverlapsKept)
        );
        // Its last page overlaps the kernel's first.
        let mut below = image(100);
        below[8..16].copy_from_slice(&0x1001u64.to_le_bytes());
        let below = Memory::with(&[(KERNEL.start - 0x1000, below)]);
        assert_eq!(
            refusal(&below, range(KERNEL.start - 0x1000, 0x2000)),
            Some(Refusal::OverlapsKept)
        );
        let mut huge = image(100);
        huge[8..16].copy_from_slice(&(MAX_IMAGE_BYTES + 1).to_le_bytes());
        assert_eq!(
            refusal(
                &Memory::with(&[(0x4800_0000, huge)]),
                range(0x4800_0000, 1 << 27)
            ),
            Some(Refusal::Header(ImageError::BadSize))
        );
    }

    #[test]
    fn at_the_boards_address_only_a_bad_image_is_named() {
        // The magic with impossible sizes: someone meant an image there.
        let mut bad = image(100);
        bad[8..16].copy_from_slice(&8u64.to_le_bytes());
        let search = Memory::with(&[(BOARD, bad)]).locate(None);
        assert_eq!(search.found, None);
        assert_eq!(
            search.refused.map(|r| (r.source, r.reason)),
            Some((
                ImageSource::BoardAddress,
                Refusal::Header(ImageError::BadSize)
            ))
        );
        // No RAM at the board's address (a smaller machine): nothing said.
        let search = locate(
            None,
            BOARD,
            &[range(0x4000_0000, 0x100_0000)],
            &[],
            |_, _| panic!("only mapped RAM is read"),
        );
        assert_eq!(search, Search::default());
    }
}
