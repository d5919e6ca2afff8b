//! libFuzzer entry for `portcullis_fuzz::elf_image` (what it checks is documented there).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| portcullis_fuzz::elf_image(data));
