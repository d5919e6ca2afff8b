// The user-dispatch fast path: a syscall of a thread whose only work is
// syscall user dispatch (docs/user_dispatch.md), in its two common cases,
// from the EL0 synchronous vector (`el0_audited_or_slow`, and for numbers
// of 64 or more `el0_dispatched_or_slow`, in `arch/src/cpu/vectors.s`) to
// the eret:
//
// * A redirect: an `svc` outside the allowed range while the selector
//   byte blocks. The 36 words of the frame go straight from the CPU's
//   registers into the buffer, and the thread goes on at its handler
//   with x0 = the buffer, x1 = the number, x30 = 0 (the generic entry's
//   `redirect_to_handler` writes the same words from the saved ones).
// * `UserDispatchReturn`: the frame's PC and NZCV checked as
//   `user_dispatch_return` checks them, then x0..x30, SP_EL0, the PC and
//   NZCV loaded straight from it.
//
// User memory is reached through the address the CPU's own translation
// gives for EL0 (`at s1e0r` / `at s1e0w` while the thread's TTBR0 is
// still installed: the vector never installs the kernel's empty table),
// with the permission the generic entry's walk requires of it
// (`AddressSpace::user_address`: mapped for EL0, written only if
// EL0-writable, Normal memory), then through the linear map. A failed
// translation never faults: PAR_EL1 says so. All of it is done under the
// kernel lock, taken only if it is free at once and the kernel's view is
// this CPU's (`lock_at_once` with its view check, which this path must
// keep): no other CPU has held the lock since this one last did, so no
// unmap, TLB maintenance or request to this CPU came in between, and the
// work word the vector read without the lock still holds. The tables
// change only under the lock, so the page stays as translated until the
// release; the redirect's last write is made before it, the return's last
// read too.
//
// Anything else goes to the generic entry with nothing changed, and it
// decides as it always does (the reference: it also gives every error):
// a syscall in the allowed range, a selector that allows or cannot be
// read, a buffer or frame that is not on one page (the SDK's
// `DispatchBuffer` is aligned so that it always is) or not reachable as
// above, a frame whose PC or NZCV the generic entry refuses, a busy lock.
//
// Neither way is counted as a generic-path syscall by the test images'
// statistics (as the other fast paths' are not): the in-guest suite
// tells the two ways apart by it.
//
// Entered with x9/x10 parked in their context slots (SP_EL1 points at the
// thread's saved registers), x8 the number; x11 and x12 are parked here
// too. Registers while the checks run:
//   x9   the kernel state (its lock word first), once locked
//   x10, x11  scratch
//   x12  PAR_EL1, then the kernel's address of the buffer or frame
// Of the thread's saved registers only the slots of x9..x12 are written
// (what is parked there, and on the return the frame's x9 and x12): it
// goes back at once, and another CPU reads or writes its context only
// after stopping this one, which waits for its whole save.

// Its own values, beside the shared ones (`fast_path_common.s`), from
// `fast_paths.rs`.
.equ SYSCALL_USER_DISPATCH_RETURN, {SYSCALL_USER_DISPATCH_RETURN}
.equ T_UD_START,          {T_UD_START}       // the thread's `user_dispatch` words
.equ T_UD_END,            {T_UD_END}
.equ T_UD_HANDLER,        {T_UD_HANDLER}
.equ T_UD_BUFFER,         {T_UD_BUFFER}
.equ T_UD_SELECTOR,       {T_UD_SELECTOR}
.equ NZCV_MASK,           {NZCV_MASK}        // SPSR's NZCV bits
.equ NZCV_C,              {NZCV_C}           // `ccmp`'s flags: C alone
.equ USER_HALF_OUTSIDE,   {USER_HALF_OUTSIDE} // the bits no user address has
.equ LINEAR_BASE,         {LINEAR_BASE}      // physical address 0 in the linear map
.equ PAGE_SIZE,           {PAGE_SIZE}
.equ FRAME_BYTES,         {FRAME_BYTES}      // a user-dispatch frame
.equ PAR_PA_MASK,         {PAR_PA_MASK}      // PAR_EL1's output address
.equ PAR_ATTR_OUTER_MASK, {PAR_ATTR_OUTER_MASK} // its attribute byte's upper half

    .section .text.user_dispatch_fast_path, "ax"

// `va`'s page translated for EL0 by `at \op` (s1e0r: readable, s1e0w:
// writable), Normal memory, else `declined`: the kernel's linear-map
// address of `va` to `out` (x10 clobbered). Device memory's attribute
// byte has a zero upper half (MAIR's Device encodings), Normal memory's
// never.
.macro user_page op, va, out, declined
    at      \op, \va
    isb
    mrs     \out, par_el1
    tbnz    \out, #0, \declined
    tst     \out, #PAR_ATTR_OUTER_MASK
    b.eq    \declined
    and     \out, \out, #PAR_PA_MASK
    bfxil   \out, \va, #0, #12
    mov     x10, #LINEAR_BASE
    add     \out, \out, x10
.endm

// `address`'s FRAME_BYTES on one page, else `declined` (x10 clobbered).
.macro frame_on_one_page address, declined
    and     x10, \address, #(PAGE_SIZE - 1)
    cmp     x10, #(PAGE_SIZE - FRAME_BYTES)
    b.hi    \declined
.endm

    .global portcullis_user_dispatch_fast
portcullis_user_dispatch_fast:
    stp     x11, x12, [sp, #8 * 11]
    lock_at_once x9, x10, x11, w11, user_dispatch_busy, user_dispatch_busy, x12
    cmp     x8, #SYSCALL_USER_DISPATCH_RETURN
    b.eq    user_dispatch_return_fast
    // The svc's address (ELR is the one after it): in [start, end) the
    // syscall runs (`ccmp` makes an address below start compare as not
    // below end).
    mrs     x10, elr_el1
    sub     x10, x10, #4
    ldr     x11, [sp, #T_UD_START]
    ldr     x12, [sp, #T_UD_END]
    cmp     x10, x11
    ccmp    x10, x12, #NZCV_C, hs
    b.lo    user_dispatch_declined
    // The selector byte: 0 (allow) runs the syscall; unreadable is the
    // generic entry's to report.
    ldr     x11, [sp, #T_UD_SELECTOR]
    user_page s1e0r, x11, x12, user_dispatch_declined
    ldrb    w10, [x12]
    cbz     w10, user_dispatch_declined
    // The buffer, writable, on one page.
    ldr     x11, [sp, #T_UD_BUFFER]
    frame_on_one_page x11, user_dispatch_declined
    user_page s1e0w, x11, x12, user_dispatch_declined
    // The frame: x0..x30 (x9..x12 from where they are parked), SP_EL0,
    // the PC after the svc, NZCV, the number, flags 0. x0 and x1 are the
    // scratch registers from here: the handler gets new ones.
    x0_to_x7_pairs stp, x12
    ldp     x0, x1, [sp, #8 * 9]
    stp     x8, x0, [x12, #8 * 8]
    ldr     x0, [sp, #8 * 11]
    stp     x1, x0, [x12, #8 * 10]
    ldr     x1, [sp, #8 * 12]
    stp     x1, x13, [x12, #8 * 12]
    stp     x14, x15, [x12, #8 * 14]
    stp     x16, x17, [x12, #8 * 16]
    stp     x18, x19, [x12, #8 * 18]
    x20_to_x29_pairs stp, x12
    mrs     x0, sp_el0
    stp     x30, x0, [x12, #8 * 30]
    mrs     x0, elr_el1
    mrs     x1, spsr_el1
    and     x1, x1, #NZCV_MASK
    stp     x0, x1, [x12, #8 * 32]
    stp     x8, xzr, [x12, #8 * 34]
    // The handler, from its first instruction.
    ldr     x0, [sp, #T_UD_HANDLER]
    msr     elr_el1, x0
    ldr     x0, [sp, #T_UD_BUFFER]
    mov     x1, x8
    mov     x30, xzr
    // The lock's release: the frame is whole before the page can go.
    stlr    xzr, [x9]
    ldp     x9, x10, [sp, #8 * 9]
    ldp     x11, x12, [sp, #8 * 11]
    eret

// `UserDispatchReturn`, x0 the frame's address: 8-aligned, on one page,
// readable (else the generic entry's error).
user_dispatch_return_fast:
    tst     x0, #7
    b.ne    user_dispatch_declined
    frame_on_one_page x0, user_dispatch_declined
    user_page s1e0r, x0, x12, user_dispatch_declined
    // The PC and NZCV words, each read once (the values checked are the
    // values used): the PC with 4 bytes in the user half, NZCV bits only.
    // (x0 stays the thread's until the last decline: the generic entry
    // must find the call as it was made.) The PC: below the user half's
    // end, and so is PC + 3.
    ldp     x10, x11, [x12, #8 * 32]
    tst     x11, #~NZCV_MASK
    b.ne    user_dispatch_declined
    tst     x10, #USER_HALF_OUTSIDE
    b.ne    user_dispatch_declined
    add     x10, x10, #3
    tst     x10, #USER_HALF_OUTSIDE
    sub     x10, x10, #3
    b.ne    user_dispatch_declined
    msr     elr_el1, x10
    mrs     x0, spsr_el1
    and     x0, x0, #~NZCV_MASK
    orr     x0, x0, x11
    msr     spsr_el1, x0
    ldr     x0, [x12, #8 * 31]
    msr     sp_el0, x0
    // x9 and x12 hold the lock's and the frame's addresses until the
    // release: theirs go by their context slots (kernel memory, which
    // stays while the thread runs here).
    ldr     x0, [x12, #8 * 9]
    str     x0, [sp, #8 * 9]
    ldr     x0, [x12, #8 * 12]
    str     x0, [sp, #8 * 12]
    x0_to_x7_pairs ldp, x12
    ldr     x8, [x12, #8 * 8]
    ldp     x10, x11, [x12, #8 * 10]
    ldp     x13, x14, [x12, #8 * 13]
    ldp     x15, x16, [x12, #8 * 15]
    ldp     x17, x18, [x12, #8 * 17]
    ldp     x19, x20, [x12, #8 * 19]
    ldp     x21, x22, [x12, #8 * 21]
    ldp     x23, x24, [x12, #8 * 23]
    ldp     x25, x26, [x12, #8 * 25]
    ldp     x27, x28, [x12, #8 * 27]
    ldp     x29, x30, [x12, #8 * 29]
    // The lock's release: every word of the frame is read before it.
    stlr    xzr, [x9]
    ldr     x9, [sp, #8 * 9]
    ldr     x12, [sp, #8 * 12]
    eret

// Not for this path: the generic entry, the lock released first, with
// x11/x12 as the thread had them (x9/x10 stay parked).
user_dispatch_declined:
    stlr    xzr, [x9]
user_dispatch_busy:
    ldp     x11, x12, [sp, #8 * 11]
    b       el0_sync_slow_x9_x10_saved
