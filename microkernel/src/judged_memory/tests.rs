use super::*;

/// `take_buffer_by_words` from a buffer whose every byte is `fill` (or
/// that cannot be read).
fn take(m: &mut JudgedMemory, address: u64, length: u64, fill: Option<u8>) {
    m.take_buffer_by_words(address, length, |_| match fill {
        Some(byte) => Ok(u64::from_le_bytes([byte; 8])),
        None => Err(()),
    });
}

#[test]
fn a_buffer_is_copied_up_to_the_judged_size() {
    let mut m = JudgedMemory::new();
    assert!(!m.is_taken());
    take(&mut m, 0x1000, 5, Some(b'h'));
    assert_eq!(m.copied(), b"hhhhh");
    assert_eq!(m.described(), (CarriedMemory::Buffer, 5, 5));
    let view = m.view();
    assert_eq!(
        (view.bytes, view.length, view.message),
        (Some(&b"hhhhh"[..]), 5, false)
    );
    let mut long = JudgedMemory::new();
    take(&mut long, 0x1000, 9000, Some(7));
    assert_eq!(long.copied().len(), MAX_JUDGED_BYTES);
    assert_eq!(long.view().length, 9000);
    assert_eq!(long.described(), (CarriedMemory::Buffer, 9000, 512));
    assert!(long.buffer_for(0x1000, 9000).is_some());
    assert_eq!(long.buffer_for(0x1008, 9000), None);
    assert_eq!(m.buffer_for(0x1000, 5), Some(Ok(&b"hhhhh"[..])));
    assert_eq!(m.buffer_for(0x1001, 5), None);
}

#[test]
fn an_unreadable_buffer_is_remembered_and_shows_no_bytes() {
    let mut m = JudgedMemory::new();
    take(&mut m, 0x2000, 16, None);
    assert!(m.is_taken());
    assert_eq!(
        m.judged,
        Judged::Unreadable {
            address: 0x2000,
            length: 16
        }
    );
    assert_eq!(m.buffer_for(0x2000, 16), Some(Err(())));
    assert_eq!(
        m.buffer_for(0x2000, 8),
        None,
        "another buffer was not judged"
    );
    assert_eq!(m.copied(), b"");
    assert_eq!(m.view().bytes, None);
    assert_eq!(m.described(), (CarriedMemory::None, 0, 0));
}

#[test]
fn a_message_keeps_its_buffer_words() {
    let mut m = JudgedMemory::new();
    m.take_message(3, |i| 0x100 + i as u64);
    assert_eq!(
        m.message_word(5),
        None,
        "register words are not in the copy"
    );
    assert_eq!(m.message_word(6), Some(0x100));
    assert_eq!(m.message_word(8), Some(0x102));
    assert_eq!(m.message_word(9), None, "past the message");
    let view = m.view();
    assert!(view.message);
    assert_eq!(view.buffer_word(7), Some(0x101));
    assert_eq!(view.buffer_word(9), None);
    assert_eq!(m.described(), (CarriedMemory::Message, 24, 24));
    // The most a message carries fits.
    m.take_message(58, |i| i as u64);
    assert_eq!(m.message_word(63), Some(57));
}

#[test]
fn forgetting_hides_the_copy() {
    let mut m = JudgedMemory::new();
    m.take_message(2, |_| 1);
    m.forget();
    assert!(!m.is_taken());
    assert_eq!(m.message_word(6), None);
    assert_eq!(m.copied(), b"");
    assert_eq!(m.view(), crate::filter::JudgedView::default());
}

#[test]
fn a_shorter_buffer_at_the_same_address_keeps_the_copy() {
    let mut m = JudgedMemory::new();
    take(&mut m, 0x1000, 80, Some(b'a'));
    // A server's "allow with" lowered the length: the judged bytes stay.
    assert!(m.narrow_to(0x1000, 48));
    assert_eq!(m.buffer_for(0x1000, 48), Some(Ok(&[b'a'; 48][..])));
    assert_eq!(m.buffer_for(0x1000, 80), None);
    // Longer than what was copied, or elsewhere: copied again.
    assert!(!m.narrow_to(0x1000, 64));
    assert!(!m.narrow_to(0x2000, 8));
    let mut long = JudgedMemory::new();
    take(&mut long, 0x1000, 9000, Some(0));
    assert!(long.narrow_to(0x1000, 9000), "the same buffer");
    assert!(
        !long.narrow_to(0x1000, 8000),
        "its first 512 bytes only were copied"
    );
    let mut unreadable = JudgedMemory::new();
    take(&mut unreadable, 0x3000, 8, None);
    assert!(unreadable.narrow_to(0x3000, 8));
    assert!(!unreadable.narrow_to(0x3000, 4));
}

/// A user memory of two pages, the second unmapped: its words as
/// `word_at` reads them.
fn memory(bytes: &[u8; 4096]) -> impl Fn(u64) -> Result<u64, ()> + '_ {
    move |va: u64| {
        assert_eq!(va % 8, 0, "aligned words only");
        let offset = va.checked_sub(0x1_0000).ok_or(())? as usize;
        let word = bytes.get(offset..offset + 8).ok_or(())?;
        Ok(u64::from_le_bytes(word.try_into().unwrap()))
    }
}

#[test]
fn a_buffer_read_by_words_is_the_bytes_at_any_alignment() {
    let mut page = [0u8; 4096];
    for (i, b) in page.iter_mut().enumerate() {
        *b = (i * 7 + 3) as u8;
    }
    for start in [0usize, 1, 3, 7, 8, 13, 4000, 4095] {
        for length in [0usize, 1, 5, 8, 9, 64, 95, 600] {
            let mut m = JudgedMemory::new();
            m.take_buffer_by_words(0x1_0000 + start as u64, length as u64, memory(&page));
            let fits = start + length.min(MAX_JUDGED_BYTES) <= 4096;
            if fits {
                let end = start + length.min(MAX_JUDGED_BYTES);
                assert_eq!(
                    m.copied(),
                    &page[start..end],
                    "start {start} length {length}"
                );
                assert_eq!(m.view().length, length);
            } else {
                assert!(
                    matches!(m.judged, Judged::Unreadable { .. }),
                    "start {start} length {length} runs into the unmapped page"
                );
            }
        }
    }
}

/// The copy as words: each the little-endian word of its eight bytes,
/// the last one's bytes past the copy zero, even where the array still
/// holds a longer earlier copy's bytes.
#[test]
fn the_copied_words_are_the_copied_bytes_with_a_zero_tail() {
    let mut m = JudgedMemory::new();
    for length in [0u64, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 511, 512, 600] {
        // A long copy first, so that a stale byte would show.
        m.take_buffer_by_words(0x1000, 512, |_| Ok::<u64, ()>(u64::MAX));
        m.take_buffer_by_words(0x1000, length, |va| {
            Ok::<u64, ()>(va.wrapping_mul(0x0123_4567_89ab_cdef))
        });
        let copied = m.copied();
        let expected: Vec<u64> = copied
            .chunks(8)
            .map(|chunk| {
                let mut bytes = [0u8; 8];
                bytes[..chunk.len()].copy_from_slice(chunk);
                u64::from_le_bytes(bytes)
            })
            .collect();
        assert_eq!(
            m.copied_words().collect::<Vec<_>>(),
            expected,
            "length {length}"
        );
    }
}

/// A judged message's words, one by one, are the words it copied.
#[test]
fn a_message_word_is_the_word_copied() {
    let mut m = JudgedMemory::new();
    m.take_message(9, |i| 0x1111 * (i as u64 + 1));
    for index in 6..15 {
        assert_eq!(
            m.message_word(index),
            Some(0x1111 * (index as u64 - 5)),
            "word {index}"
        );
    }
    assert_eq!(m.message_word(15), None);
    assert_eq!(m.message_word(5), None);
}
