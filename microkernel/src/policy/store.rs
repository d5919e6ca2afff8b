//! Where Filter objects keep their rules, and how long they live.
//!
//! Retype charges the Untyped for a filter (`FILTER_BYTES`) but the rules
//! live here, in a fixed table: the kernel has no heap, and a filter must
//! outlive its last capability while a thread still has it attached (a
//! deleted capability must never lift a restriction: fail closed). So a
//! slot is free again only when its object is gone *and* no thread has it
//! attached.

use super::Filter;
use crate::cap::ObjectId;

/// Filters that can exist at once (each about 10 KiB of kernel memory).
pub const MAX_FILTERS: usize = 16;

/// A filter's index in the store (what a thread's filter stack holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilterIndex(pub u8);

#[derive(Clone, Debug)]
struct Entry {
    filter: Filter,
    /// The Filter object, while it exists.
    object: Option<ObjectId>,
    /// Threads that have it attached.
    attached: u16,
}

impl Entry {
    const FREE: Entry = Entry {
        filter: Filter::new(),
        object: None,
        attached: 0,
    };

    fn is_free(&self) -> bool {
        self.object.is_none() && self.attached == 0
    }
}

/// The kernel's filters.
pub struct FilterStore {
    entries: [Entry; MAX_FILTERS],
}

impl Default for FilterStore {
    fn default() -> Self {
        Self::new()
    }
}

impl FilterStore {
    /// No filters.
    pub const fn new() -> FilterStore {
        FilterStore {
            entries: [const { Entry::FREE }; MAX_FILTERS],
        }
    }

    /// Free entries (retype checks this before it makes filters).
    pub fn free_count(&self) -> usize {
        self.entries.iter().filter(|e| e.is_free()).count()
    }

    /// Gives a new Filter object an empty filter; `None` when full.
    pub fn create(&mut self, object: ObjectId) -> Option<FilterIndex> {
        let index = self.entries.iter().position(Entry::is_free)?;
        self.entries[index] = Entry {
            filter: Filter::new(),
            object: Some(object),
            attached: 0,
        };
        Some(FilterIndex(index as u8))
    }

    /// The live filter of a Filter object.
    pub fn of_object(&self, object: ObjectId) -> Option<FilterIndex> {
        self.entries
            .iter()
            .position(|e| e.object == Some(object))
            .map(|i| FilterIndex(i as u8))
    }

    /// The Filter object's last capability is gone: its rules stay as long
    /// as a thread has them attached.
    pub fn object_destroyed(&mut self, object: ObjectId) {
        for entry in self.entries.iter_mut() {
            if entry.object == Some(object) {
                entry.object = None;
                if entry.attached == 0 {
                    entry.filter = Filter::new();
                }
            }
        }
    }

    /// The rules of a filter.
    pub fn filter(&self, index: FilterIndex) -> &Filter {
        &self.entries[usize::from(index.0) % MAX_FILTERS].filter
    }

    /// The rules of a filter no thread has attached (attached filters are
    /// frozen: their threads' verdict caches were computed from them).
    pub fn unattached_mut(&mut self, index: FilterIndex) -> Option<&mut Filter> {
        let entry = &mut self.entries[usize::from(index.0) % MAX_FILTERS];
        (entry.attached == 0).then_some(&mut entry.filter)
    }

    /// One more thread has the filter attached.
    pub fn attach(&mut self, index: FilterIndex) {
        let entry = &mut self.entries[usize::from(index.0) % MAX_FILTERS];
        entry.attached = entry.attached.saturating_add(1);
    }

    /// A thread that had the filter attached has ended.
    pub fn detach(&mut self, index: FilterIndex) {
        let entry = &mut self.entries[usize::from(index.0) % MAX_FILTERS];
        entry.attached = entry.attached.saturating_sub(1);
        if entry.is_free() {
            entry.filter = Filter::new();
        }
    }

    /// Threads that have the filter attached (for the invariant check).
    pub fn attached_count(&self, index: FilterIndex) -> u16 {
        self.entries[usize::from(index.0) % MAX_FILTERS].attached
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::policy::{Action, FilterDescription, Rule};

    fn rules_of(store: &FilterStore, index: FilterIndex) -> usize {
        store.filter(index).rules().len()
    }

    fn one_rule() -> Filter {
        let mut description = FilterDescription::new();
        let _ = description.rules.push(Rule::new(Action::Kill));
        Filter::from_description(description).expect("valid")
    }

    #[test]
    fn an_attached_filter_outlives_its_object_and_is_frozen() {
        let mut store = FilterStore::new();
        let index = store.create(ObjectId(7)).expect("room");
        *store.unattached_mut(index).expect("not attached") = one_rule();
        store.attach(index);
        assert!(
            store.unattached_mut(index).is_none(),
            "frozen once attached"
        );
        store.object_destroyed(ObjectId(7));
        assert_eq!(rules_of(&store, index), 1, "still enforced");
        assert_eq!(store.of_object(ObjectId(7)), None);
        assert_eq!(store.free_count(), MAX_FILTERS - 1);
        store.detach(index);
        assert_eq!(store.free_count(), MAX_FILTERS);
        assert_eq!(rules_of(&store, index), 0);
    }

    #[test]
    fn the_store_fills_up_and_frees() {
        let mut store = FilterStore::new();
        for i in 0..MAX_FILTERS {
            assert!(store.create(ObjectId(i as u32)).is_some());
        }
        assert_eq!(store.create(ObjectId(99)), None);
        store.object_destroyed(ObjectId(3));
        assert_eq!(store.create(ObjectId(99)), Some(FilterIndex(3)));
        assert_eq!(store.of_object(ObjectId(99)), Some(FilterIndex(3)));
    }
}
