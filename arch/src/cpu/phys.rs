//! Reaching physical memory once the MMU is on.
//!
//! RAM is reached through the linear map, except the kernel image, which
//! the linear map leaves out (so that no writable alias of kernel text
//! exists) and which is reached at its link address.

use crate::layout::{phys_to_linear, KIMAGE_VBASE, TEXT_OFFSET};
use core::arch::asm;
use core::sync::atomic::{AtomicU64, Ordering};

/// Where the image was loaded (written once by the boot code).
static IMAGE_PHYS_BASE: AtomicU64 = AtomicU64::new(0);
/// Size of the image including .bss and the kernel stack.
static IMAGE_SIZE: AtomicU64 = AtomicU64::new(0);

/// Records where the boot loader put the image (called before the MMU is on).
pub(crate) fn record_image_placement(phys_base: u64, size: u64) {
    IMAGE_PHYS_BASE.store(phys_base, Ordering::Relaxed);
    IMAGE_SIZE.store(size, Ordering::Relaxed);
}

/// The physical range the kernel image occupies: `(start, size)`.
pub fn image_range() -> (u64, u64) {
    (
        IMAGE_PHYS_BASE.load(Ordering::Relaxed),
        IMAGE_SIZE.load(Ordering::Relaxed),
    )
}

/// The physical address of a kernel-image virtual address.
pub fn kernel_virt_to_phys(va: u64) -> u64 {
    va - (KIMAGE_VBASE + TEXT_OFFSET) + IMAGE_PHYS_BASE.load(Ordering::Relaxed)
}

/// The kernel virtual address through which physical `pa` is reached.
pub fn phys_to_virt(pa: u64) -> u64 {
    let (base, size) = image_range();
    if pa >= base && pa - base < size {
        pa - base + KIMAGE_VBASE + TEXT_OFFSET
    } else {
        phys_to_linear(pa)
    }
}

/// The kernel virtual address of `pa`, RAM outside the kernel image: its
/// linear-map address, with no look at the image window. The word
/// accessors below, which the kernel core reaches through its
/// `PhysMemory`, use it: what it gives them is RAM the frame pool handed
/// out (object memory, and the frames, tables, IPC buffers and audit
/// rings carved from its Untyped), never the image, which the pool leaves
/// out. The image's two loads and compare cost each translation some 7
/// instructions, 15 of the one-word buffer copy of a slow IPC. An image
/// address given to them faults, as the linear map leaves the image out:
/// a kernel bug reported at once, never a write through an alias.
#[inline(always)]
fn ram_to_virt(pa: u64) -> u64 {
    phys_to_linear(pa)
}

/// Copies `out.len()` bytes from physical `pa`. The caller has checked the
/// range is RAM (a user frame found by a page-table walk, or a table).
/// Image-aware (`phys_to_virt`): the boot's search for the system image
/// reads with it.
pub fn read(pa: u64, out: &mut [u8]) {
    let src = phys_to_virt(pa) as *const u8;
    // SAFETY: the caller guarantees `pa..pa+len` is RAM, which is mapped
    // readable in the linear map or the image window.
    unsafe { core::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), out.len()) };
}

/// Copies `data` to physical `pa` (same contract as `read`).
pub fn write(pa: u64, data: &[u8]) {
    let dst = phys_to_virt(pa) as *mut u8;
    // SAFETY: as `read`; RAM is mapped writable in the linear map.
    unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) };
}

/// Fills the 4 KiB page at `pa` (RAM outside the image, `ram_to_virt`)
/// with zeros.
pub fn zero_page(pa: u64) {
    let dst = ram_to_virt(pa) as *mut u64;
    // SAFETY: as `write`; the page is 4 KiB aligned RAM, in the linear map.
    unsafe { core::ptr::write_bytes(dst, 0, 512) };
}

/// Reads the u64 at physical `pa` (8-byte aligned RAM outside the image,
/// `ram_to_virt`).
pub fn read_u64(pa: u64) -> u64 {
    // SAFETY: as `read`; aligned, in the linear map.
    unsafe { core::ptr::read_volatile(ram_to_virt(pa) as *const u64) }
}

/// Writes the u64 at physical `pa` (8-byte aligned RAM outside the image,
/// `ram_to_virt`).
pub fn write_u64(pa: u64, value: u64) {
    // SAFETY: as `write`; aligned, in the linear map.
    unsafe { core::ptr::write_volatile(ram_to_virt(pa) as *mut u64, value) }
}

/// Runs of at most this many words are copied a pair at a time, unrolled:
/// a run of a length known where it is written (a trace stop's six buffer
/// words, an audit record's fifteen, a ring's header) is then one `stp` or
/// `ldp` a pair (and one `str` for an odd word), which the pair loop below
/// cannot be. (Word by word, with volatile accesses, which the compiler
/// never pairs, an audit record of sixteen words took sixteen stores.)
const UNROLLED_WORDS: usize = 16;

/// Stores `a` at `*at` and `b` at the word after it, with one `stp`, and
/// moves `at` on by the two words.
///
/// # Safety
/// The two words at `at` are valid for writes and 8-aligned.
#[inline(always)]
unsafe fn store_pair(at: &mut *mut u64, a: u64, b: u64) {
    // SAFETY: the caller's contract; the store is the asm's only effect.
    unsafe {
        asm!(
            "stp {a}, {b}, [{at}], #16",
            at = inout(reg) *at,
            a = in(reg) a,
            b = in(reg) b,
            options(nostack, preserves_flags),
        )
    }
}

/// Loads the word at `*at` and the one after it, with one `ldp`, and
/// moves `at` on by the two words.
///
/// # Safety
/// The two words at `at` are valid for reads and 8-aligned.
#[inline(always)]
unsafe fn load_pair(at: &mut *const u64) -> (u64, u64) {
    let (a, b);
    // SAFETY: the caller's contract; the asm only reads memory.
    unsafe {
        asm!(
            "ldp {a}, {b}, [{at}], #16",
            at = inout(reg) *at,
            a = out(reg) a,
            b = out(reg) b,
            options(nostack, preserves_flags, readonly),
        )
    }
    (a, b)
}

/// Writes `words` from physical `pa` on (8-byte aligned RAM outside the
/// image, within one page: one translation for all of them).
pub fn write_words(pa: u64, words: &[u64]) {
    let dst = ram_to_virt(pa) as *mut u64;
    if words.len() <= UNROLLED_WORDS {
        let mut at = dst;
        let mut pairs = words.chunks_exact(2);
        for pair in &mut pairs {
            // SAFETY: as `write_u64`: aligned RAM, the page mapped in the
            // linear map; `at` moves on by the pair, within the caller's
            // range on that page.
            unsafe { store_pair(&mut at, pair[0], pair[1]) }
        }
        if let [last] = pairs.remainder() {
            // SAFETY: as above; the one word left, at `at`.
            unsafe { core::ptr::write_volatile(at, *last) }
        }
        return;
    }
    let pairs = words.len() / 2;
    // SAFETY: as `write_u64`: aligned RAM, mapped in the linear map;
    // `2 * pairs` words are within the caller's range on that page, and
    // the source slice has them.
    unsafe { copy_pairs(words.as_ptr(), dst, pairs) };
    if let Some(last) = words.get(2 * pairs) {
        // SAFETY: as above; the one word left.
        unsafe { core::ptr::write_volatile(dst.add(2 * pairs), *last) }
    }
}

/// Reads `out.len()` words from physical `pa` on (8-byte aligned RAM
/// outside the image, within one page: one translation for all of them).
pub fn read_words(pa: u64, out: &mut [u64]) {
    let src = ram_to_virt(pa) as *const u64;
    if out.len() <= UNROLLED_WORDS {
        let mut at = src;
        let mut pairs = out.chunks_exact_mut(2);
        for pair in &mut pairs {
            // SAFETY: as `read_u64`: aligned RAM, the page mapped in the
            // linear map; `at` moves on by the pair, within the caller's
            // range on that page.
            (pair[0], pair[1]) = unsafe { load_pair(&mut at) };
        }
        if let [last] = pairs.into_remainder() {
            // SAFETY: as above; the one word left, at `at`.
            *last = unsafe { core::ptr::read_volatile(at) };
        }
        return;
    }
    let pairs = out.len() / 2;
    // SAFETY: as `read_u64`: aligned RAM, mapped; `2 * pairs` words are
    // within the caller's range on that page, and `out` has room for them.
    unsafe { copy_pairs(src, out.as_mut_ptr(), pairs) };
    if let Some(last) = out.get_mut(2 * pairs) {
        // SAFETY: as above; the one word left.
        *last = unsafe { core::ptr::read_volatile(src.add(2 * pairs)) };
    }
}

/// Copies `count` words from physical `from` to physical `to` (each run
/// 8-byte aligned RAM outside the image within one page, the two not
/// overlapping): one translation a side, not one a word.
pub fn copy_words(from: u64, to: u64, count: usize) {
    let src = ram_to_virt(from) as *const u64;
    let dst = ram_to_virt(to) as *mut u64;
    for i in 0..count {
        // SAFETY: as `read_u64` and `write_u64`: aligned RAM, each page
        // mapped in the linear map, `i` within the caller's run on it.
        unsafe { core::ptr::write_volatile(dst.add(i), core::ptr::read_volatile(src.add(i))) }
    }
}

/// Copies `pairs` (at least one) pairs of words from `src` to `dst`, two
/// words a step with a load and a store pair (a user-dispatch frame is
/// 36 words; word by word took four instructions each).
///
/// # Safety
/// Both ranges of `2 * pairs` words are valid, 8-aligned (a pair access
/// is checked for the alignment of each word) and do not overlap.
unsafe fn copy_pairs(src: *const u64, dst: *mut u64, pairs: usize) {
    // SAFETY: the caller's contract.
    unsafe {
        asm!(
            "2:",
            "ldp {a}, {b}, [{src}], #16",
            "stp {a}, {b}, [{dst}], #16",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            src = inout(reg) src => _,
            dst = inout(reg) dst => _,
            n = inout(reg) pairs => _,
            a = out(reg) _,
            b = out(reg) _,
            options(nostack),
        )
    }
}
