//! Tests of `system_image`.

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
