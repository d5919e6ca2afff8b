//! Program ELF files: the one parser (`abi::elf`) the kernel loads init
//! with and the SDK's task loader plans tasks with.

use super::task_loader;
use abi::elf::{self, ElfError, Image, IMAGE_START, MAX_PAGES, MAX_SEGMENTS, PAGE_SIZE};
use abi::vspace::MapRights;
use arch::layout::is_user_range;
use microkernel::address_space::{parse_program, MAX_PROGRAM_PAGES};

/// Zero bytes appended to an accepted file to check that trailing data
/// changes nothing.
const PADDING: usize = 16;

/// Parses `data` as a program, as the kernel and as the SDK do.
///
/// Checks: parsing never panics; an accepted image has 1..=`MAX_SEGMENTS`
/// segments in ascending order sharing no page and at most `MAX_PAGES`
/// pages; every segment lies in the user half and off page 0, has its
/// rights (never W+X), holds no more file bytes than memory bytes, lies
/// inside the file, and keeps offset and address equal modulo the page
/// size; the entry point is inside an executable segment; trailing bytes
/// change nothing. The kernel's check (`parse_program`, its own page
/// limit) gives the same image or the same refusal, but for the page
/// count. Then the SDK's loader (`task_loader::check`) plans, builds and
/// `load_elf`s it.
pub fn elf_image(data: &[u8]) {
    let parsed = elf::parse(data);
    check_kernel_agrees(data, parsed);
    if let Ok(image) = &parsed {
        check_image(image, data.len() as u64, MAX_PAGES);
        let mut padded = data.to_vec();
        padded.resize(data.len() + PADDING, 0);
        assert_eq!(
            elf::parse(&padded),
            parsed,
            "trailing bytes changed the image"
        );
    }
    task_loader::check(data, parsed.err());
}

/// `parse_program` differs from `parse` only in its page limit: where
/// `parse` stops at the page count, the kernel's check accepts or makes
/// the one check that comes after it (the entry point).
fn check_kernel_agrees(data: &[u8], parsed: Result<Image, ElfError>) {
    let kernel = parse_program(data);
    match (parsed, kernel) {
        (Err(ElfError::TooManyPages), Ok(image)) => {
            check_image(&image, data.len() as u64, MAX_PROGRAM_PAGES);
            assert!(image.page_count() > MAX_PAGES);
        }
        (Err(ElfError::TooManyPages), Err(error)) => assert!(
            matches!(error, ElfError::TooManyPages | ElfError::EntryOutsideCode),
            "the kernel refused {error:?} what parse found too large"
        ),
        (parsed, kernel) => assert_eq!(kernel, parsed, "the kernel disagrees"),
    }
}

fn check_image(image: &Image, file_len: u64, max_pages: usize) {
    let segments = image.segments();
    assert!(!segments.is_empty() && segments.len() <= MAX_SEGMENTS);
    assert!(
        image.page_count() <= max_pages,
        "{} pages",
        image.page_count()
    );
    for pair in segments.windows(2) {
        assert!(
            pair[0].end_page() <= pair[1].first_page(),
            "{pair:?} share a page"
        );
    }
    for segment in segments {
        // The kernel's own check before the parsers were one: the user
        // half, and not the null page.
        assert!(
            is_user_range(
                segment.first_page(),
                segment.end_page() - segment.first_page()
            ) && segment.first_page() >= IMAGE_START,
            "segment outside the user half: {segment:?}"
        );
        assert!(segment.mem_size > 0, "{segment:?}");
        assert!(segment.file_size <= segment.mem_size, "{segment:?}");
        let end = segment.offset.checked_add(segment.file_size);
        assert!(
            end.is_some_and(|end| end <= file_len),
            "past the file: {segment:?}"
        );
        assert_eq!(
            segment.vaddr % PAGE_SIZE,
            segment.offset % PAGE_SIZE,
            "{segment:?}"
        );
    }
    let entry_in_code = segments.iter().any(|s| {
        s.rights == MapRights::ReadExecute
            && image.entry >= s.vaddr
            && image.entry - s.vaddr < s.mem_size
    });
    assert!(entry_in_code, "entry {:#x} outside the code", image.entry);
}
