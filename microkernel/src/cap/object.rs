//! The object table: one header per kernel object a capability can name.
//!
//! The header is the capability layer's whole knowledge of an object: its
//! type, where its memory is, which Untyped it was carved from and how
//! many capabilities refer to it. What the object *does* (a thread's
//! registers, an endpoint's queue) lives in the kernel's own tables,
//! indexed by the same `ObjectId`.
use super::ids::ObjectId;
use abi::cap::CapType;

/// Where an object is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectState {
    /// The table entry is unused.
    Free,
    /// Made (at boot) but its original capability is not installed yet.
    Created,
    /// At least one capability refers to it.
    Live,
    /// A CNode whose last capability is gone while its slots are being
    /// emptied. Only seen inside a delete; never between operations.
    Dying,
}

/// Per-type state the capability layer keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectBody {
    /// Nothing beyond the header.
    Plain,
    /// Untyped memory: objects are carved from `phys + watermark` upwards.
    Untyped {
        /// Bytes from the start already handed out (the next object goes
        /// at or above this offset).
        watermark: u64,
        /// Objects carved from it that still exist. When the last one goes
        /// the watermark returns to 0.
        live_children: u32,
    },
    /// A CNode: `2^radix` slots of the pool starting at `first_slot`.
    CNode {
        /// The pool index of slot 0.
        first_slot: u32,
        /// log2 of the slot count.
        radix: u8,
    },
}

/// What the capability layer knows about one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectHeader {
    /// The object's type (every capability to it has this type).
    pub cap_type: CapType,
    /// Where it is in its life.
    pub state: ObjectState,
    /// Bytes of physical memory it occupies (0 for objects the kernel made
    /// from its own static tables at boot).
    pub size_bytes: u64,
    /// Physical address of that memory.
    pub phys: u64,
    /// The Untyped it was carved from (`None` for objects made at boot).
    pub parent_untyped: Option<ObjectId>,
    /// Capabilities that refer to it.
    pub cap_count: u32,
    /// Per-type state.
    pub body: ObjectBody,
    /// The next CNode on the dying list (see `delete.rs`).
    pub(crate) next_dying: Option<ObjectId>,
    /// For an Untyped: a value that names the state of its free memory, new
    /// (and never seen before, in any object) whenever it hands memory out
    /// or takes all of it back. Work done on its free memory between two
    /// syscalls (a preempted retype's zeroing) is still valid exactly while
    /// this is unchanged.
    pub epoch: u64,
}

impl ObjectHeader {
    /// An unused table entry.
    pub const FREE: ObjectHeader = ObjectHeader {
        cap_type: CapType::Null,
        state: ObjectState::Free,
        size_bytes: 0,
        phys: 0,
        parent_untyped: None,
        cap_count: 0,
        body: ObjectBody::Plain,
        next_dying: None,
        epoch: 0,
    };

    /// Does the object exist (made, and not being destroyed)?
    pub fn live(&self) -> bool {
        matches!(self.state, ObjectState::Created | ObjectState::Live)
    }

    /// The end of its memory (exclusive), `phys + size_bytes`.
    pub fn phys_end(&self) -> u64 {
        self.phys.saturating_add(self.size_bytes)
    }
}

/// A fixed table of `OBJECTS` headers.
// Tests compare snapshots to show that a failed operation changed nothing.
#[cfg_attr(test, derive(Clone, PartialEq, Eq))]
pub(crate) struct ObjectTable<const OBJECTS: usize> {
    headers: [ObjectHeader; OBJECTS],
    free: usize,
    dying: Option<ObjectId>,
}

impl<const OBJECTS: usize> ObjectTable<OBJECTS> {
    /// Every entry free.
    pub(crate) const fn new() -> Self {
        ObjectTable {
            headers: [ObjectHeader::FREE; OBJECTS],
            free: OBJECTS,
            dying: None,
        }
    }

    /// Unused entries.
    pub(crate) fn free_count(&self) -> usize {
        self.free
    }

    /// The header of `id`, if `id` is in the table (free or not).
    pub(crate) fn get(&self, id: ObjectId) -> Option<&ObjectHeader> {
        self.headers.get(id.index())
    }

    /// The header of `id` for changing.
    pub(crate) fn get_mut(&mut self, id: ObjectId) -> Option<&mut ObjectHeader> {
        self.headers.get_mut(id.index())
    }

    /// Every entry with its id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (ObjectId, &ObjectHeader)> {
        self.headers
            .iter()
            .enumerate()
            .map(|(i, h)| (ObjectId(i as u32), h))
    }

    /// Stores `header` in a free entry.
    pub(crate) fn allocate(&mut self, header: ObjectHeader) -> Option<ObjectId> {
        let index = self
            .headers
            .iter()
            .position(|h| h.state == ObjectState::Free)?;
        self.headers[index] = header;
        self.free -= 1;
        Some(ObjectId(index as u32))
    }

    /// Frees the entry of `id`.
    pub(crate) fn release(&mut self, id: ObjectId) {
        if let Some(header) = self.headers.get_mut(id.index()) {
            if header.state != ObjectState::Free {
                *header = ObjectHeader::FREE;
                self.free += 1;
            }
        }
    }

    /// Puts CNode `id` on the dying list (its state is already `Dying`).
    pub(crate) fn push_dying(&mut self, id: ObjectId) {
        let head = self.dying;
        if let Some(header) = self.headers.get_mut(id.index()) {
            header.next_dying = head;
            self.dying = Some(id);
        }
    }

    /// The most recently queued dying CNode, without taking it off.
    pub(crate) fn peek_dying(&self) -> Option<ObjectId> {
        self.dying
    }

    /// Takes the head of the dying list off.
    pub(crate) fn pop_dying(&mut self) -> Option<ObjectId> {
        let head = self.dying?;
        self.dying = self.headers[head.index()].next_dying.take();
        Some(head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint() -> ObjectHeader {
        ObjectHeader {
            cap_type: CapType::Endpoint,
            state: ObjectState::Created,
            ..ObjectHeader::FREE
        }
    }

    #[test]
    fn entries_are_reused_after_release() {
        let mut table = ObjectTable::<2>::new();
        let a = table.allocate(endpoint()).unwrap();
        let b = table.allocate(endpoint()).unwrap();
        assert_ne!(a, b);
        assert_eq!(table.allocate(endpoint()), None);
        table.release(a);
        table.release(a);
        assert_eq!(table.free_count(), 1, "a double release frees once");
        assert_eq!(table.allocate(endpoint()), Some(a));
    }

    #[test]
    fn dying_list_is_last_in_first_out() {
        let mut table = ObjectTable::<4>::new();
        let ids: Vec<_> = (0..3)
            .map(|_| table.allocate(endpoint()).unwrap())
            .collect();
        for id in &ids {
            table.push_dying(*id);
        }
        assert_eq!(table.peek_dying(), Some(ids[2]));
        assert_eq!(table.pop_dying(), Some(ids[2]));
        assert_eq!(table.pop_dying(), Some(ids[1]));
        assert_eq!(table.pop_dying(), Some(ids[0]));
        assert_eq!(table.pop_dying(), None);
    }
}
