//! Writes the generated part of the seed corpus (`fuzz/corpus/`): encoded
//! policy descriptions, a hand-built ELF and device tree, ABI words,
//! syscall register sets and capability-operation scripts, among them the
//! hand-built reproducers of the device-tree findings fixed since
//! (`docs/fuzzing.md`). Run from `fuzz/`:
//!
//! ```text
//! cargo run --example seed_corpus
//! ```
//!
//! The device trees (`arch/tests/fixtures/`) and the stripped init ELF are
//! copied by hand (`docs/fuzzing.md`). Seeds only steer the fuzzer towards
//! deep paths; each must still pass its target (the corpus replay in
//! `tests/host_fuzz_corpus.rs` checks that).

use abi::cap::CapType;
use abi::elf::writer::{elf, elf_filled, load, ProgramHeader, PF_R, PF_W, PF_X, PT_NOTE};
use abi::policy::{
    encode, Action, ArgMatch, ArgOp, BytesMatch, BytesOp, FilterDescription, Operand, Rule,
    MAX_DESCRIPTION_BYTES,
};
use abi::{ErrorCode, MessageInfo, Syscall};
use std::path::Path;

fn write(target: &str, name: &str, bytes: &[u8]) {
    write_into("corpus", target, name, bytes);
}

fn write_into(kind: &str, target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(kind)
        .join(target);
    std::fs::create_dir_all(&dir).expect("fuzz directory");
    std::fs::write(dir.join(name), bytes).expect("fuzz file");
}

fn rule(syscall: Option<Syscall>, action: Action) -> Rule {
    let mut rule = Rule::new(action);
    rule.syscall = syscall.map(Syscall::number);
    rule
}

fn arg(register: u8, mask: u64, op: ArgOp, value: u64) -> ArgMatch {
    ArgMatch::register(register, mask, op, value)
}

fn compare(operand: Operand, mask: u64, op: ArgOp, value: u64) -> ArgMatch {
    ArgMatch {
        operand,
        mask,
        op,
        value,
    }
}

fn bytes(op: BytesOp, pattern: &[u8], within: u16) -> Option<BytesMatch> {
    Some(BytesMatch::new(op, pattern, within).expect("a valid pattern"))
}

/// Descriptions that reach every field, every operand, every byte match
/// and every action, as a rule's and as the default.
fn descriptions() -> Vec<(&'static str, FilterDescription)> {
    let mut all = Vec::new();
    all.push(("empty", FilterDescription::new(Action::Allow)));

    let mut deny = FilterDescription::new(Action::errno(ErrorCode::InvalidSyscall));
    for s in [Syscall::Null, Syscall::Yield, Syscall::Exit, Syscall::Send] {
        deny.push(rule(Some(s), Action::Allow)).expect("room");
    }
    all.push(("deny-by-default", deny));

    let mut conditional = FilterDescription::new(Action::Allow);
    let mut r = rule(Some(Syscall::Call), Action::Log);
    r.object_type = Some(CapType::Endpoint);
    r.label = Some(7);
    r.badge = Some(0x42);
    r.push_arg(arg(2, 0xff, ArgOp::Eq, 3)).expect("room");
    r.push_arg(arg(3, u64::MAX, ArgOp::Lt, 100)).expect("room");
    r.push_arg(arg(7, 0xf0, ArgOp::MaskedEq, 0x1f))
        .expect("room");
    r.push_arg(arg(0, 1, ArgOp::Ne, 0)).expect("room");
    conditional.push(r).expect("room");
    let mut r = rule(Some(Syscall::Call), Action::Notify);
    r.object_type = Some(CapType::Notification);
    conditional.push(r).expect("room");
    conditional
        .push(rule(
            Some(Syscall::Call),
            Action::errno(ErrorCode::MissingRights),
        ))
        .expect("room");
    let mut r = rule(Some(Syscall::Retype), Action::Trap);
    r.push_arg(arg(2, u64::MAX, ArgOp::Ge, 2)).expect("room");
    r.push_arg(arg(5, u64::MAX, ArgOp::Gt, 4)).expect("room");
    r.push_arg(arg(4, u64::MAX, ArgOp::Le, 9)).expect("room");
    conditional.push(r).expect("room");
    conditional
        .push(rule(Some(Syscall::DebugPrint), Action::Kill))
        .expect("room");
    all.push(("conditional", conditional));

    // Memory and the PC: message words in registers and in the buffer,
    // the PC, every byte match; a `Notify` default.
    let mut memory = FilterDescription::new(Action::Notify);
    let mut r = rule(Some(Syscall::Call), Action::Allow);
    r.push_arg(compare(Operand::Word(6), u64::MAX, ArgOp::Eq, 0x5afe))
        .expect("room");
    r.push_arg(compare(Operand::Word(0), 0xff, ArgOp::Le, 3))
        .expect("room");
    r.push_arg(compare(Operand::Pc, u64::MAX, ArgOp::Lt, 0x40_0000))
        .expect("room");
    r.push_arg(compare(Operand::Word(63), 0xf0, ArgOp::MaskedEq, 0x1f))
        .expect("room");
    r.push_arg(compare(Operand::Pc, 0xfff, ArgOp::Ne, 0))
        .expect("room");
    r.push_arg(arg(1, 0x7f, ArgOp::Gt, 6)).expect("room");
    memory.push(r).expect("room");
    let mut r = rule(Some(Syscall::DebugPrint), Action::Log);
    r.bytes = bytes(BytesOp::Prefix, b"[app]", 0);
    memory.push(r).expect("room");
    let mut r = rule(Some(Syscall::DebugPrint), Action::Kill);
    r.bytes = bytes(BytesOp::Contains, b"secret", 32);
    memory.push(r).expect("room");
    let mut r = rule(None, Action::errno(ErrorCode::Denied));
    r.bytes = bytes(BytesOp::Equal, b"SAFE", 0);
    r.push_arg(compare(Operand::Word(7), u64::MAX, ArgOp::Ge, 2))
        .expect("room");
    memory.push(r).expect("room");
    let mut r = rule(Some(Syscall::Send), Action::Trap);
    r.bytes = bytes(BytesOp::Contains, &[0xfe, 0x5a], 0);
    memory.push(r).expect("room");
    all.push(("memory-and-pc", memory));

    let mut every_syscall = FilterDescription::new(Action::Kill);
    for (i, s) in Syscall::ALL.into_iter().enumerate() {
        let action = [Action::Allow, Action::Log, Action::Trap][i % 3];
        every_syscall.push(rule(Some(s), action)).expect("room");
    }
    all.push(("every-syscall", every_syscall));
    all
}

fn policy_seeds() {
    let mut buffer = [0u8; MAX_DESCRIPTION_BYTES];
    let mut encoded = Vec::new();
    for (name, d) in descriptions() {
        let bytes = encode(&d, &mut buffer).expect("valid description").to_vec();
        write("policy_description", name, &bytes);
        encoded.push(bytes);
    }
    // Refused on purpose: truncated, a trailing byte, an unknown tag, no
    // default (the format before the default was on the wire), an empty
    // pattern, a word past 63.
    let conditional = &encoded[2];
    write(
        "policy_description",
        "truncated",
        &conditional[..conditional.len() - 3],
    );
    let mut trailing = conditional.clone();
    trailing.push(0);
    write("policy_description", "trailing-byte", &trailing);
    // One empty rule, then: an action tag 9; no default; a bytes match
    // with an empty pattern; a comparison of word 64.
    write(
        "policy_description",
        "bad-tag",
        &[1, 0, 0, 0, 0, 0, 0, 9, 0],
    );
    write(
        "policy_description",
        "no-default",
        &[1, 0, 0, 0, 0, 0, 0, 0],
    );
    write(
        "policy_description",
        "empty-pattern",
        &[1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0],
    );
    write(
        "policy_description",
        "word-64",
        &[1, 0, 0, 0, 0, 1, 1, 64, 0xff, 0x01, 0, 0, 0, 0, 0],
    );

    // Stacks for the verdict target: depth, then (length, description)s,
    // then syscall facts.
    let stacks: [&[usize]; 4] = [&[1], &[2, 1], &[2, 3, 3], &[3, 4]];
    for (n, stack) in stacks.iter().enumerate() {
        let mut input = vec![(stack.len() - 1) as u8];
        for &which in stack.iter() {
            let d = &encoded[which];
            input.extend_from_slice(&(d.len() as u16).to_le_bytes());
            input.extend_from_slice(d);
        }
        // (syscall, PC, memory kind, its length, its judged bytes)
        let message: Vec<u8> = [0x5afe_u64, 2, 7]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let calls: [(Syscall, u64, u8, u16, &[u8]); 6] = [
            (Syscall::Call, 0x3f_fff0, 2, 24, &message),
            (Syscall::Retype, 0x40_1000, 0, 0, &[]),
            (Syscall::DebugPrint, 0x40_1000, 1, 11, b"[app] hello"),
            (Syscall::DebugPrint, 0x40_1000, 1, 600, b"my secret, cut"),
            (Syscall::Send, 0x40_2000, 2, 16, &message[..16]),
            (Syscall::Null, 0, 1, 4, b"SAFE"),
        ];
        for (s, pc, kind, length, judged) in calls {
            input.push(s.number() as u8);
            let args = [0u64, MessageInfo::with(7, 2).into(), 3, 50, 9, 5, 0, 0x1f];
            for a in args {
                input.extend_from_slice(&a.to_le_bytes());
            }
            input.push(CapType::Endpoint.raw());
            input.extend_from_slice(&0x42u64.to_le_bytes());
            input.extend_from_slice(&pc.to_le_bytes());
            input.push(kind);
            if kind != 0 {
                input.extend_from_slice(&length.to_le_bytes());
                input.extend_from_slice(&(judged.len() as u16).to_le_bytes());
                input.extend_from_slice(judged);
            }
        }
        write("policy_verdict", &format!("stack-{n}"), &input);
    }
}

/// A minimal AArch64 executable: code at 0x40_0000, data above it; the
/// headers as a linker fills them (`e_ehsize`, `p_align`), zeros up to
/// the first segment, 0xd5 in the segments' bytes.
fn elf_seeds() {
    // The second segment starts 0x10 into its page in the file and so in
    // memory (offset ≡ address mod page, as a linker keeps them); its
    // `p_paddr`, which no loader reads, names the page, as it always has
    // in this seed.
    let headers = [
        ProgramHeader {
            align: 0x1000,
            ..load(PF_R | PF_X, 0x1000, 0x40_0000, 16, 16)
        },
        ProgramHeader {
            paddr: 0x40_1000,
            align: 0x1000,
            ..load(PF_R | PF_W, 0x1010, 0x40_1010, 8, 0x2000)
        },
    ];
    let mut file = elf_filled(0x40_0000, &headers, 0x1018, |i| {
        if i < 0x1000 {
            0
        } else {
            0xd5
        }
    });
    file[52..54].copy_from_slice(&64u16.to_le_bytes());
    write("elf_image", "minimal", &file);
}

/// Layouts for the shared parser and the SDK's task loader (the stripped
/// tasks and init themselves are copied from the build).
fn layout_seeds() {
    // Text RX, a note, rodata R, data + bss RW: the user.ld layout.
    let three = elf(
        0x40_0010,
        &[
            load(PF_R | PF_X, 0x1000, 0x40_0000, 0x1800, 0x1800),
            ProgramHeader {
                kind: PT_NOTE,
                flags: PF_R,
                ..load(0, 0, 0, 0, 0)
            },
            load(PF_R, 0x3000, 0x40_2000, 0x100, 0x100),
            load(PF_R | PF_W, 0x4000, 0x40_3000, 0x20, 0x2010),
        ],
        0x4020,
    );
    write("elf_image", "three-segments-and-bss", &three);
    // One segment starting and ending inside pages.
    let unaligned = elf(
        0x50_0234,
        &[load(PF_R | PF_X, 0x1234, 0x50_0234, 0x2000, 0x2e00)],
        0x3300,
    );
    write("elf_image", "unaligned-segment", &unaligned);
    // Two segments sharing a page: refused.
    let shared = elf(
        0x40_0000,
        &[
            load(PF_R | PF_X, 0x1000, 0x40_0000, 0x100, 0x100),
            load(PF_R, 0x1100, 0x40_0100, 8, 8),
        ],
        0x1200,
    );
    write("elf_image", "shared-page", &shared);
    // More pages than the SDK's MAX_PAGES (256) but within the kernel's
    // limit (`MAX_PROGRAM_PAGES`): the SDK refuses it, the kernel loads it.
    let above_task_limit = elf(
        0x40_0000,
        &[
            load(PF_R | PF_X, 0x1000, 0x40_0000, 0x10, 0x10),
            load(PF_R | PF_W, 0x1000, 0x100_0000, 0, 300 * 0x1000),
        ],
        0x1010,
    );
    write("elf_image", "above-the-task-page-limit", &above_task_limit);
}

fn word_seeds() {
    let infos: [u64; 4] = [
        MessageInfo::with(0, 0).into(),
        MessageInfo::with(0x1234, 6).with_caps(1).into(),
        MessageInfo::with((1 << 55) - 1, 127).with_caps(3).into(),
        u64::MAX,
    ];
    let bytes: Vec<u8> = infos.iter().flat_map(|w| w.to_le_bytes()).collect();
    write("message_info", "edges", &bytes);
    // type 4 (Endpoint), all rights, object 5, badged; a reserved bit; ~0.
    let caps: [u64; 3] = [4 | 0x3f << 5 | 5 << 13 | 1 << 37, 1 << 40, u64::MAX];
    let bytes: Vec<u8> = caps.iter().flat_map(|w| w.to_le_bytes()).collect();
    write("capability_word", "edges", &bytes);
}

/// One register set per syscall, with plausible arguments.
fn syscall_seeds() {
    let mut all = Vec::new();
    for s in Syscall::ALL {
        let mut x = [0u64; 8];
        x[0] = 3;
        x[1] = MessageInfo::with(1, 2).into();
        match s {
            Syscall::DebugPrint => (x[2], x[3]) = (0x40_0000, 12),
            Syscall::CapMint => (x[2], x[3], x[4], x[5], x[6]) = (2, 3, 1, 0x77, 1),
            Syscall::Retype => (x[2], x[3], x[4], x[5]) = (CapType::Endpoint.raw().into(), 0, 4, 2),
            Syscall::BenchFloor => x[2] = 1,
            _ => x[2] = 5,
        }
        all.push(s.number() as u8);
        for word in x {
            all.extend_from_slice(&word.to_le_bytes());
        }
        all.extend_from_slice(&0xdead_beef_u64.to_le_bytes());
    }
    write("syscall_registers", "every-syscall", &all);
    // Number past the last syscall, then a raw huge number.
    let mut odd = vec![Syscall::END as u8];
    odd.extend_from_slice(&[0; 72]);
    odd.push(0x80);
    odd.extend_from_slice(&u64::MAX.to_le_bytes());
    odd.extend_from_slice(&[0; 72]);
    write("syscall_registers", "unknown-numbers", &odd);
}

/// Capability-operation scripts (`fuzz/src/cap_table/op.rs` spells the
/// encoding: an opcode byte, then its arguments).
fn cap_table_seeds() {
    const BOOT: u8 = 0;
    const FORGE: u8 = 1;
    const COPY: u8 = 2;
    const MINT: u8 = 3;
    const MOVE: u8 = 4;
    const DELETE: u8 = 5;
    const REVOKE: u8 = 6;
    const RETYPE: u8 = 7;
    // Retype arguments: untyped selector (even: among Untypeds), type,
    // param, CNode selector, index, count.
    let scripts: [(&str, Vec<u8>); 6] = [
        (
            "endpoints-mint-revoke",
            vec![
                RETYPE, 0, 4, 0, 0, 2, 3, // three endpoints
                MINT, 2, 6, 0x03, 9, // badge 8, read+write
                COPY, 3, 7, // copy something
                REVOKE, 0, // revoke the Untyped
            ],
        ),
        (
            "cnode-in-cnode",
            vec![
                RETYPE, 0, 2, 1, 0, 2, 1, // a CNode of 4 slots
                RETYPE, 0, 5, 0, 1, 0, 2, // notifications into it
                MOVE, 1, 20, // move into the new CNode
                DELETE, 2, // delete the new CNode's capability
            ],
        ),
        (
            "untyped-in-untyped",
            vec![
                RETYPE, 0, 1, 0, 0, 2, 1, // a 4 KiB Untyped
                RETYPE, 2, 3, 0, 0, 4, 2, // TCBs from it
                RETYPE, 2, 7, 0, 0, 6, 1, // a Frame
                REVOKE, 2, DELETE, 1,
            ],
        ),
        (
            "boot-objects",
            vec![
                BOOT, 0, 0, 0x3f, 3, BOOT, 2, 2, 0x3f, 4, BOOT, 3, 8, 0x3f, 5, BOOT, 4, 0, 0x3f, 6,
                FORGE, 0, 1, 0x3f, 7, FORGE, 5, 4, 0x3f, 8, MINT, 3, 9, 0x01, 1, MINT, 9, 10, 0x03,
                0,
            ],
        ),
        (
            "reply-objects",
            vec![
                RETYPE, 0, 6, 0, 0, 2, 1, // a Reply object
                COPY, 2, 4, // refused: a Reply is never copied
                MINT, 2, 5, 0x3f, 0, // nor minted
                MOVE, 2, 6, // moved
                DELETE, 6, REVOKE, 0,
            ],
        ),
        (
            "stray-slots",
            vec![
                COPY, 0xff, 0xfe, MOVE, 0xfd, 0, DELETE, 0xff, REVOKE, 0xfe, RETYPE, 1, 4, 0, 0xff,
                0xf5, 0xff,
            ],
        ),
    ];
    for (name, script) in scripts {
        write("cap_table_ops", name, &script);
    }
}

/// A flattened device tree under construction: the structure block and the
/// strings block.
struct Tree {
    structure: Vec<u8>,
    strings: Vec<u8>,
}

const FDT_BEGIN_NODE: u32 = 1;
const FDT_END_NODE: u32 = 2;
const FDT_PROP: u32 = 3;
const FDT_END: u32 = 9;

impl Tree {
    fn new(strings: &[u8]) -> Tree {
        Tree {
            structure: Vec::new(),
            strings: strings.to_vec(),
        }
    }

    fn token(mut self, token: u32) -> Tree {
        self.structure.extend_from_slice(&token.to_be_bytes());
        self
    }

    fn padded(mut self, bytes: &[u8]) -> Tree {
        self.structure.extend_from_slice(bytes);
        while !self.structure.len().is_multiple_of(4) {
            self.structure.push(0);
        }
        self
    }

    fn node(self, name: &[u8]) -> Tree {
        let mut name = name.to_vec();
        name.push(0);
        self.token(FDT_BEGIN_NODE).padded(&name)
    }

    fn property(self, name_offset: u32, value: &[u8]) -> Tree {
        self.token(FDT_PROP)
            .token(value.len() as u32)
            .token(name_offset)
            .padded(value)
    }

    /// The blob: header, an empty reservation map at `reservations` (40
    /// unless a test moves it), structure, strings.
    fn blob(&self, reservations: u32) -> Vec<u8> {
        let structure_at = 56u32;
        let strings_at = structure_at + self.structure.len() as u32;
        let total = strings_at + self.strings.len() as u32;
        let header = [
            0xd00d_feed,
            total,
            structure_at,
            strings_at,
            reservations,
            17,
            16,
            0,
            self.strings.len() as u32,
            self.structure.len() as u32,
        ];
        let mut blob: Vec<u8> = header.iter().flat_map(|w| w.to_be_bytes()).collect();
        blob.extend_from_slice(&[0; 16]);
        blob.extend_from_slice(&self.structure);
        blob.extend_from_slice(&self.strings);
        blob
    }
}

/// A root node that says it is a QEMU virt machine.
fn virt_root() -> Tree {
    Tree::new(b"compatible\0")
        .node(b"")
        .property(0, b"linux,dummy-virt\0")
}

fn device_tree_seeds() {
    let minimal = virt_root().token(FDT_END_NODE).token(FDT_END);
    write("device_tree", "minimal-virt", &minimal.blob(40));
    // Former findings (F2 in docs/fuzzing.md): each made the `fdt` crate
    // panic; the structure check now refuses them, so they are seeds.
    let findings: [(&str, Vec<u8>); 7] = [
        (
            "root-without-compatible",
            Tree::new(b"")
                .node(b"")
                .token(FDT_END_NODE)
                .token(FDT_END)
                .blob(40),
        ),
        (
            "property-name-outside-strings",
            Tree::new(b"compatible\0")
                .node(b"")
                .property(0x100, b"linux,dummy-virt\0")
                .token(FDT_END_NODE)
                .token(FDT_END)
                .blob(40),
        ),
        (
            "property-name-not-utf8",
            Tree::new(b"\xff\xfe\0")
                .node(b"")
                .property(0, b"linux,dummy-virt\0")
                .token(FDT_END_NODE)
                .token(FDT_END)
                .blob(40),
        ),
        (
            "node-without-end",
            virt_root().node(b"memory").token(FDT_END).blob(40),
        ),
        (
            "reservations-outside-blob",
            virt_root().token(FDT_END_NODE).token(FDT_END).blob(0x10000),
        ),
        ("no-root-node", Tree::new(b"").token(FDT_END).blob(40)),
        (
            "node-name-not-utf8",
            virt_root()
                .node(b"\xff")
                .token(FDT_END_NODE)
                .token(FDT_END_NODE)
                .token(FDT_END)
                .blob(40),
        ),
    ];
    for (name, blob) in findings {
        write("device_tree", name, &blob);
    }
}

fn main() {
    policy_seeds();
    elf_seeds();
    layout_seeds();
    device_tree_seeds();
    word_seeds();
    syscall_seeds();
    cap_table_seeds();
    record_seeds();
}

/// Seeds for the server-side decoders: an encoded audit record, a ring
/// with two records and a drop, a policy request and a trace stop.
fn record_seeds() {
    use abi::audit::{AuditRecord, AuditVerdict, SLOTS_OFFSET, SLOT_BYTES};
    let record = |sequence, dropped| AuditRecord {
        sequence,
        time: 0x1234_5678,
        thread_badge: 0x7a,
        thread: 2,
        syscall: Syscall::Poll.number(),
        object_type: CapType::Notification.raw(),
        args: [5, 0, 0x40, 7, 0, 0, 0, 0],
        result: Some(0),
        verdict: AuditVerdict::Refused(ErrorCode::Denied.raw() as u16),
        forwarded: false,
        dropped,
    };
    let bytes = record(7, 0).encode().to_vec();
    write("audit_record", "poll_refused", &bytes);
    let mut ring = vec![0u8; 4096];
    ring[8..16].copy_from_slice(&2u64.to_le_bytes()); // written
    for (i, r) in [record(0, 0), record(3, 2)].iter().enumerate() {
        let bytes = r.encode();
        let slot = (SLOTS_OFFSET + i as u64 * SLOT_BYTES) as usize;
        ring[slot..slot + bytes.len()].copy_from_slice(&bytes);
    }
    write("audit_ring", "two_records_one_gap", &ring);
    let mut message = vec![0u8]; // selector: the policy-request label
    message.push(abi::policy_request::POLICY_REQUEST_WORDS);
    for word in [3u64, 10, 0, 4, 17, 1, 0x5e] {
        message.extend_from_slice(&word.to_le_bytes());
    }
    message.extend_from_slice(&[0u8; 16 * 8]);
    let mut stop = vec![1u8, 0, abi::trace::TRACE_STOP_WORDS];
    stop.extend_from_slice(&[1u8; 23 * 8]);
    message.extend_from_slice(&stop);
    write("server_messages", "request_then_stop", &message);
}
