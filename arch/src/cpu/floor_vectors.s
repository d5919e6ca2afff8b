// The benchmark floor (bench image only; see abi::Syscall::BenchFloor): a
// second vector table whose SVCs return at once, except BenchFloor itself.
// It is installed only between a BenchFloor(1) and the next kernel entry
// from EL0 of any kind, which ends it (`portcullis_el0_floor_*` in the
// kernel binary): so it is never installed while another thread runs, and
// no kernel path but those entries needs to know of it.
.equ SYSCALL_BENCH_FLOOR, {SYSCALL_BENCH_FLOOR} // abi::Syscall::BenchFloor (from Rust)

// Any other synchronous exception (a fault, an FP trap) takes the kernel
// path too: returning from it would re-run the faulting instruction
// forever. x9 is parked in its context slot while ESR_EL1.EC is checked;
// `ccmp` folds both tests into one branch (not an SVC: Z set, go slow).
.macro floor_sync_vector
    .balign 0x80
    str     x9, [sp, #16 * 4 + 8]
    mrs     x9, esr_el1
    lsr     x9, x9, #26
    cmp     x9, #EC_SVC64
    ccmp    x8, #SYSCALL_BENCH_FLOOR, #0b0100, eq
    ldr     x9, [sp, #16 * 4 + 8]
    b.eq    floor_sync_slow
    eret
.endm

    .section .text.vectors, "ax"
    vector_table floor_vectors, floor_sync_vector, portcullis_el0_floor_irq, portcullis_el0_floor_other

floor_sync_slow:
    save_user_context
    bl      portcullis_el0_floor_sync
    b       .
