// The yield fast path: a `Yield` whose caller may skip entry work (the
// vector tested the number, the work word and the no-entry-work mask),
// in its two common cases. What the generic path's round robin does for
// such a thread (`apply_result`, then `resume`), it does directly:
//
// * No other thread of its priority is ready on this CPU: the round
//   robin would pick it again, so it goes on at once with x0 = Ok (no
//   more urgent thread is ready either: it has no reschedule pending).
//   The test is made twice: first without the kernel lock, so that a
//   yield that will switch pays only that look before its own path;
//   then, if none seemed ready, under the lock (free at once, this CPU's
//   view in place), where the answer holds and the thread's yield count
//   (test images) is written.
// * Another is (`yield_switch`): the caller goes to the back of its
//   priority's queue and the first thread of that queue runs, if that
//   thread has nothing to do before it returns to EL0 (no work but
//   policy work, no stopped syscall) and an address space whose ASID is
//   of the current generation, and no more urgent thread is ready here.
//   The caller's registers are all saved (a yield keeps them all but
//   x0), the next thread's all loaded.
//
// Neither way is counted as a generic-path syscall or as an exit to user
// by the test images' statistics (as the IPC fast path's are not).
//
// Anything else takes the generic entry with nothing changed. Entered
// with x9/x10 parked in their context slots (SP_EL1 points at the
// thread's saved registers); x11 is parked here too on the way that
// switches nothing, and put back before either way out.

// The values it uses and the steps it shares with the other fast paths
// (`save_arguments_and_callee_saved`, `lock_at_once`, `next_may_run`,
// `run_next`): `fast_path_common.s`, assembled before it.

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
    tbnz    x10, #0, yield_switch
    str     x11, [sp, #8 * 11]
    lock_at_once x9, x10, x11, w11, 2f, 1f
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

// Another thread of its priority seemed ready: the switch.
yield_switch:
    // Everything the thread has but x9/x10 (parked) goes to its context.
    str     x11, [sp, #8 * 11]
    stp     x12, x13, [sp, #16 * 6]
    stp     x14, x15, [sp, #16 * 7]
    stp     x16, x17, [sp, #16 * 8]
    save_arguments_and_callee_saved with_x18=1
    lock_at_once x19, x20, x9, w9, yield_refuse, yield_refuse, x10
    // Under the lock: its priority's bit (w13 the priority) is set, and
    // no higher one in its word: the word shifted down by the priority
    // is exactly 1.
    ldr     w12, [sp, #T_RUN_QUEUE_WORD]
    ldrb    w13, [sp, #T_PRIORITY]
    add     x14, x19, x12
    ldr     x10, [x14, #KERNEL + K_RUN_QUEUE_NONEMPTY]
    lsr     x10, x10, x13
    cmp     x10, #1
    b.ne    yield_refuse_locked
    // Nor in the words above its own: x14 goes back to the CPU's word 0
    // (x15 the own word's offset in the bitmap, 0 to 24), and each later
    // word must be zero.
    and     x15, x12, #0x18
    sub     x14, x14, x15
    cmp     x15, #16
    b.hi    2f
    ldr     x10, [x14, #KERNEL + K_RUN_QUEUE_NONEMPTY + 24]
    cbnz    x10, yield_refuse_locked
    b.eq    2f
    ldr     x10, [x14, #KERNEL + K_RUN_QUEUE_NONEMPTY + 16]
    cbnz    x10, yield_refuse_locked
    cmp     x15, #8
    b.eq    2f
    ldr     x10, [x14, #KERNEL + K_RUN_QUEUE_NONEMPTY + 8]
    cbnz    x10, yield_refuse_locked
    // The next thread (w25, TCB record x26): the first of its priority
    // (x14 now its queue's head and tail slots, less the offsets).
2:  add     x14, x14, x13, lsl #2
    ldr     w25, [x14, #KERNEL + K_RUN_QUEUE_HEADS]
    ldr     x20, [x19, #KERNEL + K_MEMORY_BASE]
    add     x26, x20, x25, lsl #GRANULE_SHIFT
    next_may_run x19, yield_refuse_locked
    // Point of no return: the round robin's changes. The caller's result
    // is Ok; it is ready, and counted (test images).
    ldp     w28, w29, [x19, #KERNEL + K_CURRENT]
    str     xzr, [sp, #16 * 0]
    mov     w9, #STATE_READY
    strb    w9, [sp, #T_STATE]
.if COUNT_YIELDS
    ldr     x10, [sp, #T_YIELDS]
    add     x10, x10, #1
    str     x10, [sp, #T_YIELDS]
.endif
    // The next thread leaves the head (both its links cleared); its
    // successor, if any, is the head. The caller then goes behind the
    // last one left (w10, 0 if none), as `RunQueue::append` puts it.
    ldr     w9, [x26, #TCB_BODY + T_RUN_NEXT]
    str     xzr, [x26, #TCB_BODY + T_RUN_PREVIOUS]
    str     w9, [x14, #KERNEL + K_RUN_QUEUE_HEADS]
    mov     w10, wzr
    cbz     w9, 3f
    add     x10, x20, x9, lsl #GRANULE_SHIFT
    str     wzr, [x10, #TCB_BODY + T_RUN_PREVIOUS]
    ldr     w10, [x14, #KERNEL + K_RUN_QUEUE_TAILS]
    // Its links: previous the last one, next none (one store: w10 is
    // zero-extended).
3:  str     x10, [sp, #T_RUN_PREVIOUS]
    str     w28, [x14, #KERNEL + K_RUN_QUEUE_TAILS]
    cbz     w10, 4f
    add     x9, x20, x10, lsl #GRANULE_SHIFT
    str     w28, [x9, #TCB_BODY + T_RUN_NEXT]
    b       5f
    // The queue was the next thread alone: the caller is its head too.
    // (Its priority's bit stays set either way: the caller is in it.)
4:  str     w28, [x14, #KERNEL + K_RUN_QUEUE_HEADS]
    // The next thread runs; then all its registers.
5:  run_next x19
    add     x0, x26, #TCB_BODY
    b       restore_user_context

// A refusal: nothing was changed, and every register is in the context.
yield_refuse_locked:
    stlr    xzr, [x19]
yield_refuse:
    mov     x0, sp
    mrs     x21, tpidr_el1
    mov     sp, x21
    bl      portcullis_el0_sync
    b       .
