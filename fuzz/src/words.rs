//! The packed words of the ABI and of a capability slot: every 64-bit
//! value must unpack into in-range fields and pack back unchanged.

use super::bytes::Bytes;
use abi::cap::{CapType, Rights};
use abi::MessageInfo;
use microkernel::cap::{CapWord, Capability, ObjectId};

/// Bits of the message label.
const LABEL_BITS: u32 = 55;
/// The first bit of a capability word's object field (after the type's
/// five and the rights' eight).
const OBJECT_SHIFT: u32 = 13;
/// The bit that says a badge was minted (after the 32-bit object field).
const BADGED_BIT: u32 = OBJECT_SHIFT + 32;
/// The rights `abi::cap::Rights` defines (the top two bits are reserved).
const DEFINED_RIGHTS: u64 = 0b11_1111;

/// Reads `data` as message-info words (`x1`), eight bytes each.
///
/// Checks: every word unpacks into `length` < 128, `caps` < 4 and a 55-bit
/// label that pack back into the same word (the layout `docs/abi.md`
/// states: length, caps, label from bit 0 up); `MessageInfo::with` keeps
/// only the bits the fields hold and sets no capabilities.
pub fn message_info(data: &[u8]) {
    let mut input = Bytes::new(data);
    while !input.is_empty() {
        let raw = input.u64();
        let info = MessageInfo::from(raw);
        let (length, caps, label) = (info.length(), info.caps(), info.label());
        assert!(length < 1 << 7 && caps < 1 << 2 && label >> LABEL_BITS == 0);
        let packed = u64::from(length) | u64::from(caps) << 7 | label << 9;
        assert_eq!(packed, raw, "fields do not make up the word");
        assert_eq!(u64::from(info), raw, "the word does not round-trip");
        let built = MessageInfo::with(raw, raw as u8);
        assert_eq!(built.label(), raw & ((1 << LABEL_BITS) - 1));
        assert_eq!(built.length(), (raw as u8) & 0x7f);
        assert_eq!(built.caps(), 0);
    }
}

/// Reads `data` as capability words, eight bytes each.
///
/// Checks: a raw `CapWord` packs back unchanged with its fields in range;
/// `CapType::from_raw` and `Rights::from_raw` accept exactly the defined
/// values and round-trip them; a `Capability` built from a type, rights
/// and object id reads them back (all 32 bits of the id: an object is the
/// granule its record starts at), is unbadged, is empty exactly when its
/// type is `Null`, and packs into the documented layout (type, rights from
/// bit 5, a 32-bit object from bit 13, badged at 45, the 18 bits above
/// reserved).
pub fn capability_word(data: &[u8]) {
    let mut input = Bytes::new(data);
    while !input.is_empty() {
        let raw = input.u64();
        let word = CapWord::from(raw);
        assert_eq!(u64::from(word), raw, "the word does not round-trip");
        assert!(word.cap_type() < 1 << 5);
        assert_eq!(u64::from(word.cap_type()), raw & 0x1f);
        assert_eq!(u64::from(word.rights().raw()), (raw >> 5) & 0xff);
        assert_eq!(
            u64::from(word.object()),
            (raw >> OBJECT_SHIFT) & 0xffff_ffff
        );
        assert_eq!(word.badged(), raw & (1 << BADGED_BIT) != 0);

        let type_raw = raw & 0xf;
        let cap_type = CapType::from_raw(type_raw);
        assert_eq!(cap_type.is_some(), type_raw < CapType::ALL.len() as u64);
        let rights_raw = (raw >> 4) & 0xff;
        let rights = Rights::from_raw(rights_raw);
        assert_eq!(rights.is_some(), rights_raw & !DEFINED_RIGHTS == 0);
        if let Some(r) = rights {
            assert_eq!(u64::from(r.raw()), rights_raw);
        }
        if let (Some(t), Some(r)) = (cap_type, rights) {
            assert_eq!(u64::from(t.raw()), type_raw);
            check_capability(t, r, ObjectId((raw >> 32) as u32));
        }
    }
}

fn check_capability(cap_type: CapType, rights: Rights, object: ObjectId) {
    let cap = Capability::new(cap_type, rights, object);
    assert_eq!(cap.cap_type(), cap_type);
    assert_eq!(cap.rights(), rights);
    assert_eq!(cap.object(), object);
    assert_eq!((cap.badge(), cap.is_badged()), (0, false));
    assert_eq!(cap.is_null(), cap_type == CapType::Null);
    let layout = u64::from(cap_type.raw())
        | u64::from(rights.raw()) << 5
        | u64::from(object.0) << OBJECT_SHIFT;
    assert_eq!(
        u64::from(cap.word()),
        layout,
        "the capability word's layout moved"
    );
}
