//! What the kernel core needs from the hardware, as a trait.
//!
//! The target implements it with the arch crate (MMIO, system registers,
//! the linear map); host tests implement it with plain memory. Keeping the
//! core generic over it is what lets the scheduler, the syscall dispatch
//! and the fault handling unit-test on the host.

use arch::context::FpState;

/// Access to physical RAM (the kernel reaches it through its linear map).
pub trait PhysMemory {
    /// Copies `out.len()` bytes from RAM at `pa`.
    fn read_phys(&self, pa: u64, out: &mut [u8]);
    /// Copies `data` to RAM at `pa`.
    fn write_phys(&mut self, pa: u64, data: &[u8]);
    /// Reads the aligned u64 at `pa`.
    fn read_phys_u64(&self, pa: u64) -> u64;
    /// Writes the aligned u64 at `pa`.
    fn write_phys_u64(&mut self, pa: u64, value: u64);
    /// Writes `words` from the aligned `pa` on, within one page (an audit
    /// record into its slot). The default writes them one by one.
    fn write_phys_words(&mut self, pa: u64, words: &[u64]) {
        for (i, word) in words.iter().enumerate() {
            self.write_phys_u64(pa + 8 * i as u64, *word);
        }
    }
    /// Reads `out.len()` words from the aligned `pa` on, within one page.
    /// The default reads them one by one.
    fn read_phys_words(&self, pa: u64, out: &mut [u64]) {
        for (i, word) in out.iter_mut().enumerate() {
            *word = self.read_phys_u64(pa + 8 * i as u64);
        }
    }
    /// Copies `count` words from the aligned `from` to the aligned `to`,
    /// each run within one page (a message's buffer words: the page of
    /// each side is found once, not once a word). The default copies them
    /// one by one.
    fn copy_phys_words(&mut self, from: u64, to: u64, count: usize) {
        for i in 0..count as u64 {
            let value = self.read_phys_u64(from + 8 * i);
            self.write_phys_u64(to + 8 * i, value);
        }
    }
    /// Zeroes the 4 KiB frame at `pa`.
    fn zero_frame(&mut self, pa: u64);
}

/// What the caches and the translation-table walker need after the
/// kernel's own stores, before the memory it wrote is fetched as
/// instructions or walked as tables. Plain stores are not enough on real
/// hardware (QEMU models neither caches nor a walker that lags): the
/// Cortex-A72's instruction cache does not see the data cache, and its
/// walker is not ordered with the CPU's stores. `address_space` calls
/// these on every path that makes memory executable, writes a table entry
/// or clears one, so the callers above it cannot forget one.
pub trait MemoryMaintenance {
    /// Makes instructions written into the frame at `pa` visible to
    /// instruction fetch (D-cache clean to the point of unification,
    /// I-cache invalidate): before the frame is mapped executable.
    fn sync_instruction_cache(&mut self, pa: u64);
    /// Makes every translation-table store so far visible to the table
    /// walker (DSB ISHST): after entries are written, before the space
    /// may be entered.
    fn publish_table_writes(&mut self);
    /// After the entry of page `va` in address space `asid` was cleared:
    /// completes the clear and forgets the page's TLB entries (DSB ISHST,
    /// TLBI, DSB, ISB: break-before-make).
    fn flush_tlb_page(&mut self, asid: u16, va: u64);
    /// Forgets every TLB entry (after an ASID generation rollover, or once
    /// a space's tables are freed), completing earlier table stores first.
    fn flush_tlb_all(&mut self);
}

/// Everything else the core asks of the machine.
pub trait Platform: PhysMemory + MemoryMaintenance {
    /// Writes text to the kernel console.
    fn console_write(&mut self, text: &str);
    /// Writes bytes to the console as they are (a binary frame: no line
    /// ending is translated). The default, for a console that takes only
    /// text, drops them.
    fn console_write_bytes(&mut self, _bytes: &[u8]) {}
    /// Takes up to `out.len()` bytes of input waiting in the console
    /// UART: how many (0: none). The default has no input.
    fn console_take_input(&mut self, _out: &mut [u8]) -> usize {
        0
    }
    /// Makes the console UART interrupt when input arrives (its line at
    /// the interrupt controller is the kernel's to enable). The default
    /// has no input.
    fn console_start_input(&mut self) {}
    /// Lets EL0 use FP/SIMD, or makes its next FP/SIMD instruction trap
    /// (CPACR_EL1.FPEN), so FP state moves only when a thread uses it.
    fn set_fp_access(&mut self, enabled: bool);
    /// Whether EL0 may use FP/SIMD now: this CPU's CPACR_EL1 says, the
    /// one record of it (the fast paths write the register and nothing
    /// else).
    fn fp_access(&self) -> bool;
    /// Saves the live FP/SIMD registers into `outgoing` (if given) and
    /// loads `incoming`.
    fn move_fp_state(&mut self, outgoing: Option<&mut FpState>, incoming: &FpState);
    /// Lets interrupt `id` through the interrupt controller, or stops it.
    fn set_interrupt_enabled(&mut self, id: u32, enabled: bool);
    /// How many interrupt IDs the interrupt controller has (0 before it
    /// is started): `IrqControlGet` refuses the others.
    fn interrupt_lines(&self) -> u32;
    /// The interrupt ID of the console UART, which the kernel keeps.
    fn console_intid(&self) -> u32;
    /// Arms the EL1 physical timer `ticks` counter ticks from now, or
    /// disarms it (`None`).
    fn set_physical_timer(&mut self, ticks: Option<u64>);
    /// Turns the benchmark syscall floor on or off (see
    /// `abi::Syscall::BenchFloor`). Bench image only.
    #[cfg(feature = "bench-calls")]
    fn set_syscall_floor(&mut self, on: bool);
    /// Turns single-stepping of EL0 code on or off (MDSCR_EL1.SS): while
    /// on, a thread resumed with SPSR.SS set runs one instruction, then
    /// takes a software-step exception.
    fn set_single_step(&mut self, on: bool);
    /// Is an interrupt waiting (interrupts are masked in the kernel)? What
    /// a long kernel operation asks at its preemption points.
    fn interrupt_is_pending(&self) -> bool;
    /// The interrupt waiting to be taken, acknowledged at the interrupt
    /// controller (the tick re-armed), or `None`.
    fn take_pending_interrupt(&mut self) -> Option<Interrupt>;
    /// The virtual counter (CNTVCT_EL0).
    fn counter(&self) -> u64;
    /// Counter ticks per second (CNTFRQ_EL0).
    fn counter_frequency(&self) -> u64;
    /// Saves the live FP/SIMD registers into `state` (they stay live): a
    /// thread that owns them moves to another CPU.
    fn save_fp_state(&mut self, _state: &mut FpState) {}
    /// Interrupts `cpu` (an inter-processor interrupt, which it takes as
    /// `Interrupt::Reschedule`): a thread more urgent than the one it
    /// runs was made ready in its queue. The default, for one CPU, has
    /// none to interrupt.
    fn send_reschedule(&mut self, _cpu: usize) {}
    /// Stops `cpu` where it is (it must be another CPU that may be
    /// running a thread or holds FP/SIMD registers of one; see
    /// `arch::cpu::cross_core`): interrupts it and waits until it waits
    /// for the kernel lock, with the registers of the thread it ran saved
    /// in that thread's TCB, and its FP/SIMD registers saved into `fp` if
    /// given. The default, for one CPU, has no other CPU to stop.
    fn stall_cpu(&mut self, _cpu: usize, _fp: Option<&mut FpState>) -> StalledCpu {
        StalledCpu {
            el0_sync_syndrome: None,
        }
    }
    /// Interrupts this CPU once, `ticks` counter ticks from now, as
    /// `Interrupt::SliceEnd` (unless its tick comes first, which then
    /// ends the extension): the end of a time-slice extension
    /// (`kernel/rseq.rs`). `false` if it cannot, and then no extension is
    /// granted. The default, with no timer of its own, cannot.
    fn arm_slice_end(&mut self, _ticks: u64) -> bool {
        false
    }
}

/// How a CPU stopped by `Platform::stall_cpu` answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StalledCpu {
    /// The syndrome (ESR_EL1) of the synchronous exception from EL0 it
    /// waits to handle (a syscall, a fault), if that is what it waits for.
    pub el0_sync_syndrome: Option<u64>,
}

/// `core::fmt::Write` onto a platform's console.
pub struct Console<'a, P: Platform>(pub &'a mut P);

impl<P: Platform> core::fmt::Write for Console<'_, P> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.0.console_write(s);
        Ok(())
    }
}

/// An interrupt, as the arch glue classified it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupt {
    /// The kernel's tick (already re-armed).
    Timer,
    /// Another CPU made a thread ready in this CPU's queue that is more
    /// urgent than what it ran (an inter-processor interrupt).
    Reschedule,
    /// The one-shot of `Platform::arm_slice_end`: a time-slice extension
    /// is over (not a tick: the kernel's clock does not advance).
    SliceEnd,
    /// Any other interrupt ID (no user driver can own one yet).
    Other(u32),
}
