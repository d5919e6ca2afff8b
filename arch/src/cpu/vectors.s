// Exception vectors (VBAR_EL1) and the way back to EL0.
//
// The kernel has one stack per core, whose top TPIDR_EL1 holds (it never
// blocks on it: a thread that waits is recorded in its TCB and the kernel
// returns to another thread). While a thread runs at EL0, SP_EL1 points
// at that thread's saved-register block (`UserContext`, see context.rs),
// so an exception from EL0 stores the registers straight into the TCB and
// then switches to the kernel stack.
// Offsets below must match `UserContext`.

// The values come from Rust (`cpu/mod.rs` passes them as `global_asm!`
// const operands), so a changed layout or syscall number cannot silently
// break the vectors.
.equ CTX_SP_EL0_PAIR, {CTX_SP_EL0_PAIR}         // x30, sp_el0
.equ CTX_ELR_PAIR,    {CTX_ELR_PAIR}            // elr_el1, spsr_el1
.equ CTX_TPIDR,       {CTX_TPIDR}               // tpidr_el0
.equ SPSR_USER_WRITABLE_HIGH, {SPSR_USER_WRITABLE_HIGH} // context::SPSR_USER_WRITABLE >> 16
.equ SPSR_USER_WRITABLE_LOW, {SPSR_USER_WRITABLE_LOW}   // and its low 16 bits
.equ FRAME_SIZE,      {FRAME_SIZE}              // sizeof(UserContext)
.equ WORK_FLAGS_OFFSET, {WORK_FLAGS_OFFSET}     // Thread.work, right after the context
.equ REFUSED_OFFSET, {REFUSED_OFFSET}           // Thread.refused, constant refusals' mask
.equ REFUSAL_CODES_OFFSET, {REFUSAL_CODES_OFFSET} // Thread.refusal_codes, u16 by number
.equ EC_SVC64,        {EC_SVC64}                // ESR_EL1.EC of an SVC from AArch64
// The two syscalls with an IPC fast path, each with an entry of its own.
.equ SYSCALL_CALL, {SYSCALL_CALL}               // abi::Syscall::Call
.equ SYSCALL_REPLY_RECV, {SYSCALL_REPLY_RECV}   // abi::Syscall::ReplyRecv
.equ SYSCALL_YIELD, {SYSCALL_YIELD}             // abi::Syscall::Yield
.equ SYSCALL_SIGNAL, {SYSCALL_SIGNAL}           // abi::Syscall::Signal, then Wait
.equ LEAN_FINISH, {LEAN_FINISH}                 // lean_entry::FINISH (SAVE_REST is 0)
.equ LEAN_POISON, {LEAN_POISON}                 // 1: feature poison-unsaved (test image)
.equ WORK_AUDIT, {WORK_AUDIT}                   // entry::WorkFlags::AUDIT alone
.equ WORK_POLICY, {WORK_POLICY}                 // entry::WorkFlags::POLICY alone
.equ WORK_USER_DISPATCH, {WORK_USER_DISPATCH}   // entry::WorkFlags::USER_DISPATCH alone
.equ WORK_USER_DISPATCH_BIT, {WORK_USER_DISPATCH_BIT} // and its bit's number
.equ WORK_TRACE, {WORK_TRACE}                   // entry::WorkFlags::TRACE alone
.equ LEAN_JUDGED_OFFSET, {LEAN_JUDGED_OFFSET}   // Thread.lean_judged, the numbers the lean entry judges
.equ REGISTER_JUDGED_OFFSET, {REGISTER_JUDGED_OFFSET} // Thread.register_judged, those the vector judges
.equ ASKED_OFFSET, {ASKED_OFFSET}               // Thread.asked, those whose request the vector sends

// Exception kinds passed to the Rust handlers.
.equ KIND_SYNC,   0
.equ KIND_IRQ,    1
.equ KIND_FIQ,    2
.equ KIND_SERROR, 3

// Register pairs by their slots in a context at `base`, `op` `stp` to
// save or `ldp` to load: the saves and loads below are written from these.
.macro x0_to_x7 op, base
    \op     x0, x1, [\base, #16 * 0]
    \op     x2, x3, [\base, #16 * 1]
    \op     x4, x5, [\base, #16 * 2]
    \op     x6, x7, [\base, #16 * 3]
.endm
.macro x12_to_x17 op, base
    \op     x12, x13, [\base, #16 * 6]
    \op     x14, x15, [\base, #16 * 7]
    \op     x16, x17, [\base, #16 * 8]
.endm
.macro x20_to_x29 op, base
    \op     x20, x21, [\base, #16 * 10]
    \op     x22, x23, [\base, #16 * 11]
    \op     x24, x25, [\base, #16 * 12]
    \op     x26, x27, [\base, #16 * 13]
    \op     x28, x29, [\base, #16 * 14]
.endm

// With `x9_x10_saved` = 1, x9 and x10 are already in their slots (the
// inline fast path parked them there) and hold scratch values.
.macro save_user_context x9_x10_saved=0
    x0_to_x7 stp, sp
.if \x9_x10_saved
    str     x8, [sp, #16 * 4]
    str     x11, [sp, #16 * 5 + 8]
.else
    stp     x8, x9, [sp, #16 * 4]
    stp     x10, x11, [sp, #16 * 5]
.endif
    x12_to_x17 stp, sp
    stp     x18, x19, [sp, #16 * 9]
    x20_to_x29 stp, sp
    mrs     x21, sp_el0
    stp     x30, x21, [sp, #CTX_SP_EL0_PAIR]
    mrs     x22, elr_el1
    mrs     x23, spsr_el1
    stp     x22, x23, [sp, #CTX_ELR_PAIR]
    // TPIDR_EL0 is saved on every entry that can switch threads and loaded
    // on every return (restore_user_context): two instructions each way,
    // cheaper than tracking which thread's value the CPU holds.
    mrs     x24, tpidr_el0
    str     x24, [sp, #CTX_TPIDR]
    mov     x0, sp
    // TPIDR_EL1 holds this core's kernel stack top (boot.s sets it once
    // per core; `cpu::smp`).
    mrs     x21, tpidr_el1
    mov     sp, x21
.endm

// A vector entry for an exception taken from EL1 itself: always a kernel
// bug (the kernel runs with interrupts masked and never faults on purpose).
.macro kernel_vector kind
    .balign 0x80
    // Report on a stack of its own, so that a kernel stack overflow (sp in
    // the guard page) is reported instead of faulting again. There is one
    // panic stack for all cores: the report ends the run, and two cores
    // faulting at once would share it (a garbled report, nothing worse).
    // TPIDR_EL1 (the core's stack top and kernel-lock token, which the way
    // to a panic no longer needs: it takes no lock) and SP_EL0 (already
    // saved for the thread) are the scratch registers; the kernel does not
    // return from here. (Not TPIDRRO_EL0: it holds the core's index, which
    // the panic path still reads.)
    msr     tpidr_el1, x0
    mov     x0, sp
    msr     sp_el0, x0
    adrp    x0, __panic_stack_top
    add     x0, x0, :lo12:__panic_stack_top
    mov     sp, x0
    mrs     x0, tpidr_el1
    sub     sp, sp, #FRAME_SIZE
    stp     x0, x1, [sp]
    mov     x1, #\kind
    b       el1_exception_common
.endm

.macro user_vector handler
    .balign 0x80
    save_user_context
    bl      \handler
    b       .
.endm

// EL0 synchronous exceptions start with the inline checks. Anything that
// is not an SVC goes to the full save and the generic entry at once. An
// SVC from a thread with no work at all (its work word, right after its
// saved registers, is zero) is answered here if it is `Null` (x8 == 0),
// and goes to the IPC fast path of that syscall
// (`portcullis_ipc_fast_call` or `portcullis_ipc_fast_reply_recv`, in the
// kernel's `ipc_fast_path.s`) if it is `Call` or `ReplyRecv` (and to
// theirs if `Yield`, `Signal` or `Wait`); any other goes to the lean
// entry (`el0_svc_generic`), which saves only what the kernel's compiled
// code may clobber. A thread with work takes the same ways only for a
// syscall its no-entry-work mask (the word after the work word) excuses,
// and only with no exit work; a thread whose only work is audit takes
// the lean entry; everything else goes to `portcullis_el0_sync`, the
// generic entry, after the full save. x9/x10 are parked in their own
// context slots while the checks run (and stay there when a save
// follows).
.macro user_sync_vector
    .balign 0x80
.Luser_sync_vector\@:
    stp     x9, x10, [sp, #16 * 4 + 8]
    mrs     x9, esr_el1
    lsr     x10, x9, #26
    cmp     x10, #EC_SVC64
    b.ne    el0_sync_slow_x9_x10_saved
    // The work word and the no-entry-work mask, in one load.
    ldp     x10, x9, [sp, #WORK_FLAGS_OFFSET]
    cbnz    x8, 4f
    cbnz    x10, 2f
3:  mov     x0, xzr
    ldp     x9, x10, [sp, #16 * 4 + 8]
    eret
    // Null with work, but maybe only policy work whose verdict for Null
    // is a constant Allow: no exit work, and bit 0 of the mask set.
2:  tst     x10, #0xffffffff00000000
    b.ne    el0_sync_slow_x9_x10_saved
    tbnz    x9, #0, 3b
    b       el0_refused_or_slow
    // Another syscall: the IPC fast path may take it if the thread has no
    // work, or no exit work and the syscall's bit in the mask set. The bit
    // is x8's modulo 64 (`lsr` by a register): the fast path accepts only
    // Call and ReplyRecv by their exact numbers, and the generic entry
    // makes its own test, so a larger x8 gains nothing.
4:  cbz     x10, 5f
    tst     x10, #0xffffffff00000000
    b.ne    el0_sync_slow_x9_x10_saved
    lsr     x9, x9, x8
    tbz     x9, #0, el0_refused_or_slow
    // Only Call, ReplyRecv, Yield, Signal and Wait have a fast path: any
    // other syscall goes to the lean entry without trying one. The
    // exact numbers are tested here, once: each entry then knows which
    // syscall it has (Call first, two instructions: it is the one of the
    // pair that starts a message; then its answer; then Yield below it,
    // or, above it, Signal and Wait, tested outside the vector, which is
    // full: `el0_svc_above_reply_recv`). (Also the way on of a syscall
    // the policy fast path allowed: `el0_svc_allowed`.)
    .global el0_svc_excused
el0_svc_excused:
5:  cmp     x8, #SYSCALL_CALL
    b.eq    portcullis_ipc_fast_call
    cmp     x8, #SYSCALL_REPLY_RECV
    b.eq    portcullis_ipc_fast_reply_recv
    b.hi    el0_svc_above_reply_recv
    cmp     x8, #SYSCALL_YIELD
    b.eq    portcullis_yield_fast
    // Any other number below ReplyRecv's: the lean entry (x9 and x10 stay
    // parked, and both saves skip their slots).
    b       el0_svc_generic
    // The vector's 32 instructions are all it has: one more and the
    // assembler refuses this (the next vector would move).
    .org    .Luser_sync_vector\@ + 0x80
.endm

.macro user_vector_other kind, handler=portcullis_el0_other
    .balign 0x80
    save_user_context
    mov     x1, #\kind
    bl      \handler
    b       .
.endm

// A table: `el0_sync` is the macro of its synchronous EL0 vector; EL0
// interrupts go to `el0_irq`, the other EL0 exceptions to `el0_other`.
.macro vector_table name, el0_sync, el0_irq=portcullis_el0_irq, el0_other=portcullis_el0_other
    .balign 0x800
    .global \name
\name:
    // Current EL with SP_EL0: never used (the kernel always runs on SP_EL1).
    kernel_vector KIND_SYNC
    kernel_vector KIND_IRQ
    kernel_vector KIND_FIQ
    kernel_vector KIND_SERROR
    // Current EL with SP_EL1: kernel faults.
    kernel_vector KIND_SYNC
    kernel_vector KIND_IRQ
    kernel_vector KIND_FIQ
    kernel_vector KIND_SERROR
    // Lower EL, AArch64: syscalls, user faults, interrupts while at EL0.
    \el0_sync
    user_vector \el0_irq
    user_vector_other KIND_FIQ, \el0_other
    user_vector_other KIND_SERROR, \el0_other
    // Lower EL, AArch32: the kernel never starts AArch32 code.
    user_vector_other KIND_SYNC, \el0_other
    user_vector_other KIND_IRQ, \el0_other
    user_vector_other KIND_FIQ, \el0_other
    user_vector_other KIND_SERROR, \el0_other
.endm

    .section .text.vectors, "ax"
    vector_table exception_vectors, user_sync_vector

// An SVC of a thread with no exit work and policy as its only syscall
// work, which its no-entry-work mask does not excuse: if its filters
// refuse the syscall with a constant code and nothing else is asked of it
// (bit x8 of the `refused` mask, only for x8 below 64: a larger number
// must not alias one), x0 is that code and the thread goes on at once, as
// the generic entry's policy stage would leave it. Otherwise the lean
// entry if audit is all its work (x10 the work word), or policy for a
// number the lean entry judges; the user-dispatch fast path if syscall
// user dispatch is (any number); else the generic entry. x9/x10 parked.
el0_refused_or_slow:
    cmp     x8, #64
    b.hs    el0_dispatched_or_slow
    ldr     x9, [sp, #REFUSED_OFFSET]
    lsr     x9, x9, x8
    tbz     x9, #0, el0_audited_or_slow
    add     x9, sp, x8, lsl #1
    ldrh    w0, [x9, #REFUSAL_CODES_OFFSET]
    ldp     x9, x10, [sp, #16 * 4 + 8]
    eret

// A syscall number above ReplyRecv's from the inline checks (x9/x10
// parked, x10 the work word): any number above Wait's (the generic
// syscalls and invalid numbers) goes to the lean entry at once, in two
// instructions, as the numbers below ReplyRecv's without a path of their
// own do; else x9 = 0 for Signal, 1 for Wait, and the notification fast
// path; the capability syscalls between go to the lean entry too.
el0_svc_above_reply_recv:
    cmp     x8, #SYSCALL_SIGNAL + 1
    b.hi    el0_svc_generic
    sub     x9, x8, #SYSCALL_SIGNAL
    cmp     x9, #1
    b.ls    portcullis_notification_fast
    b       el0_svc_generic

// The lean entry's stub, calling `kernel_half` (see below).
.macro lean_stub kernel_half
    x0_to_x7 stp, sp
    str     x8, [sp, #16 * 4]
    str     x11, [sp, #16 * 5 + 8]
    x12_to_x17 stp, sp
    str     x18, [sp, #16 * 9]
    str     x30, [sp, #CTX_SP_EL0_PAIR]
.if LEAN_POISON
    // What the kernel's half must not read: the slots left unsaved.
    movz    x9, #0x9015, lsl #48
    str     x9, [sp, #16 * 9 + 8]
    stp     x9, x9, [sp, #16 * 10]
    stp     x9, x9, [sp, #16 * 11]
    stp     x9, x9, [sp, #16 * 12]
    stp     x9, x9, [sp, #16 * 13]
    stp     x9, x9, [sp, #16 * 14]
    str     x9, [sp, #CTX_SP_EL0_PAIR + 8]
    stp     x9, x9, [sp, #CTX_ELR_PAIR]
    str     x9, [sp, #CTX_TPIDR]
.endif
    mov     x0, sp
    mrs     x9, tpidr_el1
    mov     sp, x9
    bl      \kernel_half
    cmp     x1, #LEAN_FINISH
    b.ls    el0_svc_save_rest
    msr     ttbr0_el1, x1
    mov     sp, x0
    x0_to_x7 ldp, sp
    ldp     x8, x9, [sp, #16 * 4]
    ldp     x10, x11, [sp, #16 * 5]
    x12_to_x17 ldp, sp
    ldr     x18, [sp, #16 * 9]
    ldr     x30, [sp, #CTX_SP_EL0_PAIR]
    eret
.endm

// The lean syscall entry (docs/architecture.md; `lean_entry.rs` has the
// protocol): an SVC of a thread with no work (x10, the work word, is 0;
// else the generic entry) that no fast path takes, or, from
// `el0_judged_or_slow`, of a thread whose only work is policy (a thread
// whose only work is audit has a kernel half of its own, below). Only
// x0..x18 and x30 are saved (x9 and x10 are parked already): the kernel's
// half, `portcullis_el0_svc`, leaves x19..x29, SP_EL0, ELR_EL1, SPSR_EL1
// and TPIDR_EL0 as the thread had them. It returns the context in x0 and in
// x1 either the TTBR0 to return with (the thread goes back as it is: only
// what was saved is loaded) or what to do first (the rest of the frame
// saved, then the generic entry or, with the lock still held, the end of
// the lean one).
el0_svc_generic:
    cbnz    x10, el0_sync_slow_x9_x10_saved
el0_svc_lean:
    lean_stub portcullis_el0_svc

// The same for a thread whose only work is audit (from
// `el0_audited_or_slow`): its kernel half goes straight to the audit-only
// lane, without the tests by which `portcullis_el0_svc` finds it.
el0_svc_audited:
    lean_stub portcullis_el0_svc_audited

// From `el0_refused_or_slow` (x9/x10 parked, x10 the work word, x8 below
// 64): a thread whose only work is audit takes the lean entry too (its
// records read x0..x8 and the result, nothing else of the frame), as does
// one whose only work is policy for a number its `lean_judged` mask has
// (its verdict reads and writes x0..x8 alone); one whose work has the user
// dispatch bit goes on as `el0_dispatched_or_slow` does; one whose only
// work is tracing goes to the trace fast path (the kernel's
// `trace_fast_path.s`), which sends its entry stop or leaves the syscall
// to the generic entry; anything else the generic entry.
el0_audited_or_slow:
    cmp     x10, #WORK_AUDIT
    b.eq    el0_svc_audited
    cmp     x10, #WORK_POLICY
    b.eq    el0_judged_or_slow
    tbz     x10, #WORK_USER_DISPATCH_BIT, el0_traced_or_slow
    cmp     x10, #WORK_USER_DISPATCH
    b.eq    portcullis_user_dispatch_fast
    b       el0_sync_slow_x9_x10_saved
el0_traced_or_slow:
    cmp     x10, #WORK_TRACE
    b.eq    portcullis_trace_entry_fast
    b       el0_sync_slow_x9_x10_saved
// Of those, a number whose verdict the thread's filters give from
// x0..x7 alone (its `register_judged` mask, within `lean_judged`: tested
// second, so a number for the generic entry pays nothing for it) is
// judged at once by the kernel's policy fast path (`policy_fast_path.s`),
// which refuses it or goes on at `el0_svc_allowed`. A number the lean
// entry does not judge whose verdict is its one filter's constant
// `Notify`, its request made of the registers alone (the `asked` mask),
// goes to the policy request fast path (the kernel's
// `policy_request_fast_path.s`), which asks the filter's server or leaves
// the syscall to the generic entry; any other to the generic entry.
el0_judged_or_slow:
    ldp     x9, x10, [sp, #LEAN_JUDGED_OFFSET]
    lsr     x9, x9, x8
    tbz     x9, #0, el0_asked_or_slow
    lsr     x10, x10, x8
    tbnz    x10, #0, portcullis_policy_fast
    b       el0_svc_lean
el0_asked_or_slow:
    ldr     x9, [sp, #ASKED_OFFSET]
    lsr     x9, x9, x8
    tbnz    x9, #0, portcullis_policy_request_fast
    b       el0_sync_slow_x9_x10_saved

// A syscall of a thread whose only work is policy that the policy fast
// path allowed on its registers (x9/x10 parked, x8 below 64, the
// registers as the thread left them): `Null` is answered here, any other
// goes on as a syscall without entry work goes from the vector
// (`el0_svc_excused`), to the fast path of its syscall, else the lean
// entry. x10 = 0 sends it there rather than to the generic entry (the
// lean entry reads the work word itself, and judges the call again the
// same way: see `lean_verdict`).
    .global el0_svc_allowed
el0_svc_allowed:
    cbz     x8, 1f
    mov     x10, xzr
    b       el0_svc_excused
1:  mov     x0, xzr
    ldp     x9, x10, [sp, #16 * 4 + 8]
    eret

// From `el0_refused_or_slow` for a number of 64 or more: a thread whose
// only work is syscall user dispatch takes the user-dispatch fast path
// (the kernel's `user_dispatch_fast_path.s`), which sends what it does not
// take to the generic entry; anything else the generic entry. x9/x10
// parked, x10 the work word.
el0_dispatched_or_slow:
    cmp     x10, #WORK_USER_DISPATCH
    b.ne    el0_sync_slow_x9_x10_saved
    b       portcullis_user_dispatch_fast

// The rest of the frame into the context at x0 (sp is the kernel stack's
// top again), then the generic entry (x1 = 0) or the lean entry's end.
el0_svc_save_rest:
    str     x19, [x0, #16 * 9 + 8]
    x20_to_x29 stp, x0
    mrs     x21, sp_el0
    str     x21, [x0, #CTX_SP_EL0_PAIR + 8]
    mrs     x22, elr_el1
    mrs     x23, spsr_el1
    stp     x22, x23, [x0, #CTX_ELR_PAIR]
    mrs     x24, tpidr_el0
    str     x24, [x0, #CTX_TPIDR]
    cbnz    x1, 1f
    bl      portcullis_el0_sync
    b       .
1:  bl      portcullis_el0_svc_finish
    b       .

el0_sync_slow:
    save_user_context
    bl      portcullis_el0_sync
    b       .

// The same with x9/x10 parked: from the inline checks, and where the
// yield, notification and user-dispatch fast paths (the kernel's) send
// what they decline.
    .global el0_sync_slow_x9_x10_saved
el0_sync_slow_x9_x10_saved:
    save_user_context x9_x10_saved=1
    bl      portcullis_el0_sync
    b       .

// The IPC entry (the kernel's `ipc_entry.rs`): a `Call` or `ReplyRecv`
// the IPC fast path declined (x9/x10 parked). The whole frame is saved,
// then the kernel half of that syscall's entry runs; if it declines, it
// returns, and the generic entry takes the exception.
.macro ipc_entry_stub kernel_half
    save_user_context x9_x10_saved=1
    bl      \kernel_half
    bl      portcullis_el0_sync
    b       .
.endm
    .global el0_ipc_call_slow
el0_ipc_call_slow:
    ipc_entry_stub portcullis_el0_ipc_call
    .global el0_ipc_reply_recv_slow
el0_ipc_reply_recv_slow:
    ipc_entry_stub portcullis_el0_ipc_reply_recv

el1_exception_common:
    stp     x2, x3, [sp, #16 * 1]
    stp     x4, x5, [sp, #16 * 2]
    stp     x6, x7, [sp, #16 * 3]
    stp     x8, x9, [sp, #16 * 4]
    stp     x10, x11, [sp, #16 * 5]
    stp     x12, x13, [sp, #16 * 6]
    stp     x14, x15, [sp, #16 * 7]
    stp     x16, x17, [sp, #16 * 8]
    stp     x18, x19, [sp, #16 * 9]
    stp     x20, x21, [sp, #16 * 10]
    stp     x22, x23, [sp, #16 * 11]
    stp     x24, x25, [sp, #16 * 12]
    stp     x26, x27, [sp, #16 * 13]
    stp     x28, x29, [sp, #16 * 14]
    mrs     x21, sp_el0             // the faulting code's sp
    stp     x30, x21, [sp, #CTX_SP_EL0_PAIR]
    mrs     x22, elr_el1
    mrs     x23, spsr_el1
    stp     x22, x23, [sp, #CTX_ELR_PAIR]
    mov     x0, sp
    bl      portcullis_el1_exception
    b       .

// restore_user_context(ctx: *const UserContext) -> !
// Loads a thread's registers and returns to EL0. SP_EL1 stays pointing at
// the context so the next exception from EL0 saves into it.
    .global restore_user_context
restore_user_context:
    mov     sp, x0
    ldp     x22, x23, [sp, #CTX_ELR_PAIR]
    msr     elr_el1, x22
    // Whatever wrote the context (the kernel, a tracer), the thread returns
    // to EL0t with interrupts unmasked: only the bits of its SPSR a user
    // thread may hold survive (NZCV, SS and EL0's own PSTATE bits:
    // context::SPSR_USER_WRITABLE), so the eret below cannot enter EL1.
    movz    x24, #SPSR_USER_WRITABLE_HIGH, lsl #16
    movk    x24, #SPSR_USER_WRITABLE_LOW
    and     x23, x23, x24
    msr     spsr_el1, x23
    ldr     x24, [sp, #CTX_TPIDR]
    msr     tpidr_el0, x24
    ldp     x30, x21, [sp, #CTX_SP_EL0_PAIR]
    msr     sp_el0, x21
    x0_to_x7 ldp, sp
    ldp     x8, x9, [sp, #16 * 4]
    ldp     x10, x11, [sp, #16 * 5]
    x12_to_x17 ldp, sp
    ldp     x18, x19, [sp, #16 * 9]
    x20_to_x29 ldp, sp
    eret

// fp_save(state: *mut FpState), fp_restore(state: *const FpState)
// The kernel itself never uses FP/SIMD (softfloat target), so user FP state
// only moves on a switch between threads.
    .arch_extension fp
    .arch_extension simd
    .global fp_save
fp_save:
    stp     q0, q1, [x0, #32 * 0]
    stp     q2, q3, [x0, #32 * 1]
    stp     q4, q5, [x0, #32 * 2]
    stp     q6, q7, [x0, #32 * 3]
    stp     q8, q9, [x0, #32 * 4]
    stp     q10, q11, [x0, #32 * 5]
    stp     q12, q13, [x0, #32 * 6]
    stp     q14, q15, [x0, #32 * 7]
    stp     q16, q17, [x0, #32 * 8]
    stp     q18, q19, [x0, #32 * 9]
    stp     q20, q21, [x0, #32 * 10]
    stp     q22, q23, [x0, #32 * 11]
    stp     q24, q25, [x0, #32 * 12]
    stp     q26, q27, [x0, #32 * 13]
    stp     q28, q29, [x0, #32 * 14]
    stp     q30, q31, [x0, #32 * 15]
    mrs     x1, fpcr
    mrs     x2, fpsr
    add     x0, x0, #512
    stp     x1, x2, [x0]
    ret

    .global fp_restore
fp_restore:
    ldp     q0, q1, [x0, #32 * 0]
    ldp     q2, q3, [x0, #32 * 1]
    ldp     q4, q5, [x0, #32 * 2]
    ldp     q6, q7, [x0, #32 * 3]
    ldp     q8, q9, [x0, #32 * 4]
    ldp     q10, q11, [x0, #32 * 5]
    ldp     q12, q13, [x0, #32 * 6]
    ldp     q14, q15, [x0, #32 * 7]
    ldp     q16, q17, [x0, #32 * 8]
    ldp     q18, q19, [x0, #32 * 9]
    ldp     q20, q21, [x0, #32 * 10]
    ldp     q22, q23, [x0, #32 * 11]
    ldp     q24, q25, [x0, #32 * 12]
    ldp     q26, q27, [x0, #32 * 13]
    ldp     q28, q29, [x0, #32 * 14]
    ldp     q30, q31, [x0, #32 * 15]
    add     x0, x0, #512
    ldp     x1, x2, [x0]
    msr     fpcr, x1
    msr     fpsr, x2
    ret

    .section .bss.panic_stack, "aw", %nobits
    .balign 16
__panic_stack_bottom:
    .space  8192
__panic_stack_top:
