// The notification fast path: `Signal` and `Wait` in their common cases,
// from the EL0 synchronous vector (`arch/src/cpu/vectors.s`, which tested
// the number, the work word and the no-entry-work mask; x9 = 0 for
// Signal, 1 for Wait) to the eret. What the generic path does for them
// (`Kernel::notification_syscall`, `signal_notification`,
// `ipc::notification`, then `apply_ipc` and `resume`), it does directly:
//
// * Signal with no waiter and no bound thread: the bits are ORed into
//   the word. Signal with a waiter: the first waiter takes the word
//   (x0 = Ok, x8 = the word in its context), leaves the queue and goes to
//   the back of its priority's run queue, if it is of this CPU and no
//   more urgent than the caller (which then has no reschedule to ask
//   for). The caller goes on with x0 = Ok.
// * Wait with bits in the word: it takes them (x0 = Ok, x8 = the word).
//   Wait with none: the caller blocks on the notification, as its last
//   waiter, and the first thread of the highest ready priority on this
//   CPU runs, if it has no work but policy work, no stopped syscall and
//   an ASID of the current generation.
//
// Anything else (another capability, a bound thread to end the receive
// of, a waiter of another CPU or more urgent, nothing ready, the lock
// held by another CPU) takes the generic entry with nothing changed.
//
// As the IPC fast path, it trusts the kernel's invariants where the Rust
// path also looks: a notification capability names a notification's
// record, and a thread in a notification's queue waits on it (neither
// faulted nor ended). Neither way is counted as a generic-path syscall
// or as an exit to user by the test images' statistics.
//
// Registers: x9/x10 come parked in their context slots; x11..x17 are
// parked here too (and put back on the ways that do not switch), and hold
// while the checks run:
//   x11  the kernel state (its lock word first)
//   x12  object memory's base
//   x13  the capability word, x14 its badge, then the bits or word
//   x15  the notification's record, x17 its object id (Wait)
//   x16, x17  the waiter's thread id and TCB record (Signal)
// A Wait that blocks saves all the rest of the caller's registers, and
// then uses x19..x30 freely.

// The values it uses and the steps it shares with the other fast paths
// (`save_arguments_and_callee_saved`, `lock_at_once`, `capability_of`,
// `next_may_run`, `wait_queue_leave_head`, `wait_queue_append_caller`,
// `run_next`): `fast_path_common.s`, assembled before it.

    .section .text.notification_fast_path, "ax"

    .global portcullis_notification_fast
portcullis_notification_fast:
    stp     x11, x12, [sp, #8 * 11]
    stp     x13, x14, [sp, #8 * 13]
    stp     x15, x16, [sp, #8 * 15]
    str     x17, [sp, #8 * 17]
    lock_at_once x11, x12, x10, w10, notification_refuse, notification_refuse, x13
    ldr     x12, [x11, #KERNEL + K_MEMORY_BASE]
    // The capability x0 names: a notification, its word in x13 and badge
    // in x14.
    capability_of x12, x10, w10, x13, x14, CAP_NOTIFICATION, notification_refuse_locked
    ubfx    x17, x13, #CAP_OBJECT_SHIFT, #32
    add     x15, x12, x17, lsl #GRANULE_SHIFT
    cbnz    x9, notification_wait

    // Signal: the write right; the bits are the badge if one was minted
    // and it is not 0, else bit 0 (`notification::signal_bits`).
    tbz     x13, #CAP_WRITE_BIT, notification_refuse_locked
    mov     x10, #1
    tst     x13, #(1 << CAP_BADGED_BIT)
    ccmp    x14, #0, #4, ne
    csel    x14, x10, x14, eq
    ldr     w16, [x15, #N_HEAD]
    cbnz    w16, 1f
    // No waiter: the bits are set, if no bound thread's receive is to
    // end instead.
    ldr     w10, [x15, #N_BOUND]
    cbnz    w10, notification_refuse_locked
    ldr     x10, [x15, #N_WORD]
    orr     x10, x10, x14
    str     x10, [x15, #N_WORD]
    b       notification_done
    // The first waiter (TCB record x17): of this CPU and no more urgent
    // than the caller: the caller's key less its key is 0..255 (the
    // affinity is the key's high part, the priority its low byte).
1:  add     x17, x12, x16, lsl #GRANULE_SHIFT
    ldrh    w9, [sp, #T_FAST_KEY]
    ldrh    w10, [x17, #TCB_BODY + T_FAST_KEY]
    sub     x9, x9, x10
    cmp     x9, #255
    b.hi    notification_refuse_locked
    // Point of no return. It takes the whole word: Ok in x0, the word in
    // x8 (`ipc::notification::deliver`).
    ldr     x10, [x15, #N_WORD]
    orr     x14, x10, x14
    str     xzr, [x15, #N_WORD]
    str     xzr, [x17, #TCB_BODY + 8 * 0]
    str     x14, [x17, #TCB_BODY + 8 * 8]
    // It leaves the queue's head.
    wait_queue_leave_head x17, x15, x12, N_HEAD, N_TAIL, N_WAITING
    // Ready, at the back of its priority's run queue on this CPU
    // (`RunQueue::append`): its bit set (x13 its bitmap word's offset, x15
    // its priority), then its links behind the last one (x14 the CPU's
    // queue with the priority's head and tail slots, less the offsets).
    mov     w9, #STATE_READY
    strb    w9, [x17, #TCB_BODY + T_STATE]
    ldr     w13, [x17, #TCB_BODY + T_RUN_QUEUE_WORD]
    ldrb    w15, [x17, #TCB_BODY + T_PRIORITY]
    add     x10, x11, x13
    ldr     x9, [x10, #KERNEL + K_RUN_QUEUE_NONEMPTY]
    mov     x14, #1
    lsl     x14, x14, x15
    orr     x9, x9, x14
    str     x9, [x10, #KERNEL + K_RUN_QUEUE_NONEMPTY]
    and     w13, w13, #0xfffff000
    add     x14, x11, x13
    add     x14, x14, x15, lsl #2
    ldr     w10, [x14, #KERNEL + K_RUN_QUEUE_TAILS]
    str     w16, [x14, #KERNEL + K_RUN_QUEUE_TAILS]
    // Previous the old last, next none (one store: w10 is zero-extended).
    str     x10, [x17, #TCB_BODY + T_RUN_PREVIOUS]
    cbz     w10, 4f
    add     x10, x12, x10, lsl #GRANULE_SHIFT
    str     w16, [x10, #TCB_BODY + T_RUN_NEXT]
    b       notification_done
4:  str     w16, [x14, #KERNEL + K_RUN_QUEUE_HEADS]
    b       notification_done

    // Wait: the read right.
notification_wait:
    tbz     x13, #CAP_READ_BIT, notification_refuse_locked
    ldr     x14, [x15, #N_WORD]
    cbz     x14, notification_block
    // Bits are there: the caller takes them (Ok in x0, the word in x8).
    str     xzr, [x15, #N_WORD]
    mov     x8, x14
    // The caller goes on with x0 = Ok; the lock released, its parked
    // registers back.
notification_done:
    stlr    xzr, [x11]
    mov     x0, xzr
    ldp     x9, x10, [sp, #8 * 9]
    ldp     x11, x12, [sp, #8 * 11]
    ldp     x13, x14, [sp, #8 * 13]
    ldp     x15, x16, [sp, #8 * 15]
    ldr     x17, [sp, #8 * 17]
    eret

    // None: it blocks. Everything else the caller has goes to its
    // context (x9..x17 are there already).
notification_block:
    save_arguments_and_callee_saved with_x18=1
    // The highest priority with a ready thread on this CPU (x13, from the
    // top word down; x14 the CPU's word 0 less the bitmap's offset):
    // none is for the generic path (which idles).
    ldr     w9, [sp, #T_RUN_QUEUE_WORD]
    and     w9, w9, #0xfffff000
    add     x14, x11, x9
    mov     w13, #255
    ldr     x10, [x14, #KERNEL + K_RUN_QUEUE_NONEMPTY + 24]
    cbnz    x10, 5f
    mov     w13, #191
    ldr     x10, [x14, #KERNEL + K_RUN_QUEUE_NONEMPTY + 16]
    cbnz    x10, 5f
    mov     w13, #127
    ldr     x10, [x14, #KERNEL + K_RUN_QUEUE_NONEMPTY + 8]
    cbnz    x10, 5f
    mov     w13, #63
    ldr     x10, [x14, #KERNEL + K_RUN_QUEUE_NONEMPTY]
    cbz     x10, notification_refuse_saved
5:  clz     x10, x10
    sub     w13, w13, w10
    // Its first thread (w25, TCB record x26; x16 the priority's head and
    // tail slots, less the offsets) may return to EL0 at once.
    add     x16, x14, x13, lsl #2
    ldr     w25, [x16, #KERNEL + K_RUN_QUEUE_HEADS]
    add     x26, x12, x25, lsl #GRANULE_SHIFT
    next_may_run x11, notification_refuse_saved
    // Point of no return: `ipc::notification::wait`'s changes. The
    // caller (w28) waits on the notification (tag and object in one
    // store), as its last waiter.
    ldp     w28, w29, [x11, #KERNEL + K_CURRENT]
    mov     w9, #STATE_BLOCKED_ON_NOTIFICATION
    orr     x9, x9, x17, lsl #32
    str     x9, [sp, #T_STATE]
    wait_queue_append_caller x15, x12, N_HEAD, N_TAIL, N_WAITING
    // The next thread leaves its run queue's head (`RunQueue::dequeue`):
    // its successor, if any, is the head; else the priority is empty
    // (no tail, its bit cleared).
    ldr     w9, [x26, #TCB_BODY + T_RUN_NEXT]
    str     xzr, [x26, #TCB_BODY + T_RUN_PREVIOUS]
    str     w9, [x16, #KERNEL + K_RUN_QUEUE_HEADS]
    cbz     w9, 8f
    add     x10, x12, x9, lsl #GRANULE_SHIFT
    str     wzr, [x10, #TCB_BODY + T_RUN_PREVIOUS]
    b       9f
8:  str     wzr, [x16, #KERNEL + K_RUN_QUEUE_TAILS]
    lsr     w9, w13, #6
    add     x9, x14, x9, lsl #3
    ldr     x10, [x9, #KERNEL + K_RUN_QUEUE_NONEMPTY]
    mov     x17, #1
    lsl     x17, x17, x13
    bic     x10, x10, x17
    str     x10, [x9, #KERNEL + K_RUN_QUEUE_NONEMPTY]
    // The next thread runs; then all its registers.
9:  run_next x11
    add     x0, x26, #TCB_BODY
    b       restore_user_context

// Refusals: nothing was changed. Before the blocking Wait's save, the
// parked registers go back and the vector's way to the generic entry
// saves the rest; after it, every register is in the context.
notification_refuse_locked:
    stlr    xzr, [x11]
notification_refuse:
    ldp     x11, x12, [sp, #8 * 11]
    ldp     x13, x14, [sp, #8 * 13]
    ldp     x15, x16, [sp, #8 * 15]
    ldr     x17, [sp, #8 * 17]
    b       el0_sync_slow_x9_x10_saved

notification_refuse_saved:
    stlr    xzr, [x11]
    mov     x0, sp
    mrs     x21, tpidr_el1
    mov     sp, x21
    bl      portcullis_el0_sync
    b       .
