//! The capability word: what one slot holds.
//!
//! A capability is 16 bytes: a packed word (type, rights, object, flags)
//! and a badge. The word is what the fast path tests; the badge is only
//! read when a message is delivered.
use crate::ids::ObjectId;
use abi::cap::{CapType, Rights};
use modular_bitfield::prelude::*;

/// The packed part of a capability.
///
/// Layout (low to high): `cap_type` 5 bits, `rights` 8 bits, `object`
/// 32 bits (the granule of the object's record: any object in the first
/// 256 GiB of RAM), `badged` 1 bit, 18 bits reserved (zero).
#[bitfield(bits = 64)]
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapWord {
    /// The `CapType` number; 0 (`Null`) marks an empty slot.
    pub cap_type: B5,
    /// What the holder may do with the object.
    pub rights: Rights,
    /// The object: the granule its record starts at.
    pub object: B32,
    /// A badge was minted into this capability (a badge of 0 is a badge
    /// too), so it cannot be badged again.
    pub badged: bool,
    #[skip]
    __: B18,
}

/// The `cap_type` field's bits in `CapWord` (the first field).
pub const TYPE_MASK: u64 = (1 << 5) - 1;
/// The `rights` field's first bit in `CapWord` (after `cap_type`).
pub const RIGHTS_SHIFT: u32 = 5;
/// The `object` field's first bit in `CapWord` (after `cap_type` and
/// `rights`).
pub const OBJECT_SHIFT: u32 = RIGHTS_SHIFT + 8;
/// The `badged` bit of `CapWord` (after `object`).
pub const BADGED_BIT: u32 = OBJECT_SHIFT + 32;

/// One capability: the word and the badge delivered with messages sent
/// through it.
///
/// The word is kept as a plain `u64` (the bitfield type is a byte array,
/// alignment 1): with the kernel target's strict alignment a byte array is
/// copied byte by byte through `memcpy`, and capabilities are copied on
/// every syscall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capability {
    word: u64,
    badge: u64,
}

impl Capability {
    /// Where the word lies in a capability (the fast paths' assembly
    /// loads word and badge as a pair).
    pub const WORD_OFFSET: usize = core::mem::offset_of!(Capability, word);
    /// Where the badge lies in a capability.
    pub const BADGE_OFFSET: usize = core::mem::offset_of!(Capability, badge);

    /// The content of an empty slot.
    pub const NULL: Capability = Capability { word: 0, badge: 0 };

    /// An unbadged capability to `object` of type `cap_type` with `rights`.
    pub fn new(cap_type: CapType, rights: Rights, object: ObjectId) -> Capability {
        Capability {
            word: CapWord::new()
                .with_cap_type(cap_type.raw())
                .with_rights(rights)
                .with_object(object.0)
                .into(),
            badge: 0,
        }
    }

    /// Is it a capability of `cap_type`? (`cap_type() == cap_type`, without
    /// decoding the number into a `CapType` first.)
    #[inline(always)]
    pub fn has_type(&self, cap_type: CapType) -> bool {
        self.word().cap_type() == cap_type.raw()
    }

    /// The type of the object (`Null` for an empty slot).
    pub fn cap_type(&self) -> CapType {
        // Only `new` writes the field, always from a `CapType`.
        CapType::from_raw(self.word().cap_type().into()).unwrap_or(CapType::Null)
    }

    /// Is this the content of an empty slot?
    pub fn is_null(&self) -> bool {
        self.word().cap_type() == CapType::Null.raw()
    }

    /// What the holder may do.
    pub fn rights(&self) -> Rights {
        self.word().rights()
    }

    /// The object it refers to: one shift (the bitfield's accessor
    /// assembles the 32 bits byte by byte; `layout_is_stable` pins the
    /// position).
    #[inline(always)]
    pub fn object(&self) -> ObjectId {
        ObjectId((self.word >> OBJECT_SHIFT) as u32)
    }

    /// The badge delivered with messages and signals sent through it
    /// (0 if it was never badged).
    pub fn badge(&self) -> u64 {
        self.badge
    }

    /// Was a badge minted into it?
    pub fn is_badged(&self) -> bool {
        self.word().badged()
    }

    /// The packed word, for code that tests several fields at once.
    pub fn word(&self) -> CapWord {
        CapWord::from(self.word)
    }

    /// The same capability with `rights` instead.
    pub(crate) fn with_rights(self, rights: Rights) -> Capability {
        Capability {
            word: self.word().with_rights(rights).into(),
            ..self
        }
    }

    /// The same capability carrying `badge`.
    pub(crate) fn with_badge(self, badge: u64) -> Capability {
        Capability {
            word: self.word().with_badged(true).into(),
            badge,
        }
    }
}

#[cfg(test)]
mod tests;
