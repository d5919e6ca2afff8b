//! libFuzzer entry for `portcullis_fuzz::syscall_registers` (what it checks is documented there).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| portcullis_fuzz::syscall_registers(data));
