//! IPC through endpoints: typed messages and the syscall stubs.

use abi::{ErrorCode, MessageInfo, Syscall, REGISTER_MESSAGE_WORDS};

/// A capability pointer: the slot of a capability in the thread's CSpace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cptr(pub u64);

/// A message: its info word and the words carried in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// Label, length and capability count.
    pub info: MessageInfo,
    /// Message words 0..=5 (`x2..x7`).
    pub words: [u64; REGISTER_MESSAGE_WORDS],
}

impl Message {
    /// A message with `label` and the given register words.
    pub fn new(label: u64, words: &[u64]) -> Message {
        let mut message = Message {
            info: MessageInfo::with(label, words.len().min(REGISTER_MESSAGE_WORDS) as u8),
            words: [0; REGISTER_MESSAGE_WORDS],
        };
        for (slot, word) in message.words.iter_mut().zip(words) {
            *slot = *word;
        }
        message
    }

    /// The same message, claiming `length` words (words past the
    /// registers are read from the IPC buffer).
    pub fn with_length(mut self, length: u8) -> Message {
        self.info = self.info.with_length(length);
        self
    }
}

/// A received message and the badge of the capability it came through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    /// The message.
    pub message: Message,
    /// The sender's badge (0 for replies and unbadged capabilities).
    pub badge: u64,
}

/// The registers of one IPC syscall, in and out.
struct Registers {
    x: [u64; 9],
}

fn invoke(number: Syscall, capability: u64, message: &Message) -> Registers {
    let mut x = [0u64; 9];
    x[0] = capability;
    x[1] = message.info.into();
    x[2..8].copy_from_slice(&message.words);
    x[8] = number.number();
    raw(&mut x);
    Registers { x }
}

#[cfg(all(target_arch = "aarch64", target_os = "none"))]
fn raw(x: &mut [u64; 9]) {
    // SAFETY: an IPC syscall reads and writes x0..x8 and, for `Call` and
    // `ReplyRecv`, may leave x9..x18 holding values of this thread's own
    // from an earlier kernel entry (docs/abi.md), hence their clobbers;
    // nothing else of this program's state.
    unsafe {
        core::arch::asm!(
            "svc #0",
            inout("x0") x[0], inout("x1") x[1], inout("x2") x[2],
            inout("x3") x[3], inout("x4") x[4], inout("x5") x[5],
            inout("x6") x[6], inout("x7") x[7], inout("x8") x[8],
            out("x9") _, out("x10") _, out("x11") _, out("x12") _, out("x13") _,
            out("x14") _, out("x15") _, out("x16") _, out("x17") _, out("x18") _,
            options(nostack),
        )
    };
}

/// On the host there is no kernel: every call fails.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
fn raw(x: &mut [u64; 9]) {
    x[0] = ErrorCode::InvalidSyscall.raw();
}

impl Registers {
    fn status(&self) -> Result<(), ErrorCode> {
        crate::syscall::RawResult(self.x[0]).into_result()
    }

    fn received(&self) -> Result<Received, ErrorCode> {
        self.status()?;
        let mut words = [0; REGISTER_MESSAGE_WORDS];
        words.copy_from_slice(&self.x[2..8]);
        Ok(Received {
            message: Message {
                info: MessageInfo::from(self.x[1]),
                words,
            },
            badge: self.x[8],
        })
    }
}

/// Sends `message` through `endpoint`, waiting for a receiver.
pub fn send(endpoint: Cptr, message: &Message) -> Result<(), ErrorCode> {
    invoke(Syscall::Send, endpoint.0, message).status()
}

/// Sends only if a receiver waits (`WouldBlock` otherwise).
pub fn nb_send(endpoint: Cptr, message: &Message) -> Result<(), ErrorCode> {
    invoke(Syscall::NBSend, endpoint.0, message).status()
}

/// Receives from `endpoint`, waiting for a sender.
pub fn recv(endpoint: Cptr) -> Result<Received, ErrorCode> {
    invoke(Syscall::Recv, endpoint.0, &Message::new(0, &[])).received()
}

/// Receives only if a sender waits.
pub fn nb_recv(endpoint: Cptr) -> Result<Received, ErrorCode> {
    invoke(Syscall::NBRecv, endpoint.0, &Message::new(0, &[])).received()
}

/// Sends `message` through `endpoint` and waits for the reply.
pub fn call(endpoint: Cptr, message: &Message) -> Result<Message, ErrorCode> {
    invoke(Syscall::Call, endpoint.0, message)
        .received()
        .map(|r| r.message)
}

/// Replies to the thread whose call this thread received.
pub fn reply(message: &Message) -> Result<(), ErrorCode> {
    invoke(Syscall::Reply, 0, message).status()
}

/// Replies (if a reply is owed), then receives from `endpoint`.
pub fn reply_recv(endpoint: Cptr, message: &Message) -> Result<Received, ErrorCode> {
    invoke(Syscall::ReplyRecv, endpoint.0, message).received()
}

/// Where this thread's IPC buffer is mapped: `TPIDR_EL0`, which the
/// kernel sets to it when the thread is made (`abi::IPC_BUFFER_ADDRESS`
/// in a space the kernel made, `TcbSetSpace`'s `x1` otherwise). A
/// program that changes `TPIDR_EL0` must put it back before it messages
/// through the buffer again.
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn buffer_address() -> u64 {
    let address: u64;
    // SAFETY: reading EL0's own register has no side effect.
    unsafe {
        core::arch::asm!("mrs {0}, tpidr_el0", out(reg) address, options(nostack, nomem, preserves_flags))
    };
    address
}

/// Word `index` of this thread's IPC buffer (message words 6.., the
/// capability words of `abi::IPC_BUFFER_SEND_CAPS_WORD` and
/// `abi::IPC_BUFFER_RECEIVE_SLOT_WORD`).
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn buffer_word(index: usize) -> u64 {
    let address = buffer_address() as *const u64;
    // SAFETY: the thread's buffer page is mapped read-write at the
    // address its TPIDR_EL0 holds (`buffer_address`); index is bounded to
    // the page.
    unsafe { address.add(index % 512).read_volatile() }
}

/// Sets word `index` of this thread's IPC buffer.
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn set_buffer_word(index: usize, value: u64) {
    let address = buffer_address() as *mut u64;
    // SAFETY: as `buffer_word`.
    unsafe { address.add(index % 512).write_volatile(value) }
}

/// On the host there is no IPC buffer: it is at address 0.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn buffer_address() -> u64 {
    0
}

/// On the host there is no IPC buffer: every word reads 0.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn buffer_word(_index: usize) -> u64 {
    0
}

/// On the host there is no IPC buffer: writes go nowhere.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn set_buffer_word(_index: usize, _value: u64) {}

/// Signals the notification `notification` (ORs its badge into the word).
pub fn signal(notification: Cptr) -> Result<(), ErrorCode> {
    invoke(Syscall::Signal, notification.0, &Message::new(0, &[])).status()
}

/// Waits until the notification's word is non-zero; returns and clears it.
pub fn wait(notification: Cptr) -> Result<u64, ErrorCode> {
    invoke(Syscall::Wait, notification.0, &Message::new(0, &[]))
        .received()
        .map(|r| r.badge)
}

/// Returns and clears the notification's word (maybe 0) without waiting.
pub fn poll(notification: Cptr) -> Result<u64, ErrorCode> {
    invoke(Syscall::Poll, notification.0, &Message::new(0, &[]))
        .received()
        .map(|r| r.badge)
}
