//! Tests of `message`.

use super::*;

#[test]
fn fits_in_registers_is_the_field_by_field_rule() {
    for length in 0..=0x7f_u8 {
        for caps in 0..4_u8 {
            let info = MessageInfo::with(0x55, length).with_caps(caps);
            let expected = usize::from(length) <= REGISTER_MESSAGE_WORDS && caps == 0;
            assert_eq!(
                fits_in_registers(info),
                expected,
                "{length} words, {caps} caps"
            );
        }
    }
}
