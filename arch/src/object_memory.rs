//! Object memory: kernel objects kept in the RAM they were paid with.
//!
//! The kernel has no tables of threads, endpoints or slots. Each kernel
//! object is a *record* (a header and a body) written into memory that was
//! retyped from an Untyped (or, for the kernel's own objects, taken from
//! its frame pool), and is named by the position of that memory. This
//! module is the one place that turns such a position into a Rust
//! reference; the rest of the kernel is safe code.
//!
//! What makes that sound, kept here and nowhere else:
//!
//! 1. **A kind byte per granule.** Memory is divided into 64-byte
//!    granules; a byte per granule says what it holds: nothing, the start
//!    of a record of one kind, the rest of a record, or the elements of a
//!    record's array (a CNode's slots). The bytes live apart from the
//!    records, where no record's contents can reach them.
//! 2. **Records only over free granules.** [`ObjectMemory::create`] writes
//!    a record only where every granule is free, and marks them all; so
//!    records never overlap, whatever the caller asks.
//! 3. **One type per kind.** A kind is a sealed marker ([`kind`]) whose
//!    body type is one associated type of the kernel's [`Layout`]; a
//!    record is read back only as the type its start byte names.
//! 4. **Borrows cover the whole memory.** `&self` gives shared
//!    references, `&mut self` one mutable reference at a time; the pair
//!    accessors hand out two only for two different records (or array
//!    elements), which by 2 do not overlap.
//!
//! So a wrong position from the caller (a stale id, a freed object, the
//! middle of a record) is `None`, never undefined behaviour. What this
//! module cannot check is the memory given to [`ObjectMemory::new`]: that
//! is the kernel binary's promise (one `unsafe` call at boot) that the
//! range is RAM nothing else uses as objects. Frames and page tables that
//! user space owns are reached another way (`PhysMemory`), and the
//! capability layer never lets a Frame or table cover a record.

use abi::cap::CapType;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// The unit of object memory: records start at, and are sized in,
/// multiples of it.
pub const GRANULE: usize = 64;

/// A granule holds nothing.
const FREE: u8 = 0;
/// A granule holds part of a record that starts in an earlier granule.
const CONTINUED: u8 = 0x7f;
/// Added to a kind's tag: the granule holds elements of that kind's array.
const ELEMENTS: u8 = 0x80;
/// Granule 0: never part of a record, so no record starts at position 0
/// and the kernel's ids can keep 0 for "none" (`NonZeroU32`, which makes
/// an optional id as small and as cheap to test as the id).
const RESERVED: u8 = 0x7e;

/// The kernel's types for each kind of record: the header every record
/// starts with, the body of each kind, and the element of a CNode's array.
///
/// A safe trait: which type a kind stands for is fixed by the
/// implementation, so a record is always read as the type it was written
/// as.
pub trait Layout {
    /// What every record starts with (the capability layer's header).
    type Header;
    /// The body of an Untyped's record.
    type Untyped;
    /// The body of a CNode's record (its slots follow as elements).
    type CNode;
    /// One CNode slot: its size must divide [`GRANULE`].
    type Slot: Copy;
    /// The body of a TCB: the thread.
    type Tcb;
    /// The body of an Endpoint.
    type Endpoint;
    /// The body of a Notification.
    type Notification;
    /// The body of a Reply object.
    type Reply;
    /// The body of a Frame's record (the frame itself is user memory).
    type Frame;
    /// The body of a VSpace's record (its tables are page memory).
    type VSpace;
    /// The body of an IrqHandler.
    type IrqHandler;
    /// The body of the debug console object.
    type DebugConsole;
    /// The body of a Filter: its rules.
    type Filter;
    /// The body of the IrqControl object.
    type IrqControl;
    /// The body of the Inspector object.
    type Inspector;
}

mod sealed {
    pub trait Sealed {}
}

/// A kind of record: its tag (the capability type's number) and its body
/// type in layout `L`. Sealed: only the markers in [`kind`] are kinds.
pub trait Kind<L: Layout>: sealed::Sealed {
    /// The body type.
    type Body;
    /// The capability type of its objects.
    const TYPE: CapType;
    /// Its records have elements (made by `create_array` only).
    const ARRAY: bool;
}

/// A kind whose record is followed by an array of elements.
pub trait ArrayKind<L: Layout>: Kind<L> {
    /// The element type.
    type Element: Copy;
}

/// The kinds, one marker type each.
pub mod kind {
    /// An Untyped's record.
    pub enum Untyped {}
    /// A CNode's record and its slots.
    pub enum CNode {}
    /// A TCB.
    pub enum Tcb {}
    /// An Endpoint.
    pub enum Endpoint {}
    /// A Notification.
    pub enum Notification {}
    /// A Reply object.
    pub enum Reply {}
    /// A Frame's record.
    pub enum Frame {}
    /// A VSpace's record.
    pub enum VSpace {}
    /// An IrqHandler.
    pub enum IrqHandler {}
    /// The debug console.
    pub enum DebugConsole {}
    /// A Filter.
    pub enum Filter {}
    /// The IrqControl object.
    pub enum IrqControl {}
    /// The Inspector object.
    pub enum Inspector {}
}

macro_rules! kinds {
    ($($name:ident: $array:expr),* $(,)?) => {
        $(
            impl sealed::Sealed for kind::$name {}
            impl<L: Layout> Kind<L> for kind::$name {
                type Body = L::$name;
                const TYPE: CapType = CapType::$name;
                const ARRAY: bool = $array;
            }
        )*
    };
}

kinds!(
    Untyped: false,
    CNode: true,
    Tcb: false,
    Endpoint: false,
    Notification: false,
    Reply: false,
    Frame: false,
    VSpace: false,
    IrqHandler: false,
    DebugConsole: false,
    Filter: false,
    IrqControl: false,
    Inspector: false,
);

impl<L: Layout> ArrayKind<L> for kind::CNode {
    type Element = L::Slot;
}

/// The tag of kind `K` in the kind bytes (never `FREE`, `CONTINUED`, or
/// with the `ELEMENTS` bit: capability types are numbered below 0x7f).
const fn tag<L: Layout, K: Kind<L>>() -> u8 {
    K::TYPE as u8
}

/// Are `A` and `B` one kind (one tag)?
const fn same_kind<L: Layout, A: Kind<L>, B: Kind<L>>() -> bool {
    tag::<L, A>() == tag::<L, B>()
}

/// A record as it lies in memory: the header first, at the record's
/// start, whatever the body (so any record's header can be read).
#[repr(C)]
struct Record<H, B> {
    header: H,
    body: B,
}

/// A record with elements: how many follow, where only this module can
/// change it.
#[repr(C)]
struct ArrayRecord<H, B> {
    record: Record<H, B>,
    elements: usize,
}

/// Granules `bytes` take.
const fn granules_for(bytes: usize) -> usize {
    bytes.div_ceil(GRANULE)
}

/// Why a record could not be placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaceError {
    /// Part of the range lies outside object memory.
    OutOfRange,
    /// Some granule of the range holds (part of) a record already.
    Occupied,
}

/// Bytes a record of kind `K` takes, rounded up to whole granules.
pub const fn record_bytes<L: Layout, K: Kind<L>>() -> usize {
    granules_for(core::mem::size_of::<Record<L::Header, K::Body>>()) * GRANULE
}

/// Bytes a record of array kind `K` with `elements` elements takes,
/// rounded up to whole granules (`None` if that overflows).
pub const fn array_record_bytes<L: Layout, K: ArrayKind<L>>(elements: usize) -> Option<usize> {
    let head = granules_for(core::mem::size_of::<ArrayRecord<L::Header, K::Body>>()) * GRANULE;
    match elements.checked_mul(core::mem::size_of::<K::Element>()) {
        Some(bytes) => match head.checked_add(bytes) {
            Some(total) => Some(granules_for(total) * GRANULE),
            None => None,
        },
        None => None,
    }
}

/// Kernel objects in one range of RAM, reached through `base`.
pub struct ObjectMemory<L: Layout> {
    base: NonNull<u8>,
    /// One byte per granule (see the module's docs).
    kinds: &'static mut [u8],
    /// The physical address of granule 0.
    phys_base: u64,
    /// Memory this value allocated itself (host tests), freed on drop.
    #[cfg(any(test, feature = "heap-object-memory"))]
    owned: Option<(alloc::alloc::Layout, *mut u8)>,
    _layout: PhantomData<L>,
}

// SAFETY: the memory is reached only through this value (the contract of
// `new`), so moving it to another thread moves all access with it.
unsafe impl<L: Layout> Send for ObjectMemory<L> {}

impl<L: Layout> ObjectMemory<L> {
    /// Where `base` (granule 0's address) lies in the structure: the IPC
    /// fast path's assembly loads it from the kernel's state.
    pub const BASE_OFFSET: usize = core::mem::offset_of!(Self, base);
    /// Where `kinds` (a slice: its first byte's address, then its
    /// length) lies in the structure: the trace fast path's assembly
    /// finds a record's kind there (`kind_tag`).
    pub const KINDS_OFFSET: usize = core::mem::offset_of!(Self, kinds);

    /// The byte `kinds` holds for the first granule of a record of kind
    /// `K` (what `holds` compares).
    pub const fn kind_tag<K: Kind<L>>() -> u8 {
        tag::<L, K>()
    }

    /// Where a record of kind `K` keeps its body, from the record's first
    /// byte (`base + granule * GRANULE`): for the IPC fast path's
    /// assembly, which reaches threads and endpoints by granule.
    pub const fn body_offset<K: Kind<L>>() -> usize {
        core::mem::offset_of!(Record<L::Header, K::Body>, body)
    }

    /// Object memory over `kinds.len()` granules starting at `base`, the
    /// kernel address of physical `phys_base`. Every granule but granule 0
    /// starts free (`kinds` is set here); granule 0 never holds a record.
    ///
    /// # Safety
    /// `base` must be aligned to [`GRANULE`] and point to
    /// `kinds.len() * GRANULE` bytes that are valid for reads and writes
    /// for the rest of the program, and that nothing else reads or writes
    /// while a record covers them (user frames and page tables are never
    /// placed over a record: the capability layer's promise). `kinds`
    /// must not lie inside that range.
    pub unsafe fn new(base: NonNull<u8>, phys_base: u64, kinds: &'static mut [u8]) -> Self {
        kinds.fill(FREE);
        if let Some(first) = kinds.first_mut() {
            *first = RESERVED;
        }
        ObjectMemory {
            base,
            kinds,
            phys_base,
            #[cfg(any(test, feature = "heap-object-memory"))]
            owned: None,
            _layout: PhantomData,
        }
    }

    /// Object memory with no granule at all (every access is `None`): a
    /// placeholder until the kernel has its RAM.
    pub const fn empty() -> Self {
        ObjectMemory {
            base: NonNull::dangling(),
            kinds: &mut [],
            phys_base: 0,
            #[cfg(any(test, feature = "heap-object-memory"))]
            owned: None,
            _layout: PhantomData,
        }
    }

    /// Object memory for host tests: `bytes` (rounded up to granules) of
    /// zeroed heap standing for physical memory at `phys_base`.
    #[cfg(any(test, feature = "heap-object-memory"))]
    pub fn on_heap(phys_base: u64, bytes: usize) -> Self {
        let granules = granules_for(bytes).max(1);
        let layout = alloc::alloc::Layout::from_size_align(granules * GRANULE, 4096)
            .expect("a heap object memory fits the address space");
        // SAFETY: the layout has a non-zero size.
        let memory = unsafe { alloc::alloc::alloc_zeroed(layout) };
        let base = NonNull::new(memory).expect("the host has memory for the test");
        let kinds = alloc::vec![FREE; granules].leak();
        // SAFETY: `base` is a fresh allocation of `granules` granules,
        // 4096-aligned, reached only through the returned value (which
        // frees it on drop); `kinds` is a separate allocation.
        let mut memory = unsafe { Self::new(base, phys_base, kinds) };
        memory.owned = Some((layout, base.as_ptr()));
        memory
    }

    /// Granules in the range.
    pub fn granules(&self) -> usize {
        self.kinds.len()
    }

    /// The physical address of granule 0.
    pub fn phys_base(&self) -> u64 {
        self.phys_base
    }

    /// The granule at physical address `phys`, if it is in the range and
    /// granule aligned.
    pub fn granule_of(&self, phys: u64) -> Option<u32> {
        let offset = phys.checked_sub(self.phys_base)?;
        let index = offset / GRANULE as u64;
        (offset.is_multiple_of(GRANULE as u64) && index < self.kinds.len() as u64)
            .then_some(index as u32)
    }

    /// The physical address of granule `granule`.
    pub fn phys_of(&self, granule: u32) -> u64 {
        self.phys_base + u64::from(granule) * GRANULE as u64
    }

    /// The granule holds nothing.
    pub fn is_free(&self, granule: u32) -> bool {
        self.kinds.get(granule as usize) == Some(&FREE)
    }

    /// The capability type of the record starting at `granule`, if one
    /// does.
    pub fn kind_at(&self, granule: u32) -> Option<CapType> {
        match self.kinds.get(granule as usize) {
            Some(&tag) if tag != FREE && tag != CONTINUED && tag & ELEMENTS == 0 => {
                CapType::from_raw(tag.into())
            }
            _ => None,
        }
    }

    /// Does a record of kind `K` start at `granule`?
    #[inline(always)]
    pub fn holds<K: Kind<L>>(&self, granule: u32) -> bool {
        self.kinds.get(granule as usize) == Some(&tag::<L, K>())
    }

    /// The address of granule `granule` (in range: checked by callers).
    #[inline(always)]
    fn at(&self, granule: u32) -> *mut u8 {
        // The offset is inside the allocation `new` was given.
        self.base.as_ptr().wrapping_add(granule as usize * GRANULE)
    }

    /// Marks `count` granules from `first` as one record of tag `start`
    /// (the rest `CONTINUED`), after checking they are in range and free.
    fn claim(&mut self, first: u32, count: usize, start: u8) -> Result<(), PlaceError> {
        let first = first as usize;
        let range = first
            .checked_add(count)
            .filter(|end| *end <= self.kinds.len())
            .map(|end| first..end)
            .ok_or(PlaceError::OutOfRange)?;
        if self.kinds[range.clone()].iter().any(|&k| k != FREE) {
            return Err(PlaceError::Occupied);
        }
        self.kinds[range.clone()].fill(CONTINUED);
        self.kinds[first] = start;
        Ok(())
    }

    /// Writes a record of kind `K` at `granule`: `header` and `body`.
    /// Refused, changing nothing, unless every granule it needs is in
    /// range and free.
    pub fn create<K: Kind<L>>(
        &mut self,
        granule: u32,
        header: L::Header,
        body: K::Body,
    ) -> Result<(), PlaceError> {
        const {
            assert!(!K::ARRAY, "records with elements come from create_array");
            assert!(core::mem::align_of::<Record<L::Header, K::Body>>() <= GRANULE);
        }
        let count = record_bytes::<L, K>() / GRANULE;
        self.claim(granule, count, tag::<L, K>())?;
        let record = self.at(granule).cast::<Record<L::Header, K::Body>>();
        // SAFETY: `claim` checked the record's granules are in range (so
        // valid for writes, by `new`'s contract) and were free (so no
        // reference to them exists); the address is granule aligned,
        // which is enough for the record's alignment (checked above).
        unsafe { record.write(Record { header, body }) };
        Ok(())
    }

    /// Writes a record of array kind `K` at `granule` with `elements`
    /// copies of `element` after it. Refused as `create` is.
    pub fn create_array<K: ArrayKind<L>>(
        &mut self,
        granule: u32,
        header: L::Header,
        body: K::Body,
        elements: usize,
        element: K::Element,
    ) -> Result<(), PlaceError> {
        const {
            assert!(K::ARRAY);
            assert!(core::mem::align_of::<ArrayRecord<L::Header, K::Body>>() <= GRANULE);
            assert!(GRANULE.is_multiple_of(core::mem::size_of::<K::Element>()));
            assert!(core::mem::align_of::<K::Element>() <= core::mem::size_of::<K::Element>());
        }
        let head = granules_for(core::mem::size_of::<ArrayRecord<L::Header, K::Body>>());
        let total = array_record_bytes::<L, K>(elements).ok_or(PlaceError::OutOfRange)? / GRANULE;
        self.claim(granule, total, tag::<L, K>())?;
        let start = granule as usize;
        self.kinds[start + head..start + total].fill(tag::<L, K>() | ELEMENTS);
        let record = self.at(granule).cast::<ArrayRecord<L::Header, K::Body>>();
        let first = self.at(granule + head as u32).cast::<K::Element>();
        // SAFETY: as in `create`: the granules are in range, were free,
        // and are aligned; the elements lie in the granules after the
        // record's head, inside the claimed range (`array_record_bytes`
        // counted them), each aligned (its size divides the granule and
        // is a multiple of its alignment).
        unsafe {
            record.write(ArrayRecord {
                record: Record { header, body },
                elements,
            });
            for i in 0..elements {
                first.add(i).write(element);
            }
        }
        Ok(())
    }

    /// Takes the record of kind `K` at `granule` out (header and body),
    /// freeing its granules (and its elements'). `None`, changing
    /// nothing, if no such record starts there.
    pub fn destroy<K: Kind<L>>(&mut self, granule: u32) -> Option<(L::Header, K::Body)> {
        if !self.holds::<K>(granule) {
            return None;
        }
        let count = if K::ARRAY {
            let record = self.at(granule).cast::<ArrayRecord<L::Header, K::Body>>();
            // SAFETY: records of an array kind are written by
            // `create_array` only (`create` refuses the kind at compile
            // time), so an `ArrayRecord` with its `elements` starts here.
            let elements = unsafe { (*record).elements };
            let element = array_element_size::<L, K>();
            granules_for(core::mem::size_of::<ArrayRecord<L::Header, K::Body>>())
                + granules_for(elements * element)
        } else {
            record_bytes::<L, K>() / GRANULE
        };
        let record = self.at(granule).cast::<Record<L::Header, K::Body>>();
        // SAFETY: a record of kind `K` starts here (its tag), written by
        // `create` or `create_array` as this very type (one type per
        // kind; an `ArrayRecord` begins with the `Record`); `&mut self`
        // means no reference into it is live, and its granules are marked
        // free right after, so it is read out once.
        let Record { header, body } = unsafe { record.read() };
        let start = granule as usize;
        self.kinds[start..start + count].fill(FREE);
        Some((header, body))
    }

    /// The header of whatever record starts at `granule`.
    #[inline(always)]
    pub fn header(&self, granule: u32) -> Option<&L::Header> {
        self.kind_at(granule)?;
        // SAFETY: a record starts here; every record is a `Record<H, _>`
        // (or begins with one), `repr(C)` with the header first, so the
        // record's first bytes are a valid `L::Header`; the reference
        // borrows `self`, so no mutable one exists.
        Some(unsafe { &*self.at(granule).cast::<L::Header>() })
    }

    /// The header of whatever record starts at `granule`, for changing.
    #[inline(always)]
    pub fn header_mut(&mut self, granule: u32) -> Option<&mut L::Header> {
        self.kind_at(granule)?;
        // SAFETY: as `header`; `&mut self` makes this the only reference.
        Some(unsafe { &mut *self.at(granule).cast::<L::Header>() })
    }

    /// The body of the record of kind `K` at `granule`.
    #[inline(always)]
    pub fn get<K: Kind<L>>(&self, granule: u32) -> Option<&K::Body> {
        if !self.holds::<K>(granule) {
            return None;
        }
        let record = self.at(granule).cast::<Record<L::Header, K::Body>>();
        // SAFETY: a record of kind `K`, written as this type, starts here
        // (its tag); the reference borrows `self`.
        Some(unsafe { &(*record).body })
    }

    /// The body of the record of kind `K` at `granule`, for changing.
    #[inline(always)]
    pub fn get_mut<K: Kind<L>>(&mut self, granule: u32) -> Option<&mut K::Body> {
        if !self.holds::<K>(granule) {
            return None;
        }
        let record = self.at(granule).cast::<Record<L::Header, K::Body>>();
        // SAFETY: as `get`; `&mut self` makes this the only reference.
        Some(unsafe { &mut (*record).body })
    }

    /// Header and body of the record of kind `K` at `granule`, both for
    /// changing.
    pub fn entry_mut<K: Kind<L>>(
        &mut self,
        granule: u32,
    ) -> Option<(&mut L::Header, &mut K::Body)> {
        if !self.holds::<K>(granule) {
            return None;
        }
        let record = self.at(granule).cast::<Record<L::Header, K::Body>>();
        // SAFETY: as `get_mut`; the two references are to disjoint fields.
        let record = unsafe { &mut *record };
        Some((&mut record.header, &mut record.body))
    }

    /// The bodies of two different records, of kinds `A` at `a` and `B`
    /// at `b`, both for changing. `None` if either is missing or `a == b`.
    #[inline(always)]
    pub fn pair_mut<A: Kind<L>, B: Kind<L>>(
        &mut self,
        a: u32,
        b: u32,
    ) -> Option<(&mut A::Body, &mut B::Body)> {
        // Records of two kinds cannot start at the same granule (one tag
        // each): the compiler drops the position test then.
        if (same_kind::<L, A, B>() && a == b) || !self.holds::<A>(a) || !self.holds::<B>(b) {
            return None;
        }
        let first = self.at(a).cast::<Record<L::Header, A::Body>>();
        let second = self.at(b).cast::<Record<L::Header, B::Body>>();
        // SAFETY: each is a record of its kind (tags); they start at
        // different granules, and records never overlap (`claim`), so the
        // references are disjoint; `&mut self` makes them the only ones.
        Some(unsafe { (&mut (*first).body, &mut (*second).body) })
    }

    /// The body of the record of kind `K` at `granule` for changing, with
    /// read access to every other record at the same time (for code that
    /// changes one thread while it reads the filters and slots it names).
    /// Only for kinds without elements.
    pub fn split_mut<K: Kind<L>>(&mut self, granule: u32) -> Option<(&mut K::Body, Others<'_, L>)> {
        const {
            assert!(!K::ARRAY);
        }
        if !self.holds::<K>(granule) {
            return None;
        }
        let record = self.at(granule).cast::<Record<L::Header, K::Body>>();
        // SAFETY: a record of kind `K` starts here (its tag); the mutable
        // reference covers its body only, and `Others` never hands out a
        // reference into this record (it refuses `granule`, and no other
        // record or element overlaps it: `claim`); `&mut self` is held for
        // as long as both live, so nothing changes the kind bytes.
        let body = unsafe { &mut (*record).body };
        let others = Others {
            base: self.base,
            kinds: &*self.kinds,
            except: granule,
            _layout: PhantomData,
        };
        Some((body, others))
    }

    /// The bodies of three different records, of kinds `A` at `a`, `B` at
    /// `b` and `C` at `c`, all for changing. `None` if any is missing or
    /// two positions are the same.
    #[inline(always)]
    pub fn triple_mut<A: Kind<L>, B: Kind<L>, C: Kind<L>>(
        &mut self,
        a: u32,
        b: u32,
        c: u32,
    ) -> Option<(&mut A::Body, &mut B::Body, &mut C::Body)> {
        if (same_kind::<L, A, B>() && a == b)
            || (same_kind::<L, A, C>() && a == c)
            || (same_kind::<L, B, C>() && b == c)
            || !self.holds::<A>(a)
            || !self.holds::<B>(b)
            || !self.holds::<C>(c)
        {
            return None;
        }
        let first = self.at(a).cast::<Record<L::Header, A::Body>>();
        let second = self.at(b).cast::<Record<L::Header, B::Body>>();
        let third = self.at(c).cast::<Record<L::Header, C::Body>>();
        // SAFETY: as `pair_mut`: three records of their kinds at three
        // different granules, so three disjoint references.
        Some(unsafe { (&mut (*first).body, &mut (*second).body, &mut (*third).body) })
    }

    /// How many elements the array record of kind `K` at `granule` has,
    /// and the index (see [`Self::element`]) of the first.
    pub fn elements<K: ArrayKind<L>>(&self, granule: u32) -> Option<(u64, usize)> {
        if !self.holds::<K>(granule) {
            return None;
        }
        let record = self.at(granule).cast::<ArrayRecord<L::Header, K::Body>>();
        // SAFETY: as in `destroy`: an `ArrayRecord` starts here.
        let count = unsafe { (*record).elements };
        let head = granules_for(core::mem::size_of::<ArrayRecord<L::Header, K::Body>>());
        let first_byte = (granule as usize + head) * GRANULE;
        Some(((first_byte / size_of_element::<L, K>()) as u64, count))
    }

    /// The element with index `index`: counted in elements of `K` from the
    /// start of object memory, so an element's index is unique and one
    /// record's elements have consecutive indexes.
    #[inline(always)]
    pub fn element<K: ArrayKind<L>>(&self, index: u64) -> Option<&K::Element> {
        let byte = self.element_byte::<K>(index)?;
        // SAFETY: the granule holds elements of `K` (tag), whose array
        // starts at a granule boundary and packs elements whose size
        // divides the granule, so every multiple of the element size in
        // it is an element written by `create_array`; borrows `self`.
        // (`NonNull::add`, not a wrapping add: the offset is in the
        // allocation, and the compiler then knows the result is not null,
        // which spares the caller's `Option` test.)
        Some(unsafe { self.base.add(byte).cast::<K::Element>().as_ref() })
    }

    /// The element with index `index`, for changing.
    #[inline(always)]
    pub fn element_mut<K: ArrayKind<L>>(&mut self, index: u64) -> Option<&mut K::Element> {
        let byte = self.element_byte::<K>(index)?;
        // SAFETY: as `element`; `&mut self` makes this the only reference.
        Some(unsafe { self.base.add(byte).cast::<K::Element>().as_mut() })
    }

    /// Two different elements, both for changing.
    pub fn element_pair_mut<K: ArrayKind<L>>(
        &mut self,
        a: u64,
        b: u64,
    ) -> Option<(&mut K::Element, &mut K::Element)> {
        if a == b {
            return None;
        }
        let first = self.element_byte::<K>(a)?;
        let second = self.element_byte::<K>(b)?;
        let base = self.base.as_ptr();
        // SAFETY: as `element_mut`; different indexes are different,
        // non-overlapping elements (each spans one element size).
        Some(unsafe {
            (
                &mut *base.wrapping_add(first).cast::<K::Element>(),
                &mut *base.wrapping_add(second).cast::<K::Element>(),
            )
        })
    }

    /// The byte offset of element `index` of kind `K`, if its granule
    /// holds elements of `K`.
    #[inline(always)]
    fn element_byte<K: ArrayKind<L>>(&self, index: u64) -> Option<usize> {
        let byte = usize::try_from(index)
            .ok()?
            .checked_mul(size_of_element::<L, K>())?;
        (self.kinds.get(byte / GRANULE) == Some(&(tag::<L, K>() | ELEMENTS))).then_some(byte)
    }
}

/// Read access to every record but one (see [`ObjectMemory::split_mut`]).
pub struct Others<'a, L: Layout> {
    base: NonNull<u8>,
    kinds: &'a [u8],
    except: u32,
    _layout: PhantomData<&'a L>,
}

impl<'a, L: Layout> Others<'a, L> {
    /// The header of the record at `granule`, unless it is the one held
    /// for changing.
    pub fn header(&self, granule: u32) -> Option<&'a L::Header> {
        if granule == self.except {
            return None;
        }
        match self.kinds.get(granule as usize) {
            Some(&tag) if tag != FREE && tag != CONTINUED && tag & ELEMENTS == 0 => {}
            _ => return None,
        }
        let at = self.base.as_ptr().wrapping_add(granule as usize * GRANULE);
        // SAFETY: as `ObjectMemory::header`; not the record held mutably.
        Some(unsafe { &*at.cast::<L::Header>() })
    }

    /// The body of the record of kind `K` at `granule`, unless it is the
    /// one held for changing.
    pub fn get<K: Kind<L>>(&self, granule: u32) -> Option<&'a K::Body> {
        if granule == self.except || self.kinds.get(granule as usize) != Some(&tag::<L, K>()) {
            return None;
        }
        let at = self.base.as_ptr().wrapping_add(granule as usize * GRANULE);
        // SAFETY: as `ObjectMemory::get`; not the record held mutably.
        Some(unsafe { &(*at.cast::<Record<L::Header, K::Body>>()).body })
    }

    /// The element with index `index` (the record held for changing has
    /// none: `split_mut` takes only kinds without elements).
    pub fn element<K: ArrayKind<L>>(&self, index: u64) -> Option<&'a K::Element> {
        let byte = usize::try_from(index)
            .ok()?
            .checked_mul(size_of_element::<L, K>())?;
        if self.kinds.get(byte / GRANULE) != Some(&(tag::<L, K>() | ELEMENTS)) {
            return None;
        }
        // SAFETY: as `ObjectMemory::element`.
        Some(unsafe { &*self.base.as_ptr().wrapping_add(byte).cast::<K::Element>() })
    }
}

/// The size of one element of `K`.
const fn size_of_element<L: Layout, K: ArrayKind<L>>() -> usize {
    core::mem::size_of::<K::Element>()
}

/// The element size of kind `K` if it is an array kind (`destroy` is
/// generic over every kind; only array kinds have records with elements).
fn array_element_size<L: Layout, K: Kind<L>>() -> usize {
    // Only `kind::CNode` is an array kind.
    if K::TYPE == CapType::CNode {
        core::mem::size_of::<L::Slot>()
    } else {
        0
    }
}

#[cfg(any(test, feature = "heap-object-memory"))]
impl<L: Layout> Drop for ObjectMemory<L> {
    fn drop(&mut self) {
        if let Some((layout, memory)) = self.owned.take() {
            // SAFETY: `memory` came from `alloc_zeroed` with `layout` in
            // `on_heap`, and this value, the only way to it, is going.
            unsafe { alloc::alloc::dealloc(memory, layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A layout of small stand-ins: a header, and bodies that say which
    /// kind they are.
    struct Test;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Header(u64);

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Big([u64; 20]);

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Slot([u64; 4]);

    impl Layout for Test {
        type Header = Header;
        type Untyped = u64;
        type CNode = u8;
        type Slot = Slot;
        type Tcb = Big;
        type Endpoint = u32;
        type Notification = u64;
        type Reply = u16;
        type Frame = u64;
        type VSpace = u64;
        type IrqHandler = u8;
        type DebugConsole = ();
        type Filter = Big;
        type IrqControl = ();
        type Inspector = ();
    }

    fn memory() -> ObjectMemory<Test> {
        ObjectMemory::on_heap(0x4000_0000, 64 * GRANULE)
    }

    #[test]
    fn a_record_is_read_back_as_its_kind_only() {
        let mut m = memory();
        m.create::<kind::Endpoint>(3, Header(7), 42).unwrap();
        assert_eq!(m.get::<kind::Endpoint>(3), Some(&42));
        assert_eq!(m.get::<kind::Notification>(3), None, "another kind");
        assert_eq!(m.get::<kind::Endpoint>(4), None, "another position");
        assert_eq!(m.header(3), Some(&Header(7)));
        assert_eq!(m.kind_at(3), Some(CapType::Endpoint));
        *m.get_mut::<kind::Endpoint>(3).unwrap() = 43;
        m.header_mut(3).unwrap().0 = 8;
        assert_eq!(m.destroy::<kind::Endpoint>(3), Some((Header(8), 43)));
        assert_eq!(m.get::<kind::Endpoint>(3), None, "destroyed");
        assert_eq!(m.header(3), None);
        assert!(m.is_free(3));
    }

    #[test]
    fn records_never_overlap() {
        let mut m = memory();
        let big = record_bytes::<Test, kind::Tcb>() / GRANULE;
        assert_eq!(big, 3, "8 + 160 bytes");
        m.create::<kind::Tcb>(10, Header(1), Big([5; 20])).unwrap();
        for start in 8..10 + big as u32 {
            let refused = m.create::<kind::Tcb>(start, Header(2), Big([0; 20]));
            assert_eq!(refused, Err(PlaceError::Occupied), "at {start}");
        }
        assert_eq!(
            m.create::<kind::Endpoint>(11, Header(2), 1),
            Err(PlaceError::Occupied)
        );
        assert_eq!(m.get::<kind::Tcb>(11), None, "the middle of a record");
        assert_eq!(m.header(12), None);
        m.create::<kind::Endpoint>(13, Header(3), 1).unwrap();
        assert_eq!(m.get::<kind::Tcb>(10), Some(&Big([5; 20])), "untouched");
    }

    #[test]
    fn out_of_range_is_refused() {
        let mut m = memory();
        assert_eq!(
            m.create::<kind::Tcb>(62, Header(0), Big([0; 20])),
            Err(PlaceError::OutOfRange)
        );
        assert_eq!(
            m.create::<kind::Endpoint>(u32::MAX, Header(0), 0),
            Err(PlaceError::OutOfRange)
        );
        assert_eq!(m.get::<kind::Endpoint>(u32::MAX), None);
        assert!(m.create::<kind::Tcb>(61, Header(0), Big([0; 20])).is_ok());
        assert_eq!(
            m.create_array::<kind::CNode>(0, Header(0), 0, usize::MAX, Slot([0; 4])),
            Err(PlaceError::OutOfRange)
        );
    }

    #[test]
    fn array_elements_are_reached_by_index_and_freed_with_their_record() {
        let mut m = memory();
        m.create_array::<kind::CNode>(4, Header(9), 3, 5, Slot([1; 4]))
            .unwrap();
        let (first, count) = m.elements::<kind::CNode>(4).unwrap();
        assert_eq!(count, 5);
        // The record's head is one granule; 2 slots per granule follow.
        assert_eq!(first, 5 * 2);
        for i in 0..5 {
            assert_eq!(m.element::<kind::CNode>(first + i), Some(&Slot([1; 4])));
        }
        // The sixth would be in the last granule's second half: the array
        // takes whole granules, so it is there, unused but reachable.
        assert!(m.element::<kind::CNode>(first + 6).is_none());
        assert!(m.element::<kind::CNode>(first - 1).is_none(), "the head");
        m.element_mut::<kind::CNode>(first + 2).unwrap().0[0] = 77;
        let (a, b) = m.element_pair_mut::<kind::CNode>(first, first + 2).unwrap();
        core::mem::swap(a, b);
        assert_eq!(m.element::<kind::CNode>(first).unwrap().0[0], 77);
        assert!(m.element_pair_mut::<kind::CNode>(first, first).is_none());
        assert_eq!(m.get::<kind::CNode>(4), Some(&3));
        assert_eq!(m.destroy::<kind::CNode>(4), Some((Header(9), 3)));
        assert!((4..8).all(|g| m.is_free(g)));
        assert!(m.element::<kind::CNode>(first).is_none());
    }

    #[test]
    fn pairs_are_two_different_records() {
        let mut m = memory();
        m.create::<kind::Endpoint>(1, Header(0), 1).unwrap();
        m.create::<kind::Endpoint>(2, Header(0), 2).unwrap();
        m.create::<kind::Reply>(3, Header(0), 3).unwrap();
        let (a, b) = m.pair_mut::<kind::Endpoint, kind::Endpoint>(1, 2).unwrap();
        core::mem::swap(a, b);
        assert_eq!(m.get::<kind::Endpoint>(1), Some(&2));
        assert!(m.pair_mut::<kind::Endpoint, kind::Endpoint>(1, 1).is_none());
        assert!(m.pair_mut::<kind::Endpoint, kind::Endpoint>(1, 3).is_none());
        assert!(m.pair_mut::<kind::Endpoint, kind::Reply>(1, 3).is_some());
        assert!(m.pair_mut::<kind::Endpoint, kind::Reply>(1, 1).is_none());
        let (a, b, c) = m
            .triple_mut::<kind::Endpoint, kind::Endpoint, kind::Reply>(2, 1, 3)
            .unwrap();
        (*a, *b, *c) = (7, 8, 9);
        assert_eq!(m.get::<kind::Endpoint>(1), Some(&8));
        assert!(m
            .triple_mut::<kind::Endpoint, kind::Endpoint, kind::Reply>(1, 2, 1)
            .is_none());
        assert!(m
            .triple_mut::<kind::Endpoint, kind::Endpoint, kind::Endpoint>(1, 2, 3)
            .is_none());
    }

    #[test]
    fn granule_0_never_holds_a_record() {
        let mut m = memory();
        assert!(!m.is_free(0));
        assert_eq!(m.kind_at(0), None);
        assert_eq!(
            m.create::<kind::Endpoint>(0, Header(0), 1),
            Err(PlaceError::Occupied)
        );
        assert!(m.get::<kind::Endpoint>(0).is_none());
        assert!(m.header(0).is_none());
        assert!(m.is_free(1));
    }

    #[test]
    fn a_split_reads_every_record_but_the_one_it_changes() {
        let mut m = memory();
        m.create::<kind::Endpoint>(1, Header(1), 1).unwrap();
        m.create::<kind::Endpoint>(2, Header(2), 2).unwrap();
        m.create_array::<kind::CNode>(3, Header(3), 0, 2, Slot([4; 4]))
            .unwrap();
        let (first, _) = m.elements::<kind::CNode>(3).unwrap();
        let (mine, others) = m.split_mut::<kind::Endpoint>(1).unwrap();
        *mine += 10;
        assert_eq!(others.get::<kind::Endpoint>(1), None, "the one held");
        assert_eq!(others.header(1), None);
        assert_eq!(others.get::<kind::Endpoint>(2), Some(&2));
        assert_eq!(others.header(2), Some(&Header(2)));
        assert_eq!(others.element::<kind::CNode>(first), Some(&Slot([4; 4])));
        assert_eq!(m.get::<kind::Endpoint>(1), Some(&11));
        assert!(m.split_mut::<kind::Endpoint>(5).is_none());
    }

    #[test]
    fn physical_addresses_map_to_granules() {
        let m = memory();
        assert_eq!(m.granule_of(0x4000_0000), Some(0));
        assert_eq!(m.granule_of(0x4000_0040), Some(1));
        assert_eq!(m.granule_of(0x4000_0041), None, "unaligned");
        assert_eq!(m.granule_of(0x3fff_ffc0), None, "below");
        assert_eq!(m.granule_of(0x4000_0000 + 64 * 64), None, "past the end");
        assert_eq!(m.phys_of(2), 0x4000_0080);
    }
}
