//! Capabilities and the objects they name, all kept in object memory:
//! every object is a record in the RAM that paid for it, every CNode slot
//! lies inside its CNode's record.
//!
//! The scheme (`docs/capabilities.md` says it at length):
//!
//! 1. **Objects live in the memory that paid for them.** A record (a
//!    header and a per-type body, `layout.rs`) is carved from the
//!    Untyped it was retyped from, or, for the kernel's own objects, from
//!    a page of the kernel's pool. There is no table of objects, threads
//!    or slots to fill: a task can only ever use up its own Untypeds.
//! 2. **One CNode per CSpace.** A thread's CSpace is a single CNode and a
//!    capability pointer is an index into it, so a lookup is one bounds
//!    check and one read of a slot in the CNode's record.
//! 3. **Every capability has a place in the derivation tree.** An
//!    object's first capability is a root (made by the kernel) or a child
//!    of the Untyped capability it was retyped from; copies and mints are
//!    children of their source. Delete removes a capability's descendants
//!    before it; revoke removes only the descendants.
//! 4. **The last capability destroys the object.** The kernel hears of it
//!    (`take_destroyed`) and lets go of it (wakes whoever waited on it);
//!    a destroyed CNode deletes what its slots hold; the record is freed
//!    when the kernel entry ends (`reap`), and when the last object
//!    carved from an Untyped is freed, all of its memory is free again.
//! 5. **Check first, then change.** Every operation validates everything
//!    before it writes anything, so a failed operation changes nothing.
//! 6. **Bounded, iterative, no heap.** Deletion walks the tree with an
//!    explicit cursor and work lists threaded through the headers, never
//!    by recursion.

mod cdt;
mod delete;
mod derive;
mod device;
pub mod error;

mod invariants;
pub mod layout;
pub mod object;
pub mod object_size;
mod retype;
pub mod word;

#[cfg(test)]
mod proptests;
#[cfg(any(test, feature = "test-support"))]
mod snapshot;
#[cfg(test)]
mod test_support;

#[cfg(any(test, feature = "test-support"))]
pub use snapshot::Snapshot;

pub use crate::ids::{CNodeId, ObjectId, ObjectLink, ObjectRef, SlotId};
pub use error::CapError;
pub use invariants::InvariantViolation;
pub use layout::{FilterBody, FilterUser, KernelLayout};
pub use layout::{FrameBody, FrameMapping, IrqHandlerBody, Memory, ReplyBody, VSpaceBody};
pub use object::{CNodeBody, ObjectHeader, ObjectState, Slot, UntypedBody};
pub use retype::{RetypePlan, RetypedObjects, MAX_RETYPE_COUNT};
pub use word::{CapWord, Capability};

use crate::endpoint_queue::EndpointQueue;
use crate::filter::Filter;
use crate::ipc::notification::Notification;
use crate::thread::{Thread, ThreadId};
use abi::cap::{CapType, Rights};
use arch::object_memory::{kind, Kind};
use object_size::{MAX_CNODE_RADIX, MIN_CNODE_RADIX, PAGE_SIZE};

/// Every capability and kernel object: the object memory they live in and
/// the lists threaded through their headers.
pub struct Objects {
    memory: Memory,
    /// Serial numbers (and Untyped epochs) given out so far.
    serials: u64,
    /// Every object whose record exists, newest first.
    all: ObjectLink,
    /// How many that is.
    count: usize,
    /// CNodes whose slots are being emptied (only inside a delete).
    dying: ObjectLink,
    /// Destroyed objects the kernel has not been told of, oldest first.
    destroyed: ObjectLink,
    destroyed_tail: ObjectLink,
    /// Objects the kernel has let go of, whose records `reap` frees.
    retired: ObjectLink,
}

impl Default for Objects {
    fn default() -> Self {
        Self::new()
    }
}

/// A kernel record freed by `reap` that was on the kernel's own pages:
/// `pages` pages at `phys` to give back to the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreedPages {
    /// The first page.
    pub phys: u64,
    /// How many.
    pub pages: u64,
}

impl Objects {
    /// Where the object memory lies in `Objects` (for the IPC fast path's
    /// assembly, which reads its base).
    pub const MEMORY_OFFSET: usize = core::mem::offset_of!(Objects, memory);
    /// Where the count of serial numbers given out lies (`newest_serial`;
    /// the policy request fast path reads it).
    pub const SERIALS_OFFSET: usize = core::mem::offset_of!(Objects, serials);
    // A word, which the fast path loads with one `ldr`: this builds only
    // while it is a `u64`.
    const _SERIALS_ARE_A_WORD: fn(&Objects) -> &u64 = |objects| &objects.serials;

    /// No memory, no object (a constant, for the kernel's static): give it
    /// memory with `install_memory` before anything else.
    pub const fn new() -> Self {
        Objects {
            memory: Memory::empty(),
            serials: 0,
            all: ObjectLink::NONE,
            count: 0,
            dying: ObjectLink::NONE,
            destroyed: ObjectLink::NONE,
            destroyed_tail: ObjectLink::NONE,
            retired: ObjectLink::NONE,
        }
    }

    /// Makes `memory` where objects live. Only before the first object:
    /// afterwards the memory is left as it is and `false` says so.
    pub fn install_memory(&mut self, memory: Memory) -> bool {
        if self.count != 0 {
            return false;
        }
        self.memory = memory;
        true
    }

    /// The object memory.
    #[inline(always)]
    pub fn memory(&self) -> &Memory {
        &self.memory
    }

    /// The object memory, for changing bodies.
    #[inline(always)]
    pub fn memory_mut(&mut self) -> &mut Memory {
        &mut self.memory
    }

    /// The last serial number (or epoch) given out: every object made from
    /// now on has a larger one.
    #[inline(always)]
    pub fn newest_serial(&self) -> u64 {
        self.serials
    }

    /// A new serial number (or epoch), never given out before.
    fn next_serial(&mut self) -> u64 {
        self.serials += 1;
        self.serials
    }

    /// The body of object `id`, if it is an object of kind `K`.
    #[inline(always)]
    pub fn get<K: Kind<KernelLayout>>(&self, id: ObjectId) -> Option<&K::Body> {
        self.memory.get::<K>(id.granule())
    }

    /// The body of object `id` for changing, if it is of kind `K`.
    #[inline(always)]
    pub fn get_mut<K: Kind<KernelLayout>>(&mut self, id: ObjectId) -> Option<&mut K::Body> {
        self.memory.get_mut::<K>(id.granule())
    }

    /// The header of object `id`, whatever its state, if its record exists.
    #[inline(always)]
    pub fn object(&self, id: ObjectId) -> Option<&ObjectHeader> {
        self.memory.header(id.granule())
    }

    /// The header of object `id` for changing.
    fn header_mut(&mut self, id: ObjectId) -> Option<&mut ObjectHeader> {
        self.memory.header_mut(id.granule())
    }

    /// A reference to live object `id` that outlives it harmlessly.
    pub fn reference(&self, id: ObjectId) -> Option<ObjectRef> {
        self.object(id).filter(|h| h.live()).map(|h| ObjectRef {
            id,
            serial: h.serial,
        })
    }

    /// The object `reference` names, if it still lives and is of
    /// `cap_type`.
    #[inline]
    pub fn resolve(&self, reference: ObjectRef, cap_type: CapType) -> Option<ObjectId> {
        self.object(reference.id)
            .filter(|h| h.live() && h.serial == reference.serial && h.cap_type == cap_type)
            .map(|_| reference.id)
    }

    /// Objects whose record exists.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Every object whose record exists, newest first.
    pub fn iter(&self) -> impl Iterator<Item = ObjectId> + '_ {
        let mut next = self.all.get();
        core::iter::from_fn(move || {
            let id = next?;
            next = self.object(id).and_then(|h| h.next.get());
            Some(id)
        })
    }

    /// The object after `id` in [`Objects::iter`]'s order (the first for
    /// `None`): a walk that changes objects as it goes (but makes and
    /// destroys none) holds no borrow between steps.
    pub fn next_after(&self, id: Option<ObjectId>) -> Option<ObjectId> {
        match id {
            None => self.all.get(),
            Some(id) => self.object(id).and_then(|h| h.next.get()),
        }
    }

    /// The thread of TCB `id`, if `id` is a TCB.
    #[inline(always)]
    pub fn thread(&self, id: ThreadId) -> Option<&Thread> {
        self.memory.get::<kind::Tcb>(id.granule())
    }

    /// The thread of TCB `id` for changing, if `id` is a TCB.
    #[inline(always)]
    pub fn thread_mut(&mut self, id: ThreadId) -> Option<&mut Thread> {
        self.memory.get_mut::<kind::Tcb>(id.granule())
    }

    /// Two different threads, both for changing.
    #[inline(always)]
    pub fn thread_pair_mut(
        &mut self,
        a: ThreadId,
        b: ThreadId,
    ) -> Option<(&mut Thread, &mut Thread)> {
        self.memory
            .pair_mut::<kind::Tcb, kind::Tcb>(a.granule(), b.granule())
    }

    /// Thread `id` for changing, with read access to every other object
    /// (the filters and slots it names) at the same time.
    #[inline(always)]
    pub fn split_thread(&mut self, id: ThreadId) -> Option<(&mut Thread, OtherObjects<'_>)> {
        self.memory
            .split_mut::<kind::Tcb>(id.granule())
            .map(|(thread, others)| (thread, OtherObjects(others)))
    }

    /// Puts a new record of `cap_type` at physical `record_at` with
    /// `header`, its body made for memory `(phys, size)` (a Frame's page,
    /// a VSpace's pages, an Untyped's range) or CNode `radix`; links it
    /// into the list of every object. The caller has checked the range is
    /// its to use.
    fn place(
        &mut self,
        cap_type: CapType,
        record_at: u64,
        header: ObjectHeader,
        (phys, size): (u64, u64),
        radix: u8,
    ) -> Result<ObjectId, CapError> {
        let granule = self
            .memory
            .granule_of(record_at)
            .ok_or(CapError::InvalidArgument)?;
        let m = &mut self.memory;
        let placed = match cap_type {
            CapType::Untyped => {
                let epoch = header.serial;
                // A carved Untyped's record is in its own memory, at its
                // top: its records may go up to it.
                let home = if record_at >= phys && record_at < phys + size {
                    record_at - phys
                } else {
                    size
                };
                m.create::<kind::Untyped>(
                    granule,
                    header,
                    UntypedBody::new(phys, size, home, epoch),
                )
            }
            CapType::CNode => m.create_array::<kind::CNode>(
                granule,
                header,
                CNodeBody { radix, users: None },
                1 << radix,
                Slot::EMPTY,
            ),
            CapType::Tcb => m.create::<kind::Tcb>(granule, header, Thread::EMPTY),
            CapType::Endpoint => m.create::<kind::Endpoint>(granule, header, EndpointQueue::EMPTY),
            CapType::Notification => {
                m.create::<kind::Notification>(granule, header, Notification::EMPTY)
            }
            CapType::Reply => m.create::<kind::Reply>(granule, header, ReplyBody::default()),
            CapType::Frame => m.create::<kind::Frame>(
                granule,
                header,
                FrameBody {
                    phys,
                    mapping: None,
                    buffer_users: None,
                    audit_users: None,
                    device: ObjectLink::NONE,
                },
            ),
            CapType::VSpace => {
                m.create::<kind::VSpace>(granule, header, VSpaceBody::new(phys, size / PAGE_SIZE))
            }
            CapType::IrqHandler => {
                m.create::<kind::IrqHandler>(granule, header, IrqHandlerBody::NONE)
            }
            CapType::DebugConsole => m.create::<kind::DebugConsole>(granule, header, ()),
            CapType::IrqControl => m.create::<kind::IrqControl>(granule, header, ()),
            CapType::Inspector => m.create::<kind::Inspector>(granule, header, ()),
            CapType::Filter => m.create::<kind::Filter>(
                granule,
                header,
                FilterBody {
                    filter: Filter::new(),
                    attached: None,
                },
            ),
            CapType::Null => return Err(CapError::InvalidArgument),
        };
        placed.map_err(|_| CapError::InvalidArgument)?;
        let id = ObjectId(granule);
        self.link_new(id);
        Ok(id)
    }

    /// Puts new object `id` at the head of the list of every object.
    fn link_new(&mut self, id: ObjectId) {
        let head = self.all;
        if let Some(old) = head.get() {
            if let Some(h) = self.header_mut(old) {
                h.previous = ObjectLink::to(id);
            }
        }
        if let Some(h) = self.header_mut(id) {
            h.next = head;
            h.previous = ObjectLink::NONE;
        }
        self.all = ObjectLink::to(id);
        self.count += 1;
    }

    /// Takes object `id` off the list of every object.
    fn unlink(&mut self, id: ObjectId) {
        let Some(h) = self.object(id).copied() else {
            return;
        };
        match h.previous.get() {
            Some(previous) => {
                if let Some(p) = self.header_mut(previous) {
                    p.next = h.next;
                }
            }
            None => self.all = h.next,
        }
        if let Some(next) = h.next.get() {
            if let Some(n) = self.header_mut(next) {
                n.previous = h.previous;
            }
        }
        self.count -= 1;
    }

    /// The bytes a kernel-made record of `cap_type` (CNode `radix`) takes
    /// on the kernel's pages, for the caller to find room for it.
    pub fn record_bytes(cap_type: CapType, radix: u8) -> Option<u64> {
        layout::record_bytes(cap_type, radix)
    }

    /// Makes an object for the kernel (the root task's TCB, VSpace and IPC
    /// buffer Frame, the console, IRQ handlers, the IrqControl), its record at
    /// physical `record_at` (a page of the kernel's pool, `record_bytes`
    /// long, which the kernel gets back from `reap`). Its original
    /// capability goes in with `install_original`.
    ///
    /// An Untyped needs a non-zero, page-aligned multiple of pages; a
    /// Frame exactly one aligned page; a VSpace one
    /// or more aligned pages (its root first); every other type no memory
    /// (`phys` and `size_bytes` 0). CNodes come from `create_cnode`.
    pub fn create_object(
        &mut self,
        cap_type: CapType,
        phys: u64,
        size_bytes: u64,
        record_at: u64,
    ) -> Result<ObjectId, CapError> {
        let page_aligned = phys.is_multiple_of(PAGE_SIZE) && size_bytes.is_multiple_of(PAGE_SIZE);
        let shape_ok = match cap_type {
            CapType::Untyped => page_aligned && size_bytes > 0,
            CapType::Frame => page_aligned && size_bytes == PAGE_SIZE,
            CapType::VSpace => page_aligned && size_bytes >= PAGE_SIZE,
            CapType::Tcb
            | CapType::Endpoint
            | CapType::Notification
            | CapType::IrqHandler
            | CapType::IrqControl
            | CapType::Inspector
            | CapType::DebugConsole => phys == 0 && size_bytes == 0,
            // CNodes come from `create_cnode`; filters and Reply objects
            // only from retype.
            CapType::Null | CapType::CNode | CapType::Filter | CapType::Reply => false,
        };
        if !shape_ok || phys.checked_add(size_bytes).is_none() {
            return Err(CapError::InvalidArgument);
        }
        let serial = self.next_serial();
        let header = ObjectHeader::new(cap_type, None, serial);
        self.place(cap_type, record_at, header, (phys, size_bytes), 0)
    }

    /// Makes an Untyped for the kernel over `size_bytes` at `phys` (a
    /// block of free RAM for a root task) with its record in the block's
    /// own last granules, so it takes no page of the kernel's pool. Its
    /// original capability goes in with `install_original`.
    pub fn create_untyped_in_place(
        &mut self,
        phys: u64,
        size_bytes: u64,
    ) -> Result<ObjectId, CapError> {
        let record = Self::record_bytes(CapType::Untyped, 0).ok_or(CapError::InvalidArgument)?;
        if size_bytes < PAGE_SIZE || !phys.is_multiple_of(PAGE_SIZE) {
            return Err(CapError::InvalidArgument);
        }
        let record_at = phys
            .checked_add(size_bytes)
            .and_then(|end| end.checked_sub(record))
            .ok_or(CapError::InvalidArgument)?;
        let serial = self.next_serial();
        let header = ObjectHeader::new(CapType::Untyped, None, serial);
        self.place(CapType::Untyped, record_at, header, (phys, size_bytes), 0)
    }

    /// Makes a CNode of `2^radix` empty slots for the kernel (its own, the
    /// root task's CSpace), its record at physical `record_at` (see
    /// `create_object`). Its original capability goes in with
    /// `install_original`.
    pub fn create_cnode(&mut self, radix: u8, record_at: u64) -> Result<CNodeId, CapError> {
        if !(MIN_CNODE_RADIX..=MAX_CNODE_RADIX).contains(&radix) {
            return Err(CapError::InvalidArgument);
        }
        let serial = self.next_serial();
        let header = ObjectHeader::new(CapType::CNode, None, serial);
        self.place(CapType::CNode, record_at, header, (0, 0), radix)
            .map(CNodeId)
    }

    /// The first slot and the radix of a live CNode.
    #[inline]
    pub fn cnode_slots(&self, cnode: CNodeId) -> Result<(SlotId, u8), CapError> {
        let granule = cnode.object().granule();
        match (
            self.memory.get::<kind::CNode>(granule),
            self.memory.header(granule),
        ) {
            (Some(body), Some(h)) if h.live() => {
                let (first, _) = self
                    .memory
                    .elements::<kind::CNode>(granule)
                    .ok_or(CapError::InvalidCapability)?;
                Ok((SlotId(first as u32), body.radix))
            }
            _ => Err(CapError::InvalidCapability),
        }
    }

    /// The slot a capability pointer `index` names in `cnode`. An index
    /// outside the CNode is `InvalidCapability`, as for an empty slot.
    pub fn slot(&self, cnode: CNodeId, index: u64) -> Result<SlotId, CapError> {
        let (first, radix) = self.cnode_slots(cnode)?;
        if index >= 1 << radix {
            return Err(CapError::InvalidCapability);
        }
        Ok(SlotId(first.0 + index as u32))
    }

    /// The slot `slot` itself, if it is one.
    #[inline(always)]
    fn slot_entry(&self, slot: SlotId) -> Option<&Slot> {
        self.memory.element::<kind::CNode>(slot.index())
    }

    /// The slot `slot` itself, for changing.
    #[inline(always)]
    fn slot_entry_mut(&mut self, slot: SlotId) -> Option<&mut Slot> {
        self.memory.element_mut::<kind::CNode>(slot.index())
    }

    /// The capability in `slot`; an empty slot is `InvalidCapability`.
    pub fn lookup(&self, slot: SlotId) -> Result<Capability, CapError> {
        match self.slot_entry(slot) {
            Some(entry) if !entry.cap.is_null() => Ok(entry.cap),
            _ => Err(CapError::InvalidCapability),
        }
    }

    /// What `slot` holds, empty or not (`None` for no slot): for a caller
    /// that tests the type itself, which rules out an empty slot.
    #[inline(always)]
    pub fn slot_content(&self, slot: SlotId) -> Option<Capability> {
        self.slot_entry(slot).map(|entry| entry.cap)
    }

    /// The capability in `slot`, if it is of `cap_type` and holds every
    /// right in `required`.
    pub fn lookup_typed(
        &self,
        slot: SlotId,
        cap_type: CapType,
        required: Rights,
    ) -> Result<Capability, CapError> {
        let cap = self.lookup(slot)?;
        // The type's number compared as it is: decoding it first
        // (`cap_type()`) range-checks it against every type there is,
        // three instructions a lookup once the types outgrew 13.
        if !cap.has_type(cap_type) {
            return Err(CapError::WrongCapabilityType);
        }
        if !required.is_subset_of(cap.rights()) {
            return Err(CapError::MissingRights);
        }
        Ok(cap)
    }

    /// The slot the capability in `slot` was derived from (`None` for an
    /// original, or an empty slot).
    pub fn parent(&self, slot: SlotId) -> Option<SlotId> {
        self.slot_entry(slot).and_then(|e| e.links.parent.get())
    }

    /// Was the capability in `slot` derived, directly or not, from the one
    /// in `ancestor`?
    pub fn is_descendant(&self, slot: SlotId, ancestor: SlotId) -> bool {
        self.cdt_is_descendant(slot, ancestor)
    }

    /// `slot` is a slot of a CNode and holds nothing
    /// (`InvalidCapability`, `SlotOccupied` otherwise).
    pub fn check_empty(&self, slot: SlotId) -> Result<(), CapError> {
        match self.slot_entry(slot) {
            None => Err(CapError::InvalidCapability),
            Some(entry) if entry.cap.is_null() => Ok(()),
            Some(_) => Err(CapError::SlotOccupied),
        }
    }

    /// Writes `cap` into empty `slot` and counts it on its object (the
    /// caller has validated both and links the slot into the tree).
    fn store(&mut self, slot: SlotId, cap: Capability) {
        if let Some(entry) = self.slot_entry_mut(slot) {
            entry.cap = cap;
        }
        if let Some(h) = self.header_mut(cap.object()) {
            h.cap_count += 1;
            h.state = ObjectState::Live;
        }
    }
}

/// Every object but one thread, to read while that thread changes (see
/// `Objects::split_thread`).
pub struct OtherObjects<'a>(arch::object_memory::Others<'a, KernelLayout>);

impl<'a> OtherObjects<'a> {
    /// The body of object `id`, if it is of kind `K`.
    pub fn get<K: Kind<KernelLayout>>(&self, id: ObjectId) -> Option<&'a K::Body> {
        self.0.get::<K>(id.granule())
    }

    /// What `slot` holds (`None` for no slot).
    pub fn slot_content(&self, slot: SlotId) -> Option<Capability> {
        self.0
            .element::<kind::CNode>(slot.index())
            .map(|entry| entry.cap)
    }

    /// Does `reference` still name a live object of `cap_type`?
    pub fn resolves(&self, reference: ObjectRef, cap_type: CapType) -> bool {
        self.0
            .header(reference.id.granule())
            .is_some_and(|h| h.live() && h.serial == reference.serial && h.cap_type == cap_type)
    }
}

/// A thread id the kernel holds names a TCB (an invariant): indexing by
/// one that does not is a kernel bug.
impl core::ops::Index<ThreadId> for Objects {
    type Output = Thread;

    #[inline(always)]
    #[track_caller]
    fn index(&self, id: ThreadId) -> &Thread {
        match self.thread(id) {
            Some(thread) => thread,
            None => no_such_thread(id),
        }
    }
}

impl core::ops::IndexMut<ThreadId> for Objects {
    #[inline(always)]
    #[track_caller]
    fn index_mut(&mut self, id: ThreadId) -> &mut Thread {
        match self.memory.get_mut::<kind::Tcb>(id.granule()) {
            Some(thread) => thread,
            None => no_such_thread(id),
        }
    }
}

impl crate::thread::Threads for Objects {
    #[inline(always)]
    #[track_caller]
    fn pair_mut(&mut self, a: ThreadId, b: ThreadId) -> (&mut Thread, &mut Thread) {
        match self
            .memory
            .pair_mut::<kind::Tcb, kind::Tcb>(a.granule(), b.granule())
        {
            Some(pair) => pair,
            None => no_such_pair(a, b),
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn no_such_pair(a: ThreadId, b: ThreadId) -> ! {
    panic!("{a:?} and {b:?} are not two threads")
}

#[cold]
#[inline(never)]
#[track_caller]
fn no_such_thread(id: ThreadId) -> ! {
    panic!("thread {} is no TCB", id.granule())
}
