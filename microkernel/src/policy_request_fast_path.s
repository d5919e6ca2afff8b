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
// and the syscall names no capability and carries no memory
// (`VerdictCache::asked_mask`), so the request is the registers, the PC,
// the thread's number and a new cookie. The stop's steps are the trace
// fast path's (`stop_opening`, `endpoint_lives`, `stop_receiver_may_run`,
// `keep_call`, `wait_for_answer`: `trace_fast_path.s`, assembled before
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

    .section .text.policy_request_fast_path, "ax"

    .global portcullis_policy_request_fast
portcullis_policy_request_fast:
    stop_opening
    // One filter (the mask was made for that stack, which changes only
    // while the thread is stopped), with a server whose endpoint still
    // lives (`Kernel::live_server`); a receiver waits there that may take
    // the request, with an IPC buffer for its last eleven words.
    add     x9, sp, #T_FILTERS_LEN
    ldr     x10, [x9]
    cmp     x10, #1
    b.ne    refuse_locked
    ldrb    w10, [x9, #T_SERVER - T_FILTERS_LEN]
    cbz     w10, refuse_locked
    ldr     w23, [x9, #T_SERVER_ID - T_FILTERS_LEN]
    ldr     x22, [x9, #T_SERVER_SERIAL - T_FILTERS_LEN]
    endpoint_lives x22
    stop_receiver_may_run
    // Point of no return: `Kernel::syscall_judged`'s changes, then
    // `Kernel::notify_policy_server`'s and `ipc::send_kernel_message`'s.
    // The call is kept as stopped at its policy stage, asking filter 0
    // (`CallSlot::POLICY_ASK`: no capability was judged), with `x8` the
    // number it goes with.
    keep_call {POLICY_ASK_CALL}
    str     x8, [sp, #T_TRACE_NUMBER]
    // The request, with the kernel's next cookie: filter 0, no object
    // type, no badge.
    ldr     x22, [x19, #KERNEL + K_POLICY_COOKIE]
    add     x22, x22, #1
    str     x22, [x19, #KERNEL + K_POLICY_COOKIE]
    mov     w9, #KERNEL_MESSAGE_POLICY_REQUEST
    strb    w9, [sp, #T_KERNEL_MESSAGE]
    strb    wzr, [sp, #T_KERNEL_MESSAGE + POLICY_REQUEST_FILTER]
    str     xzr, [sp, #T_KERNEL_MESSAGE + POLICY_REQUEST_OBJECT_TYPE]
    str     xzr, [sp, #T_KERNEL_MESSAGE + POLICY_REQUEST_BADGE]
    str     x22, [sp, #T_KERNEL_MESSAGE + POLICY_REQUEST_COOKIE]
    // The thread waits for the answer the server now owes it.
    wait_for_answer
    // The request's words 6..16 into the server's IPC buffer (through the
    // linear map, as `PhysMemory::write_phys_words`): x1..x7, the PC, and
    // no memory (`CarriedMemory::None`, length 0, nothing judged)
    // (`abi::policy_request::PolicyRequest::encode`).
    mov     x10, #LINEAR_BASE
    add     x21, x21, x10
    ldr     x23, [sp, #CTX_ELR_PAIR]
    str     x1, [x21, #8 * 6]
    stp     x2, x3, [x21, #8 * 7]
    stp     x4, x5, [x21, #8 * 9]
    stp     x6, x7, [x21, #8 * 11]
    stp     x23, xzr, [x21, #8 * 13]
    stp     xzr, xzr, [x21, #8 * 15]
    // Words 0..5 in the server's x2..x7: the number, no object type, no
    // badge, the thread's number, the cookie, x0. Then x1 the request's
    // message info, x0 `Ok`, x8 the server's badge.
    mov     x7, x0
    mov     x6, x22
    ldr     w5, [sp, #T_NUMBER]
    mov     x4, xzr
    mov     x3, xzr
    mov     x2, x8
    ldr     x1, ={POLICY_REQUEST_INFO}
    mov     x0, xzr
    add     x9, sp, #T_FILTERS_LEN
    ldr     x8, [x9, #T_SERVER_BADGE - T_FILTERS_LEN]
    run_next x19
    return_to_partner
