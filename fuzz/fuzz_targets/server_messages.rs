//! libFuzzer entry for `portcullis_fuzz::server_messages` (what it checks is documented there).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| portcullis_fuzz::server_messages(data));
