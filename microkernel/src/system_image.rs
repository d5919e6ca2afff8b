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
mod tests;
