//! Where each kind of object keeps its state: the body that follows the
//! header in its record, and what a record costs.
//!
//! Every object is one record in object memory (`arch::object_memory`),
//! paid for by the Untyped it was retyped from (or, for the kernel's own
//! objects, taken from the kernel's page pool). Frames, VSpaces and
//! Untypeds also have memory of their own (the page, the tables, the
//! range); their record only describes it.

use super::object::{CNodeBody, ObjectHeader, Slot, UntypedBody};
use crate::address_space::AddressSpace;
use crate::endpoint_queue::EndpointQueue;
use crate::filter::Filter;
use crate::ids::{ObjectLink, ObjectRef};
use crate::ipc::notification::Notification;
use crate::thread::{Thread, ThreadId};
use abi::cap::CapType;
use arch::object_memory::{self, kind, Layout};

/// The kernel's record layout: one body type per object type.
pub struct KernelLayout;

impl Layout for KernelLayout {
    type Header = ObjectHeader;
    type Untyped = UntypedBody;
    type CNode = CNodeBody;
    type Slot = Slot;
    type Tcb = Thread;
    type Endpoint = EndpointQueue;
    type Notification = Notification;
    type Reply = ReplyBody;
    type Frame = FrameBody;
    type VSpace = VSpaceBody;
    type IrqHandler = IrqHandlerBody;
    type DebugConsole = ();
    type Filter = FilterBody;
    type IrqControl = ();
    type Inspector = ();
}

/// Object memory laid out for the kernel.
pub type Memory = object_memory::ObjectMemory<KernelLayout>;

/// A Reply object: the caller it answers, while that caller waits for it
/// (see `kernel/object/reply.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplyBody {
    /// The caller, linked back by its `Thread::saved_reply`.
    pub caller: Option<ThreadId>,
}

/// Where a Frame is mapped: in the address space of VSpace `space` as it
/// was at `generation`, at `va`. A mapping into a space that has been
/// taken down since (its VSpace's generation moved on, or the VSpace was
/// destroyed: `space` resolves to nothing, even when a new VSpace has been
/// made in the same memory, whose generation starts again at 0) is gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameMapping {
    /// The VSpace object whose space holds the mapping.
    pub space: ObjectRef,
    /// That VSpace's generation when the frame was mapped.
    pub generation: u64,
    /// The page's user address.
    pub va: u64,
}

/// A Frame: its page, where it is mapped (at most once), and the threads
/// whose IPC buffer or audit ring it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameBody {
    /// Physical address of the page.
    pub phys: u64,
    /// Where it is mapped, if it is.
    pub mapping: Option<FrameMapping>,
    /// The first thread whose IPC buffer it is (linked through
    /// `Thread::buffer_links`): destroying the Frame takes their buffer
    /// away.
    pub buffer_users: Option<ThreadId>,
    /// The first thread whose audit ring it is (linked through
    /// `Thread::audit_ring_links`): destroying the Frame turns their
    /// audit off.
    pub audit_users: Option<ThreadId>,
    /// The device Untyped whose memory the page is (MMIO: mapped as
    /// Device memory, never zeroed, never written by the kernel), or none
    /// for a page of RAM. Its record is paid by the RAM Untyped its header
    /// names.
    pub device: ObjectLink,
}

impl FrameBody {
    /// Is the page device memory (MMIO)?
    pub fn is_device(&self) -> bool {
        self.device.get().is_some()
    }
}

/// A VSpace: the pages its tables live in and the address space built in
/// them while threads run there.
pub struct VSpaceBody {
    /// The root table's page; the table pages follow it (a user-made
    /// VSpace has `pages` of them from its Untyped; a kernel-made one has
    /// only its root here, its tables come from the kernel's pool).
    pub phys: u64,
    /// Pages at `phys` (root included) the VSpace has.
    pub pages: u64,
    /// The address space, while threads are bound to it.
    pub space: Option<AddressSpace>,
    /// The first thread bound to it (linked through
    /// `Thread::space_links`).
    pub users: Option<ThreadId>,
    /// Counts the times its space was taken down: a mapping made before
    /// is gone (`FrameMapping::generation`).
    pub generation: u64,
}

impl VSpaceBody {
    /// A VSpace over `pages` pages at `phys`, with no space yet.
    pub const fn new(phys: u64, pages: u64) -> VSpaceBody {
        VSpaceBody {
            phys,
            pages,
            space: None,
            users: None,
            generation: 0,
        }
    }
}

/// An IrqHandler: the interrupt it stands for and the notification (with
/// the bits to signal) it is bound to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IrqHandlerBody {
    /// The interrupt ID.
    pub intid: Option<u32>,
    /// The bound notification and the bits a signal sets.
    pub notification: Option<(ObjectRef, u64)>,
}

impl IrqHandlerBody {
    /// A handler for no interrupt yet.
    pub const NONE: IrqHandlerBody = IrqHandlerBody {
        intid: None,
        notification: None,
    };
}

pub use crate::ids::FilterUser;

/// A Filter: its rules, and the threads it confines.
pub struct FilterBody {
    /// The rules (frozen once attached: the threads' verdict caches were
    /// computed from them).
    pub filter: Filter,
    /// The first of the threads it is attached to (linked through
    /// `AttachedFilter::next`).
    pub attached: Option<FilterUser>,
}

/// The bytes of the record of one object of `cap_type` (with CNode
/// `radix`), rounded up to whole granules: what it costs on top of any
/// memory of its own. `None` for a type with no record of its own.
pub fn record_bytes(cap_type: CapType, radix: u8) -> Option<u64> {
    use object_memory::{array_record_bytes, record_bytes as bytes};
    type L = KernelLayout;
    let size = match cap_type {
        CapType::Untyped => bytes::<L, kind::Untyped>(),
        CapType::CNode => array_record_bytes::<L, kind::CNode>(1usize.checked_shl(radix.into())?)?,
        CapType::Tcb => bytes::<L, kind::Tcb>(),
        CapType::Endpoint => bytes::<L, kind::Endpoint>(),
        CapType::Notification => bytes::<L, kind::Notification>(),
        CapType::Reply => bytes::<L, kind::Reply>(),
        CapType::Frame => bytes::<L, kind::Frame>(),
        CapType::VSpace => bytes::<L, kind::VSpace>(),
        CapType::IrqHandler => bytes::<L, kind::IrqHandler>(),
        CapType::DebugConsole => bytes::<L, kind::DebugConsole>(),
        CapType::Filter => bytes::<L, kind::Filter>(),
        CapType::IrqControl => bytes::<L, kind::IrqControl>(),
        CapType::Inspector => bytes::<L, kind::Inspector>(),
        CapType::Null => return None,
    };
    Some(size as u64)
}

#[cfg(test)]
mod tests;
