//! User program ELF files: the kernel loads what `elf::parse` accepts.

use arch::layout::{is_user_range, PAGE_SIZE};
use microkernel::elf::{self, Program};

/// Zero bytes appended to an accepted file to check that trailing data
/// changes nothing.
const PADDING: usize = 16;

/// Parses `data` as a user program.
///
/// Checks: parsing never panics; an accepted program has at least one
/// segment; every segment lies in the user half and not at address 0, is
/// never writable and executable at once, holds no more file bytes than
/// memory bytes, lies inside the file, and keeps offset and address equal
/// modulo the page size; the entry point is inside an executable segment;
/// bytes appended after the file do not change the result.
pub fn elf_program(data: &[u8]) {
    let Ok(program) = elf::parse(data) else {
        return;
    };
    check_program(&program, data.len() as u64);
    let mut padded = data.to_vec();
    padded.resize(data.len() + PADDING, 0);
    assert_eq!(
        elf::parse(&padded),
        Ok(program),
        "trailing bytes changed the program"
    );
}

fn check_program(program: &Program, file_len: u64) {
    assert!(!program.segments.is_empty(), "a program without segments");
    for segment in &program.segments {
        assert!(
            !(segment.writable() && segment.executable()),
            "W+X segment accepted: {segment:?}"
        );
        assert!(
            is_user_range(segment.vaddr, segment.mem_size) && segment.vaddr != 0,
            "segment outside the user half: {segment:?}"
        );
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
    let entry_in_code = program.segments.iter().any(|s| {
        s.executable() && program.entry >= s.vaddr && program.entry - s.vaddr < s.mem_size
    });
    assert!(entry_in_code, "entry {:#x} outside the code", program.entry);
}
