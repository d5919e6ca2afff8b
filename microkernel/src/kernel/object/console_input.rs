//! The console's input side: bytes from the UART, kept until a holder of
//! the console capability's read right takes them (`ConsoleRead`), and
//! the notification that says some arrived (`ConsoleSetNotification`).
//!
//! The kernel keeps the UART (its interrupt is never an IrqHandler's), so
//! it is the one owner of the device in both directions: what it prints,
//! what user space prints and the frames user space writes go out whole
//! (`console.rs`), and input is drained from the UART's FIFO at its
//! interrupt into a ring here. The UART is asked for input from the
//! first binding on: before that, what is typed waits in the UART (and,
//! under QEMU, in QEMU's character device, which stops reading when the
//! FIFO is full).

use crate::ids::ObjectRef;
use crate::ipc::notification;
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::syscall::{console_binding_arguments, console_read_arguments};
use crate::thread::ThreadId;
use abi::cap::{CapType, Rights};
use abi::console::INPUT_BYTES;
use abi::{ErrorCode, DEBUG_PRINT_MAX};

/// What the kernel keeps of the console's input.
pub(in crate::kernel) struct ConsoleInput {
    /// Bytes not read yet, oldest first.
    bytes: heapless::Deque<u8, INPUT_BYTES>,
    /// Bytes dropped (the ring was full) since the last `ConsoleRead`.
    dropped: u64,
    /// The notification signalled when input arrives, and its bits.
    notification: Option<(ObjectRef, u64)>,
    /// The UART's receive interrupt is on (from the first binding).
    started: bool,
}

impl ConsoleInput {
    /// No input, no binding.
    pub(in crate::kernel) const fn new() -> Self {
        ConsoleInput {
            bytes: heapless::Deque::new(),
            dropped: 0,
            notification: None,
            started: false,
        }
    }

    /// Keeps `input` (oldest first), dropping what does not fit.
    fn keep(&mut self, input: &[u8]) {
        for &byte in input {
            if self.bytes.push_back(byte).is_err() {
                self.dropped = self.dropped.saturating_add(1);
            }
        }
    }

    /// Copies the oldest bytes, up to `out.len()`, into `out` without
    /// taking them: how many.
    fn peek(&self, out: &mut [u8]) -> usize {
        let mut copied = 0;
        for (slot, &byte) in out.iter_mut().zip(self.bytes.iter()) {
            *slot = byte;
            copied += 1;
        }
        copied
    }

    /// Takes the `count` oldest bytes away (they were read).
    fn consume(&mut self, count: usize) {
        for _ in 0..count {
            self.bytes.pop_front();
        }
    }
}

impl Kernel {
    /// The console UART's interrupt: drains its FIFO into the ring and
    /// signals the bound notification. The interrupt stays enabled:
    /// draining the FIFO is what clears it.
    #[inline(never)]
    pub(in crate::kernel) fn console_input_arrived<P: Platform>(&mut self, platform: &mut P) {
        if self.drain_console_uart(platform) {
            self.signal_console_input();
        }
    }

    /// Moves what waits in the UART's FIFO into the ring: whether anything
    /// did.
    fn drain_console_uart<P: Platform>(&mut self, platform: &mut P) -> bool {
        let mut arrived = false;
        let mut chunk = [0u8; 32];
        loop {
            let taken = platform.console_take_input(&mut chunk);
            if taken == 0 {
                return arrived;
            }
            self.console_input.keep(&chunk[..taken]);
            arrived = true;
        }
    }

    /// Signals the bound notification, if it still exists (a destroyed
    /// one is forgotten: the input waits for a reader).
    fn signal_console_input(&mut self) {
        let Some((reference, bits)) = self.console_input.notification else {
            return;
        };
        let Some(object) = self.objects.resolve(reference, CapType::Notification) else {
            self.console_input.notification = None;
            return;
        };
        let effects = self.signal_notification(object, bits);
        for thread in effects.woken() {
            self.make_ready(thread);
        }
    }

    /// `ConsoleRead` by `current` (decode checked the registers' form):
    /// up to `x3` bytes into its memory at `x2`; `x8` how many, `x1` the
    /// bytes dropped since the last read.
    #[inline(never)]
    pub(in crate::kernel) fn console_read<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> ErrorCode {
        let Ok((console, address, len)) = console_read_arguments(&self.objects[current].context)
        else {
            return ErrorCode::InvalidArgument;
        };
        if let Err(code) = self.thread_cap(current, console, CapType::DebugConsole, Rights::READ) {
            return code;
        }
        // Input that arrived since the interrupt was taken (the interrupt
        // may wait behind this syscall) is read too.
        if self.console_input.started {
            self.drain_console_uart(platform);
        }
        // Copied out before anything is taken (a refused copy writes
        // nothing), so a refused read loses no input.
        let mut text = [0u8; DEBUG_PRINT_MAX];
        let copied = self.console_input.peek(&mut text[..len]);
        if copied > 0 {
            let Some(space) = self.thread_space(current) else {
                return ErrorCode::InvalidAddress;
            };
            if space
                .copy_to_user(platform, address, &text[..copied])
                .is_err()
            {
                return ErrorCode::InvalidAddress;
            }
            self.console_input.consume(copied);
        }
        let taken = copied;
        let dropped = core::mem::take(&mut self.console_input.dropped);
        let context = &mut self.objects[current].context;
        context.x[1] = dropped;
        context.set_value(taken as u64);
        ErrorCode::Ok
    }

    /// `ConsoleSetNotification` by `current` (decode checked the
    /// registers' form).
    #[inline(never)]
    pub(in crate::kernel) fn console_set_notification<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> ErrorCode {
        let Ok((console, notification)) = console_binding_arguments(&self.objects[current].context)
        else {
            return ErrorCode::InvalidArgument;
        };
        if let Err(code) = self.thread_cap(current, console, CapType::DebugConsole, Rights::READ) {
            return code;
        }
        let Some(cptr) = notification else {
            self.console_input.notification = None;
            return ErrorCode::Ok;
        };
        let target = match self.thread_cap(current, cptr, CapType::Notification, Rights::WRITE) {
            Ok(target) => target,
            Err(code) => return code,
        };
        let Some(reference) = self.objects.reference(target.object()) else {
            return ErrorCode::InvalidCapability;
        };
        let bits = notification::signal_bits(target.badge(), target.is_badged());
        self.console_input.notification = Some((reference, bits));
        if !self.console_input.started {
            self.console_input.started = true;
            platform.console_start_input();
            platform.set_interrupt_enabled(platform.console_intid(), true);
        }
        // Input typed before the binding: say so at once.
        self.drain_console_uart(platform);
        if !self.console_input.bytes.is_empty() {
            self.signal_console_input();
        }
        ErrorCode::Ok
    }
}
