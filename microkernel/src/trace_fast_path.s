// The trace fast path: the entry stop of a syscall of a thread whose only
// work is tracing, sent to its tracer waiting in `Recv` (or `ReplyRecv`)
// on the endpoint it traces through, from the EL0 synchronous vector
// (`arch/src/cpu/vectors.s`, `el0_traced_or_slow`) to the tracer's eret.
// What it checks and what it changes: `microkernel::kernel::fast_path`.
//
// Entered with the thread's registers live but for x9/x10, which the
// vector parked in their context slots, x8 below 64 and the work word
// `TRACE` alone (so no exit work, no single step, no other entry work);
// SP_EL1 points at the thread. The whole frame is saved first: the thread
// waits at its stop, and its tracer may read or change any register.
// x0..x8 and x11..x18 keep the thread's values until the point of no
// return, so a refusal (`refuse_locked`, `ipc_fast_path.s`, which saves
// them again) leaves the syscall to the generic entry as it came (never
// to the IPC entry, which the IPC path's own refusal takes).
//
// Its steps are macros (below) that the policy request fast path
// (`policy_request_fast_path.s`, assembled after it) takes too.
//
// Registers while the checks run:
//   x19  the kernel state (its lock word first)
//   x20  object memory's base
//   x22  the tracer endpoint's serial (the reference's)
//   x23  the tracer endpoint's granule, x24 its record
//   x25  the tracer's thread id, x26 its TCB record
//   x21  the tracer's IPC buffer (its address in the linear map)
//   x27  the tracer's TTBR0 value
//   x28  the thread's id (after the checks)

// Its own values (the shared ones: `fast_path_common.s`; LINEAR_BASE:
// `user_dispatch_fast_path.s`), from `fast_paths.rs`.
.equ T_RSEQ,               {T_RSEQ}                // its tag byte: 0 for none
.equ T_TRACER,             {T_TRACER}              // its tag byte: 0 for none
.equ T_TRACER_ID,          {T_TRACER_ID}           // the endpoint's granule
.equ T_TRACER_SERIAL,      {T_TRACER_SERIAL}
.equ T_TRACER_BADGE,       {T_TRACER_BADGE}
.equ T_IPC_BUFFER,         {T_IPC_BUFFER}          // its tag byte: 0 for none
.equ T_IPC_BUFFER_WORD,    {T_IPC_BUFFER_WORD}     // the physical address
.equ T_NUMBER,             {T_NUMBER}
.equ T_TRACE_NUMBER,       {T_TRACE_NUMBER}
.equ T_CALL_REGS,          {T_CALL_REGS}
.equ T_CALL_ESR,           {T_CALL_ESR}            // right after the registers
.equ T_CALL_CAPABILITY_WORD, {T_CALL_CAPABILITY_WORD}    // a kept call's judged capability
.equ T_CALL_CAPABILITY_BADGE, {T_CALL_CAPABILITY_BADGE}
.equ T_CALL_CAPABILITY_SERIAL, {T_CALL_CAPABILITY_SERIAL} // 0 for none
.equ T_CALL_FLAGS,         {T_CALL_FLAGS}          // the word of `waived` and `forwarded`
.equ CALL_SLOT_BYTES,      {CALL_SLOT_BYTES}
.equ TRACE_STOP_NUMBER,    {TRACE_STOP_NUMBER}     // from the message's tag
.equ TRACE_STOP_TIME,      {TRACE_STOP_TIME}
.equ STOP_KIND_ENTRY,      {STOP_KIND_ENTRY}
.equ K_KINDS,              {K_KINDS}               // then their number (a word)
.equ KIND_ENDPOINT,        {KIND_ENDPOINT}
.equ H_STATE,              {H_STATE}
.equ H_SERIAL,             {H_SERIAL}
.equ OBJECT_LIVE_MAX,      {OBJECT_LIVE_MAX}

    .section .text.trace_fast_path, "ax"

// `bytes` (a multiple of 8) from `from` to `to`, both moved on past them;
// x22 and x23 are clobbered.
.macro copy_words from, to, bytes
.rept (\bytes) / 16
    ldp     x22, x23, [\from], #16
    stp     x22, x23, [\to], #16
.endr
.if (\bytes) % 16
    ldr     x22, [\from], #8
    str     x22, [\to], #8
.endif
.endm

// The opening of a path that stops the thread: every register saved
// (the thread waits at its stop, and whoever answers may read or change
// any of them), the kernel lock if it is free at once (x19 the kernel
// state, x20 object memory's base), and no restartable sequences (a stop
// is an rseq event for them: `Thread::set_kernel_message`).
.macro stop_opening
    save_arguments_and_temporaries
    save_callee_saved
    lock_at_once x19, x20, x9, w9, refuse, refuse, x10
    ldr     x20, [x19, #KERNEL + K_MEMORY_BASE]
    ldrb    w10, [sp, #T_RSEQ]
    cbnz    w10, refuse_locked
.endm

// The endpoint of granule w23 and serial `serial` (a register), if it
// still lives (`Objects::resolve`): a record of an endpoint starts at its
// granule (its kind byte, within object memory's, is the record's type:
// `ObjectMemory::kind_at`), live, of the serial the reference has. Its
// record to x24; x9 and x10 are clobbered.
.macro endpoint_lives serial
    ldr     x9, [x19, #KERNEL + K_KINDS]
    ldr     x10, [x19, #KERNEL + K_KINDS + 8]
    cmp     x23, x10
    b.hs    refuse_locked
    ldrb    w10, [x9, x23]
    cmp     w10, #KIND_ENDPOINT
    b.ne    refuse_locked
    add     x24, x20, x23, lsl #GRANULE_SHIFT
    ldr     x10, [x24, #H_SERIAL]
    cmp     \serial, x10
    b.ne    refuse_locked
    ldrb    w10, [x24, #H_STATE]
    cmp     w10, #OBJECT_LIVE_MAX
    b.hi    refuse_locked
.endm

// A receiver waits at the head of the endpoint whose record is x24,
// owing no reply (its thread id to w25, its TCB record to x26), with an
// IPC buffer for the message's words past the registers (its address in
// the linear map to x21, as `PhysMemory::write_phys_words` writes it),
// and is the thread the scheduler would run here once this one waits
// (`Kernel::apply_ipc`'s rule, as for a `Call`'s stop sent by the slow
// path): of this CPU, and no ready thread more urgent. A
// receiver at least as urgent as this thread (one compare of the two
// keys, as `partner_urgent_enough` makes it) is that: this thread,
// running with no reschedule pending (no exit work), is at least as
// urgent as every ready thread (`Kernel::check_invariants` checks it; as
// for the IPC fast path's partner, a thread another CPU has just made
// ready here, whose reschedule interrupt is still on its way, is the
// exception: the interrupt, taken at the eret, preempts the receiver at
// once). Another goes through the run queue's test. Then it may return
// to EL0 at once: no work but policy work, an ASID of the current
// generation (TTBR0 to x27).
.macro stop_receiver_may_run
    receiver_at_head_owing_none refuse_locked
    ldrb    w10, [x26, #TCB_BODY + T_IPC_BUFFER]
    cbz     w10, refuse_locked
    ldr     x21, [x26, #TCB_BODY + T_IPC_BUFFER_WORD]
    mov     x10, #LINEAR_BASE
    add     x21, x21, x10
    ldrh    w10, [x26, #TCB_BODY + T_FAST_KEY]
    ldrh    w9, [sp, #T_FAST_KEY]
    sub     x10, x10, x9
    cmp     x10, #255
    b.ls    .Lreceiver_runs_here\@
    partner_most_urgent_here refuse_locked
.Lreceiver_runs_here\@:
    ldr     x10, [x26, #TCB_BODY + T_WORK]
    tst     x10, #WORK_NOT_POLICY
    b.ne    refuse_locked
    asid_current x19, refuse_locked
.endm

// The endpoint an optional reference of the thread names (its tag byte
// at `tag`, 0 for none; the endpoint's granule at `id`, its serial at
// `serial`), if it still lives, and a receiver waiting there that may
// take the message (`endpoint_lives`, `stop_receiver_may_run`).
.macro referenced_receiver_may_run tag, id, serial
    ldrb    w10, [sp, #\tag]
    cbz     w10, refuse_locked
    ldr     w23, [sp, #\id]
    ldr     x22, [sp, #\serial]
    endpoint_lives x22
    stop_receiver_may_run
.endm

// After the point of no return: the call kept as stopped. Its slot's
// words before the registers (its tag, where it stopped, no answer yet,
// what the entry decided) as `template` (a `CallSlot`'s address) has them;
// then its registers, which are x0..x8, and its ESR, right after them;
// then no capability judged (the serial count's word 0) and no filter
// waived, not forwarded (the flags' word 0): the rest of the slot, as both
// templates have it (`fast_paths.rs` checks the layout and the
// templates). w28 the current thread (and w29 the FP/SIMD registers'
// owner, for `run_next`). x9, x10, x22 and x23 are clobbered.
.macro keep_call template
    ldp     w28, w29, [x19, #KERNEL + K_CURRENT]
    ldr     x9, =\template
    add     x10, sp, #T_CALL
    copy_words x9, x10, T_CALL_REGS - T_CALL
    stp     x0, x1, [x10], #16
    stp     x2, x3, [x10], #16
    stp     x4, x5, [x10], #16
    stp     x6, x7, [x10], #16
    mrs     x9, esr_el1
    stp     x8, x9, [x10]
    str     xzr, [sp, #T_CALL_CAPABILITY_SERIAL]
    str     xzr, [sp, #T_CALL_FLAGS]
.endm

// The receiver (TCB record x26) runs, its x2..x7 the message's first six
// words (written by the caller): x0 `Ok`, x1 the message info `info`, x8
// the badge at `badge` (an offset in the thread).
.macro send_to_receiver info, badge
    ldr     x1, =\info
    mov     x0, xzr
    ldr     x8, [sp, #\badge]
    run_next x19
    return_to_partner
.endm

// The thread waits for the answer the receiver (w25, TCB record x26) now
// owes it; the receiver leaves the queue's head (x24's). x9 and x10 are
// clobbered.
.macro wait_for_answer
    mov     w9, #STATE_BLOCKED_ON_ANSWER
    strb    w9, [sp, #T_STATE]
    str     w25, [sp, #T_REPLY_FROM]
    str     w28, [x26, #TCB_BODY + T_REPLY_TO]
    wait_queue_leave_head x26, x24, x20, EP_HEAD, EP_TAIL, EP_WAITING
.endm

    .global portcullis_trace_entry_fast
portcullis_trace_entry_fast:
    stop_opening
    // The tracer's endpoint, if it still lives; a receiver waits there
    // (the head: the tracer) that may take the stop, with an IPC buffer
    // for its last seven words.
    referenced_receiver_may_run T_TRACER, T_TRACER_ID, T_TRACER_SERIAL
    // Point of no return: `Kernel::syscall_traced`'s changes, then
    // `ipc::send_kernel_message`'s. The call is kept as stopped at its
    // entry stop (`CallSlot::TRACE_ENTRY`).
    keep_call {TRACE_ENTRY_CALL}
    // The stop: its kind, the number, the time (the counter, as
    // `Kernel::trace_stop` reads it), also the number its exit stop shows.
    mov     w9, #KERNEL_MESSAGE_TRACE_STOP
    strb    w9, [sp, #T_KERNEL_MESSAGE]
.if STOP_KIND_ENTRY == 0
    strb    wzr, [sp, #T_KERNEL_MESSAGE + TRACE_STOP_KIND]
.else
    mov     w9, #STOP_KIND_ENTRY
    strb    w9, [sp, #T_KERNEL_MESSAGE + TRACE_STOP_KIND]
.endif
    mrs     x22, cntvct_el0
    str     x8, [sp, #T_KERNEL_MESSAGE + TRACE_STOP_NUMBER]
    str     x22, [sp, #T_KERNEL_MESSAGE + TRACE_STOP_TIME]
    str     x8, [sp, #T_TRACE_NUMBER]
    // The thread waits for the answer the tracer now owes it.
    wait_for_answer
    // The stop's words 6..12 into the tracer's IPC buffer: x5, x8, the PC,
    // the thread's number, x6, x7, the time (`abi::trace::StopMessage`).
    ldr     x23, [sp, #CTX_ELR_PAIR]
    ldr     w24, [sp, #T_NUMBER]
    stp     x5, x8, [x21, #8 * 6]
    stp     x23, x24, [x21, #8 * 8]
    stp     x6, x7, [x21, #8 * 10]
    str     x22, [x21, #8 * 12]
    // Words 0..5 in the tracer's x2..x7: the number, x0..x4.
    mov     x7, x4
    mov     x6, x3
    mov     x5, x2
    mov     x4, x1
    mov     x3, x0
    mov     x2, x8
    send_to_receiver {STOP_ENTRY_INFO}, T_TRACER_BADGE
