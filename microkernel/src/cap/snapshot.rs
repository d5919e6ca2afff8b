//! A snapshot of everything the capability layer holds, for tests (and
//! the fuzz targets) to show that a failed operation changed nothing.
use super::object::{CNodeBody, ObjectHeader, Slot, UntypedBody};
use super::{ObjectId, Objects};
use alloc::vec::Vec;
use arch::object_memory::kind;

/// What the capability layer holds, to compare before and after an
/// operation that must change nothing: every object's header and, for an
/// Untyped or a CNode, its body and slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    objects: Vec<ObjectSnapshot>,
}

/// One object: its id, header, body (an Untyped's or a CNode's) and slots.
type ObjectSnapshot = (
    ObjectId,
    ObjectHeader,
    Option<UntypedBody>,
    Option<CNodeBody>,
    Vec<Slot>,
);

impl Objects {
    /// A snapshot for comparison.
    pub fn snapshot(&self) -> Snapshot {
        let objects = self
            .iter()
            .map(|id| {
                let slots = self
                    .memory()
                    .elements::<kind::CNode>(id.granule())
                    .map(|(first, count)| {
                        (first..first + count as u64)
                            .map(|i| *self.memory().element::<kind::CNode>(i).expect("a slot"))
                            .collect()
                    })
                    .unwrap_or_default();
                (
                    id,
                    *self.object(id).expect("listed"),
                    self.get::<kind::Untyped>(id).copied(),
                    self.get::<kind::CNode>(id).copied(),
                    slots,
                )
            })
            .collect();
        Snapshot { objects }
    }
}
