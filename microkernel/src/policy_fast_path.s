// The policy fast path: a syscall of a thread whose only work is policy,
// for a number whose verdict its filters give from x0..x7 alone (its bit
// in the thread's `register_judged` mask), from the EL0 synchronous
// vector (`el0_judged_or_slow`, in `arch/src/cpu/vectors.s`; x8 below 64,
// no exit work) to its verdict:
//
// * The thread's compiled verdicts (`filter::RegisterProgram`, which
//   says what they are and how they are built) are walked on the
//   registers as the thread left them: each comparison masks one of
//   x0..x7, compares it with a value, and on the outcome goes on at one
//   of two later comparisons, the verdict so far raised to its own when
//   it holds. The rank that ends the walk is 0 for `Allow`, else
//   `ERRNO_RANK | code` (the strictest `Errno` of the filters).
// * Allowed: x0..x7 as they were, and on as a syscall without entry
//   work goes (`el0_svc_allowed`: `Null` answered, the IPC, yield and
//   notification fast paths, else the lean entry, which judges it again
//   the same way, in Rust).
// * Refused: x0 = the code, as the generic entry's policy stage leaves it
//   (and the vector's constant refusals do), and the thread goes on.
//
// No lock: the program, the mask and the work word change only while
// the thread is stopped (attaching a filter stops it on its CPU first),
// as the no-entry-work and refused masks the vector reads do. Nothing
// is counted as a generic-path syscall by the test images' statistics.
//
// Entered with x9/x10 parked in their context slots (SP_EL1 points at the
// thread's saved registers). x0..x7 are stored in their slots (the walk
// indexes them there) and are the walk's scratch registers:
//   x0, x1  the comparison's mask and value
//   x2, x3  its verdict's rank and its word of rank and links
//   x4..x6  the masked register, the outcome, the outcome's bit
//   x7      the verdict's rank so far
//   x9      the comparisons, x10 the next one's index

.equ T_PROGRAM_START, {T_PROGRAM_START}
.equ T_PROGRAM_COMPARISONS, {T_PROGRAM_COMPARISONS}
.equ PROGRAM_END, {PROGRAM_END}             // the link that ends the walk
.equ ERRNO_CODE_MASK, {ERRNO_CODE_MASK}     // a rank's code bits

    .section .text.policy_fast_path, "ax"

    .global portcullis_policy_fast
portcullis_policy_fast:
    x0_to_x7_pairs stp, sp
    // (x8 is below 64 here; masked all the same, so that no load of a
    // mispredicted way reaches past the table with the user's value.)
    and     x10, x8, #63
    add     x9, sp, #T_PROGRAM_START
    ldrb    w10, [x9, x10]
    add     x9, sp, #T_PROGRAM_COMPARISONS
    mov     x7, xzr
    b       2f
    // One comparison (24 bytes): the mask and the value, then a word
    // with the verdict's rank (bits 0..31), the register (32..39), the
    // outcomes that hold (40..47: bit 0 less, 1 equal, 2 greater), and
    // where to go when it holds (48..55) or fails (56..63).
1:  add     x10, x10, x10, lsl #1
    add     x10, x9, x10, lsl #3
    ldp     x0, x1, [x10]
    ldr     x3, [x10, #16]
    ubfx    x4, x3, #32, #3
    ldr     x4, [sp, x4, lsl #3]
    and     x4, x4, x0
    cmp     x4, x1
    // The outcome's number: 0 less, 1 equal, 2 greater (unsigned).
    cset    w5, hi
    cinc    w5, w5, hs
    add     w5, w5, #40
    lsr     x6, x3, x5
    lsr     x10, x3, #56
    tbz     x6, #0, 2f
    mov     w2, w3
    cmp     x7, x2
    csel    x7, x7, x2, hs
    ubfx    x10, x3, #48, #8
2:  cmp     x10, #PROGRAM_END
    b.ne    1b
    cbnz    x7, policy_fast_refused
    x0_to_x7_pairs ldp, sp
    b       el0_svc_allowed

policy_fast_refused:
    and     x0, x7, #ERRNO_CODE_MASK
    ldr     x1, [sp, #8]
    ldp     x2, x3, [sp, #16 * 1]
    ldp     x4, x5, [sp, #16 * 2]
    ldp     x6, x7, [sp, #16 * 3]
    ldp     x9, x10, [sp, #16 * 4 + 8]
    eret
