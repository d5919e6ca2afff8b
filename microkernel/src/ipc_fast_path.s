// The IPC fast path: `Call` and `ReplyRecv` in their common case, from the
// EL0 synchronous vector (`arch/src/cpu/vectors.s`) to the partner's eret.
// What it checks and what it changes: `microkernel::kernel::fast_path`.
//
// Entered with the caller's registers live, but for x9/x10, which the
// vector parked in their context slots; SP_EL1 points at the caller's
// thread, whose saved registers come first. Until the lock is taken only
// x9/x10 are scratch; after the save below x19..x30 are scratch too (their
// values are in the context). x11..x18 are never touched: a refusal saves
// them (`ipc_refuse`), and the switch leaves them as the partner's context has
// them. x0..x8 stay the caller's: x0 the capability, x1 the message info,
// x2..x7 the message words, which the partner receives in place. They
// are not saved unless the path refuses: after the switch the caller
// waits for a result that writes x0..x8 (a message, or an error with
// x1..x8 zeroed: `UserContext::end_wait_with`, `docs/abi.md`), so its
// context's x0..x8 are dead until then.
//
// Registers while the checks run:
//   x19  the kernel state (its lock word first)
//   x20  object memory's base
//   x21  the capability word, x22 its badge
//   x23  the endpoint's granule, x24 its record
//   x25  the partner's thread id, x26 its TCB record (its thread, context
//        first, TCB_BODY bytes in)
//   x27  the partner's TTBR0 value
//   x28  the caller's thread id

// The values it uses and the steps it shares with the other fast paths
// (`save_arguments_and_callee_saved`, `lock_at_once`, `capability_of`,
// `next_may_run`, `wait_queue_leave_head`, `wait_queue_append_caller`,
// `run_next`): `fast_path_common.s`, assembled before it.

    .section .text.ipc_fast_path, "ax"

// Only a message that fits in registers (x1's length and capability
// count, read as one number, at most the register words): a longer one
// goes to its syscall's IPC entry (`slow`) at once, before anything is
// saved.
.macro fits_in_registers_or_slow slow
    and     x10, x1, #MESSAGE_LENGTH_AND_CAPS_MASK
    cmp     x10, #REGISTER_MESSAGE_WORDS
    b.hi    \slow
.endm

// What the caller keeps: x19..x30 and the system registers (a refusal
// saves the rest). Then the kernel lock, if it is free at once, and this
// CPU's view.
.macro save_and_lock
    save_callee_saved
    lock_at_once x19, x20, x9, w9, ipc_refuse, ipc_refuse, x10
    ldr     x20, [x19, #KERNEL + K_MEMORY_BASE]
.endm

// The capability x0 names, if it is an endpoint with right `bit`: its
// word in x21, badge in x22, the endpoint's granule in x23 and record in
// x24. With `with_type` the right is tested in the type's compare (its
// bit must extend the type mask's run: the read right's does).
.macro endpoint_capability bit, with_type=0
.if \with_type
    capability_of x20, x9, w9, x21, x22, CAP_ENDPOINT, ipc_refuse_locked, (1 << \bit)
.else
    capability_of x20, x9, w9, x21, x22, CAP_ENDPOINT, ipc_refuse_locked
    tbz     x21, #\bit, ipc_refuse_locked
.endif
    ubfx    x23, x21, #CAP_OBJECT_SHIFT, #32
    add     x24, x20, x23, lsl #GRANULE_SHIFT
.endm

// A receiver waits at the head of the endpoint whose record is x24,
// owing no reply (x20 object memory's base): its thread id to w25, its
// TCB record to x26; else `refused`.
.macro receiver_at_head_owing_none refused
    ldrb    w10, [x24, #EP_WAITING]
    tbz     w10, #WAITING_RECEIVERS_BIT, \refused
    ldr     w25, [x24, #EP_HEAD]
    add     x26, x20, x25, lsl #GRANULE_SHIFT
    ldr     w10, [x26, #TCB_BODY + T_REPLY_TO]
    cbnz    w10, \refused
.endm

// The partner (x25, TCB record in x26) is at least as urgent as the
// caller and of its CPU (one compare of the two `fast_key`s).
.macro partner_urgent_enough
    ldrh    w10, [x26, #TCB_BODY + T_FAST_KEY]
    ldrh    w9, [sp, #T_FAST_KEY]
    sub     x10, x10, x9
    cmp     x10, #255
    b.hi    ipc_refuse_locked
.endm

// The partner (TCB record x26) is the thread the scheduler would run
// here once the caller waits (`Kernel::apply_ipc`'s rule): it has the
// caller's CPU (the keys' bits above the priority's nine agree), and no
// thread more urgent than it is ready there (no bit above its priority's
// in its CPU's run-queue bitmap: in its own word, shifted down by the
// priority, and in each later word). x27..x29 are clobbered.
.macro partner_most_urgent_here refused
    ldrh    w10, [x26, #TCB_BODY + T_FAST_KEY]
    ldrh    w9, [sp, #T_FAST_KEY]
    eor     w10, w10, w9
    cmp     w10, #511
    b.hi    \refused
    ldr     w28, [x26, #TCB_BODY + T_RUN_QUEUE_WORD]
    ldrb    w29, [x26, #TCB_BODY + T_PRIORITY]
    add     x27, x19, x28
    ldr     x10, [x27, #KERNEL + K_RUN_QUEUE_NONEMPTY]
    lsr     x10, x10, x29
    cmp     x10, #1
    b.hi    \refused
    // x27 back to the CPU's word 0 (x28 the own word's offset in the
    // bitmap, 0 to 24); each later word must be zero.
    and     x28, x28, #0x18
    sub     x27, x27, x28
    cmp     x28, #16
    b.hi    .Lmost_urgent\@
    ldr     x10, [x27, #KERNEL + K_RUN_QUEUE_NONEMPTY + 24]
    cbnz    x10, \refused
    b.eq    .Lmost_urgent\@
    ldr     x10, [x27, #KERNEL + K_RUN_QUEUE_NONEMPTY + 16]
    cbnz    x10, \refused
    cmp     x28, #8
    b.eq    .Lmost_urgent\@
    ldr     x10, [x27, #KERNEL + K_RUN_QUEUE_NONEMPTY + 8]
    cbnz    x10, \refused
.Lmost_urgent\@:
.endm

// The partner can take the CPU directly: urgent enough, no work but
// policy work, an address space whose ASID is of the current generation
// (TTBR0 to x27).
.macro partner_may_run
    partner_urgent_enough
    ldr     x10, [x26, #TCB_BODY + T_WORK]
    tst     x10, #WORK_NOT_POLICY
    b.ne    ipc_refuse_locked
    asid_current x19, ipc_refuse_locked
.endm

// The partner runs: its state, the kernel's current thread, FP/SIMD
// access as its ownership says, the lock released; then its registers
// and the eret (x0 = Ok, x8 = `badge`).
.macro switch_to_partner badge
    run_next x19
    mov     x0, xzr
    mov     x8, \badge
    return_to_partner
.endm

// The partner's TCB record is x26; x0..x8 hold its message. Its
// registers x9..x30 and system registers come from its context, which
// SP_EL1 then points at for its next entry. With `all`, x0..x8 come from
// its context too (a thread that goes back as its syscall left it).
.macro return_to_partner all=0
    add     sp, x26, #TCB_BODY
    ldp     x22, x23, [sp, #CTX_ELR_PAIR]
    msr     elr_el1, x22
    // The saved SPSR as it is, without `restore_user_context`'s mask: a
    // partner waits in Call or ReplyRecv, or for the answer to the exit
    // stop of a syscall, so the CPU saved it at that svc from EL0 (EL0t,
    // no IL, no DAIF mask: only bits the mask keeps), and the kernel's
    // only writes since change NZCV or SS. The eret cannot enter EL1, and
    // the thread gets the bits the slow path would give it
    // (`Kernel::check_invariants` checks every such thread's SPSR in the
    // test images).
    msr     spsr_el1, x23
    ldr     x24, [sp, #CTX_TPIDR]
    msr     tpidr_el0, x24
    ldp     x30, x21, [sp, #CTX_SP_EL0_PAIR]
    msr     sp_el0, x21
.if \all
    x0_to_x7_pairs ldp, sp
    ldp     x8, x9, [sp, #16 * 4]
.else
    ldr     x9, [sp, #8 * 9]
.endif
    ldp     x10, x11, [sp, #16 * 5]
    ldp     x12, x13, [sp, #16 * 6]
    ldp     x14, x15, [sp, #16 * 7]
    ldp     x16, x17, [sp, #16 * 8]
    ldp     x18, x19, [sp, #16 * 9]
    x20_to_x29_pairs ldp, sp
    eret
.endm

// A Call whose caller may skip entry work (the vector tested the number,
// the work word and the no-entry-work mask).
    .global portcullis_ipc_fast_call
portcullis_ipc_fast_call:
    fits_in_registers_or_slow el0_ipc_call_slow
    save_and_lock
    endpoint_capability CAP_WRITE_BIT
    receiver_at_head_owing_none ipc_refuse_locked
    partner_may_run
    // Point of no return: `ipc::send`'s changes for a Call. The caller
    // waits for the reply the receiver now owes it.
    ldp     w28, w29, [x19, #KERNEL + K_CURRENT]
    mov     w9, #STATE_BLOCKED_ON_REPLY
    strb    w9, [sp, #T_STATE]
    str     w25, [sp, #T_REPLY_FROM]
    str     w28, [x26, #TCB_BODY + T_REPLY_TO]
    // The receiver leaves the queue's head.
    wait_queue_leave_head x26, x24, x20, EP_HEAD, EP_TAIL, EP_WAITING
    switch_to_partner x22

// A ReplyRecv whose caller may skip entry work.
    .global portcullis_ipc_fast_reply_recv
portcullis_ipc_fast_reply_recv:
    fits_in_registers_or_slow el0_ipc_reply_recv_slow
    save_and_lock
    // The caller it owes a reply, still waiting for it (first: a server
    // answering a kernel message, a trace stop or a policy request, owes
    // one to a thread waiting for an answer instead, and is refused here
    // before the capability is looked up). No bound notification (its
    // bits would end the receive).
    ldr     w25, [sp, #T_REPLY_TO]
    cbz     w25, ipc_refuse_locked
    add     x26, x20, x25, lsl #GRANULE_SHIFT
    ldrb    w10, [x26, #TCB_BODY + T_STATE]
    cmp     w10, #STATE_BLOCKED_ON_REPLY
    b.ne    answer_trace_exit_or_refuse
    ldr     w10, [sp, #T_BOUND_NOTIFICATION]
    cbnz    w10, ipc_refuse_locked
    endpoint_capability CAP_READ_BIT, with_type=1
    // The receive will block: no sender waits.
    ldrb    w10, [x24, #EP_WAITING]
    tbnz    w10, #WAITING_SENDERS_BIT, ipc_refuse_locked
    partner_may_run
    // Point of no return: `ipc::reply_receive`'s changes. The reply is
    // given, and the thread waits on the endpoint as its last receiver
    // (the `Ok` the slow path writes to its x0 first is dead: whatever
    // ends the wait writes x0).
    ldp     w28, w29, [x19, #KERNEL + K_CURRENT]
    str     wzr, [sp, #T_REPLY_TO]
    str     wzr, [x26, #TCB_BODY + T_REPLY_FROM]
    mov     w9, #STATE_BLOCKED_ON_RECEIVE
    orr     x9, x9, x23, lsl #32
    str     x9, [sp, #T_STATE]
    wait_queue_append_caller x24, x20, EP_HEAD, EP_TAIL, EP_WAITING
    switch_to_partner xzr

// A ReplyRecv whose reply answers a trace exit stop with "continue": the
// caller (a tracer) owes the answer to the traced thread (w25, TCB record
// x26), which waits for it (`ThreadState::BlockedOnAnswer`, its kernel
// message that stop), and which then goes back to EL0 as its syscall left
// it: tracing its only work (no exit work, no single step), no other stop
// owed, no stopped syscall, SPSR.SS clear and MDSCR_EL1.SS off on this
// CPU (what `ipc::trace_stop::answer_trace_stop` and the way back,
// `Kernel::trace_before_user`, would find nothing to do for). "Continue" is
// the label alone, without the step bit; its words are not read. Then the
// caller's side as for a reply: no bound notification, the endpoint
// capability, no sender waiting; and the thread is the one the scheduler
// would run here once the caller waits (a tracer is often more urgent
// than the thread it traces, which the reply's own test, at least as
// urgent as the caller, would refuse).
answer_trace_exit_or_refuse:
    // (The message's tag first: a policy server's answer, the commonest
    // other, is refused after two more tests.)
    cmp     w10, #STATE_BLOCKED_ON_ANSWER
    b.ne    ipc_refuse_locked
    add     x9, x26, #TCB_BODY
    ldrb    w10, [x9, #T_KERNEL_MESSAGE]
    cmp     w10, #KERNEL_MESSAGE_TRACE_STOP
    b.ne    ipc_refuse_locked
.if TRACE_REPLY_CONTINUE != 0
    .error "a continue's label is 0: x1 holds no bits above its length and capability count"
.endif
    tst     x1, #~MESSAGE_LENGTH_AND_CAPS_MASK
    b.ne    ipc_refuse_locked
    ldrb    w10, [x9, #T_KERNEL_MESSAGE + TRACE_STOP_KIND]
    cmp     w10, #STOP_KIND_EXIT
    b.ne    ipc_refuse_locked
    ldr     x10, [x9, #T_WORK]
    cmp     x10, #WORK_TRACE
    b.ne    ipc_refuse_locked
    ldrb    w10, [x9, #T_TRACE_OWED]
    cbnz    w10, ipc_refuse_locked
    ldrb    w10, [x9, #T_CALL]
    cbnz    w10, ipc_refuse_locked
    ldr     x10, [x9, #CTX_ELR_PAIR + 8]
    tbnz    x10, #SPSR_SS_BIT, ipc_refuse_locked
    add     x9, x19, #KERNEL
    ldrb    w10, [x9, #K_STEP_INSTALLED]
    cbnz    w10, ipc_refuse_locked
    ldr     w10, [sp, #T_BOUND_NOTIFICATION]
    cbnz    w10, ipc_refuse_locked
    endpoint_capability CAP_READ_BIT, with_type=1
    ldrb    w10, [x24, #EP_WAITING]
    tbnz    w10, #WAITING_SENDERS_BIT, ipc_refuse_locked
    partner_most_urgent_here ipc_refuse_locked
    asid_current x19, ipc_refuse_locked
    // Point of no return: `ipc::reply_receive`'s changes for such an
    // answer. The exit stop is answered (the kernel message taken), and
    // the caller waits on the endpoint as its last receiver.
    ldp     w28, w29, [x19, #KERNEL + K_CURRENT]
    str     wzr, [sp, #T_REPLY_TO]
    str     wzr, [x26, #TCB_BODY + T_REPLY_FROM]
    mov     w9, #KERNEL_MESSAGE_NONE
    strb    w9, [x26, #TCB_BODY + T_KERNEL_MESSAGE]
    mov     w9, #STATE_BLOCKED_ON_RECEIVE
    orr     x9, x9, x23, lsl #32
    str     x9, [sp, #T_STATE]
    wait_queue_append_caller x24, x20, EP_HEAD, EP_TAIL, EP_WAITING
    run_next x19
    return_to_partner all=1

// What a refusal saves: the rest of the caller's registers (x0..x8,
// x11..x18) to its context, which is then whole; the kernel stack.
.macro refusal_save
    save_arguments_and_temporaries
    mov     x0, sp
    mrs     x21, tpidr_el1
    mov     sp, x21
.endm

// A refusal of this path: nothing was changed. The caller's registers
// are saved (`refusal_save`) and the IPC entry of the path's syscall
// (x8: the vector sends only Call's and ReplyRecv's number here) takes
// it, as a message too long for registers goes (`el0_ipc_call_slow`):
// the generic entry if that declines.
ipc_refuse_locked:
    stlr    xzr, [x19]
ipc_refuse:
    refusal_save
    cmp     x8, #SYSCALL_CALL
    b.ne    1f
    bl      portcullis_el0_ipc_call
    bl      portcullis_el0_sync
1:  bl      portcullis_el0_ipc_reply_recv
    bl      portcullis_el0_sync
    b       .

// A refusal of the trace and policy request fast paths (which take any
// number): the same save, then the generic entry.
refuse_locked:
    stlr    xzr, [x19]
refuse:
    refusal_save
    bl      portcullis_el0_sync
    b       .
