//! The restartable-sequence check (`entry::rseq`, docs/rseq.md): CPU ids,
//! the abort, the cleared descriptor, and every bad area or descriptor an
//! error (never a fault of the kernel's).

use abi::rseq::{Descriptor, AREA_BYTES, CPU_ID, CPU_ID_START, CRITICAL_SECTION};
use entry::rseq::{check_on_exit, Checked, Registration, RseqError, UserMemory};

const AREA: u64 = 0x1000;
const DESCRIPTOR: u64 = 0x1040;
const START: u64 = 0x2000;
const LENGTH: u64 = 0x20;
const ABORT: u64 = 0x2100;
const SIGNATURE: u32 = 0xd428_bc00;

/// User memory: 16 KiB from 0, the first page read-only if asked.
struct FakeMemory {
    bytes: Vec<u8>,
    read_only_below: u64,
    writes: usize,
}

impl UserMemory for FakeMemory {
    fn read(&self, address: u64, out: &mut [u8]) -> bool {
        let Some(end) = address.checked_add(out.len() as u64) else {
            return false;
        };
        if end > self.bytes.len() as u64 {
            return false;
        }
        out.copy_from_slice(&self.bytes[address as usize..end as usize]);
        true
    }

    fn write(&mut self, address: u64, data: &[u8]) -> bool {
        let end = address + data.len() as u64;
        if address < self.read_only_below || end > self.bytes.len() as u64 {
            return false;
        }
        self.bytes[address as usize..end as usize].copy_from_slice(data);
        self.writes += 1;
        true
    }
}

impl FakeMemory {
    /// An area on CPU 0 naming a good descriptor, the signature before
    /// the abort address.
    fn new() -> FakeMemory {
        let mut memory = FakeMemory {
            bytes: vec![0; 0x4000],
            read_only_below: 0,
            writes: 0,
        };
        memory.put(DESCRIPTOR, &descriptor().to_bytes());
        memory.put(AREA + CRITICAL_SECTION, &DESCRIPTOR.to_le_bytes());
        memory.put(ABORT - 4, &SIGNATURE.to_le_bytes());
        memory
    }

    fn put(&mut self, address: u64, data: &[u8]) {
        self.bytes[address as usize..address as usize + data.len()].copy_from_slice(data);
    }

    fn u32_at(&self, address: u64) -> u32 {
        let mut word = [0u8; 4];
        assert!(self.read(address, &mut word));
        u32::from_le_bytes(word)
    }

    fn u64_at(&self, address: u64) -> u64 {
        let mut word = [0u8; 8];
        assert!(self.read(address, &mut word));
        u64::from_le_bytes(word)
    }
}

fn descriptor() -> Descriptor {
    Descriptor {
        version: 0,
        flags: 0,
        start: START,
        post_commit_offset: LENGTH,
        abort: ABORT,
    }
}

const REGISTERED: Registration = Registration {
    area: AREA,
    signature: SIGNATURE,
};

#[test]
fn a_pc_inside_the_section_goes_to_the_abort_address_at_every_instruction() {
    for pc in (START..START + LENGTH).step_by(4) {
        let mut memory = FakeMemory::new();
        let checked = check_on_exit(&mut memory, REGISTERED, 0, pc).unwrap();
        assert_eq!(
            checked,
            Checked {
                abort_to: Some(ABORT),
                ids_updated: false,
                section_checked: true,
                cleared: true,
            },
            "pc {pc:#x}"
        );
        assert_eq!(memory.u64_at(AREA + CRITICAL_SECTION), 0);
    }
}

#[test]
fn a_pc_outside_the_section_stays_and_the_descriptor_is_cleared() {
    for pc in [START - 4, START + LENGTH, ABORT, 0] {
        let mut memory = FakeMemory::new();
        let checked = check_on_exit(&mut memory, REGISTERED, 0, pc).unwrap();
        assert_eq!(checked.abort_to, None, "pc {pc:#x}");
        assert!(checked.cleared);
        assert_eq!(memory.u64_at(AREA + CRITICAL_SECTION), 0);
    }
}

#[test]
fn without_a_descriptor_only_the_cpu_ids_are_kept() {
    let mut memory = FakeMemory::new();
    memory.put(AREA + CRITICAL_SECTION, &0u64.to_le_bytes());
    let checked = check_on_exit(&mut memory, REGISTERED, 0, START).unwrap();
    assert_eq!(checked, Checked::default());
    assert_eq!(memory.writes, 0, "nothing to write: the ids are right");
    let checked = check_on_exit(&mut memory, REGISTERED, 3, START).unwrap();
    assert!(checked.ids_updated && !checked.section_checked);
    assert_eq!(memory.u32_at(AREA + CPU_ID_START), 3);
    assert_eq!(memory.u32_at(AREA + CPU_ID), 3);
}

#[test]
fn a_moved_thread_gets_its_new_cpu_before_its_section_is_aborted() {
    let mut memory = FakeMemory::new();
    let checked = check_on_exit(&mut memory, REGISTERED, 2, START + 8).unwrap();
    assert!(checked.ids_updated);
    assert_eq!(checked.abort_to, Some(ABORT));
    assert_eq!(memory.u32_at(AREA + CPU_ID), 2);
}

#[test]
fn a_wrong_signature_is_an_error_inside_the_section_or_not() {
    for pc in [START, START + LENGTH] {
        let mut memory = FakeMemory::new();
        memory.put(ABORT - 4, &0x1234_5678u32.to_le_bytes());
        assert_eq!(
            check_on_exit(&mut memory, REGISTERED, 0, pc),
            Err(RseqError::SignatureMismatch {
                abort: ABORT,
                found: 0x1234_5678,
                expected: SIGNATURE
            })
        );
        assert_eq!(
            memory.u64_at(AREA + CRITICAL_SECTION),
            DESCRIPTOR,
            "a failed check changes nothing"
        );
    }
}

#[test]
fn bad_descriptors_are_errors() {
    let bad = |change: &dyn Fn(&mut Descriptor)| {
        let mut section = descriptor();
        change(&mut section);
        let mut memory = FakeMemory::new();
        memory.put(DESCRIPTOR, &section.to_bytes());
        check_on_exit(&mut memory, REGISTERED, 0, START)
    };
    assert_eq!(
        bad(&|d| d.abort = START + 4),
        Err(RseqError::BadAbort { abort: START + 4 })
    );
    assert_eq!(
        bad(&|d| d.abort = ABORT + 2),
        Err(RseqError::BadAbort { abort: ABORT + 2 })
    );
    assert_eq!(
        bad(&|d| d.abort = 0),
        Err(RseqError::SignatureUnreadable { abort: 0 })
    );
    assert_eq!(
        bad(&|d| d.abort = 0x10_0000),
        Err(RseqError::SignatureUnreadable { abort: 0x10_0000 })
    );
    assert_eq!(
        bad(&|d| d.version = 1),
        Err(RseqError::DescriptorVersion {
            descriptor: DESCRIPTOR
        })
    );
    assert_eq!(
        bad(&|d| d.flags = 1),
        Err(RseqError::DescriptorVersion {
            descriptor: DESCRIPTOR
        })
    );
    assert_eq!(
        bad(&|d| d.post_commit_offset = u64::MAX),
        Err(RseqError::SectionWraps {
            descriptor: DESCRIPTOR
        })
    );
}

#[test]
fn bad_pointers_are_errors_not_faults() {
    let mut memory = FakeMemory::new();
    memory.put(AREA + CRITICAL_SECTION, &(DESCRIPTOR + 8).to_le_bytes());
    assert_eq!(
        check_on_exit(&mut memory, REGISTERED, 0, START),
        Err(RseqError::DescriptorMisaligned {
            descriptor: DESCRIPTOR + 8
        })
    );
    memory.put(AREA + CRITICAL_SECTION, &0x10_0000u64.to_le_bytes());
    assert_eq!(
        check_on_exit(&mut memory, REGISTERED, 0, START),
        Err(RseqError::DescriptorUnreadable {
            descriptor: 0x10_0000
        })
    );
    let far = Registration {
        area: u64::MAX - 8,
        signature: SIGNATURE,
    };
    assert_eq!(
        check_on_exit(&mut memory, far, 0, START),
        Err(RseqError::AreaUnreadable { area: far.area })
    );
    let mut read_only = FakeMemory::new();
    read_only.read_only_below = AREA + AREA_BYTES;
    assert_eq!(
        check_on_exit(&mut read_only, REGISTERED, 1, START),
        Err(RseqError::AreaUnwritable { area: AREA })
    );
    assert_eq!(
        check_on_exit(&mut read_only, REGISTERED, 0, START),
        Err(RseqError::AreaUnwritable { area: AREA }),
        "the descriptor pointer cannot be cleared"
    );
}

#[test]
fn errors_say_what_was_wrong() {
    let text = RseqError::SignatureMismatch {
        abort: ABORT,
        found: 1,
        expected: SIGNATURE,
    }
    .to_string();
    assert!(
        text.contains("0x2100") && text.contains("0xd428bc00"),
        "{text}"
    );
}
