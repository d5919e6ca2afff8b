//! Threads of the caller's own program: a new thread in the caller's own
//! address space, entered at the program's entry ([`crate::entry_point`],
//! the SDK's `_start`) with a selector in `x0`, so it runs
//! `portcullis_main(x0)` of the same ELF. The kernel loads no program for
//! user space (`TcbConfigure` takes no program selector); this is how a
//! program runs another of its programs as a thread, paying for its
//! stack and IPC buffer from its own Untyped.
//!
//! The caller makes the TCB (`Retype`), configures it ([`Tcb::configure`],
//! before or after) and resumes it once [`bind_to_own_space`] returned.
//! Every thread of one address space shares its `static`s: a program
//! started this way must not rely on having them to itself.

use crate::ipc::Cptr;
use crate::tcb::{IpcBuffer, Tcb, ThreadStart};
use crate::vspace::{Frame, VSpace};
use abi::cap::CapType;
use abi::vspace::{MapRights, FRAME_MAP_END, FRAME_MAP_START};
use abi::ErrorCode;

const PAGE: u64 = 4096;

/// A thread of the caller's own program, and where its stack and IPC
/// buffer come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnThread {
    /// The new thread's TCB capability (write right; made by `Retype`,
    /// inactive, without an address space yet).
    pub tcb: Tcb,
    /// The caller's own VSpace (write right): the thread shares it.
    pub vspace: VSpace,
    /// The Untyped capability (write right) the stack and buffer frames
    /// are retyped from.
    pub untyped: Cptr,
    /// The first of [`OwnThread::slots`] empty slots of the caller's own
    /// CNode: the stack frames, lowest page first, then the buffer frame.
    pub first_slot: u64,
    /// Pages of stack (at least 1).
    pub stack_pages: u64,
    /// A page-aligned virtual address in the frame window
    /// (`abi::vspace::FRAME_MAP_START .. FRAME_MAP_END`) where nothing is
    /// mapped in the [`OwnThread::area_pages`] pages from it: an unmapped
    /// guard page, the stack, another guard page, the IPC buffer.
    pub area: u64,
    /// The endpoint (write right) its faults go to, with that
    /// capability's badge; `None`: a fault stops it.
    pub fault_endpoint: Option<Cptr>,
    /// Its name in the kernel's console lines ([`Tcb::set_name`]);
    /// `None`: it stays "task".
    pub name: Option<&'static str>,
}

/// What [`bind_to_own_space`] made and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnThreadLayout {
    /// The thread's first SP: the top of its stack.
    pub stack_top: u64,
    /// Its IPC buffer (the frame in slot `first_slot + stack_pages`).
    pub buffer: IpcBuffer,
}

impl OwnThread {
    /// The slots of the caller's CNode it uses from `first_slot`.
    pub const fn slots(&self) -> u64 {
        self.stack_pages + 1
    }

    /// The pages of the frame window it uses from `area` (guard pages
    /// included).
    pub const fn area_pages(&self) -> u64 {
        self.stack_pages + 3
    }

    /// Where the stack and the buffer go, or `None` if `area` is not a
    /// page-aligned range of the frame window of `area_pages` pages or
    /// there is no stack page.
    pub fn layout(&self, buffer_frame: Frame) -> Option<OwnThreadLayout> {
        let end = self
            .area_pages()
            .checked_mul(PAGE)
            .and_then(|size| self.area.checked_add(size))?;
        if self.stack_pages == 0
            || !self.area.is_multiple_of(PAGE)
            || self.area < FRAME_MAP_START
            || end > FRAME_MAP_END
        {
            return None;
        }
        Some(OwnThreadLayout {
            stack_top: self.area + (1 + self.stack_pages) * PAGE,
            buffer: IpcBuffer {
                frame: buffer_frame,
                address: end - PAGE,
            },
        })
    }
}

/// Gives `thread.tcb` the caller's own address space, ready to run this
/// program's `portcullis_main(x0)`: retypes `stack_pages` stack frames
/// and one IPC-buffer frame from `thread.untyped` into the caller's slots
/// `first_slot ..`, maps them read-write into `thread.vspace` at
/// [`OwnThread::layout`], and binds the space with `Tcb::set_space` (PC
/// [`crate::entry_point`], SP the stack's top, the buffer at its address,
/// becoming the thread's `TPIDR_EL0`), named `thread.name` first if it
/// has one. The thread stays inactive until [`Tcb::resume`].
///
/// `InvalidArgument` for a bad area or no stack page, before anything is
/// made; otherwise the first failing syscall's error, with what was made
/// before it left in place (the frames in their slots, some mapped:
/// deleting them, or revoking the Untyped, takes them back).
pub fn bind_to_own_space(thread: &OwnThread, x0: u64) -> Result<OwnThreadLayout, ErrorCode> {
    let buffer_frame = Frame(Cptr(thread.first_slot + thread.stack_pages));
    let layout = thread
        .layout(buffer_frame)
        .ok_or(ErrorCode::InvalidArgument)?;
    if let Some(name) = thread.name {
        thread.tcb.set_name(name)?;
    }
    crate::syscall::retype(
        thread.untyped.0,
        CapType::Frame,
        0,
        thread.first_slot,
        thread.slots(),
    )?;
    let stack_base = layout.stack_top - thread.stack_pages * PAGE;
    for page in 0..thread.stack_pages {
        Frame(Cptr(thread.first_slot + page)).map(
            thread.vspace,
            stack_base + page * PAGE,
            MapRights::ReadWrite,
        )?;
    }
    buffer_frame.map(thread.vspace, layout.buffer.address, MapRights::ReadWrite)?;
    let start = ThreadStart {
        ipc_buffer: Some(layout.buffer),
        fault_endpoint: thread.fault_endpoint,
        pc: crate::entry_point(),
        sp: layout.stack_top,
        x0,
    };
    thread.tcb.set_space(thread.vspace, start)?;
    Ok(layout)
}
