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

/// The fast paths' assembly tests type, rights and object with these
/// shifts and masks, and loads word and badge as a pair.
#[test]
fn the_fast_paths_constants_agree_with_the_bitfield() {
    for rights in [Rights::READ, Rights::WRITE, Rights::ALL, Rights::NONE] {
        let cap = Capability::new(CapType::Endpoint, rights, ObjectId(0x1234_5678)).with_badge(7);
        let word: u64 = cap.word().into();
        assert_eq!(word & TYPE_MASK, u64::from(CapType::Endpoint.raw()));
        assert_eq!((word >> RIGHTS_SHIFT) & 0xff, u64::from(rights.raw()));
        assert_eq!((word >> OBJECT_SHIFT) & 0xffff_ffff, 0x1234_5678);
        // Badged (with 7): the bit the Signal fast path tests.
        let plain: u64 = Capability::new(CapType::Endpoint, rights, ObjectId(0x1234_5678))
            .word()
            .into();
        assert_eq!((plain >> BADGED_BIT) & 1, 0);
        assert_eq!((word >> BADGED_BIT) & 1, 1);
        assert_eq!(word & !(1 << BADGED_BIT), plain);
    }
    assert_eq!(Capability::BADGE_OFFSET, Capability::WORD_OFFSET + 8);
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
