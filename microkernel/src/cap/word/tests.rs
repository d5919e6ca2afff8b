//! Tests of `word`.

use super::*;

#[test]
fn fields_round_trip() {
    let cap = Capability::new(CapType::Endpoint, Rights::READ_WRITE, ObjectId(0xFEAB_CDEF));
    assert_eq!(cap.cap_type(), CapType::Endpoint);
    assert_eq!(cap.rights(), Rights::READ_WRITE);
    assert_eq!(cap.object(), ObjectId(0xFEAB_CDEF));
    assert_eq!(
        (cap.badge(), cap.is_badged(), cap.is_null()),
        (0, false, false)
    );
    let badged = cap.with_badge(0).with_rights(Rights::WRITE);
    assert!(badged.is_badged());
    assert_eq!(badged.badge(), 0);
    assert_eq!(badged.rights(), Rights::WRITE);
    assert_eq!(badged.object(), cap.object());
}

#[test]
fn layout_is_stable() {
    let cap = Capability::new(CapType::Frame, Rights::ALL, ObjectId(5)).with_badge(9);
    let raw: u64 = cap.word().into();
    assert_eq!(raw, 7 | (0x3f << 5) | (5 << 13) | (1 << 45));
}

#[test]
fn object_and_type_agree_with_the_bitfield() {
    for object in [0, 1, 0x7f, 0xAB_CDEF, u32::MAX] {
        let cap =
            Capability::new(CapType::Endpoint, Rights::ALL, ObjectId(object)).with_badge(u64::MAX);
        assert_eq!(cap.object().0, cap.word().object());
        assert!(cap.has_type(CapType::Endpoint));
        assert!(!cap.has_type(CapType::Notification));
    }
    assert!(Capability::NULL.has_type(CapType::Null));
}

#[test]
fn null_is_empty() {
    assert!(Capability::NULL.is_null());
    assert_eq!(Capability::NULL.cap_type(), CapType::Null);
    assert_eq!(u64::from(Capability::NULL.word()), 0);
}
