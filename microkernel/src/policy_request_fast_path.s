// The policy request fast path: the request of a syscall whose verdict
// is its thread's one filter's constant `Notify`, sent to the filter's
// policy server waiting in `Recv` (or `ReplyRecv`) on the endpoint it
// serves, from the EL0 synchronous vector (`arch/src/cpu/vectors.s`,
// `el0_asked_or_slow`) to the server's eret. What it checks and what it
// changes: `microkernel::kernel::fast_path`.
//
// Entered as the trace fast path is (x9/x10 parked, x8 below 64), for a
// thread whose work word is `POLICY` alone and whose `asked` mask has
// x8's bit: the number's verdict is the one filter's constant `Notify`,
// and the syscall carries no memory (`VerdictCache::asked_mask`), so the
// request is the registers, the PC, the thread's number, a new cookie,
// and the type and badge of the capability x0 names (none for a syscall
// that names none). The stop's steps are the trace
// fast path's (`stop_opening`, `referenced_receiver_may_run`, `keep_call`,
// `wait_for_answer`, `send_to_receiver`: `trace_fast_path.s`, assembled before
// it), and so are its registers while the checks run; a refusal leaves
// the syscall to the generic entry as it came.

// Its own values, from `fast_paths.rs`.
.equ T_FILTERS_LEN,        {T_FILTERS_LEN}         // the stack's length (a word)
.equ T_SERVER,             {T_SERVER}              // filter 0's server: its tag byte, 0 for none
.equ T_SERVER_ID,          {T_SERVER_ID}           // its endpoint's granule
.equ T_SERVER_SERIAL,      {T_SERVER_SERIAL}
.equ T_SERVER_BADGE,       {T_SERVER_BADGE}
.equ K_POLICY_COOKIE,      {K_POLICY_COOKIE}
.equ KERNEL_MESSAGE_POLICY_REQUEST, {KERNEL_MESSAGE_POLICY_REQUEST}
.equ POLICY_REQUEST_FILTER, {POLICY_REQUEST_FILTER}        // from the message's tag
.equ POLICY_REQUEST_OBJECT_TYPE, {POLICY_REQUEST_OBJECT_TYPE}
.equ POLICY_REQUEST_BADGE, {POLICY_REQUEST_BADGE}
.equ POLICY_REQUEST_COOKIE, {POLICY_REQUEST_COOKIE}
.equ K_NEWEST_SERIAL,      {K_NEWEST_SERIAL}

    .section .text.policy_request_fast_path, "ax"

    .global portcullis_policy_request_fast
portcullis_policy_request_fast:
    stop_opening
    // One filter (the mask was made for that stack, which changes only
    // while the thread is stopped), with a server whose endpoint still
    // lives (`Kernel::live_server`); a receiver waits there that may take
    // the request, with an IPC buffer for its last eleven words.
    ldr     x10, [sp, #T_FILTERS_LEN]
    cmp     x10, #1
    b.ne    refuse_locked
    referenced_receiver_may_run T_SERVER, T_SERVER_ID, T_SERVER_SERIAL
    // Point of no return: `Kernel::syscall_judged`'s changes, then
    // `Kernel::stop_call`'s, `Kernel::notify_policy_server`'s and
    // `ipc::send_kernel_message`'s. The call is kept as stopped at its
    // policy stage, asking filter 0 (`CallSlot::POLICY_ASK`), with `x8`
    // the number it goes with.
    keep_call {POLICY_ASK_CALL}
    str     x8, [sp, #T_TRACE_NUMBER]
    // A syscall that names a capability (`Syscall::names_capability`) is
    // kept with what the slot x0 names holds (`Kernel::capability_named`:
    // an empty capability past the CSpace's slots) and the serial numbers
    // given out so far, at least 1 (`Kernel::judged_capability`); its
    // request carries that capability's type and badge (none for an
    // empty one). Another keeps none, and its request carries none.
    mov     x22, xzr
    mov     x23, xzr
    ldr     x9, ={NAMES_NO_CAPABILITY}
    lsr     x9, x9, x8
    tbnz    x9, #0, .Lrequest
    ldr     x9, [sp, #T_CSPACE_FIRST]
    cmp     x0, x9, lsr #32
    b.hs    .Lnamed
    add     x9, x0, w9, uxtw
    add     x9, x20, x9, lsl #SLOT_SHIFT
    ldp     x22, x23, [x9, #SLOT_CAP_WORD]
.Lnamed:
    ldr     x9, [x19, #KERNEL + K_NEWEST_SERIAL]
    cmp     x9, #0
    csinc   x9, x9, xzr, ne
    str     x22, [sp, #T_CALL_CAPABILITY_WORD]
    str     x23, [sp, #T_CALL_CAPABILITY_BADGE]
    str     x9, [sp, #T_CALL_CAPABILITY_SERIAL]
    and     x22, x22, #CAP_TYPE_MASK
    cmp     x22, #0
    csel    x23, xzr, x23, eq
.Lrequest:
    // The request, with the kernel's next cookie (x11; the thread's x11..x18
    // are in its context now): filter 0, the object type (x22) and badge
    // (x23).
    ldr     x11, [x19, #KERNEL + K_POLICY_COOKIE]
    add     x11, x11, #1
    str     x11, [x19, #KERNEL + K_POLICY_COOKIE]
    mov     w9, #KERNEL_MESSAGE_POLICY_REQUEST
    strb    w9, [sp, #T_KERNEL_MESSAGE]
    strb    wzr, [sp, #T_KERNEL_MESSAGE + POLICY_REQUEST_FILTER]
    str     x22, [sp, #T_KERNEL_MESSAGE + POLICY_REQUEST_OBJECT_TYPE]
    str     x23, [sp, #T_KERNEL_MESSAGE + POLICY_REQUEST_BADGE]
    str     x11, [sp, #T_KERNEL_MESSAGE + POLICY_REQUEST_COOKIE]
    // The thread waits for the answer the server now owes it.
    wait_for_answer
    // The request's words 6..16 into the server's IPC buffer: x1..x7, the
    // PC, and no memory (`CarriedMemory::None`, length 0, nothing judged)
    // (`abi::policy_request::PolicyRequest::encode`).
    ldr     x9, [sp, #CTX_ELR_PAIR]
    str     x1, [x21, #8 * 6]
    stp     x2, x3, [x21, #8 * 7]
    stp     x4, x5, [x21, #8 * 9]
    stp     x6, x7, [x21, #8 * 11]
    stp     x9, xzr, [x21, #8 * 13]
    stp     xzr, xzr, [x21, #8 * 15]
    // Words 0..5 in the server's x2..x7: the number, the object type, the
    // badge, the thread's number, the cookie, x0.
    mov     x7, x0
    mov     x6, x11
    ldr     w5, [sp, #T_NUMBER]
    mov     x4, x23
    mov     x3, x22
    mov     x2, x8
    send_to_receiver {POLICY_REQUEST_INFO}, T_SERVER_BADGE
