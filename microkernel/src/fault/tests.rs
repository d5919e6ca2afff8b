//! Tests of `fault`.

use super::*;
extern crate std;
use std::string::ToString;

#[test]
fn describes_a_null_write() {
    let report = FaultReport::new(0x9200_0046, 0, 0x40_0123);
    assert_eq!(
        report.to_string(),
        "data abort (EL0), translation fault at level 2, write, address 0x0, pc 0x400123, esr 0x92000046"
    );
}

#[test]
fn undefined_instruction_has_no_address() {
    let report = FaultReport::new(0x0200_0000, 0xdead, 0x40_0000);
    assert_eq!(
        report.to_string(),
        "undefined instruction, pc 0x400000, esr 0x02000000"
    );
}
