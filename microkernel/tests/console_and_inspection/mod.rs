//! The console's input side and binary frames, and the Inspector (issue
//! 23, docs/shell.md) on the kernel of the tests above: input kept until
//! read and signalled to the bound notification, the ring's limit and its
//! count of drops, every refusal changing nothing, frames written whole
//! after an open line, and inspection listing threads and capabilities.

use super::*;
use abi::bootinfo::ROOT_INSPECTOR_SLOT;
use abi::inspect::{CapInfo, ThreadInfo, ThreadState, CAP_INFO_WORDS, THREAD_INFO_WORDS};

/// Where the tests' reads and writes go: the data page's second half.
const BUFFER: u64 = DATA + 0x800;
/// The console's interrupt in the fake machine.
const CONSOLE_INTID: u32 = 33;

impl Harness {
    /// Reads user memory of the current thread.
    fn peek(&mut self, va: u64, len: usize) -> Vec<u8> {
        let id = self.kernel.current().expect("a thread runs");
        let space = self.kernel.thread_space(id).expect("a space");
        let mut out = vec![0; len];
        space
            .copy_from_user(&self.machine, va, &mut out)
            .expect("readable user memory");
        out
    }

    /// Input arrives at the UART and its interrupt is taken.
    fn type_in(&mut self, bytes: &[u8]) {
        self.machine.console_input.extend(bytes.iter().copied());
        let resume = self
            .kernel
            .handle_el0_interrupt(&mut self.machine, Some(Interrupt::Other(CONSOLE_INTID)));
        self.resumed(resume);
    }

    /// `ConsoleWriteFrame` of `bytes` (put in `BUFFER` first) through
    /// `console`: the code.
    fn write_frame(&mut self, console: u64, bytes: &[u8]) -> u64 {
        self.poke(BUFFER, bytes);
        let len = bytes.len() as u64;
        self.syscall(
            Syscall::ConsoleWriteFrame.number(),
            [console, BUFFER, len, 0],
        )
    }

    /// `ConsoleRead` of up to `len` bytes into `BUFFER`: the code, then
    /// (bytes read, bytes dropped).
    fn console_read(&mut self, console: u64, len: u64) -> (u64, u64, u64) {
        let code = self.syscall(Syscall::ConsoleRead.number(), [console, BUFFER, len, 0]);
        let ctx = self.context();
        (code, ctx.x[8], ctx.x[1])
    }

    /// The root binds console input to the notification in `slot`.
    fn bind_console(&mut self, console: u64, notification: u64) -> u64 {
        self.syscall(
            Syscall::ConsoleSetNotification.number(),
            [console, notification, 1, 0],
        )
    }

    /// `Poll` of the notification in `slot`: its word.
    fn poll(&mut self, slot: u64) -> u64 {
        self.ok(Syscall::Poll.number(), [slot, 0, 0, 0]);
        self.context().x[8]
    }

    /// `InspectThread` from `first` into `BUFFER`: the thread, if any.
    fn inspect_thread(&mut self, first: u64) -> Option<ThreadInfo> {
        self.ok(
            Syscall::InspectThread.number(),
            [ROOT_INSPECTOR_SLOT, first, BUFFER, 0],
        );
        if self.context().x[8] == 0 {
            return None;
        }
        let words = words::<THREAD_INFO_WORDS>(&self.peek(BUFFER, 8 * THREAD_INFO_WORDS));
        Some(ThreadInfo::decode(&words).expect("a well-formed thread block"))
    }

    /// `InspectCaps` of thread `number` from slot `first`.
    fn inspect_cap(&mut self, number: u64, first: u64) -> Option<CapInfo> {
        self.ok(
            Syscall::InspectCaps.number(),
            [ROOT_INSPECTOR_SLOT, number, first, BUFFER],
        );
        if self.context().x[8] == 0 {
            return None;
        }
        let words = words::<CAP_INFO_WORDS>(&self.peek(BUFFER, 8 * CAP_INFO_WORDS));
        Some(CapInfo::decode(&words).expect("a well-formed capability block"))
    }
}

fn words<const N: usize>(bytes: &[u8]) -> [u64; N] {
    core::array::from_fn(|i| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap()))
}

#[test]
fn console_input_waits_in_the_uart_until_bound_then_is_signalled_and_read_in_order() {
    let mut h = Harness::start();
    // Nothing bound: the kernel has not asked the UART for input.
    assert!(!h.machine.console_input_started);
    assert_eq!(h.console_read(ROOT_CONSOLE_SLOT, 16), (0, 0, 0));
    h.machine.console_input.extend(b"ps\r".iter().copied());
    let notification = h.make(CapType::Notification, 0);
    assert_eq!(h.bind_console(ROOT_CONSOLE_SLOT, notification), 0);
    assert!(h.machine.console_input_started);
    assert!(h.machine.enabled_interrupts.contains(&CONSOLE_INTID));
    // What was typed before the binding is signalled at once.
    assert_eq!(h.poll(notification), 1);
    h.type_in(b"help\r");
    assert_eq!(h.poll(notification), 1, "signalled again");
    assert_eq!(h.poll(notification), 0, "and the word taken");
    // Read in order, in pieces as asked.
    assert_eq!(h.console_read(ROOT_CONSOLE_SLOT, 4), (0, 4, 0));
    assert_eq!(h.peek(BUFFER, 4), b"ps\rh");
    assert_eq!(h.console_read(ROOT_CONSOLE_SLOT, 64), (0, 4, 0));
    assert_eq!(h.peek(BUFFER, 4), b"elp\r");
    assert_eq!(h.console_read(ROOT_CONSOLE_SLOT, 64), (0, 0, 0));
    // Input still in the UART when the reader reads is read too.
    h.machine.console_input.extend(b"x".iter().copied());
    assert_eq!(h.console_read(ROOT_CONSOLE_SLOT, 64), (0, 1, 0));
    // Unbound: input is kept, nobody is signalled.
    h.ok(
        Syscall::ConsoleSetNotification.number(),
        [ROOT_CONSOLE_SLOT, 0, 0, 0],
    );
    h.type_in(b"y");
    assert_eq!(h.poll(notification), 0);
    assert_eq!(h.console_read(ROOT_CONSOLE_SLOT, 64), (0, 1, 0));
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn input_past_the_ring_is_dropped_and_counted_once() {
    let mut h = Harness::start();
    let notification = h.make(CapType::Notification, 0);
    assert_eq!(h.bind_console(ROOT_CONSOLE_SLOT, notification), 0);
    let typed: Vec<u8> = (0..300u32).map(|i| b'a' + (i % 26) as u8).collect();
    h.type_in(&typed);
    let kept = abi::console::INPUT_BYTES;
    assert_eq!(
        h.console_read(ROOT_CONSOLE_SLOT, 256),
        (0, kept as u64, (300 - kept) as u64)
    );
    assert_eq!(h.peek(BUFFER, kept), &typed[..kept], "the oldest are kept");
    assert_eq!(h.console_read(ROOT_CONSOLE_SLOT, 256), (0, 0, 0));
}

#[test]
fn console_reads_and_bindings_are_refused_without_changing_anything() {
    let mut h = Harness::start();
    let notification = h.make(CapType::Notification, 0);
    assert_eq!(h.bind_console(ROOT_CONSOLE_SLOT, notification), 0);
    h.type_in(b"abc");
    // A console capability with only the write right reads nothing.
    let write_only = h.next_slot;
    h.next_slot += 1;
    h.context().x[5] = 0;
    h.ok(
        Syscall::CapMint.number(),
        [
            0,
            ROOT_CONSOLE_SLOT,
            write_only,
            u64::from(Rights::WRITE.raw()),
        ],
    );
    let missing = ErrorCode::MissingRights.raw();
    assert_eq!(h.console_read(write_only, 16).0, missing);
    assert_eq!(h.bind_console(write_only, notification), missing);
    // Not a console; not a notification; a bad flag; too long a read.
    assert_eq!(
        h.console_read(notification, 16).0,
        ErrorCode::WrongCapabilityType.raw()
    );
    assert_eq!(
        h.bind_console(ROOT_CONSOLE_SLOT, ROOT_CONSOLE_SLOT),
        ErrorCode::WrongCapabilityType.raw()
    );
    assert_eq!(
        h.syscall(
            Syscall::ConsoleSetNotification.number(),
            [ROOT_CONSOLE_SLOT, notification, 2, 0],
        ),
        ErrorCode::InvalidArgument.raw()
    );
    assert_eq!(
        h.console_read(ROOT_CONSOLE_SLOT, 257).0,
        ErrorCode::InvalidArgument.raw()
    );
    // Into memory it cannot write (its code page): refused, nothing lost.
    assert_eq!(
        h.syscall(
            Syscall::ConsoleRead.number(),
            [ROOT_CONSOLE_SLOT, CODE, 16, 0],
        ),
        ErrorCode::InvalidAddress.raw()
    );
    assert_eq!(h.console_read(ROOT_CONSOLE_SLOT, 16), (0, 3, 0));
    assert_eq!(h.peek(BUFFER, 3), b"abc");
}

#[test]
fn a_destroyed_notification_is_forgotten_and_the_input_still_read() {
    let mut h = Harness::start();
    let notification = h.make(CapType::Notification, 0);
    assert_eq!(h.bind_console(ROOT_CONSOLE_SLOT, notification), 0);
    h.ok(Syscall::CapDelete.number(), [0, notification, 0, 0]);
    // A new object in the same memory is not signalled in its place.
    let again = h.make(CapType::Notification, 0);
    h.type_in(b"q");
    assert_eq!(h.poll(again), 0);
    assert_eq!(h.console_read(ROOT_CONSOLE_SLOT, 8), (0, 1, 0));
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn a_frame_goes_out_whole_between_delimiters_after_an_open_line() {
    let mut h = Harness::start();
    h.poke(BUFFER, b"no newline");
    h.ok(
        Syscall::DebugPrint.number(),
        [ROOT_CONSOLE_SLOT, BUFFER, 10, 0],
    );
    let frame = [0x05, 0x11, 0x22, 0x0a, 0x33];
    assert_eq!(
        h.write_frame(ROOT_CONSOLE_SLOT, &frame),
        ErrorCode::Ok.raw()
    );
    let mut expected = b"no newline\n\0".to_vec();
    expected.extend_from_slice(&frame);
    expected.push(0);
    assert!(
        h.machine.console_bytes.ends_with(&expected),
        "{:?}",
        h.machine.console_bytes
    );
    // A zero inside, an empty frame, no write right: nothing written.
    let before = h.machine.console_bytes.len();
    h.poke(BUFFER, &[1, 0, 2]);
    for (console, len, code) in [
        (ROOT_CONSOLE_SLOT, 3, ErrorCode::InvalidArgument),
        (ROOT_CONSOLE_SLOT, 0, ErrorCode::InvalidArgument),
        (ROOT_INSPECTOR_SLOT, 1, ErrorCode::WrongCapabilityType),
    ] {
        assert_eq!(
            h.syscall(
                Syscall::ConsoleWriteFrame.number(),
                [console, BUFFER, len, 0],
            ),
            code.raw()
        );
    }
    assert_eq!(h.machine.console_bytes.len(), before);
}

#[test]
fn the_inspector_lists_threads_in_number_order_with_their_state() {
    let mut h = Harness::start();
    let root = h.inspect_thread(0).expect("the root is a thread");
    assert_eq!(root.state, ThreadState::Running);
    assert_eq!(root.end, None);
    assert!(!root.name().is_empty());
    let endpoint = h.make(CapType::Endpoint, 0);
    let (tcb, child) = h.child(10, 0, endpoint);
    let number = u64::from(h.kernel.thread(child).number());
    // The child (less urgent) waits in the run queue.
    let info = h
        .inspect_thread(u64::from(root.number) + 1)
        .expect("the child");
    assert_eq!(u64::from(info.number), number);
    assert_eq!(
        (info.state, info.priority, info.cpu),
        (ThreadState::Ready, 10, 0)
    );
    assert_eq!(h.inspect_thread(number + 1), None);
    // Suspended, then ended: the inspector says so, and how.
    h.ok(Syscall::TcbSuspend.number(), [tcb, 0, 0, 0]);
    assert_eq!(
        h.inspect_thread(number).unwrap().state,
        ThreadState::Suspended
    );
    h.ok(Syscall::TcbResume.number(), [tcb, 0, 0, 0]);
    // The root waits for the child's end on its fault endpoint.
    assert_eq!(
        h.syscall(Syscall::Recv.number(), [endpoint, 0, 0, 0]),
        u64::MAX
    );
    assert_eq!(h.kernel.current(), Some(child));
    h.exit(3);
    let ended = h.inspect_thread(number).expect("kept for its supervisor");
    assert_eq!(ended.state, ThreadState::Ended);
    assert_eq!(ended.end, Some(abi::fault::ThreadEnd::Exited { status: 3 }));
    let root_now = h.inspect_thread(0).unwrap();
    assert_eq!(root_now.state, ThreadState::Running);
}

#[test]
fn the_inspector_lists_a_threads_capabilities_and_refuses_what_it_must() {
    let mut h = Harness::start();
    let root = h.inspect_thread(0).expect("the root").number;
    let cnode = h.inspect_cap(u64::from(root), 0).expect("slot 0");
    assert_eq!((cnode.slot, cnode.cap_type), (0, CapType::CNode));
    let console = h.inspect_cap(u64::from(root), 1).expect("slot 1");
    assert_eq!((console.slot, console.cap_type), (1, CapType::DebugConsole));
    assert_eq!(console.rights, Rights::READ_WRITE.raw());
    let inspector = h
        .inspect_cap(u64::from(root), ROOT_INSPECTOR_SLOT)
        .expect("the inspector");
    assert_eq!(inspector.cap_type, CapType::Inspector);
    // A badged copy names the same object, with its badge.
    let endpoint = h.make(CapType::Endpoint, 0);
    let badged = h.next_slot;
    h.next_slot += 1;
    let ctx = h.context();
    ctx.x[5] = 0x77;
    ctx.x[6] = 1;
    h.ok(
        Syscall::CapMint.number(),
        [0, endpoint, badged, u64::from(Rights::ALL.raw())],
    );
    let original = h.inspect_cap(u64::from(root), endpoint).unwrap();
    let copy = h.inspect_cap(u64::from(root), badged).unwrap();
    assert_eq!((original.badge, copy.badge), (None, Some(0x77)));
    assert_eq!(original.object, copy.object);
    // Past the last capability: none.
    assert_eq!(h.inspect_cap(u64::from(root), 4095), None);
    // Refusals: no such thread, not an Inspector, a misaligned block.
    let refused = |h: &mut Harness, cap: u64, number: u64, address: u64| {
        h.syscall(Syscall::InspectCaps.number(), [cap, number, 0, address])
    };
    assert_eq!(
        refused(&mut h, ROOT_INSPECTOR_SLOT, 999, BUFFER),
        ErrorCode::InvalidArgument.raw()
    );
    assert_eq!(
        refused(&mut h, ROOT_CONSOLE_SLOT, u64::from(root), BUFFER),
        ErrorCode::WrongCapabilityType.raw()
    );
    assert_eq!(
        refused(&mut h, ROOT_INSPECTOR_SLOT, u64::from(root), BUFFER + 4),
        ErrorCode::InvalidArgument.raw()
    );
    assert_eq!(
        refused(&mut h, ROOT_INSPECTOR_SLOT, u64::from(root), CODE),
        ErrorCode::InvalidAddress.raw()
    );
}

/// The root's console minted with only the write right into a free slot:
/// that slot (what any task of a description gets by default).
fn write_only(h: &mut Harness) -> u64 {
    let slot = h.next_slot;
    h.next_slot += 1;
    h.context().x[5] = 0;
    h.ok(
        Syscall::CapMint.number(),
        [0, ROOT_CONSOLE_SLOT, slot, u64::from(Rights::WRITE.raw())],
    );
    slot
}

#[test]
fn a_frame_needs_the_read_right_too_so_a_tagged_writer_cannot_forge_lines() {
    let mut h = Harness::start();
    let write_only = write_only(&mut h);
    // What a write-only holder prints is tagged, its control bytes shown
    // as `?`: it cannot pass for the kernel's, the root's or a TAP line.
    let forged = b"\n# portcullis: 9 passed, 0 failed\n\x1b[2J";
    h.poke(BUFFER, forged);
    h.ok(
        Syscall::DebugPrint.number(),
        [write_only, BUFFER, forged.len() as u64, 0],
    );
    let console = String::from_utf8_lossy(&h.machine.console_bytes).into_owned();
    assert!(
        console.contains("] # portcullis: 9 passed, 0 failed\n"),
        "{console}"
    );
    assert!(!console.contains("\n# portcullis"), "{console}");
    assert!(!console.contains('\x1b'), "{console}");
    // A frame is raw bytes: through that capability, the same bytes
    // would reach the terminal untagged, escape included. Refused.
    let before = h.machine.console_bytes.len();
    assert_eq!(
        h.syscall(
            Syscall::ConsoleWriteFrame.number(),
            [write_only, BUFFER, forged.len() as u64, 0],
        ),
        ErrorCode::MissingRights.raw()
    );
    assert_eq!(h.machine.console_bytes.len(), before, "nothing written");
    // The terminal's owner (read and write) writes frames.
    h.ok(
        Syscall::ConsoleWriteFrame.number(),
        [ROOT_CONSOLE_SLOT, BUFFER, forged.len() as u64, 0],
    );
    assert!(h.machine.console_bytes.ends_with(b"\x1b[2J\0"));
}

/// A page the root's space has no mapping at: the one after its data page.
const UNMAPPED: u64 = DATA + 0x1000;

#[test]
fn blocks_and_reads_that_cross_into_a_page_it_cannot_write_change_nothing() {
    let mut h = Harness::start();
    // The page after the data page is not mapped; the one before it is
    // code (read-only).
    let space = h.kernel.thread_space(h.kernel.current().unwrap()).unwrap();
    assert!(space.translate_user(&h.machine, UNMAPPED).is_none());
    let pattern = [0x5au8; 16];
    let tail = UNMAPPED - 16;
    h.poke(tail, &pattern);
    // An inspection block that starts on the data page and ends past it:
    // refused, and not one word of it written.
    assert_eq!(
        h.syscall(
            Syscall::InspectThread.number(),
            [ROOT_INSPECTOR_SLOT, 0, tail, 0]
        ),
        ErrorCode::InvalidAddress.raw()
    );
    let root = h.inspect_thread(0).expect("the root").number;
    assert_eq!(
        h.syscall(
            Syscall::InspectCaps.number(),
            [ROOT_INSPECTOR_SLOT, u64::from(root), 0, UNMAPPED - 8],
        ),
        ErrorCode::InvalidAddress.raw()
    );
    assert_eq!(h.peek(tail, 16), pattern);
    // Console input read across the same end, and across the code page's
    // end into the data page: refused, nothing taken.
    let notification = h.make(CapType::Notification, 0);
    assert_eq!(h.bind_console(ROOT_CONSOLE_SLOT, notification), 0);
    h.type_in(b"abc");
    for address in [UNMAPPED - 2, DATA - 1] {
        assert_eq!(
            h.syscall(
                Syscall::ConsoleRead.number(),
                [ROOT_CONSOLE_SLOT, address, 3, 0],
            ),
            ErrorCode::InvalidAddress.raw(),
            "{address:#x}"
        );
    }
    assert_eq!(h.peek(tail, 16), pattern);
    // Ending just before the unmapped page is fine.
    assert_eq!(
        h.syscall(
            Syscall::ConsoleRead.number(),
            [ROOT_CONSOLE_SLOT, UNMAPPED - 3, 3, 0],
        ),
        0
    );
    assert_eq!(h.context().x[8], 3);
    assert_eq!(h.peek(UNMAPPED - 3, 3), b"abc");
    assert_eq!(h.kernel.check_invariants(), Ok(()));
}

#[test]
fn a_second_binding_replaces_the_first_and_an_unbinding_any_binding() {
    let mut h = Harness::start();
    let first = h.make(CapType::Notification, 0);
    let second = h.make(CapType::Notification, 0);
    assert_eq!(h.bind_console(ROOT_CONSOLE_SLOT, first), 0);
    assert_eq!(h.bind_console(ROOT_CONSOLE_SLOT, second), 0);
    h.type_in(b"x");
    assert_eq!((h.poll(first), h.poll(second)), (0, 1));
    // The notification's own capability without the write right cannot be
    // bound: binding signals, which that capability could not.
    let read_only = h.next_slot;
    h.next_slot += 1;
    h.context().x[5] = 0;
    h.ok(
        Syscall::CapMint.number(),
        [0, first, read_only, u64::from(Rights::READ.raw())],
    );
    assert_eq!(
        h.bind_console(ROOT_CONSOLE_SLOT, read_only),
        ErrorCode::MissingRights.raw()
    );
    h.type_in(b"y");
    assert_eq!((h.poll(first), h.poll(second)), (0, 1), "still the second");
    assert_eq!(h.console_read(ROOT_CONSOLE_SLOT, 8), (0, 2, 0));
}

#[test]
fn console_reads_answer_alike_on_the_lean_and_the_generic_entry() {
    for lean in [true, false] {
        let mut h = Harness::start();
        h.lean = lean;
        let notification = h.make(CapType::Notification, 0);
        assert_eq!(h.bind_console(ROOT_CONSOLE_SLOT, notification), 0);
        let typed = [b'z'; 300];
        h.type_in(&typed);
        let ctx = h.context();
        // Registers the call does not answer in stay as they were.
        ctx.x[9] = 0x99;
        ctx.x[19] = 0x1919;
        assert_eq!(
            h.console_read(ROOT_CONSOLE_SLOT, 256),
            (0, 256, 44),
            "lean {lean}"
        );
        let ctx = h.context();
        assert_eq!((ctx.x[9], ctx.x[19]), (0x99, 0x1919), "lean {lean}");
        assert_eq!(h.console_read(ROOT_CONSOLE_SLOT, 256), (0, 0, 0));
    }
}

#[test]
fn a_filter_judges_a_frames_bytes_and_the_judged_bytes_are_what_is_written() {
    use abi::policy::{encode, Action, BytesMatch, BytesOp, FilterDescription, Rule};
    let mut h = Harness::start();
    let mut description = FilterDescription::new(Action::Allow);
    description
        .push(Rule {
            syscall: Some(Syscall::ConsoleWriteFrame.number()),
            bytes: Some(BytesMatch::new(BytesOp::Contains, b"evil", 0).unwrap()),
            ..Rule::new(Action::Errno(ErrorCode::Denied.raw() as u16))
        })
        .unwrap();
    let mut encoded = vec![0u8; abi::policy::MAX_DESCRIPTION_BYTES];
    let len = encode(&description, &mut encoded).unwrap().len();
    let filter = h.make(CapType::Filter, 0);
    h.poke(BUFFER, &encoded[..len]);
    h.ok(
        Syscall::FilterLoad.number(),
        [filter, BUFFER, len as u64, 0],
    );
    h.context().x[5] = 0;
    h.ok(
        Syscall::TcbAttachFilter.number(),
        [ROOT_TCB_SLOT, filter, 0, 0],
    );
    let before = h.machine.console_bytes.len();
    assert_eq!(
        h.write_frame(ROOT_CONSOLE_SLOT, b"an evil frame"),
        ErrorCode::Denied.raw()
    );
    assert_eq!(h.machine.console_bytes.len(), before);
    assert_eq!(
        h.write_frame(ROOT_CONSOLE_SLOT, b"a good frame"),
        ErrorCode::Ok.raw()
    );
    assert!(h.machine.console_bytes.ends_with(b"\0a good frame\0"));
    // Judged and found to hold a zero: still refused whole.
    assert_eq!(
        h.write_frame(ROOT_CONSOLE_SLOT, b"a\0b"),
        ErrorCode::InvalidArgument.raw()
    );
    assert!(h.machine.console_bytes.ends_with(b"\0a good frame\0"));
}
