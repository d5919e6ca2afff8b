//! Restartable sequences (`abi::rseq`, `docs/rseq.md`): register a
//! per-thread [`RseqArea`], run per-CPU critical sections that the kernel
//! restarts when the thread is preempted, moved or stopped inside one,
//! and ask for a time-slice extension while holding a user-space lock.
//!
//! ```ignore
//! static AREA: RseqArea = RseqArea::new(); // one per thread
//! static HITS: PerCpuCounter<4> = PerCpuCounter::new();
//!
//! rseq::register(&AREA, rseq::SIGNATURE)?;
//! HITS.add(&AREA, 1)?; // no atomic instruction, exact under preemption
//! ```
//!
//! The SDK's one critical section is the per-CPU add of
//! [`PerCpuCounter::add`], written once in assembly below with its
//! descriptor and signature (so its addresses are symbols a tracer or a
//! test can name: [`critical_section`]). An area must be registered by
//! the thread that uses it: the kernel updates and checks only the
//! calling thread's.

use crate::syscall::{raw_syscall, raw_syscall6, raw_syscall_registers, RawResult};
use abi::rseq::{CPU_ID_UNREGISTERED, REGISTER, SLICE_GRANTED, SLICE_REQUEST, UNREGISTER};
use abi::{ErrorCode, Syscall};
use core::sync::atomic::{compiler_fence, AtomicU32, AtomicU64, Ordering};

pub use abi::rseq::{Counters, Descriptor, KILLED_BY_RSEQ};

/// The signature the SDK's critical section carries in the word before
/// its abort handler, and the one to register with: `brk #0x45e0`, as
/// Linux's arm64 `RSEQ_SIG`, so the word traps if it is ever executed.
pub const SIGNATURE: u32 = 0xd428_bc00;

/// A thread's restartable-sequence area (`abi::rseq`, 32 bytes): put one
/// per thread in a `static` (it must stay mapped while registered).
#[repr(C, align(32))]
#[derive(Debug)]
pub struct RseqArea {
    cpu_id_start: AtomicU32,
    cpu_id: AtomicU32,
    critical_section: AtomicU64,
    slice: AtomicU32,
    reserved: [AtomicU32; 3],
}

const _: () = assert!(core::mem::size_of::<RseqArea>() == abi::rseq::AREA_BYTES as usize);
const _: () = assert!(core::mem::align_of::<RseqArea>() == abi::rseq::AREA_ALIGN as usize);

impl RseqArea {
    /// An area not registered yet: its CPU ids say
    /// `CPU_ID_UNREGISTERED`, so a per-CPU add through it is refused
    /// until the kernel writes them.
    pub const fn new() -> Self {
        Self {
            cpu_id_start: AtomicU32::new(CPU_ID_UNREGISTERED),
            cpu_id: AtomicU32::new(CPU_ID_UNREGISTERED),
            critical_section: AtomicU64::new(0),
            slice: AtomicU32::new(0),
            reserved: [const { AtomicU32::new(0) }; 3],
        }
    }

    /// Its user address (what `SetRseq` takes).
    pub fn address(&self) -> u64 {
        self as *const Self as u64
    }

    /// The CPU the kernel last wrote (`abi::rseq::CPU_ID`): `None` before
    /// registration and after unregistration.
    pub fn cpu_id(&self) -> Option<u32> {
        match self.cpu_id.load(Ordering::Relaxed) {
            CPU_ID_UNREGISTERED => None,
            cpu => Some(cpu),
        }
    }

    /// `abi::rseq::CPU_ID_START` as the kernel last wrote it.
    pub fn cpu_id_start(&self) -> u32 {
        self.cpu_id_start.load(Ordering::Relaxed)
    }

    /// The current descriptor's address (`abi::rseq::CRITICAL_SECTION`;
    /// 0: none, or the kernel cleared it after an event).
    pub fn critical_section(&self) -> u64 {
        self.critical_section.load(Ordering::Relaxed)
    }

    /// Stores `descriptor` as the current descriptor's address. The SDK's
    /// section stores its own; this is for tests of what the kernel does
    /// with a bad one (an unmapped address, a bad abort).
    pub fn set_critical_section(&self, descriptor: u64) {
        self.critical_section.store(descriptor, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
    }

    /// The time-slice word (`abi::rseq::SLICE`).
    pub fn slice(&self) -> u32 {
        self.slice.load(Ordering::Relaxed)
    }

    /// Asks not to be preempted by the tick for a moment (before taking a
    /// user-space lock): sets `SLICE_REQUEST`. The kernel may grant one
    /// extension (it clears the request and sets `SLICE_GRANTED`); end it
    /// with [`RseqArea::end_slice_extension`] once the lock is released.
    pub fn request_slice_extension(&self) {
        // Only this thread and the kernel, while this thread is stopped,
        // touch the word: the read-modify-write keeps `SLICE_GRANTED`
        // (its exclusive store fails if the kernel wrote in between). The
        // fences keep the compiler from moving the lock's accesses out of
        // the requested window.
        compiler_fence(Ordering::SeqCst);
        self.slice.fetch_or(SLICE_REQUEST, Ordering::Relaxed);
        compiler_fence(Ordering::SeqCst);
    }

    /// Ends the window [`RseqArea::request_slice_extension`] opened: drops
    /// a request the kernel did not need, and if it granted an extension
    /// gives the CPU back with `SliceYield`. `Ok(true)`: an extension was
    /// granted and this thread yielded.
    pub fn end_slice_extension(&self) -> Result<bool, ErrorCode> {
        compiler_fence(Ordering::SeqCst);
        let word = self.slice.fetch_and(!SLICE_REQUEST, Ordering::Relaxed);
        if word & SLICE_GRANTED == 0 {
            return Ok(false);
        }
        slice_yield()
    }
}

impl Default for RseqArea {
    fn default() -> Self {
        Self::new()
    }
}

/// Registers `area` for the calling thread with `signature` (the SDK's
/// section needs [`SIGNATURE`]); the kernel writes its CPU ids at once.
/// A second registration is `InvalidArgument`.
pub fn register(area: &'static RseqArea, signature: u32) -> Result<(), ErrorCode> {
    set_rseq_raw(area.address(), u64::from(signature), REGISTER)
}

/// Unregisters the calling thread's `area` (`signature` as registered);
/// the kernel writes `CPU_ID_UNREGISTERED` into it.
pub fn unregister(area: &'static RseqArea, signature: u32) -> Result<(), ErrorCode> {
    set_rseq_raw(area.address(), u64::from(signature), UNREGISTER)
}

/// `SetRseq` with raw registers `x2` (the area's address), `x3` (the
/// signature) and `x4` (`REGISTER` or `UNREGISTER`), for tests of refused
/// values and of areas in memory the test unmaps.
pub fn set_rseq_raw(address: u64, signature: u64, operation: u64) -> Result<(), ErrorCode> {
    raw_syscall6(
        Syscall::SetRseq.number(),
        0,
        [address, signature, operation, 0, 0],
    )
    .into_result()
}

/// `SliceYield`: ends a granted extension. `Ok(true)` if one was granted
/// (the kernel cleared `SLICE_GRANTED` and this thread yielded; `x8` says
/// 1).
pub fn slice_yield() -> Result<bool, ErrorCode> {
    let x = raw_syscall_registers(Syscall::SliceYield.number(), [0; 8]);
    RawResult(x[0]).into_result()?;
    Ok(x[8] == 1)
}

/// The kernel's rseq counters (test image only: `DebugRseqCounters`; the
/// kernel also prints them on the console).
pub fn debug_counters() -> Result<Counters, ErrorCode> {
    let mut words = [0u64; abi::rseq::COUNTERS];
    raw_syscall(
        Syscall::DebugRseqCounters.number(),
        0,
        words.as_mut_ptr() as u64,
        0,
    )
    .into_result()?;
    Ok(Counters::from_array(words))
}

/// `DebugRseqCounters` with `x2` as given (0: print only; tests of bad
/// addresses).
pub fn debug_counters_raw(address: u64) -> Result<(), ErrorCode> {
    raw_syscall(Syscall::DebugRseqCounters.number(), 0, address, 0).into_result()
}

/// A descriptor in writable memory (`abi::rseq::Descriptor`, 32 bytes,
/// 32-aligned), for sections laid out at run time and for tests of the
/// descriptors the kernel refuses. The SDK's own section has its
/// descriptor in its assembly.
#[repr(C, align(32))]
#[derive(Debug)]
pub struct DescriptorCell([AtomicU64; 4]);

const _: () =
    assert!(core::mem::size_of::<DescriptorCell>() == abi::rseq::DESCRIPTOR_BYTES as usize);
const _: () =
    assert!(core::mem::align_of::<DescriptorCell>() == abi::rseq::DESCRIPTOR_ALIGN as usize);

impl DescriptorCell {
    /// All zero (version 0, an empty section at 0).
    pub const fn new() -> Self {
        Self([const { AtomicU64::new(0) }; 4])
    }

    /// Writes `descriptor` into it.
    pub fn set(&self, descriptor: &Descriptor) {
        let bytes = descriptor.to_bytes();
        for (i, word) in self.0.iter().enumerate() {
            let mut le = [0u8; 8];
            le.copy_from_slice(&bytes[8 * i..8 * i + 8]);
            word.store(u64::from_le_bytes(le), Ordering::Relaxed);
        }
        compiler_fence(Ordering::SeqCst);
    }

    /// What it holds.
    pub fn get(&self) -> Descriptor {
        let mut bytes = [0u8; abi::rseq::DESCRIPTOR_BYTES as usize];
        for (i, word) in self.0.iter().enumerate() {
            bytes[8 * i..8 * i + 8].copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
        }
        Descriptor::from_bytes(&bytes)
    }

    /// Its user address (what goes into `abi::rseq::CRITICAL_SECTION`).
    pub fn address(&self) -> u64 {
        self as *const Self as u64
    }
}

impl Default for DescriptorCell {
    fn default() -> Self {
        Self::new()
    }
}

/// One CPU's count, alone in its cache line (so CPUs do not share lines).
#[repr(C, align(64))]
#[derive(Debug)]
struct Slot(AtomicU64);

/// Bytes between two slots: the section computes a slot's address as
/// `base + (cpu << SLOT_SHIFT)`.
const SLOT_SHIFT: u32 = 6;
const _: () = assert!(core::mem::size_of::<Slot>() == 1 << SLOT_SHIFT);

/// A counter with one slot per CPU, each changed only by the thread
/// running on that CPU through a restartable sequence: no atomic
/// instruction, and exact however the threads are preempted or moved.
#[derive(Debug)]
pub struct PerCpuCounter<const N: usize> {
    slots: [Slot; N],
}

/// Why [`PerCpuCounter::add`] added nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddError {
    /// The area is not registered (its CPU id says so).
    NotRegistered,
    /// The thread runs on a CPU the counter has no slot for.
    NoSlot(u32),
}

impl<const N: usize> PerCpuCounter<N> {
    /// All slots 0.
    pub const fn new() -> Self {
        Self {
            slots: [const { Slot(AtomicU64::new(0)) }; N],
        }
    }

    /// Adds `value` to the slot of the CPU this thread runs on, through
    /// `area` (registered by the calling thread with [`SIGNATURE`]).
    /// Returns how many times the section was aborted and restarted.
    pub fn add(&self, area: &RseqArea, value: u64) -> Result<u64, AddError> {
        let (status, aborts) = percpu_add(area, self.slots.as_ptr() as u64, value, N as u64);
        match status {
            ADDED => Ok(aborts),
            cpu if cpu == u64::from(CPU_ID_UNREGISTERED) => Err(AddError::NotRegistered),
            cpu => Err(AddError::NoSlot(cpu as u32)),
        }
    }

    /// CPU `cpu`'s slot (0 past the last).
    pub fn get(&self, cpu: usize) -> u64 {
        self.slots
            .get(cpu)
            .map_or(0, |slot| slot.0.load(Ordering::Relaxed))
    }

    /// The sum of every slot (exact once the adding threads are done).
    pub fn sum(&self) -> u64 {
        self.slots
            .iter()
            .map(|slot| slot.0.load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
    }

    /// Sets every slot to 0 (while no thread adds).
    pub fn reset(&self) {
        for slot in &self.slots {
            slot.0.store(0, Ordering::Relaxed);
        }
    }
}

impl<const N: usize> Default for PerCpuCounter<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// What the section returns in `x0` when it added.
const ADDED: u64 = u64::MAX;

/// The addresses of the SDK's critical section (the per-CPU add), as its
/// descriptor gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CriticalSection {
    /// The first instruction of the section (the CPU id's load).
    pub start: u64,
    /// The instruction after the commit (the store into the slot).
    pub post_commit: u64,
    /// The abort handler (the signature is the word before it).
    pub abort: u64,
    /// The descriptor's address.
    pub descriptor: u64,
    /// The routine's first instruction (it stores the descriptor's
    /// address into the area just before `start`).
    pub entry: u64,
    /// The routine's end (one past its last instruction).
    pub end: u64,
}

/// Defines a restartable sequence as an assembly routine named `$name`
/// (a string literal, a global symbol), with its descriptor in
/// `.data.rseq_cs` and [`SIGNATURE`] in the word before its abort
/// handler: the way to write a critical section that the kernel restarts.
///
/// The routine is called with `bl` and `x0` = the calling thread's
/// registered [`RseqArea`]. The macro writes what every section needs:
/// it stores the descriptor's address into the area (`x16`), counts the
/// aborts in `x17` (0 on the first try), and after an abort clears
/// nothing and starts again at the store. The caller writes:
///
/// - `section`: the instructions from `$name_start` to the commit, which
///   must be the last of them (one store); the CPU id is at
///   `[x0, #4]`, to be read inside the section;
/// - `done`: the instructions after the commit (they run outside the
///   section: clear the area's descriptor field, `str xzr, [x0, #8]`,
///   set the results, `ret`);
/// - `outside`: more code outside the section (an early way out that a
///   branch in `section` takes, which must clear the field too), or
///   nothing.
///
/// Symbols `$name_descriptor`, `$name_start`, `$name_post_commit`,
/// `$name_abort` and `$name_end` name its parts (for a tracer, or a
/// test). `x16`, `x17` and whatever the lines use are clobbered.
#[macro_export]
macro_rules! rseq_section {
    (
        name: $name:literal,
        section: [$($section:literal),* $(,)?],
        done: [$($done:literal),* $(,)?],
        outside: [$($outside:literal),* $(,)?]
        $(, $operand:ident = const $value:expr)* $(,)?
    ) => {
        core::arch::global_asm!(
            ".pushsection .data.rseq_cs,\"aw\"",
            ".balign 32",
            concat!(".global ", $name, "_descriptor"),
            concat!($name, "_descriptor:"),
            "    .word 0, 0",
            concat!("    .quad ", $name, "_start"),
            concat!("    .quad ", $name, "_post_commit - ", $name, "_start"),
            concat!("    .quad ", $name, "_abort"),
            ".popsection",
            concat!(".pushsection .text.", $name, ",\"ax\",%progbits"),
            ".balign 4",
            concat!(".global ", $name),
            concat!($name, ":"),
            concat!("    adrp x16, ", $name, "_descriptor"),
            concat!("    add x16, x16, :lo12:", $name, "_descriptor"),
            "    mov x17, #0",
            concat!($name, "_restart:"),
            "    str x16, [x0, #8]",
            concat!(".global ", $name, "_start"),
            concat!($name, "_start:"),
            $($section,)*
            concat!(".global ", $name, "_post_commit"),
            concat!($name, "_post_commit:"),
            $($done,)*
            $($outside,)*
            "    .inst 0xd428bc00",
            concat!(".global ", $name, "_abort"),
            concat!($name, "_abort:"),
            "    add x17, x17, #1",
            concat!("    b ", $name, "_restart"),
            concat!(".global ", $name, "_end"),
            concat!($name, "_end:"),
            ".popsection",
            $($operand = const $value,)*
        );
    };
}

// The macro's signature word is written out: `.inst` takes no operand.
const _: () = assert!(SIGNATURE == 0xd428_bc00);
const _: () = assert!(abi::rseq::CRITICAL_SECTION == 8 && abi::rseq::CPU_ID == 4);

// The per-CPU add, built on `rseq_section!`: x0 = area, x1 = the slots,
// x2 = value, x3 = slots; returns x0 = ADDED or the CPU id that has no
// slot, x1 = aborts. Uses x5, x6, x16, x17 and the flags. The store of
// the descriptor's address is the last instruction before `start`:
// preempted after it, the thread is at `start`, inside the section, so
// the kernel sends it to the abort handler; preempted before it, there is
// no descriptor yet, and the CPU id is read inside the section either
// way. The commit is the slot's store.
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
crate::rseq_section!(
    name: "portcullis_rseq_add",
    section: [
        "    ldr w5, [x0, #{cpu_id}]",
        "    cmp x5, x3",
        "    b.hs 2f",
        "    add x5, x1, x5, lsl #{slot_shift}",
        "    ldr x6, [x5]",
        "    add x6, x6, x2",
        "    str x6, [x5]",
    ],
    done: [
        "    str xzr, [x0, #{critical_section}]",
        "    mov x0, #{added}",
        "    mov x1, x17",
        "    ret",
    ],
    outside: [
        "2:  str xzr, [x0, #{critical_section}]",
        "    mov x0, x5",
        "    mov x1, x17",
        "    ret",
    ],
    critical_section = const abi::rseq::CRITICAL_SECTION,
    cpu_id = const abi::rseq::CPU_ID,
    slot_shift = const SLOT_SHIFT,
    added = const -1i64,
);

#[cfg(all(target_arch = "aarch64", target_os = "none"))]
extern "C" {
    fn portcullis_rseq_add();
    fn portcullis_rseq_add_start();
    fn portcullis_rseq_add_post_commit();
    fn portcullis_rseq_add_abort();
    fn portcullis_rseq_add_end();
    static portcullis_rseq_add_descriptor: [u64; 4];
}

/// The SDK's critical section's addresses.
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub fn critical_section() -> CriticalSection {
    let at = |f: unsafe extern "C" fn()| f as *const () as usize as u64;
    CriticalSection {
        start: at(portcullis_rseq_add_start),
        post_commit: at(portcullis_rseq_add_post_commit),
        abort: at(portcullis_rseq_add_abort),
        descriptor: core::ptr::addr_of!(portcullis_rseq_add_descriptor) as u64,
        entry: at(portcullis_rseq_add),
        end: at(portcullis_rseq_add_end),
    }
}

/// On the host there is no section.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
pub fn critical_section() -> CriticalSection {
    CriticalSection {
        start: 0,
        post_commit: 0,
        abort: 0,
        descriptor: 0,
        entry: 0,
        end: 0,
    }
}

/// Runs the section: `(status, aborts)`.
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
fn percpu_add(area: &RseqArea, slots: u64, value: u64, count: u64) -> (u64, u64) {
    let (status, aborts): (u64, u64);
    // SAFETY: the routine writes only the area's descriptor field and the
    // slot of index < `count` at `slots` (it checks the CPU id against
    // `count`), both atomics this program owns, and changes x0, x1, x5,
    // x6, x16, x17, x30 (the `bl`) and the flags; it uses no stack.
    unsafe {
        core::arch::asm!(
            "bl portcullis_rseq_add",
            inout("x0") area.address() => status,
            inout("x1") slots => aborts,
            in("x2") value,
            in("x3") count,
            out("x4") _, out("x5") _, out("x6") _, out("x7") _,
            out("x16") _, out("x17") _, out("x30") _,
            options(nostack),
        )
    };
    (status, aborts)
}

/// On the host there is no kernel to restart a section: nothing is added.
#[cfg(not(all(target_arch = "aarch64", target_os = "none")))]
fn percpu_add(area: &RseqArea, _slots: u64, _value: u64, _count: u64) -> (u64, u64) {
    (u64::from(area.cpu_id.load(Ordering::Relaxed)), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_area_has_the_abi_layout() {
        let area = RseqArea::new();
        let base = area.address();
        let offset = |field: u64| field - base;
        assert_eq!(
            offset(area.cpu_id_start.as_ptr() as u64),
            abi::rseq::CPU_ID_START
        );
        assert_eq!(offset(area.cpu_id.as_ptr() as u64), abi::rseq::CPU_ID);
        assert_eq!(
            offset(area.critical_section.as_ptr() as u64),
            abi::rseq::CRITICAL_SECTION
        );
        assert_eq!(offset(area.slice.as_ptr() as u64), abi::rseq::SLICE);
        assert_eq!(base % abi::rseq::AREA_ALIGN, 0);
    }

    #[test]
    fn a_new_area_is_unregistered_and_refuses_an_add() {
        let area = RseqArea::new();
        assert_eq!(area.cpu_id(), None);
        assert_eq!(area.cpu_id_start(), CPU_ID_UNREGISTERED);
        let counter = PerCpuCounter::<4>::new();
        assert_eq!(counter.add(&area, 1), Err(AddError::NotRegistered));
        assert_eq!(counter.sum(), 0);
    }

    #[test]
    fn a_cpu_past_the_slots_is_refused() {
        let area = RseqArea::new();
        area.cpu_id.store(4, Ordering::Relaxed);
        assert_eq!(area.cpu_id(), Some(4));
        let counter = PerCpuCounter::<4>::new();
        assert_eq!(counter.add(&area, 1), Err(AddError::NoSlot(4)));
    }

    #[test]
    fn slots_are_a_cache_line_apart_and_sum() {
        let counter = PerCpuCounter::<4>::new();
        let first = counter.slots[0].0.as_ptr() as u64;
        let second = counter.slots[1].0.as_ptr() as u64;
        assert_eq!(second - first, 1 << SLOT_SHIFT);
        counter.slots[1].0.store(5, Ordering::Relaxed);
        counter.slots[3].0.store(u64::MAX, Ordering::Relaxed);
        assert_eq!((counter.get(1), counter.get(9)), (5, 0));
        assert_eq!(counter.sum(), 4);
        counter.reset();
        assert_eq!(counter.sum(), 0);
    }

    #[test]
    fn the_slice_window_keeps_the_kernel_bit() {
        let area = RseqArea::new();
        area.request_slice_extension();
        assert_eq!(area.slice(), SLICE_REQUEST);
        // Not granted: the request is dropped, no syscall is made.
        assert_eq!(area.end_slice_extension(), Ok(false));
        assert_eq!(area.slice(), 0);
        // Granted (as the kernel writes it): the request stays set by a
        // second request, and the end makes the call (which the host has
        // not: InvalidSyscall).
        area.slice.store(SLICE_GRANTED, Ordering::Relaxed);
        area.request_slice_extension();
        assert_eq!(area.slice(), SLICE_GRANTED | SLICE_REQUEST);
        assert_eq!(area.end_slice_extension(), Err(ErrorCode::InvalidSyscall));
        assert_eq!(area.slice(), SLICE_GRANTED);
    }

    #[test]
    fn a_descriptor_cell_holds_the_abi_bytes() {
        let cell = DescriptorCell::new();
        let descriptor = Descriptor {
            version: 0,
            flags: 0,
            start: 0x40_1000,
            post_commit_offset: 0x1c,
            abort: 0x40_1050,
        };
        cell.set(&descriptor);
        assert_eq!(cell.get(), descriptor);
        assert_eq!(cell.0[1].load(Ordering::Relaxed), 0x40_1000);
        assert_eq!(cell.0[2].load(Ordering::Relaxed), 0x1c);
        assert_eq!(cell.address() % abi::rseq::DESCRIPTOR_ALIGN, 0);
    }

    #[test]
    fn the_signature_is_a_breakpoint() {
        // BRK #imm16: 0xd4200000 | imm16 << 5.
        assert_eq!(SIGNATURE, 0xd420_0000 | (0x45e0 << 5));
    }
}
