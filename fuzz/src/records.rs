//! The records and messages user-space servers decode: audit records and
//! the audit ring (what the audit server reads from memory the kernel and,
//! possibly, a confused server wrote), trace stops, policy requests and
//! fault messages (what a tracer, policy server or fault handler reads from
//! a message anyone holding its endpoint may have sent), and the replies
//! the kernel reads from them.

use super::bytes::Bytes;
use abi::audit::{AuditRecord, CONSUMED_OFFSET, WRITTEN_OFFSET};
use abi::fault::{FaultMessage, FaultReply, FAULT_LABEL};
use abi::policy_request::{PolicyAnswer, POLICY_REQUEST_LABEL, POLICY_REQUEST_WORDS};
use abi::trace::{TraceReply, TRACE_ENTRY, TRACE_EXIT, TRACE_STEP};
use abi::{MessageInfo, REGISTER_MESSAGE_WORDS};
use audit_server::{Entry, Reader, RingMemory};
use sdk::ipc::{Message, Received};
use sdk::policy_server::PolicyRequest;
use sdk::trace::{Stop, StopKind};

/// Decodes `data` as one audit record.
///
/// Checks: no panic; a record that decodes encodes again to exactly the
/// bytes it came from (one encoding per record), which decode to the same
/// record.
pub fn audit_record(data: &[u8]) {
    let Some(record) = AuditRecord::decode(data) else {
        return;
    };
    let bytes = record.encode();
    assert_eq!(&bytes[..], data, "a record has one encoding");
    assert_eq!(
        AuditRecord::decode(&bytes),
        Some(record),
        "re-encoding changed it"
    );
}

/// A ring page filled from `data`.
struct Page([u8; 4096]);

impl RingMemory for Page {
    fn read_u64(&self, offset: u64) -> u64 {
        let o = (offset % 4096) as usize & !7;
        u64::from_le_bytes(self.0[o..o + 8].try_into().expect("8 bytes"))
    }
    fn write_u64(&mut self, offset: u64, value: u64) {
        let o = (offset % 4096) as usize & !7;
        self.0[o..o + 8].copy_from_slice(&value.to_le_bytes());
    }
}

/// Reads `data` as a whole audit ring (header and slots, as garbled as it
/// likes) and drains it with the reference reader.
///
/// Checks: no panic; every step advances `consumed` by one and stops at
/// `written`; gaps only grow the missing count.
pub fn audit_ring(data: &[u8]) {
    let mut page = Page([0; 4096]);
    let n = data.len().min(4096);
    page.0[..n].copy_from_slice(&data[..n]);
    // Keep the run short: a garbled `written` could ask for 2^64 records.
    let written = page.read_u64(WRITTEN_OFFSET);
    let start = page.read_u64(CONSUMED_OFFSET);
    let mut reader = Reader::new();
    for step in 0..64u64 {
        let before = page.read_u64(CONSUMED_OFFSET);
        let missing = reader.missing;
        match reader.next(&mut page) {
            None => {
                assert!(before >= written, "stopped with records left");
                break;
            }
            Some(entry) => {
                assert_eq!(page.read_u64(CONSUMED_OFFSET), before + 1);
                assert!(before < written);
                if let Entry::Record { gap, .. } = entry {
                    assert_eq!(reader.missing, missing + gap);
                }
            }
        }
        assert!(page.read_u64(CONSUMED_OFFSET) <= start.max(written).saturating_add(step + 1));
    }
}

/// Reads `data` as received messages (label, length, six words, badge,
/// then the IPC buffer words) and decodes each as a trace stop, a policy
/// request and a fault message, and as the kernel reads a reply: a policy
/// answer, a tracer's reply, a fault reply.
///
/// Checks: no panic; a stop decodes only from a stop label and enough
/// words, with the kind its label names; a policy request decodes exactly
/// when label and length are the request's; a fault message exactly when
/// the label is a fault's and it has four words; each reply, as the
/// kernel takes it, encodes to a reply the kernel takes the same way.
pub fn server_messages(data: &[u8]) {
    let mut input = Bytes::new(data);
    while !input.is_empty() {
        // Labels near the interesting ones most of the time.
        let label = match input.u8() % 4 {
            0 => POLICY_REQUEST_LABEL,
            1 => [TRACE_ENTRY, TRACE_EXIT, TRACE_STEP][usize::from(input.u8() % 3)],
            _ => input.u64(),
        };
        let length = input.u8();
        let mut words = [0u64; REGISTER_MESSAGE_WORDS];
        for word in words.iter_mut() {
            *word = input.u64();
        }
        let badge = input.u64();
        let mut buffer = [0u64; 16];
        for word in buffer.iter_mut() {
            *word = input.u64();
        }
        let received = Received {
            message: Message {
                info: MessageInfo::with(label, length),
                words,
            },
            badge,
        };
        let all: Vec<u64> = words.iter().chain(&buffer[6..]).copied().collect();
        if let Some(stop) =
            Stop::from_words(label, &all[..usize::from(length).min(all.len())], badge)
        {
            assert_eq!(Some(stop.kind), StopKind::from_label(label));
            assert_eq!(stop.badge, badge);
        }
        let request = PolicyRequest::decode(&received, |i| buffer[i % buffer.len()]);
        let is_request = label == POLICY_REQUEST_LABEL && (length & 0x7f) == POLICY_REQUEST_WORDS;
        assert_eq!(
            request.is_some(),
            is_request,
            "label {label:#x} length {length}"
        );
        if let Some(request) = request {
            assert_eq!(request.number, words[0]);
            assert_eq!(request.endpoint_badge, badge);
        }
        let info = received.message.info;
        assert_eq!(
            FaultMessage::decode(info, &words).is_some(),
            info.label() == FAULT_LABEL && info.length() >= 4
        );
        let answer = PolicyAnswer::decode(info.label(), &words);
        let (again, again_words) = answer.encode();
        assert_eq!(PolicyAnswer::decode(again.label(), &again_words), answer);
        let [w0, w1, w2, w3, w4, w5] = words;
        let reply = TraceReply::decode(info.label(), &[w0, w1, w2, w3, w4, w5, buffer[6]]);
        let (again, again_words) = reply.encode();
        assert_eq!(TraceReply::decode(again.label(), &again_words), reply);
        let fault_reply = FaultReply::decode(info.label(), w0);
        let (again, [again_word]) = fault_reply.encode();
        assert_eq!(FaultReply::decode(again.label(), again_word), fault_reply);
    }
}
