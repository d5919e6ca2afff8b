// The yield that switches nothing: a `Yield` whose caller may skip entry
// work (the vector tested the number, the work word and the no-entry-work
// mask), when no other thread of its priority is ready on this CPU. The
// round robin would pick it again, so it goes on at once with x0 = Ok, as
// the generic path's `apply_result` leaves it (no more urgent thread is
// ready either: it has no reschedule pending). Anything else takes the
// generic entry with nothing changed.
//
// The test is made twice: first without the kernel lock, so that a yield
// that will switch (another thread of its priority is ready) pays only
// that look before the generic entry; then, if none seemed ready, under
// the lock (free at once, this CPU's view in place), where the answer
// holds and the thread's yield count (test images) is written.
//
// Entered with x9/x10 parked in their context slots (SP_EL1 points at the
// thread's saved registers); x11 is parked here too, and put back before
// either way out.

// The values come from Rust (`fast_paths.rs`).
.equ KERNEL,               {KERNEL}                // the Kernel in the locked state
.equ K_CORE_TOKEN,         {K_CORE_TOKEN}
.equ K_RUN_QUEUE_NONEMPTY, {K_RUN_QUEUE_NONEMPTY}  // CPU 0's bitmap
.equ T_RUN_QUEUE_WORD,     {T_RUN_QUEUE_WORD}      // its word's offset from there
.equ T_PRIORITY,           {T_PRIORITY}
.equ T_YIELDS,             {T_YIELDS}              // the statistics' count (test images)
.equ COUNT_YIELDS,         {COUNT_YIELDS}

    .section .text.yield_fast_path, "ax"

    .global portcullis_yield_fast
portcullis_yield_fast:
    // Bit (priority % 64) of its CPU's bitmap word (at `run_queue_word`
    // from CPU 0's bitmap), without the lock.
    // (The page of CPU 0's bitmap, then its offset in the page with the
    // word's added: one instruction fewer than the state's address
    // first. The word's offset is a multiple of 8, as the address is.)
    adrp    x9, {STATE} + KERNEL + K_RUN_QUEUE_NONEMPTY
    ldr     w10, [sp, #T_RUN_QUEUE_WORD]
    add     x10, x9, x10
    ldr     x10, [x10, #:lo12:{STATE} + KERNEL + K_RUN_QUEUE_NONEMPTY]
    ldrb    w9, [sp, #T_PRIORITY]
    lsr     x10, x10, x9
    tbnz    x10, #0, el0_sync_slow_x9_x10_saved
    str     x11, [sp, #8 * 11]
    adrp    x9, {STATE}
    add     x9, x9, :lo12:{STATE}
    mrs     x10, tpidr_el1
    ldaxr   x11, [x9]
    cbnz    x11, 2f
    stxr    w11, x10, [x9]
    cbnz    w11, 2f
    ldr     x11, [x9, #KERNEL + K_CORE_TOKEN]
    cmp     x11, x10
    b.ne    1f
    // The same bit under the lock.
    ldr     w11, [sp, #T_RUN_QUEUE_WORD]
    add     x11, x9, x11
    ldr     x10, [x11, #KERNEL + K_RUN_QUEUE_NONEMPTY]
    ldrb    w11, [sp, #T_PRIORITY]
    lsr     x10, x10, x11
    tbnz    x10, #0, 1f
.if COUNT_YIELDS
    ldr     x10, [sp, #T_YIELDS]
    add     x10, x10, #1
    str     x10, [sp, #T_YIELDS]
.endif
    stlr    xzr, [x9]
    mov     x0, xzr
    ldp     x9, x10, [sp, #16 * 4 + 8]
    ldr     x11, [sp, #8 * 11]
    eret
    // A thread of its priority became ready meanwhile, or the view is
    // another CPU's: the generic entry, the lock released first.
1:  stlr    xzr, [x9]
2:  ldr     x11, [sp, #8 * 11]
    b       el0_sync_slow_x9_x10_saved
