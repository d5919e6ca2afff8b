//! Restartable sequences and the time-slice extension: the kernel's side
//! (`abi::rseq` has the ABI, `docs/rseq.md` the design, `entry::rseq` the
//! check, `thread/rseq.rs` the events).
//!
//! - `set_rseq` (`SetRseq`) registers or unregisters a thread's area.
//! - `rseq_on_exit` carries out the exit work's check (`WorkFlags::RSEQ`,
//!   raised by an event) on the thread about to return to EL0: it moves
//!   the PC to the abort address or ends the thread for a bad area.
//! - `tick_preempts` decides, when the tick would preempt a thread,
//!   whether it gets its time-slice extension instead; `slice_end` ends
//!   one that ran out (`Interrupt::SliceEnd`), `slice_yield`
//!   (`SliceYield`) one the thread is done with.
//!
//! Everything here is out of line and reached only by threads that
//! registered: the paths of every other thread never see this file.

use crate::address_space::AddressSpace;
use crate::kernel::Kernel;
use crate::platform::{Console, Platform};
use crate::syscall::SyscallResult;
use crate::thread::{SliceExtension, ThreadId, ThreadState};
use abi::rseq::{
    AREA_BYTES, CPU_ID, CPU_ID_START, CPU_ID_UNREGISTERED, KILLED_BY_RSEQ, SLICE, SLICE_GRANTED,
    SLICE_REQUEST,
};
use abi::ErrorCode;
use core::fmt::Write;
use entry::rseq::{check_on_exit, Registration, UserMemory};
use entry::WorkFlags;

/// How long a time-slice extension lasts, in microseconds: the system's
/// choice, not the thread's (Linux allows 5 to 50 µs; a thread that needs
/// longer should not hold a spinning lock).
pub const SLICE_EXTENSION_MICROS: u64 = 50;

/// A thread's memory, through its page tables (`copy_from_user`,
/// `copy_to_user`): a bad address fails the access, never the kernel.
struct SpaceMemory<'a, P: Platform> {
    space: &'a AddressSpace,
    platform: &'a mut P,
}

impl<P: Platform> UserMemory for SpaceMemory<'_, P> {
    fn read(&self, address: u64, out: &mut [u8]) -> bool {
        self.space
            .copy_from_user(&*self.platform, address, out)
            .is_ok()
    }

    // Out of line: the one place the rseq code copies to user memory
    // (`copy_to_user` is inlined where it is called).
    #[inline(never)]
    fn write(&mut self, address: u64, data: &[u8]) -> bool {
        self.space
            .copy_to_user(self.platform, address, data)
            .is_ok()
    }
}

impl Kernel {
    /// `SetRseq` by `current` (decode checked the registers' form).
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn set_rseq<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> Result<(), ErrorCode> {
        let crate::syscall::RseqArguments {
            area,
            signature,
            unregister,
        } = crate::syscall::rseq_arguments(&self.objects[current].context)?;
        let registration = Registration { area, signature };
        let cpu = self.cpu as u32;
        let registered = self.objects[current].rseq;
        let space = self
            .thread_space(current)
            .ok_or(ErrorCode::InvalidAddress)?;
        let mut memory = SpaceMemory { space, platform };
        if unregister {
            if registered != Some(registration) {
                return Err(ErrorCode::InvalidArgument);
            }
            // Best effort: an area unmapped since is unregistered too.
            let _ = memory.write(area + CPU_ID, &CPU_ID_UNREGISTERED.to_le_bytes());
            let thread = &mut self.objects[current];
            thread.rseq = None;
            thread.slice = SliceExtension::Unused;
            thread.work.remove(WorkFlags::RSEQ);
            return Ok(());
        }
        if registered.is_some() {
            return Err(ErrorCode::InvalidArgument);
        }
        memory
            .space
            .check_user_writable(&*memory.platform, area, AREA_BYTES)
            .map_err(|_| ErrorCode::InvalidAddress)?;
        let mut ids = [0u8; 8];
        ids[..4].copy_from_slice(&cpu.to_le_bytes());
        ids[4..].copy_from_slice(&cpu.to_le_bytes());
        if !memory.write(area + CPU_ID_START, &ids) {
            return Err(ErrorCode::InvalidAddress);
        }
        counters::add(counters::ID_UPDATES, 1);
        let thread = &mut self.objects[current];
        thread.rseq = Some(registration);
        thread.slice = SliceExtension::Unused;
        Ok(())
    }

    /// The exit work's rseq check for `current`, about to return to EL0
    /// (its `WorkFlags::RSEQ` is set): `true` if it returns (its PC moved
    /// to the abort address if it was inside its section), `false` if a
    /// bad area or descriptor ended it.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn rseq_on_exit<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> bool {
        let cpu = self.cpu as u32;
        let thread = &mut self.objects[current];
        thread.work.remove(WorkFlags::RSEQ);
        let Some(registration) = thread.rseq else {
            return true;
        };
        let pc = thread.context.pc();
        counters::add(counters::SLOW_PATH, 1);
        let result = match self.thread_space(current) {
            Some(space) => {
                check_on_exit(&mut SpaceMemory { space, platform }, registration, cpu, pc)
            }
            None => Err(entry::rseq::RseqError::AreaUnreadable {
                area: registration.area,
            }),
        };
        match result {
            Ok(checked) => {
                counters::add(counters::ID_UPDATES, u64::from(checked.ids_updated));
                counters::add(counters::CS_CHECKS, u64::from(checked.section_checked));
                counters::add(counters::CLEARED, u64::from(checked.cleared));
                if let Some(abort) = checked.abort_to {
                    counters::add(counters::FIXUPS, 1);
                    self.objects[current].context.set_pc(abort);
                }
                true
            }
            Err(error) => {
                self.end_user_lines(platform);
                let thread = &self.objects[current];
                let _ = writeln!(
                    Console(platform),
                    "[kernel] thread {}#{} (pc {pc:#x}): {error}",
                    thread.name,
                    thread.number
                );
                self.end_thread(platform, current, ThreadState::Exited(KILLED_BY_RSEQ));
                false
            }
        }
    }

    /// The tick would preempt `current` (a thread at least as urgent is
    /// ready here): `true` if it is preempted, `false` if it runs on in a
    /// time-slice extension granted now. One is granted if it asked
    /// (`SLICE_REQUEST` in its area) and has had none since it was last
    /// switched out; its area then says `SLICE_GRANTED` and this CPU is
    /// interrupted again `SLICE_EXTENSION_MICROS` from now. Out of line:
    /// it runs only when the tick preempts, and inlined it took
    /// `Kernel::interrupt` out of the idle loop's code (20 instructions
    /// on every cross-CPU wakeup).
    #[inline(never)]
    pub(in crate::kernel) fn tick_preempts<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> bool {
        let thread = &self.objects[current];
        let Some(registration) = thread.rseq else {
            return true;
        };
        match thread.slice {
            SliceExtension::Unused => {}
            // A tick comes long after an extension's end: the host
            // stalled this CPU past both (the tick then stands for the
            // end), or the thread blocked before its end and kept it. It
            // did not yield: an overrun either way.
            SliceExtension::Running => {
                self.overrun(platform, current);
                return true;
            }
            SliceExtension::Spent => return true,
        }
        self.grant_extension(platform, current, registration)
            .is_none()
    }

    /// `tick_preempts`' grant, if the thread asked and the CPU can be
    /// interrupted at its end. An area that cannot be read or written
    /// grants nothing and raises the rseq event, whose check ends the
    /// thread with the reason.
    #[cold]
    #[inline(never)]
    fn grant_extension<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        registration: Registration,
    ) -> Option<()> {
        let ticks = platform.counter_frequency() * SLICE_EXTENSION_MICROS / 1_000_000;
        let space = self.thread_space(current)?;
        let mut memory = SpaceMemory { space, platform };
        let mut word = [0u8; 4];
        let slice = registration.area + SLICE;
        if !memory.read(slice, &mut word) {
            self.objects[current].work.insert(WorkFlags::RSEQ);
            return None;
        }
        let asked = u32::from_le_bytes(word);
        if asked & SLICE_REQUEST == 0 || ticks == 0 {
            return None;
        }
        let granted = (asked & !SLICE_REQUEST) | SLICE_GRANTED;
        if !memory.write(slice, &granted.to_le_bytes()) {
            self.objects[current].work.insert(WorkFlags::RSEQ);
            return None;
        }
        if !memory.platform.arm_slice_end(ticks) {
            let _ = memory.write(slice, &asked.to_le_bytes());
            return None;
        }
        self.objects[current].slice = SliceExtension::Running;
        counters::add(counters::SLICE_GRANTED, 1);
        Some(())
    }

    /// `Interrupt::SliceEnd`: the current thread's extension, if it still
    /// runs in one, ran out: it is preempted (the overrun is counted), its
    /// area no longer says granted.
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn slice_end<P: Platform>(&mut self, platform: &mut P) {
        let Some(current) = self.current else {
            return;
        };
        if self.objects[current].slice != SliceExtension::Running {
            return;
        }
        self.overrun(platform, current);
        let thread = &mut self.objects[current];
        thread.work.insert(WorkFlags::NEED_RESCHED);
        thread.stats.count_preemption();
    }

    /// `current`'s extension ran out before it yielded: counted, taken
    /// back (its area no longer says granted), and no other this run.
    fn overrun<P: Platform>(&mut self, platform: &mut P, current: ThreadId) {
        counters::add(counters::SLICE_OVERRUN, 1);
        self.end_extension(platform, current);
        self.objects[current].slice = SliceExtension::Spent;
    }

    /// `SliceYield` by `current`: with an extension running, it ends it
    /// and yields (`x8 = 1`, its second result); otherwise it returns at
    /// once (`x8 = 0`).
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn slice_yield<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
    ) -> SyscallResult {
        let running = self.objects[current].slice == SliceExtension::Running;
        if running {
            self.end_extension(platform, current);
            // It yields: its run is over, the next may have its own.
            self.objects[current].slice = SliceExtension::Unused;
        }
        self.objects[current].context.set_value(u64::from(running));
        if running {
            SyscallResult::Yield
        } else {
            SyscallResult::Return(ErrorCode::Ok)
        }
    }

    /// Clears `SLICE_GRANTED` in `current`'s area (an area that cannot be
    /// written raises the rseq event, whose check ends the thread).
    fn end_extension<P: Platform>(&mut self, platform: &mut P, current: ThreadId) {
        let Some(registration) = self.objects[current].rseq else {
            return;
        };
        let slice = registration.area + SLICE;
        let cleared = self.thread_space(current).is_some_and(|space| {
            let mut memory = SpaceMemory { space, platform };
            let mut word = [0u8; 4];
            memory.read(slice, &mut word)
                && memory.write(
                    slice,
                    &(u32::from_le_bytes(word) & !SLICE_GRANTED).to_le_bytes(),
                )
        });
        if !cleared {
            self.objects[current].work.insert(WorkFlags::RSEQ);
        }
    }

    /// `DebugRseqCounters`: the counters into `current`'s memory at
    /// `address` (0: nowhere) and onto the console.
    #[cfg(feature = "rseq-counters")]
    #[cold]
    #[inline(never)]
    pub(in crate::kernel) fn debug_rseq_counters<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        address: u64,
    ) -> Result<(), ErrorCode> {
        let counters = counters::read();
        if address != 0 {
            let mut bytes = [0u8; abi::rseq::COUNTERS_BYTES as usize];
            for (i, word) in counters.to_array().iter().enumerate() {
                bytes[i * 8..i * 8 + 8].copy_from_slice(&word.to_le_bytes());
            }
            let space = self
                .thread_space(current)
                .ok_or(ErrorCode::InvalidAddress)?;
            if !(SpaceMemory { space, platform }).write(address, &bytes) {
                return Err(ErrorCode::InvalidAddress);
            }
        }
        self.end_user_lines(platform);
        let mut console = Console(platform);
        let _ = write!(console, "[kernel] rseq counters:");
        for (name, value) in abi::rseq::Counters::NAMES.iter().zip(counters.to_array()) {
            let _ = write!(console, " {name} {value},");
        }
        let _ = writeln!(console, " extension {SLICE_EXTENSION_MICROS} us");
        Ok(())
    }
}

/// The counters of `abi::rseq::Counters`, kept by a kernel built with the
/// `rseq-counters` feature (the adds compile to nothing without it).
/// Atomics: `count_exit` also runs on the IPC fast path, and every CPU
/// adds to the same counters.
pub(in crate::kernel) mod counters {
    #[cfg(feature = "rseq-counters")]
    use core::sync::atomic::{AtomicU64, Ordering};

    #[cfg(feature = "rseq-counters")]
    pub(in crate::kernel) const EXITS: usize = 0;
    pub(in crate::kernel) const SLOW_PATH: usize = 1;
    #[cfg(feature = "rseq-counters")]
    pub(in crate::kernel) const FAST_PATH: usize = 2;
    pub(in crate::kernel) const ID_UPDATES: usize = 3;
    pub(in crate::kernel) const CS_CHECKS: usize = 4;
    pub(in crate::kernel) const CLEARED: usize = 5;
    pub(in crate::kernel) const FIXUPS: usize = 6;
    pub(in crate::kernel) const SLICE_GRANTED: usize = 7;
    pub(in crate::kernel) const SLICE_OVERRUN: usize = 8;

    #[cfg(feature = "rseq-counters")]
    static COUNTERS: [AtomicU64; abi::rseq::COUNTERS] =
        [const { AtomicU64::new(0) }; abi::rseq::COUNTERS];

    /// Counts a return to EL0 of `thread` (its callers are compiled
    /// only with the feature, so that without it not even the thread's
    /// lookup is left on the paths).
    #[cfg(feature = "rseq-counters")]
    #[inline(always)]
    pub(in crate::kernel) fn count_exit(thread: &crate::thread::Thread) {
        add(EXITS, 1);
        if thread.rseq.is_some() && !thread.work.contains(entry::WorkFlags::RSEQ) {
            add(FAST_PATH, 1);
        }
    }

    /// Adds `value` to counter `index`.
    #[inline(always)]
    pub(in crate::kernel) fn add(index: usize, value: u64) {
        #[cfg(feature = "rseq-counters")]
        COUNTERS[index].fetch_add(value, Ordering::Relaxed);
        #[cfg(not(feature = "rseq-counters"))]
        let _ = (index, value);
    }

    /// Every counter now.
    #[cfg(feature = "rseq-counters")]
    pub(in crate::kernel) fn read() -> abi::rseq::Counters {
        let mut words = [0u64; abi::rseq::COUNTERS];
        for (word, counter) in words.iter_mut().zip(COUNTERS.iter()) {
            *word = counter.load(Ordering::Relaxed);
        }
        abi::rseq::Counters::from_array(words)
    }
}
