//! The message-info word passed in `x1`.
use modular_bitfield::prelude::*;

/// The label of a `Recv` (or `ReplyRecv`) that ended because the thread's
/// bound notification was signalled instead of a message arriving: the
/// message has no words and `x8` holds the notification's word.
pub const NOTIFICATION_LABEL: u64 = 0x0b0d;

/// Describes a message: a label chosen by the sender, how many message
/// words it carries and how many capabilities it transfers.
///
/// Layout (low to high): `length` 7 bits, `caps` 2 bits, `label` 55 bits.
#[bitfield(bits = 64)]
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageInfo {
    /// Message words (registers first, then the IPC buffer).
    pub length: B7,
    /// Capabilities transferred with the message.
    pub caps: B2,
    /// Free for the protocol: a method number, a request kind.
    pub label: B55,
}

impl MessageInfo {
    /// A message with `label` and `length` words, no capabilities.
    pub fn with(label: u64, length: u8) -> Self {
        MessageInfo::new()
            .with_label(label & ((1 << 55) - 1))
            .with_length(length & 0x7f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_stable() {
        let info = MessageInfo::with(0x1234, 6).with_caps(1);
        let raw: u64 = info.into();
        assert_eq!(raw, (0x1234 << 9) | (1 << 7) | 6);
        assert_eq!(MessageInfo::from(raw), info);
    }
}
