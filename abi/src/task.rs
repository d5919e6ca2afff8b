//! The contract between the root task and the tasks it loads from ELF
//! files embedded in its image (`servers/echo`, `servers/echo-client`):
//! which capability each task finds in which slot, the messages they
//! exchange, and what they signal to the root. `docs/tasks.md` describes
//! the loader and the two programs.
//!
//! # Slots (the task's own CNode)
//!
//! | slot | holds | echo server | echo client |
//! |------|-------|-------------|-------------|
//! | 0 ([`CNODE_SLOT`]) | the task's own CNode, read-write (at least 8 slots) | yes | yes |
//! | 1 ([`CONSOLE_SLOT`]) | the debug console | yes | yes |
//! | 2 ([`ECHO_ENDPOINT_SLOT`]) | the echo endpoint | read: receives | write + grant-reply: calls; badged by the root |
//! | 3 ([`ROOT_NOTIFICATION_SLOT`]) | a notification the root waits on | write, unbadged | write, unbadged |
//! | 4 ([`REPORT_SLOT`]) | empty: the task mints its report capability here | | |
//!
//! A `Signal` ORs the capability's badge into the notification word, so a
//! task reports by minting the unbadged capability in slot 3 into slot 4
//! with the badge of its outcome bit ([`SERVER_DONE`], [`CLIENT_DONE`],
//! [`CLIENT_FAILED`]) and signalling that. If the mint fails (the root
//! gave a badged or read-only capability, or a CNode without slot 4), the
//! task signals slot 3 as it is: unbadged, that sets [`REPORT_BROKEN`], so
//! a root waiting on the notification still wakes and sees the setup was
//! wrong. One notification serves both tasks: their bits differ.
//!
//! # Entry
//!
//! Both tasks start at their ELF entry point with `x0` = the entry
//! argument the root chose, `sp` 16-byte aligned at the top of a
//! read-write stack of at least [`MIN_STACK_PAGES`] pages, and their IPC
//! buffer mapped read-write at [`crate::IPC_BUFFER_ADDRESS`] (the SDK reads
//! and writes message words 6.. there). The image itself is what
//! `sdk::loader` maps; stack and IPC buffer are the root's to map.
//! The server ignores its argument. The client expects the badge of its
//! endpoint capability as its argument and checks that the server saw the
//! same badge (it prints both), so a root that minted the wrong badge sees
//! the client fail.
//!
//! # Messages (on the echo endpoint)
//!
//! * [`ECHO_LABEL`]: the message words (registers, then the IPC buffer,
//!   up to [`ECHO_MAX_WORDS`]) are bytes, eight to a word, little-endian.
//!   The reply has label [`ECHO_REPLY_LABEL`], the same length, and every
//!   byte ASCII-uppercased ([`uppercase_word`]); other bytes unchanged.
//! * [`STOP_LABEL`]: the server replies with [`STOP_REPLY_LABEL`] and one
//!   word, the badge the stop came with; then reports [`SERVER_DONE`] and
//!   exits with status 0.
//! * Anything else (another label, a message longer than
//!   [`ECHO_MAX_WORDS`], capabilities): the reply has label
//!   [`ERROR_REPLY_LABEL`] and no words, and the server keeps serving.
//!
//! # The client's fault
//!
//! After its two echoes the client loads a word from
//! [`CLIENT_FAULT_ADDRESS`], an address no task maps. Its fault endpoint
//! gets the fault message (`abi::fault`); the root is expected to resume it
//! past the load (`FAULT_REPLY_SET_PC` with the faulting PC + 4). The
//! client then prints that it was resumed and sends [`STOP_LABEL`].

/// The task's own CNode.
pub const CNODE_SLOT: u64 = 0;
/// The debug console, write right only: the SDK's `println!` prints
/// through this slot, in every task's CNode (the root's
/// `abi::bootinfo::ROOT_CONSOLE_SLOT` is the same slot).
pub const CONSOLE_SLOT: u64 = 1;
const _: () = assert!(CONSOLE_SLOT == crate::bootinfo::ROOT_CONSOLE_SLOT);
/// The echo endpoint: the server receives on it, the client calls it.
pub const ECHO_ENDPOINT_SLOT: u64 = 2;
/// An unbadged notification capability to the root (write).
pub const ROOT_NOTIFICATION_SLOT: u64 = 3;
/// Empty at start: where a task mints its badged report capability.
pub const REPORT_SLOT: u64 = 4;

/// Notification bit an unbadged `Signal` sets: a task could not mint its
/// report capability (the root's set-up broke the slot contract).
pub const REPORT_BROKEN: u64 = 1 << 0;
/// Notification bit: the echo server received [`STOP_LABEL`] and exits 0.
pub const SERVER_DONE: u64 = 1 << 1;
/// Notification bit: every check of the echo client passed; it exits 0.
pub const CLIENT_DONE: u64 = 1 << 2;
/// Notification bit: a check of the echo client failed; it exits 1.
pub const CLIENT_FAILED: u64 = 1 << 3;

/// Message label: echo the words uppercased.
pub const ECHO_LABEL: u64 = 0xec40;
/// Message label: reply, then signal [`SERVER_DONE`] and exit.
pub const STOP_LABEL: u64 = 0xec41;
/// Reply label of a served [`ECHO_LABEL`].
pub const ECHO_REPLY_LABEL: u64 = 0xec42;
/// Reply label of [`STOP_LABEL`].
pub const STOP_REPLY_LABEL: u64 = 0xec43;
/// Reply label of any message the server does not understand.
pub const ERROR_REPLY_LABEL: u64 = 0xec4e;

/// Smallest stack the tasks are written for (their deepest frames hold a
/// few 512-byte message arrays and a formatted line).
pub const MIN_STACK_PAGES: u64 = 4;

/// Longest echo message, in words: the message words the IPC buffer holds
/// before the capability words ([`crate::IPC_BUFFER_SEND_CAPS_WORD`]).
pub const ECHO_MAX_WORDS: usize = crate::IPC_BUFFER_SEND_CAPS_WORD;

/// The address the echo client deliberately loads from: unmapped in every
/// task (far above the images, which are linked at 4 MiB, and below the
/// frame-mapping window and the stack).
pub const CLIENT_FAULT_ADDRESS: u64 = 0x0000_0600_0000_0000;

/// What the root may read from the client's notification word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientOutcome {
    /// [`CLIENT_DONE`] alone.
    Done,
    /// [`CLIENT_FAILED`] set.
    Failed,
    /// Neither bit (the client has not finished).
    Running,
}

impl ClientOutcome {
    /// Reads a notification word ([`REPORT_BROKEN`] counts as failed).
    pub const fn from_word(word: u64) -> ClientOutcome {
        if word & (CLIENT_FAILED | REPORT_BROKEN) != 0 {
            ClientOutcome::Failed
        } else if word & CLIENT_DONE != 0 {
            ClientOutcome::Done
        } else {
            ClientOutcome::Running
        }
    }
}

/// `word`'s eight bytes with `a..=z` turned into `A..=Z`, every other byte
/// unchanged: what the echo server does to each message word.
pub const fn uppercase_word(word: u64) -> u64 {
    let mut bytes = word.to_le_bytes();
    let mut i = 0;
    while i < bytes.len() {
        bytes[i] = bytes[i].to_ascii_uppercase();
        i += 1;
    }
    u64::from_le_bytes(bytes)
}

/// Packs `text` into message words, eight bytes to a word, little-endian,
/// the last word padded with zero bytes; returns how many words it used
/// (`text` is cut at `words.len() * 8` bytes).
pub fn pack_words(text: &[u8], words: &mut [u64]) -> usize {
    let mut used = 0;
    for (word, chunk) in words.iter_mut().zip(text.chunks(8)) {
        let mut bytes = [0u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        *word = u64::from_le_bytes(bytes);
        used += 1;
    }
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uppercasing_changes_only_ascii_lower_case_letters() {
        let word = u64::from_le_bytes(*b"az AZ!\xe9\x00");
        assert_eq!(uppercase_word(word), u64::from_le_bytes(*b"AZ AZ!\xe9\x00"));
        for byte in 0..=255u8 {
            let up = uppercase_word(u64::from(byte)) as u8;
            let want = if byte.is_ascii_lowercase() {
                byte - 32
            } else {
                byte
            };
            assert_eq!(up, want, "{byte:#x}");
        }
    }

    #[test]
    fn text_packs_little_endian_and_pads_with_zeros() {
        let mut words = [u64::MAX; 3];
        assert_eq!(pack_words(b"abcdefghij", &mut words), 2);
        assert_eq!(words[0], u64::from_le_bytes(*b"abcdefgh"));
        assert_eq!(words[1], u64::from_le_bytes(*b"ij\0\0\0\0\0\0"));
        assert_eq!(words[2], u64::MAX, "untouched");
        assert_eq!(pack_words(&[b'x'; 100], &mut words), 3, "cut to fit");
        assert_eq!(pack_words(b"", &mut words), 0);
    }

    #[test]
    fn outcome_bits_are_distinct_and_failure_wins() {
        let bits = [REPORT_BROKEN, SERVER_DONE, CLIENT_DONE, CLIENT_FAILED];
        for (i, a) in bits.iter().enumerate() {
            assert_eq!(a.count_ones(), 1);
            for b in &bits[i + 1..] {
                assert_eq!(a & b, 0);
            }
        }
        assert_eq!(REPORT_BROKEN, 1, "what an unbadged signal sets");
        assert_eq!(ClientOutcome::from_word(CLIENT_DONE), ClientOutcome::Done);
        assert_eq!(
            ClientOutcome::from_word(CLIENT_DONE | CLIENT_FAILED),
            ClientOutcome::Failed
        );
        assert_eq!(
            ClientOutcome::from_word(SERVER_DONE),
            ClientOutcome::Running
        );
        assert_eq!(
            ClientOutcome::from_word(REPORT_BROKEN | CLIENT_DONE),
            ClientOutcome::Failed
        );
    }

    #[test]
    fn the_fault_address_is_a_user_page_outside_the_image_and_the_window() {
        const {
            assert!(CLIENT_FAULT_ADDRESS.is_multiple_of(4096));
            assert!(CLIENT_FAULT_ADDRESS > 0x40_0000);
            assert!(CLIENT_FAULT_ADDRESS < crate::IPC_BUFFER_ADDRESS);
        }
        assert!(!crate::vspace::is_frame_map_address(CLIENT_FAULT_ADDRESS));
    }

    #[test]
    fn labels_are_distinct() {
        let labels = [
            ECHO_LABEL,
            STOP_LABEL,
            ECHO_REPLY_LABEL,
            STOP_REPLY_LABEL,
            ERROR_REPLY_LABEL,
            crate::fault::FAULT_LABEL,
        ];
        for (i, a) in labels.iter().enumerate() {
            for b in &labels[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
