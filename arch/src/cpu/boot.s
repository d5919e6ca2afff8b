// Boot: from the loader's exception level (EL3, EL2 or EL1) to EL1 with the
// MMU on and the kernel running in the high half, then `kernel_main`.
//
// Entry conditions we accept (see docs/boot.md):
//   QEMU virt, ELF        EL1, x0 = device tree
//   QEMU raspi4b, ELF     EL3, x0 = 0, all cores start here
//   QEMU raspi4b, Image   EL2, x0 = device tree (with -dtb) or ATAGs
//   Raspberry Pi 4        EL2, x0 = device tree, secondaries on the spin table
//
// Registers kept across the boot path (callee-saved in AAPCS64):
//   x19 = x0 from the loader, x20 = entry EL, x23 = physical load address.
//
// Secondary cores (docs/boot.md, "Secondary cores") come in at
// `secondary_entry`, at its physical address, once `kernel_main` starts
// them: through PSCI CPU_ON, the firmware's spin table, or, when the
// loader started every core at `_start` (QEMU raspi4b's ELF at EL3), from
// `park_secondary`, which waits for the boot core to write that address
// into `secondary_release`. They drop to EL1 as the boot core does, turn
// the MMU on with the boot core's tables and jump to `secondary_main`.
//
// Until the kernel's console is up, a failure is reported on the UART the
// loader leaves usable, reached by its physical address with the MMU off
// (`early_uart`; docs/boot.md, "When the boot fails"): the boot tables
// not built, or an exception before the kernel's vectors are installed.
//
// The board constants in braces come from the Rust side (cpu/mod.rs
// passes them to global_asm!), so each address lives in boards/ only.

.equ SCTLR_EL1_RES1, 0x30d00800
.equ HCR_EL2_RW, (1 << 31)
.equ SCR_EL3_BOOT, 0x4b1           // NS | RES1 | SMD | RW
.equ SPSR_EL1H_MASKED, 0x3c5           // EL1h, D A I F masked
.equ CPTR_EL2_RES1, 0x33ff
.equ CPACR_EL1_FPEN, (3 << 20)

// GIC-400 of the Raspberry Pi 4 (only touched when entered at EL3, where
// nothing else has set the GIC up for the non-secure world).
.equ RPI4_GICD, {RPI4_GICD}
.equ RPI4_GICC, {RPI4_GICC}
// The ARM-local block's timer control and prescaler (Pi 4), and the
// crystal the generic counter then counts.
.equ RPI4_LOCAL_CONTROL, {RPI4_LOCAL_CONTROL}
.equ RPI4_LOCAL_PRESCALER, {RPI4_LOCAL_PRESCALER}
.equ RPI4_COUNTER_HZ, {RPI4_COUNTER_HZ}
// The PL011 each loader leaves usable: QEMU virt's (entered at EL1), the
// Pi's UART0 (entered at EL2 or EL3; QEMU raspi4b prints without set-up,
// the Pi firmware sets it up for enable_uart=1).
.equ VIRT_UART, {VIRT_UART}
.equ RPI4_UART, {RPI4_UART}
// Per-core kernel stacks (layout.rs): the boot core is core 0.
.equ CPU0_STACK_TOP, {CPU0_STACK_TOP}   // offset from __kernel_stacks
.equ MAX_CPUS, {MAX_CPUS}
// `smp::SecondaryBoot`: what the boot core leaves for the core it starts.
.equ SB_MPIDR, {SB_MPIDR}
.equ SB_STACK_TOP, {SB_STACK_TOP}
.equ SB_CPU, {SB_CPU}
.equ MPIDR_AFFINITY, {MPIDR_AFFINITY}   // Aff3..Aff0 of MPIDR_EL1
.equ PL011_FR, 0x18                 // flag register
.equ PL011_FR_TXFF, 5               // transmit FIFO full

    .section .text.boot, "ax"
    .global _start
_start:
    // arm64 Image header: lets the Pi firmware and QEMU load kernel8.img
    // at the 2 MiB-aligned base + text_offset (0x80000).
    b       primary_entry           // code0
    .long   0                       // code1
    .quad   0x80000                 // text_offset
    .quad   _kernel_size            // image_size, bss and stack included
    .quad   0x2                     // flags: little endian, 4 KiB pages
    .quad   0                       // res2
    .quad   0                       // res3
    .quad   0                       // res4
    .ascii  "ARM\x64"               // magic
    .long   0                       // res5

primary_entry:
    mov     x19, x0
    adr     x23, _start
    mrs     x1, mpidr_el1
    and     x1, x1, #0xff
    cbz     x1, 1f
    // Secondary cores that the loader started here with the boot core
    // (QEMU raspi4b's ELF) wait, MMU off, until the boot core writes the
    // physical address of `secondary_entry` into their release word
    // (`smp::release_parked`: a store, a clean to the point of
    // coherency, `sev`). The words are in .data, which the boot core
    // does not zero; a core whose Aff0 has no word waits for good.
park_secondary:
    cmp     x1, #MAX_CPUS
    b.hs    park_forever
    adrp    x2, secondary_release
    add     x2, x2, :lo12:secondary_release
    add     x2, x2, x1, lsl #3
2:  ldr     x3, [x2]
    cbnz    x3, 3f
    wfe
    b       2b
3:  br      x3
park_forever:
    wfe
    b       park_forever
1:
    mrs     x20, CurrentEL
    lsr     x20, x20, #2
    cmp     x20, #3
    b.eq    from_el3
    cmp     x20, #2
    b.eq    from_el2
    b       el1_entry

from_el3:
    msr     cptr_el3, xzr           // no FP/SIMD traps to EL3
    mov     x0, #SCR_EL3_BOOT
    msr     scr_el3, x0
    bl      counter_frequency_at_el3
    bl      gic_make_nonsecure
    bl      gic_cpu_make_nonsecure
    bl      prepare_el2_for_el1
    mov     x0, #SPSR_EL1H_MASKED
    msr     spsr_el3, x0
    adr     x0, el1_entry
    msr     elr_el3, x0
    isb
    eret

from_el2:
    bl      prepare_el2_for_el1
    mov     x0, #SPSR_EL1H_MASKED
    msr     spsr_el2, x0
    adr     x0, el1_entry
    msr     elr_el2, x0
    isb
    eret

// Only EL3 may write CNTFRQ_EL0. The Pi's armstub programs it (and the
// ARM-local timer prescaler, 1:1 from the crystal) before it drops to EL2;
// entered at EL3 (QEMU raspi4b's ELF, or a Pi with armstub= or kernel_old=
// in config.txt) no stub ran, and a frequency of 0 would make the kernel's
// tick interval one count: an interrupt storm. Do what the armstub does,
// unless the frequency is already set (QEMU programs its own).
counter_frequency_at_el3:
    mrs     x0, cntfrq_el0
    cbnz    x0, 1f
    ldr     x1, =RPI4_LOCAL_CONTROL
    str     wzr, [x1]               // crystal clock, increment by 1
    ldr     x1, =RPI4_LOCAL_PRESCALER
    mov     w2, #0x80000000         // 2^31 / 2^31: one count per crystal tick
    str     w2, [x1]
    ldr     x0, =RPI4_COUNTER_HZ
    msr     cntfrq_el0, x0
1:  ret

// EL2 settings so that EL1 runs AArch64 with nothing trapped to EL2:
// the timers and counters, FP/SIMD and the PMU all belong to EL1.
prepare_el2_for_el1:
    mov     x0, #HCR_EL2_RW
    msr     hcr_el2, x0
    // With EL2 present, EL1 reads MIDR_EL1 and MPIDR_EL1 from VPIDR_EL2
    // and VMPIDR_EL2, whose reset values are UNKNOWN: give EL1 the real
    // ones, as Linux does.
    mrs     x0, midr_el1
    msr     vpidr_el2, x0
    mrs     x0, mpidr_el1
    msr     vmpidr_el2, x0
    mrs     x0, cnthctl_el2
    orr     x0, x0, #3              // EL1PCTEN | EL1PCEN
    msr     cnthctl_el2, x0
    msr     cntvoff_el2, xzr        // virtual counter == physical counter
    mov     x0, #CPTR_EL2_RES1
    msr     cptr_el2, x0
    mrs     x0, pmcr_el0
    ubfx    x0, x0, #11, #5         // PMCR_EL0.N
    msr     mdcr_el2, x0            // HPMN = N: EL1 owns every counter
    msr     hstr_el2, xzr
    msr     vttbr_el2, xzr
    ldr     x0, =SCTLR_EL1_RES1
    msr     sctlr_el1, x0
    ret

// Entered at EL3 (QEMU raspi4b ELF): do what the Pi's armstub does, put
// every interrupt in group 1 (non-secure) and enable both groups, so that
// the kernel can use the GIC from non-secure EL1.
// A GIC without the security extensions (QEMU's raspi4b model) has one
// group that the kernel enables itself: leave it alone.
gic_make_nonsecure:
    ldr     x0, =RPI4_GICD
    ldr     w2, [x0, #4]            // GICD_TYPER
    tbz     w2, #10, 3f             // SecurityExtn
    mov     w1, #3
    str     w1, [x0]                // GICD_CTLR: EnableGrp0 | EnableGrp1
    and     w2, w2, #0x1f           // ITLinesNumber: (N + 1) * 32 interrupts
    add     w2, w2, #1
    add     x3, x0, #0x80           // GICD_IGROUPR0
    mov     w4, #-1
2:  str     w4, [x3], #4
    subs    w2, w2, #1
    b.ne    2b
3:  ret

// The per-core half of the above, for every core entered at EL3:
// GICD_IGROUPR0 (SGIs and PPIs) and the CPU interface are banked, so
// each core sets its own.
gic_cpu_make_nonsecure:
    ldr     x0, =RPI4_GICD
    ldr     w2, [x0, #4]            // GICD_TYPER
    tbz     w2, #10, 3f             // SecurityExtn
    mov     w4, #-1
    str     w4, [x0, #0x80]         // GICD_IGROUPR0 (banked)
    ldr     x0, =RPI4_GICC
    mov     w1, #0x3
    str     w1, [x0]                // GICC_CTLR (secure view): both groups
    mov     w1, #0xff
    str     w1, [x0, #4]            // GICC_PMR: let every priority through
3:  ret

el1_entry:
    msr     daifset, #0xf
    ldr     x0, =SCTLR_EL1_RES1     // MMU and caches off, known state
    msr     sctlr_el1, x0
    isb
    mov     x0, #CPACR_EL1_FPEN     // EL0 may use FP/SIMD (the kernel never does)
    msr     cpacr_el1, x0

    // The boot core's stack (core 0's slot), physical until the MMU is on.
    adrp    x0, __kernel_stacks
    add     x0, x0, :lo12:__kernel_stacks
    ldr     x1, =CPU0_STACK_TOP
    add     x0, x0, x1
    mov     sp, x0

    // Zero .bss at its physical address.
    adrp    x0, __bss_start
    add     x0, x0, :lo12:__bss_start
    adrp    x1, __bss_end
    add     x1, x1, :lo12:__bss_end
3:  cmp     x0, x1
    b.hs    4f
    stp     xzr, xzr, [x0], #16
    b       3b
4:
    // From here on a failure can be reported: the UART of the board the
    // entry level names (QEMU virt enters at EL1, Pi loaders at EL2/EL3),
    // then the early vectors.
    ldr     x0, =VIRT_UART
    ldr     x1, =RPI4_UART
    cmp     x20, #1
    csel    x0, x0, x1, eq
    adrp    x1, early_uart
    str     x0, [x1, :lo12:early_uart]
    adr     x0, early_vectors
    msr     vbar_el1, x0
    isb

    // Build the kernel's page tables with the MMU off (Rust, position
    // independent: it only uses PC-relative addresses).
    mov     x0, x23
    mov     x1, x19
    mov     x2, x20
    bl      early_map_kernel        // x0 = &BootMmuConfig (physical)
    cbz     x0, boot_tables_failed
    mov     x24, x0

    // Everything written with the data cache off (.bss: the tables, the
    // zeroing; .data: statics early_map_kernel set) went straight to
    // memory; the loader only cleaned the image to the point of coherency,
    // so clean lines of the old contents may still be cached. Drop them,
    // so that the table walker and the kernel, which read through the
    // cache from now on, see what was written.
    adrp    x0, __data_start
    add     x0, x0, :lo12:__data_start
    adrp    x1, __bss_end
    add     x1, x1, :lo12:__bss_end
    mrs     x2, ctr_el0
    ubfx    x2, x2, #16, #4         // DminLine: log2(words)
    mov     x3, #4
    lsl     x3, x3, x2              // line size in bytes
    sub     x4, x3, #1
    bic     x0, x0, x4
5:  dc      ivac, x0
    add     x0, x0, x3
    cmp     x0, x1
    b.lo    5b
    dsb     sy

    ldp     x0, x1, [x24]           // mair, tcr
    msr     mair_el1, x0
    msr     tcr_el1, x1
    ldp     x0, x1, [x24, #16]      // ttbr0 (identity, boot only), ttbr1
    msr     ttbr0_el1, x0
    msr     ttbr1_el1, x1
    ldr     x0, [x24, #32]          // sctlr
    isb
    tlbi    vmalle1
    dsb     nsh
    isb
    msr     sctlr_el1, x0
    isb
    // The loader must leave no stale instruction-cache lines for the
    // image (Linux's booting.rst asks the same), but one that does would
    // run old kernel text from here on, with the I-cache on: drop them,
    // as Linux does when it turns its MMU on.
    ic      iallu
    dsb     nsh
    isb
    ldr     x0, =high_entry
    br      x0

// The tables could not be built (see early_map.rs): say so on the early
// UART and stop. A debugger finds the CPU here.
boot_tables_failed:
    adr     x1, boot_tables_message
    bl      early_puts
1:  wfe
    b       1b

high_entry:
    // Now running at the link address in the high half, on core 0's
    // stack; TPIDR_EL1 holds its top, the record above it the index 0
    // (`smp::this_cpu`).
    ldr     x0, =__kernel_stacks
    ldr     x1, =CPU0_STACK_TOP
    add     x0, x0, x1
    mov     sp, x0
    msr     tpidr_el1, x0
    str     xzr, [x0]
    msr     tpidrro_el0, xzr        // this_cpu(): core 0
    ldr     x0, =exception_vectors
    msr     vbar_el1, x0
    isb
    mov     x0, x19                 // device tree (physical), or 0/ATAGs
    mov     x1, x20                 // entry EL
    mov     x2, x23                 // physical load address
    bl      kernel_main
6:  wfe
    b       6b
    .ltorg

// A secondary core, at its physical address with the MMU off, at EL3, EL2
// or EL1 (PSCI, the spin table or the park above). It needs no stack
// until the MMU is on: the helpers it calls are leaf functions.
    .global secondary_entry
secondary_entry:
    mrs     x20, CurrentEL
    lsr     x20, x20, #2
    cmp     x20, #3
    b.eq    secondary_from_el3
    cmp     x20, #2
    b.eq    secondary_from_el2
    b       secondary_el1_entry

// The registers set here are per core: each core sets its own, as the
// boot core did on its way down.
secondary_from_el3:
    msr     cptr_el3, xzr
    mov     x0, #SCR_EL3_BOOT
    msr     scr_el3, x0
    bl      counter_frequency_at_el3
    bl      gic_cpu_make_nonsecure
    bl      prepare_el2_for_el1
    mov     x0, #SPSR_EL1H_MASKED
    msr     spsr_el3, x0
    adr     x0, secondary_el1_entry
    msr     elr_el3, x0
    isb
    eret

secondary_from_el2:
    bl      prepare_el2_for_el1
    mov     x0, #SPSR_EL1H_MASKED
    msr     spsr_el2, x0
    adr     x0, secondary_el1_entry
    msr     elr_el2, x0
    isb
    eret

secondary_el1_entry:
    msr     daifset, #0xf
    ldr     x0, =SCTLR_EL1_RES1     // MMU and caches off, known state
    msr     sctlr_el1, x0
    isb
    mov     x0, #CPACR_EL1_FPEN
    msr     cpacr_el1, x0
    adr     x0, early_vectors
    msr     vbar_el1, x0
    isb
    // The boot core cleaned SECONDARY_BOOT to the point of coherency, so
    // these uncached reads see it. It is written for one core at a time:
    // a core that comes up after the boot core gave up on it finds
    // another core's MPIDR there and waits for good instead of taking
    // that core's stack.
    adrp    x24, SECONDARY_BOOT
    add     x24, x24, :lo12:SECONDARY_BOOT
    ldr     x1, [x24, #SB_MPIDR]
    mrs     x2, mpidr_el1
    ldr     x3, =MPIDR_AFFINITY
    and     x2, x2, x3
    cmp     x1, x2
    b.ne    park_forever
    // The boot core's tables: TTBR1 the kernel's, TTBR0 the boot identity
    // map of the text (which the boot core no longer uses but keeps), for
    // the instructions from here to the jump to the link address.
    ldp     x0, x1, [x24]           // mair, tcr
    msr     mair_el1, x0
    msr     tcr_el1, x1
    ldp     x0, x1, [x24, #16]      // ttbr0 (identity), ttbr1
    msr     ttbr0_el1, x0
    msr     ttbr1_el1, x1
    ldr     x0, [x24, #32]          // sctlr
    isb
    tlbi    vmalle1
    dsb     nsh
    isb
    msr     sctlr_el1, x0
    isb
    ic      iallu
    dsb     nsh
    isb
    ldr     x0, =secondary_high_entry
    br      x0

secondary_high_entry:
    // At the link address: this core's stack and record (the boot core
    // wrote both into SECONDARY_BOOT), then the kernel's vectors.
    ldr     x1, =SECONDARY_BOOT
    ldr     x0, [x1, #SB_STACK_TOP]
    mov     sp, x0
    msr     tpidr_el1, x0
    ldr     x2, [x1, #SB_CPU]
    str     x2, [x0]
    msr     tpidrro_el0, x2         // this_cpu()
    ldr     x0, =exception_vectors
    msr     vbar_el1, x0
    isb
    mov     x0, x2                  // the core's index
    bl      secondary_main
7:  wfe
    b       7b
    .ltorg

// Taken for any exception between setting VBAR_EL1 above and high_entry
// installing the kernel's vectors: in early_map_kernel (MMU off), or in
// the few instructions run through the boot identity map. Turning the
// MMU off keeps this code running (it is identity mapped), and the UART
// is then reached at its physical address. Reports ESR, ELR and FAR, then
// stops.
    .balign 0x800
early_vectors:
    .rept 16
    .balign 0x80
    b       early_exception
    .endr

early_exception:
    mrs     x0, sctlr_el1
    bic     x0, x0, #1              // SCTLR_EL1.M
    msr     sctlr_el1, x0
    isb
    mrs     x21, esr_el1
    mrs     x22, elr_el1
    mrs     x23, far_el1
    adr     x1, early_exception_message
    bl      early_puts
    mov     x1, x21
    bl      early_puthex
    adr     x1, early_elr_label
    bl      early_puts
    mov     x1, x22
    bl      early_puthex
    adr     x1, early_far_label
    bl      early_puts
    mov     x1, x23
    bl      early_puthex
    adr     x1, early_line_end
    bl      early_puts
1:  wfe
    b       1b

// Writes the character in w2 to the early UART at x0, waiting a bounded
// time for room (a UART nobody set up may never drain: then the
// character is dropped). Uses x3, x4.
.macro early_putc
    mov     x3, #0x100000
10: ldr     w4, [x0, #PL011_FR]
    tbz     w4, #PL011_FR_TXFF, 11f
    subs    x3, x3, #1
    b.ne    10b
    b       12f
11: str     w2, [x0]
12:
.endm

// The early UART's physical address in x0 (0: none), MMU off.
.macro early_uart_base
    adrp    x0, early_uart
    ldr     x0, [x0, :lo12:early_uart]
.endm

// Prints the NUL-terminated string at x1. Uses x0..x4.
early_puts:
    early_uart_base
    cbz     x0, 2f
1:  ldrb    w2, [x1], #1
    cbz     w2, 2f
    early_putc
    b       1b
2:  ret

// Prints x1 as 16 hexadecimal digits. Uses x0..x5.
early_puthex:
    early_uart_base
    cbz     x0, 2f
    mov     x5, #60
1:  lsr     x2, x1, x5
    and     x2, x2, #0xf
    add     x3, x2, #'0'
    add     x4, x2, #('a' - 10)
    cmp     x2, #10
    csel    x2, x3, x4, lo
    early_putc
    subs    x5, x5, #4
    b.ge    1b
2:  ret

boot_tables_message:
    .asciz  "\r\nPANIC: the kernel's boot page tables could not be built (early_map_kernel); stopped\r\n"
early_exception_message:
    .asciz  "\r\nPANIC: exception before the kernel's vectors were installed; stopped\r\n  esr 0x"
early_elr_label:
    .asciz  "  elr 0x"
early_far_label:
    .asciz  "  far 0x"
early_line_end:
    .asciz  "\r\n"
    .balign 4

    .section .bss.early_uart, "aw", %nobits
    .balign 8
early_uart:
    .skip   8

// One release word per Aff0 for the cores parked in `park_secondary`
// (0: wait). In .data, not .bss: the boot core zeroes .bss while they
// already read these. Its own line, so cleaning it cleans nothing else.
    .section .data.secondary_release, "aw"
    .balign 64
    .global secondary_release
secondary_release:
    .rept   MAX_CPUS
    .quad   0
    .endr
    .balign 64
