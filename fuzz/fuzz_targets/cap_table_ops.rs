//! libFuzzer entry for `portcullis_fuzz::cap_table_ops` (what it checks is documented there).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| portcullis_fuzz::cap_table_ops(data));
