//! The Portcullis kernel binary: boot, the hardware side of `Platform`, and
//! the entry points the exception vectors call.
//!
//! Everything here is glue between the arch crate and the kernel core; the
//! decisions are made in `microkernel::kernel`.
#![no_std]
#![no_main]
#![deny(unsafe_op_in_unsafe_fn)]

use arch::boards::{
    BoardInfo, Loader, PhysRange, PsciConduit, MAX_CPUS, MAX_PIECES, MAX_RAM_RANGES,
    MAX_RESERVED_RANGES, RESCHEDULE_SGI,
};
use arch::context::{FpState, UserContext};
#[cfg(feature = "test-calls")]
use arch::cpu::crash::{Crash, CrashPoint};
use arch::cpu::cross_core::{self, Waiting};
use arch::cpu::kernel_cell::KernelCell;
use arch::cpu::power::{self, ExitMethod};
use arch::cpu::smp::{self, this_cpu};
use arch::cpu::{console, early_map, phys, registers, timer, tlb, user_return};
use arch::device_tree::{self, DeviceTreeError};
use arch::drivers::gicv2::GicV2;
use arch::mmu::AsidBits;
use arch::object_memory::GRANULE;
use core::fmt::Write;
use core::sync::atomic::Ordering;
use microkernel::cap::Memory;
use microkernel::frames::FrameAllocator;
use microkernel::kernel::{Interrupt, Kernel, Resume};
use microkernel::platform::{MemoryMaintenance, PhysMemory, Platform, StalledCpu};
use microkernel::system_image;
use microkernel::tick;

/// The root task (`root/`), built by build.rs for aarch64-unknown-none: it executes the system image loaded beside the kernel.
static ROOT_ELF: &[u8] = include_bytes!(env!("PORTCULLIS_ROOT_ELF"));

/// Kernel ticks per second: a 10 ms time slice.
const TICKS_PER_SECOND: u64 = 100;

/// Room for a NOP-free copy of the device tree (see `device_tree::parse`).
const DEVICE_TREE_SCRATCH_BYTES: usize = 256 * 1024;

/// The kernel and the hardware it drives, in one cell: nearly every entry
/// needs both, and one borrow flag is half the checking of two.
#[repr(C)]
struct KernelState {
    /// First, so its hot fields keep their small offsets (decision 22).
    kernel: Kernel,
    machine: Machine,
}

static STATE: KernelCell<KernelState> = KernelCell::new(KernelState {
    kernel: Kernel::new(),
    machine: Machine {
        gic: None,
        tick_interval: 0,
        tick_due: [0; MAX_CPUS],
        counter_frequency: 0,
        console_intid: 0,
    },
});
static DEVICE_TREE_SCRATCH: KernelCell<[u8; DEVICE_TREE_SCRATCH_BYTES]> =
    KernelCell::new([0; DEVICE_TREE_SCRATCH_BYTES]);

/// Runs `f` on the kernel's state with the big kernel lock held and this
/// CPU's view in place (`Kernel::on_core`); `waiting` says what the CPU
/// does while it waits for the lock (see `arch::cpu::cross_core`).
#[inline(always)]
fn locked<R>(waiting: Waiting, f: impl FnOnce(&mut KernelState) -> R) -> R {
    STATE.with_on_core(waiting, |state, token| {
        state.kernel.on_core(token, this_cpu);
        f(state)
    })
}

macro_rules! kprintln {
    ($($arg:tt)*) => {{
        let _ = writeln!(arch::cpu::console::Writer, $($arg)*);
    }};
}

mod boot_cores;
use boot_cores::{start_secondaries, GIC_WINDOW};
mod fast_paths;
mod syscall_entries;

/// The hardware the kernel core drives through `Platform`.
struct Machine {
    gic: Option<GicV2>,
    tick_interval: u64,
    /// When the tick each core's timer is armed for is due (see `tick`),
    /// by core index.
    tick_due: [u64; MAX_CPUS],
    counter_frequency: u64,
    /// The console UART's interrupt ID (the kernel keeps it).
    console_intid: u32,
}

impl Machine {
    /// Acknowledges the pending interrupt, if any, and classifies it.
    fn take_interrupt(&mut self) -> Option<Interrupt> {
        let gic = self.gic.as_ref()?;
        let irq = gic.acknowledge()?;
        let interrupt = if irq.id() == RESCHEDULE_SGI {
            smp::note_reschedule(this_cpu());
            Interrupt::Reschedule
        } else if irq.id() == timer::VIRTUAL_TIMER_INTID {
            let now = registers::counter();
            let due = &mut self.tick_due[this_cpu()];
            // The timer fires at the value armed (CNTVCT >= CVAL), so one
            // before the tick is due is the end of a time-slice extension
            // (`arm_slice_end`, the only early arming); the tick stays
            // armed.
            if now.wrapping_sub(*due) > u64::MAX / 2 {
                timer::arm_at(*due);
                Interrupt::SliceEnd
            } else {
                *due = tick::next_deadline(*due, now, self.tick_interval);
                timer::arm_at(*due);
                Interrupt::Timer
            }
        } else {
            Interrupt::Other(irq.id())
        };
        gic.end_of_interrupt(irq);
        Some(interrupt)
    }

    /// Asks core `cpu` to look at what it runs again (SGI
    /// [`RESCHEDULE_SGI`]). False if it cannot be sent (no GIC yet, or
    /// that core has not set its interface up).
    fn signal_reschedule(&self, cpu: usize) -> bool {
        self.gic
            .as_ref()
            .is_some_and(|gic| gic.send_sgi(cpu, RESCHEDULE_SGI))
    }
}

impl PhysMemory for Machine {
    fn read_phys(&self, pa: u64, out: &mut [u8]) {
        phys::read(pa, out)
    }

    fn write_phys(&mut self, pa: u64, data: &[u8]) {
        phys::write(pa, data)
    }

    fn read_phys_u64(&self, pa: u64) -> u64 {
        phys::read_u64(pa)
    }

    fn write_phys_u64(&mut self, pa: u64, value: u64) {
        phys::write_u64(pa, value)
    }

    fn write_phys_words(&mut self, pa: u64, words: &[u64]) {
        phys::write_words(pa, words)
    }

    fn read_phys_words(&self, pa: u64, out: &mut [u64]) {
        phys::read_words(pa, out)
    }

    fn copy_phys_words(&mut self, from: u64, to: u64, count: usize) {
        phys::copy_words(from, to, count)
    }

    fn zero_frame(&mut self, pa: u64) {
        phys::zero_page(pa)
    }
}

impl MemoryMaintenance for Machine {
    fn sync_instruction_cache(&mut self, pa: u64) {
        tlb::sync_instruction_page(pa)
    }

    fn publish_table_writes(&mut self) {
        tlb::publish_table_writes()
    }

    fn flush_tlb_page(&mut self, asid: u16, va: u64) {
        tlb::flush_page(asid, va)
    }

    fn flush_tlb_all(&mut self) {
        tlb::flush_all()
    }
}

impl Platform for Machine {
    fn console_write(&mut self, text: &str) {
        console::write_str(text)
    }

    fn console_write_bytes(&mut self, bytes: &[u8]) {
        console::write_bytes(bytes)
    }

    fn console_take_input(&mut self, out: &mut [u8]) -> usize {
        console::read_input(out)
    }

    fn console_start_input(&mut self) {
        console::start_input()
    }

    fn arm_slice_end(&mut self, ticks: u64) -> bool {
        let at = registers::counter().wrapping_add(ticks);
        // A tick due first ends the extension itself.
        if at.wrapping_sub(self.tick_due[this_cpu()]) > u64::MAX / 2 {
            timer::arm_at(at);
        }
        true
    }

    fn set_fp_access(&mut self, enabled: bool) {
        registers::set_user_fp_access(enabled)
    }

    fn fp_access(&self) -> bool {
        registers::user_fp_access()
    }

    fn move_fp_state(&mut self, outgoing: Option<&mut FpState>, incoming: &FpState) {
        if let Some(saved) = outgoing {
            user_return::save_fp(saved);
        }
        user_return::restore_fp(incoming);
    }

    fn set_physical_timer(&mut self, ticks: Option<u64>) {
        timer::set_physical_timer(ticks);
    }

    fn interrupt_is_pending(&self) -> bool {
        registers::irq_pending()
    }

    fn take_pending_interrupt(&mut self) -> Option<Interrupt> {
        if registers::irq_pending() {
            self.take_interrupt()
        } else {
            None
        }
    }

    fn interrupt_lines(&self) -> u32 {
        self.gic.as_ref().map_or(0, GicV2::lines)
    }

    fn console_intid(&self) -> u32 {
        self.console_intid
    }

    fn set_interrupt_enabled(&mut self, id: u32, enabled: bool) {
        if let Some(gic) = self.gic.as_ref() {
            if enabled {
                gic.enable(id);
            } else {
                gic.disable(id);
            }
        }
    }

    #[cfg(feature = "bench-calls")]
    fn set_syscall_floor(&mut self, on: bool) {
        user_return::set_syscall_floor(on)
    }

    fn set_single_step(&mut self, on: bool) {
        registers::set_user_single_step(on)
    }

    fn counter(&self) -> u64 {
        registers::counter()
    }

    fn counter_frequency(&self) -> u64 {
        self.counter_frequency
    }

    fn save_fp_state(&mut self, state: &mut FpState) {
        user_return::save_fp(state);
    }

    fn send_reschedule(&mut self, cpu: usize) {
        let _ = self.signal_reschedule(cpu);
    }

    fn stall_cpu(&mut self, cpu: usize, fp: Option<&mut FpState>) -> StalledCpu {
        cross_core::request_stall(cpu, fp);
        self.send_reschedule(cpu);
        let stalled = cross_core::wait_stalled(cpu);
        StalledCpu {
            el0_sync_syndrome: stalled.el0_sync_syndrome,
        }
    }
}

/// Called by boot.s at the link address with the MMU on.
#[no_mangle]
extern "C" fn kernel_main(_loader_x0: u64, entry_el: u64, _phys_base: u64) -> ! {
    early_map::remove_identity_map();
    let loader = Loader::from_entry_level(entry_el);
    // A panic or fault from here to the console's start is reported on
    // this board's default UART.
    console::set_fallback(loader.board());
    let (info, tree) = board_info(loader);
    power::set_exit_method(exit_method(&info));
    // Crashing on purpose (the kernel-fault tests) is a test-image call.
    let crash = info.boot_option("portcullis.crash");
    #[cfg(feature = "test-calls")]
    if let Some((crash, CrashPoint::BeforeConsole)) = crash.and_then(Crash::from_option) {
        crash.trigger();
    }
    if console::start(&info).is_err() {
        // Nothing can be printed: the device window has no room left.
        power::halt();
    }

    let frequency = registers::counter_frequency();
    kprintln!(
        "Portcullis {} on {} (entered at EL{}), RAM {} MiB, timer {} Hz",
        env!("CARGO_PKG_VERSION"),
        info.board.name(),
        entry_el,
        info.ram_bytes() >> 20,
        frequency
    );
    match tree {
        Ok(()) => {}
        Err(Some(error)) if error.is_fatal() => {
            kprintln!("KERNEL PANIC: {}", error.describe());
            power::exit(power::EXIT_KERNEL_PANIC);
        }
        Err(Some(error)) => kprintln!("[kernel] {}: using the board's defaults", error.describe()),
        Err(None) => kprintln!("[kernel] no device tree: using the board's defaults"),
    }
    report_reservations(&info);

    let system_image = STATE.with(|state| take_ram(state.kernel.frames_mut(), &info));
    let installed = STATE.with(|state| {
        let memory = object_memory(state.kernel.frames_mut(), &info)?;
        if state.kernel.install_object_memory(memory) {
            Ok(())
        } else {
            Err("kernel objects exist before their memory")
        }
    });
    if let Err(what) = installed {
        kprintln!("KERNEL PANIC: {what}");
        power::exit(power::EXIT_KERNEL_PANIC);
    }
    let machine_ready = STATE.with(|state| start_devices(&mut state.machine, &info, frequency));
    if let Err(what) = machine_ready {
        kprintln!("KERNEL PANIC: {what}");
        power::exit(power::EXIT_KERNEL_PANIC);
    }
    registers::enable_cycle_counter();
    registers::allow_user_counter();
    registers::unlock_debug();
    start_secondaries(&info, loader, frequency);
    #[cfg(not(feature = "test-calls"))]
    if let Some(value) = crash {
        kprintln!(
            "[kernel] portcullis.crash={value} ignored: only the test image crashes on purpose"
        );
    }
    #[cfg(feature = "test-calls")]
    if let Some(value) = crash {
        match Crash::from_option(value) {
            Some((crash, _)) => {
                kprintln!("[kernel] crashing on purpose (portcullis.crash={value})");
                crash.trigger();
            }
            None => kprintln!("[kernel] unknown portcullis.crash={value}; ignored"),
        }
    }

    // What the system runs is the root task's business: it reads the
    // command line (`portcullis.mode=` and the rest) itself.
    let free_mib = locked(Waiting::Other, |state| {
        (state.kernel.frames().available() * 4096) >> 20
    });
    kprintln!("[kernel] {free_mib} MiB free for user space; starting the root task");
    locked(Waiting::Other, |state| {
        state.kernel.set_command_line(&info.bootargs)
    });
    locked(Waiting::Other, |state| {
        state.kernel.set_device_memory(&info.user_device_memory())
    });
    let asid_bits = AsidBits::from_id_aa64mmfr0(registers::memory_model_features());
    let resume = locked(Waiting::Other, |state| {
        state
            .kernel
            .start(&mut state.machine, asid_bits, ROOT_ELF, system_image)
    });
    go(resume)
}

/// The board description: from the device tree when there is a usable
/// one, else the defaults of the board `loader` starts, with why
/// (`Err(None)`: no tree at all).
fn board_info(loader: Loader) -> (BoardInfo, Result<(), Option<DeviceTreeError>>) {
    let parsed = early_map::device_tree()
        .map(|blob| DEVICE_TREE_SCRATCH.with(|scratch| device_tree::parse(blob, scratch)));
    let defaults = loader.board().defaults();
    match parsed {
        Some(Ok(info)) => (info, Ok(())),
        Some(Err(error)) => (defaults, Err(Some(error))),
        // QEMU virt always passes a device tree; only a Pi-class boot
        // (QEMU raspi4b's ELF without -dtb, or kernel8.img without it)
        // does not.
        None => (defaults, Err(None)),
    }
}

/// One line naming the RAM the firmware keeps (`/memreserve/` and
/// `/reserved-memory`), so that a board's log shows the kernel read it.
fn report_reservations(info: &BoardInfo) {
    if !info.from_device_tree || info.reserved.is_empty() {
        return;
    }
    let mut line: heapless::String<512> = heapless::String::new();
    let _ = write!(line, "[kernel] kept from the firmware:");
    for range in &info.reserved {
        let no_map = if info.no_map.contains(range) {
            " (no-map)"
        } else {
            ""
        };
        let _ = write!(line, " {:#x}+{:#x}{no_map}", range.start, range.size);
    }
    kprintln!("{line}");
}

fn exit_method(info: &BoardInfo) -> ExitMethod {
    if info.boot_option("portcullis.exit") == Some("semihosting") {
        ExitMethod::Semihosting
    } else if info.psci == Some(PsciConduit::Hvc) {
        ExitMethod::Psci
    } else {
        ExitMethod::Halt
    }
}

/// Maps RAM into the linear map, except `no-map` reservations (whole
/// pages), finds the system image in it (`system_image::locate`), and
/// hands every mapped page outside the kernel image, the device tree,
/// firmware reservations and the system image to the frame allocator.
/// Returns the system image's RAM.
fn take_ram(frames: &mut FrameAllocator, info: &BoardInfo) -> Option<PhysRange> {
    let (image, image_size) = phys::image_range();
    let mut reserved: heapless::Vec<PhysRange, { MAX_RESERVED_RANGES + 4 }> = heapless::Vec::new();
    let _ = reserved.push(PhysRange {
        start: image,
        size: image_size,
    });
    // The first page of RAM holds granule 0 of object memory, which never
    // holds a record (`arch::object_memory`): no page of the pool is there.
    if let Some(start) = info.ram.iter().map(|r| r.start).min() {
        let _ = reserved.push(PhysRange {
            start,
            size: arch::layout::PAGE_SIZE,
        });
    }
    if let (Some(address), Some(dtb)) = (early_map::device_tree_address(), early_map::device_tree())
    {
        let _ = reserved.push(PhysRange {
            start: address,
            size: dtb.len() as u64,
        });
    }
    for range in &info.reserved {
        let _ = reserved.push(*range);
    }
    // Only what was mapped is handed out (the allocator's pages are
    // reached through the linear map), or read for the system image.
    let mut mapped: heapless::Vec<PhysRange, { MAX_RAM_RANGES * MAX_PIECES }> =
        heapless::Vec::new();
    for piece in info.ram.iter().flat_map(|ram| ram.without(&info.no_map)) {
        if let Err(error) = early_map::map_linear(piece.start, piece.size) {
            kprintln!(
                "[kernel] RAM {:#x}+{:#x} left unused: {error:?}",
                piece.start,
                piece.size
            );
            continue;
        }
        // Cannot fail: `info.ram` has at most MAX_RAM_RANGES ranges, each
        // cut in at most MAX_PIECES.
        let _ = mapped.push(piece);
    }
    let search = system_image::locate(
        info.initrd,
        info.board.system_image_address(),
        &mapped,
        &reserved,
        phys::read,
    );
    if let Some(refused) = search.refused {
        kprintln!(
            "[kernel] no system image at {:#x} ({}): {}",
            refused.address,
            refused.source.describe(),
            refused.reason.describe()
        );
    }
    if let Some(found) = search.found {
        kprintln!(
            "[kernel] system image at {:#x}, {} bytes ({})",
            found.range.start,
            found.range.size,
            found.source.describe()
        );
        let _ = reserved.push(found.range);
    }
    for piece in &mapped {
        frames.add_ram(*piece, &reserved);
    }
    search.found.map(|found| found.range)
}

/// The memory kernel objects live in: all of RAM, with its kind bytes (one
/// per 64-byte granule, see `arch::object_memory`) in pages taken from the
/// pool first, so no object can ever be placed over them.
fn object_memory(frames: &mut FrameAllocator, info: &BoardInfo) -> Result<Memory, &'static str> {
    let start = info.ram.iter().map(|r| r.start).min().ok_or("no RAM")?;
    let end = info.ram.iter().map(|r| r.end()).max().ok_or("no RAM")?;
    let granules = ((end - start) / GRANULE as u64) as usize;
    let pages = (granules as u64).div_ceil(arch::layout::PAGE_SIZE);
    let kinds = frames
        .allocate_pages(pages)
        .ok_or("no room for the kind bytes of object memory")?;
    // SAFETY: the pages were just taken from the frame pool, which hands
    // out only RAM mapped in the linear map and never the same page
    // twice; nothing else refers to them, and they lie outside every
    // record (records are only ever placed in pages the pool hands out
    // later, or in Untyped memory carved from them).
    let kinds =
        unsafe { core::slice::from_raw_parts_mut(phys::phys_to_virt(kinds) as *mut u8, granules) };
    let base = core::ptr::NonNull::new(arch::layout::phys_to_linear(start) as *mut u8)
        .ok_or("RAM at no address")?;
    // SAFETY: `base` is the linear-map address of the start of RAM, so
    // `granules * 64` bytes from it cover all of RAM; records go only into
    // pages the pool hands out (linear-mapped RAM, not the image, the
    // device tree or reserved memory) and Untyped memory carved from
    // them, which nothing else reaches while a record lies there (user
    // frames and page tables are never carved over a record). `kinds`
    // lies in pages already taken from the pool.
    Ok(unsafe { Memory::new(base, start, kinds) })
}

fn start_devices(
    machine: &mut Machine,
    info: &BoardInfo,
    frequency: u64,
) -> Result<(), &'static str> {
    let tick_interval = tick::interval(frequency, TICKS_PER_SECOND).ok_or(
        "the counter frequency (CNTFRQ_EL0) is below 100 Hz: the loader did not program it, \
         and a tick of one count would be an interrupt storm",
    )?;
    let distributor = early_map::map_device(info.gic_distributor, 0x1000)
        .map_err(|_| "cannot map the GIC distributor")?;
    let cpu_interface = early_map::map_device(info.gic_cpu_interface, 0x2000)
        .map_err(|_| "cannot map the GIC CPU interface")?;
    // SAFETY: both addresses map this board's GIC for good; only the kernel
    // drives it.
    let gic = unsafe { GicV2::new(distributor, cpu_interface) };
    gic.init();
    gic.enable(timer::VIRTUAL_TIMER_INTID);
    // Other cores' wakeups and stall requests (a GIC may keep SGIs
    // enabled anyway; one that lets them be disabled needs this).
    gic.enable(RESCHEDULE_SGI);
    machine.gic = Some(gic);
    machine.console_intid = info.board.console_intid();
    machine.counter_frequency = frequency;
    machine.tick_interval = tick_interval;
    let due = registers::counter().wrapping_add(machine.tick_interval);
    machine.tick_due[this_cpu()] = due;
    timer::arm_at(due);
    GIC_WINDOW[0].store(distributor, Ordering::Relaxed);
    GIC_WINDOW[1].store(cpu_interface, Ordering::Relaxed);
    Ok(())
}

/// Goes where the kernel said. Inlined into each entry: called, it cost
/// every generic entry 3 instructions (the call, its frame, the
/// `Resume` read back from the stack), and the idle loop's wake-up more.
#[inline(always)]
fn go(resume: Resume) -> ! {
    match resume {
        // SAFETY: the kernel returns the saved context of the thread it
        // made current; it lives in that thread's TCB record and no
        // reference to it outlives the kernel lock's hold.
        Resume::User { context, ttbr0 } => unsafe { user_return::return_to_user(context, ttbr0) },
        Resume::Idle => idle(),
        Resume::Shutdown { status } => power::exit(status),
    }
}

/// Nothing to run: wait for an interrupt (still masked: WFI wakes anyway,
/// and the GIC is polled here), and let the kernel react to it.
///
/// A secondary CPU with nothing ready stops its tick while it idles: its
/// round robin has nothing to share, and what it waits for (a thread made
/// ready there, a stall request) comes as an SGI. It takes the tick again
/// when it leaves. (Under QEMU's multi-threaded TCG an idle core that
/// ticks wakes 100 times a second and waits for the kernel lock, which a
/// long kernel operation holds, spinning on a host thread.) The boot CPU
/// keeps ticking: the kernel's clock and its periodic work are its.
fn idle() -> ! {
    let tickless = locked(Waiting::Other, |state| {
        let tickless = state.kernel.may_idle_without_tick();
        if tickless {
            timer::disarm();
        }
        tickless
    });
    loop {
        power::wait_for_interrupt();
        let resume = locked(Waiting::Other, |state| {
            let interrupt = state.machine.take_interrupt()?;
            let resume = state
                .kernel
                .handle_idle_interrupt(&mut state.machine, interrupt);
            if tickless && resume != Resume::Idle {
                let machine = &mut state.machine;
                let due = registers::counter().wrapping_add(machine.tick_interval);
                machine.tick_due[this_cpu()] = due;
                timer::arm_at(due);
            }
            Some(resume)
        });
        let Some(resume) = resume else {
            continue;
        };
        if resume != Resume::Idle {
            go(resume);
        }
    }
}

/// A synchronous exception from EL0 that is not the vector's inline `Null`
/// and that the IPC fast path (`ipc_fast_path.s`) did not take: a user
/// fault, an FP trap, a syscall with work, an IPC the fast path refused.
#[no_mangle]
extern "C" fn portcullis_el0_sync(_context: *mut UserContext) -> ! {
    el0_sync()
}

/// The generic entry of a synchronous exception from EL0.
#[inline(always)]
fn el0_sync() -> ! {
    user_return::block_user_access();
    // ESR_EL1 and FAR_EL1 are read only now: the fast path has no use for
    // them, and nothing in between takes an exception that could change
    // them.
    let esr = registers::exception_syndrome_register();
    let far = registers::fault_address_register();
    go(locked(Waiting::El0Sync, move |state| {
        state.kernel.handle_el0_sync(&mut state.machine, esr, far)
    }))
}

/// An interrupt while a thread ran at EL0.
#[no_mangle]
extern "C" fn portcullis_el0_irq(_context: *mut UserContext) -> ! {
    user_return::block_user_access();
    go(locked(Waiting::Other, |state| {
        let interrupt = state.machine.take_interrupt();
        state
            .kernel
            .handle_el0_interrupt(&mut state.machine, interrupt)
    }))
}

/// A synchronous exception from EL0 under the benchmark floor (BenchFloor
/// itself, or a fault): the floor ends first, then the generic entry.
#[cfg(feature = "bench-calls")]
#[no_mangle]
extern "C" fn portcullis_el0_floor_sync(_context: *mut UserContext) -> ! {
    locked(Waiting::El0Sync, |state| {
        state.kernel.end_floor(&mut state.machine, false)
    });
    el0_sync()
}

/// An interrupt under the benchmark floor: the floor ends (and the
/// thread's BenchFloor(0) will say it was interrupted), then as any
/// interrupt at EL0.
#[cfg(feature = "bench-calls")]
#[no_mangle]
extern "C" fn portcullis_el0_floor_irq(context: *mut UserContext) -> ! {
    locked(Waiting::Other, |state| {
        state.kernel.end_floor(&mut state.machine, true)
    });
    portcullis_el0_irq(context)
}

/// Anything else from EL0 under the benchmark floor: the floor ends, then
/// as `portcullis_el0_other`.
#[cfg(feature = "bench-calls")]
#[no_mangle]
extern "C" fn portcullis_el0_floor_other(context: *mut UserContext, kind: u64) -> ! {
    locked(Waiting::Other, |state| {
        state.kernel.end_floor(&mut state.machine, false)
    });
    portcullis_el0_other(context, kind)
}

/// FIQ, SError or anything from AArch32 at EL0: stop that thread.
#[no_mangle]
extern "C" fn portcullis_el0_other(_context: *mut UserContext, _kind: u64) -> ! {
    user_return::block_user_access();
    let syndrome = registers::exception_syndrome();
    go(locked(Waiting::Other, |state| {
        state
            .kernel
            .handle_el0_unexpected(&mut state.machine, syndrome.esr, syndrome.far)
    }))
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    // A panic before the console was up (reading the device tree) is
    // reported on the board's default UART.
    console::ensure_started();
    kprintln!("\nKERNEL PANIC: {info}");
    power::exit(power::EXIT_KERNEL_PANIC)
}
