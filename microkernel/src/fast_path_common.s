// What the fast paths share (`ipc_fast_path.s`, `yield_fast_path.s`,
// `notification_fast_path.s`, `user_dispatch_fast_path.s`, assembled
// after this file in one block by
// `fast_paths.rs`): the values they use, and the steps each of them takes
// the same way.

// The values come from Rust (`fast_paths.rs` passes them as `global_asm!`
// const operands, from `microkernel::kernel::fast_path::layout`).
.equ KERNEL,               {KERNEL}                // the Kernel in the locked state
.equ K_CORE_TOKEN,         {K_CORE_TOKEN}
.equ K_LAST_RAN,           {K_LAST_RAN}            // then current
.equ K_CURRENT,            {K_CURRENT}             // then fp_owner
.equ K_FP_OWNER,           {K_FP_OWNER}
.equ K_MEMORY_BASE,        {K_MEMORY_BASE}
.equ K_ASID_GENERATION,    {K_ASID_GENERATION}
.equ GRANULE_SHIFT,        {GRANULE_SHIFT}
.equ TCB_BODY,             {TCB_BODY}
.equ T_STATE,              {T_STATE}
.equ T_FAST_KEY,           {T_FAST_KEY}
.equ T_QUEUE_PREVIOUS,     {T_QUEUE_PREVIOUS}      // then next
.equ T_QUEUE_NEXT,         {T_QUEUE_NEXT}
.equ T_REPLY_TO,           {T_REPLY_TO}
.equ T_REPLY_FROM,         {T_REPLY_FROM}
.equ T_BOUND_NOTIFICATION, {T_BOUND_NOTIFICATION}
.equ T_CSPACE_FIRST,       {T_CSPACE_FIRST}        // then the number of slots
.equ T_TTBR0,              {T_TTBR0}               // then the ASID generation
.equ T_WORK,               {T_WORK}
.equ WORK_NOT_POLICY,      {WORK_NOT_POLICY}
.equ STATE_RUNNING,        {STATE_RUNNING}
.equ STATE_BLOCKED_ON_RECEIVE, {STATE_BLOCKED_ON_RECEIVE}
.equ STATE_BLOCKED_ON_REPLY,   {STATE_BLOCKED_ON_REPLY}
.equ STATE_BLOCKED_ON_ANSWER,  {STATE_BLOCKED_ON_ANSWER}
.equ T_KERNEL_MESSAGE,     {T_KERNEL_MESSAGE}      // its tag byte
.equ KERNEL_MESSAGE_NONE,  {KERNEL_MESSAGE_NONE}
.equ KERNEL_MESSAGE_TRACE_STOP, {KERNEL_MESSAGE_TRACE_STOP}
.equ TRACE_STOP_KIND,      {TRACE_STOP_KIND}       // from the tag byte
.equ STOP_KIND_EXIT,       {STOP_KIND_EXIT}
.equ T_TRACE_OWED,         {T_TRACE_OWED}
.equ WORK_TRACE,           {WORK_TRACE}
.equ K_STEP_INSTALLED,     {K_STEP_INSTALLED}
.equ SPSR_SS_BIT,          {SPSR_SS_BIT}
.equ TRACE_REPLY_CONTINUE, {TRACE_REPLY_CONTINUE}
.equ SLOT_SHIFT,           {SLOT_SHIFT}
.equ SLOT_CAP_WORD,        {SLOT_CAP_WORD}         // then the badge
.equ CAP_TYPE_MASK,        {CAP_TYPE_MASK}
.equ CAP_ENDPOINT,         {CAP_ENDPOINT}
.equ CAP_READ_BIT,         {CAP_READ_BIT}
.equ CAP_WRITE_BIT,        {CAP_WRITE_BIT}
.equ CAP_OBJECT_SHIFT,     {CAP_OBJECT_SHIFT}
.equ EP_HEAD,              {EP_HEAD}               // then the tail
.equ EP_TAIL,              {EP_TAIL}
.equ EP_WAITING,           {EP_WAITING}
.equ WAITING_RECEIVERS,    {WAITING_RECEIVERS}
.equ WAITING_SENDERS_BIT,  {WAITING_SENDERS_BIT}   // the bit only Senders has
.equ WAITING_RECEIVERS_BIT, {WAITING_RECEIVERS_BIT} // the bit only Receivers has
.equ CPACR_FPEN_TRAP_EL0,  {CPACR_FPEN_TRAP_EL0}
.equ CPACR_FPEN_EL0_SHIFT, {CPACR_FPEN_EL0_SHIFT}
.equ CTX_SP_EL0_PAIR,      {CTX_SP_EL0_PAIR}       // x30, sp_el0
.equ CTX_ELR_PAIR,         {CTX_ELR_PAIR}          // elr_el1, spsr_el1
.equ CTX_TPIDR,            {CTX_TPIDR}
.equ MESSAGE_LENGTH_AND_CAPS_MASK, {MESSAGE_LENGTH_AND_CAPS_MASK}
.equ REGISTER_MESSAGE_WORDS, {REGISTER_MESSAGE_WORDS}
.equ SYSCALL_CALL,         {SYSCALL_CALL}          // abi::Syscall::Call
.equ K_RUN_QUEUE_NONEMPTY, {K_RUN_QUEUE_NONEMPTY}  // CPU 0's bitmap
.equ T_RUN_QUEUE_WORD,     {T_RUN_QUEUE_WORD}      // its word's offset from there
.equ T_PRIORITY,           {T_PRIORITY}
.equ T_YIELDS,             {T_YIELDS}              // the statistics' count (test images)
.equ COUNT_YIELDS,         {COUNT_YIELDS}
.equ K_RUN_QUEUE_HEADS,    {K_RUN_QUEUE_HEADS}     // CPU 0's first thread by priority
.equ K_RUN_QUEUE_TAILS,    {K_RUN_QUEUE_TAILS}     // and last
.equ T_CALL,               {T_CALL}                // its tag byte: 0 for none
.equ T_RUN_PREVIOUS,       {T_RUN_PREVIOUS}        // then next
.equ T_RUN_NEXT,           {T_RUN_NEXT}
.equ STATE_READY,          {STATE_READY}
.equ STATE_BLOCKED_ON_NOTIFICATION, {STATE_BLOCKED_ON_NOTIFICATION}
.equ CAP_NOTIFICATION,     {CAP_NOTIFICATION}
.equ CAP_BADGED_BIT,       {CAP_BADGED_BIT}
.equ N_WORD,               {N_WORD}
.equ N_HEAD,               {N_HEAD}
.equ N_TAIL,               {N_TAIL}
.equ N_WAITING,            {N_WAITING}
.equ N_BOUND,              {N_BOUND}

// Register pairs by their slots in a context at `base` (a user-dispatch
// frame lays x0..x30 out the same way), `op` `stp` to save or `ldp` to
// load. (The vectors, `arch/src/cpu/vectors.s`, have the same two for
// their saves: they are assembled in another crate's block, where these
// macros are not defined.)
.macro x0_to_x7_pairs op, base
    \op     x0, x1, [\base, #16 * 0]
    \op     x2, x3, [\base, #16 * 1]
    \op     x4, x5, [\base, #16 * 2]
    \op     x6, x7, [\base, #16 * 3]
.endm
.macro x20_to_x29_pairs op, base
    \op     x20, x21, [\base, #16 * 10]
    \op     x22, x23, [\base, #16 * 11]
    \op     x24, x25, [\base, #16 * 12]
    \op     x26, x27, [\base, #16 * 13]
    \op     x28, x29, [\base, #16 * 14]
.endm

// x0..x8 into the context SP_EL1 points at.
.macro save_arguments
    x0_to_x7_pairs stp, sp
    str     x8, [sp, #16 * 4]
.endm

// x0..x8 and x11..x18 into the context SP_EL1 points at: with x9/x10,
// which the vector parked, what a path saves besides the callee-saved
// registers when it hands a syscall to the generic entry, or when the
// thread's every register must be kept.
.macro save_arguments_and_temporaries
    save_arguments
    stp     x11, x12, [sp, #8 * 11]
    stp     x13, x14, [sp, #8 * 13]
    stp     x15, x16, [sp, #8 * 15]
    stp     x17, x18, [sp, #8 * 17]
.endm

// x0..x8, x19..x30 and the system registers into the context SP_EL1
// points at (with `with_x18`, x18 too, in one pair store with x19): what
// a thread that leaves the CPU keeps beyond what each path saves itself.
.macro save_arguments_and_callee_saved with_x18=0
    save_arguments
    save_callee_saved \with_x18
.endm

// x19..x30 and the system registers (with `with_x18`, x18 too) into the
// context SP_EL1 points at: what a switch must keep of a thread whose
// x0..x8 are results to come (the IPC fast path's caller).
.macro save_callee_saved with_x18=0
.if \with_x18
    stp     x18, x19, [sp, #16 * 9]
.else
    str     x19, [sp, #8 * 19]
.endif
    x20_to_x29_pairs stp, sp
    mrs     x21, sp_el0
    stp     x30, x21, [sp, #CTX_SP_EL0_PAIR]
    mrs     x22, elr_el1
    mrs     x23, spsr_el1
    stp     x22, x23, [sp, #CTX_ELR_PAIR]
    mrs     x24, tpidr_el0
    str     x24, [sp, #CTX_TPIDR]
.endm

// The kernel lock, if it is free at once, and this CPU's view: `state`
// gets the locked state's address (its lock word first), `token` this
// CPU's token (TPIDR_EL1: its stack top, never 0); `scratch` (`wscratch`
// its 32-bit name) is clobbered.
//
// With `view` (a second scratch register): the lock word and the token
// of the CPU whose view the kernel holds, which follows it, come in one
// exclusive pair load, and the lock is taken only if it is free and the
// view this CPU's; anything else goes to `busy` with nothing taken. (The
// pair store writes the view's token back unchanged: it is this CPU's.)
// Without: a held lock goes to `busy`, another CPU's view (the lock then
// held) to `other`.
.macro lock_at_once state, token, scratch, wscratch, busy, other, view
    // One load from the literal pool at the end of the section (adrp and
    // add are two instructions).
    ldr     \state, ={STATE}
    mrs     \token, tpidr_el1
.ifnb \view
    ldaxp   \scratch, \view, [\state]
    cbnz    \scratch, \busy
    cmp     \view, \token
    b.ne    \busy
    stxp    \wscratch, \token, \token, [\state]
    cbnz    \wscratch, \busy
.else
    ldaxr   \scratch, [\state]
    cbnz    \scratch, \busy
    stxr    \wscratch, \token, [\state]
    cbnz    \wscratch, \busy
    ldr     \scratch, [\state, #KERNEL + K_CORE_TOKEN]
    cmp     \scratch, \token
    b.ne    \other
.endif
.endm

// The thread whose TCB record is x26 has an address space whose ASID is
// of the current generation (its TTBR0 value to x27), or `refuse`. One
// compare says both: a thread without a space (TTBR0 0) has generation
// 0, which is no generation's (`AsidAllocator::FIRST_GENERATION`;
// `Kernel::check_invariants` checks it).
.macro asid_current state, refuse
    ldp     x27, x10, [x26, #TCB_BODY + T_TTBR0]
    ldr     x9, [\state, #KERNEL + K_ASID_GENERATION]
    cmp     x9, x10
    b.ne    \refuse
.endm

// The thread whose TCB record is x26 may return to EL0 at once: no work
// but policy work, no stopped syscall to go on with, an address space
// whose ASID is of the current generation (TTBR0 to x27); or `refuse`.
.macro next_may_run state, refuse
    ldr     x10, [x26, #TCB_BODY + T_WORK]
    tst     x10, #WORK_NOT_POLICY
    b.ne    \refuse
    add     x9, x26, #TCB_BODY
    ldrb    w10, [x9, #T_CALL]
    cbnz    w10, \refuse
    asid_current \state, \refuse
.endm

// The thread w25 (TCB record x26, TTBR0 value x27) runs: its state, the
// kernel's current thread (and the one that ran last), FP/SIMD access as
// its ownership says (w29: the owner, which each path loads with the
// current thread, w28, in one pair load), its address space; then the
// lock at `state` is released. Its registers are the caller's to load.
//
// CPACR_EL1 as `registers::set_user_fp_access` writes it, written on
// every switch (the value compared and the write skipped when it is
// unchanged cost 11 instructions, not 7, whenever one side owns the
// registers, as an FP user and its partner do at every switch). No isb
// for it: no FP/SIMD instruction runs before the eret, a context
// synchronization event.
//
// TTBR0 with an isb, before the lock's release: until it is synchronised
// the CPU may still walk the caller's tables with the caller's ASID (the
// fast paths never install the kernel's empty table), while the kernel's
// view already says this thread ran last, and the ASID allocator counts
// as live on this CPU only `last_ran`'s ASID: another CPU's rollover
// could hand the caller's ASID to another space meanwhile. Done before
// the release, no rollover can come in between.
.macro run_next state
    mov     w9, #STATE_RUNNING
    strb    w9, [x26, #TCB_BODY + T_STATE]
    stp     w25, w25, [\state, #KERNEL + K_LAST_RAN]
    cmp     w29, w25
    cset    w10, eq
    lsl     x9, x10, #CPACR_FPEN_EL0_SHIFT
    orr     x9, x9, #CPACR_FPEN_TRAP_EL0
    msr     cpacr_el1, x9
    msr     ttbr0_el1, x27
    isb
    // The lock's release: what was written above is seen by the next
    // holder (`KernelCell`'s protocol).
    stlr    xzr, [\state]
.endm

// The capability x0 names in the caller's CSpace (its first slot in the
// low half of the word at T_CSPACE_FIRST, its number of slots in the high
// half), if it is of type `type`: its word in `word`, its badge in
// `badge`. `base` is object memory's base; `scratch` (`wscratch` its
// 32-bit name) is clobbered and left holding the type. Anything else goes
// to `refuse`.
//
// `rights` (default none) are right bits the word must hold too, tested
// with the type in one compare: the type mask with them must be a run of
// bits an `and` takes as an immediate (the assembler refuses any other).
.macro capability_of base, scratch, wscratch, word, badge, type, refuse, rights=0
    ldr     \scratch, [sp, #T_CSPACE_FIRST]
    cmp     x0, \scratch, lsr #32
    b.hs    \refuse
    add     \scratch, x0, \wscratch, uxtw
    add     \scratch, \base, \scratch, lsl #SLOT_SHIFT
    ldp     \word, \badge, [\scratch, #SLOT_CAP_WORD]
    and     \scratch, \word, #(CAP_TYPE_MASK | \rights)
    cmp     \scratch, #(\type | \rights)
    b.ne    \refuse
.endm

// The thread whose TCB record is `thread` leaves the head of the wait
// queue at `queue` (an endpoint's or a notification's: `head`, `tail`,
// `waiting` its fields' offsets), with both its links cleared: the next
// waiter, if any, is the head; else the queue is empty (Waiting::Nobody
// is 0). `base` is object memory's base; x9 and x10 are clobbered.
//
// Emptied, head and tail are cleared with one pair store (`tail` follows
// `head`: `fast_path::layout` checks it for both queues).
.macro wait_queue_leave_head thread, queue, base, head, tail, waiting
    ldr     w9, [\thread, #TCB_BODY + T_QUEUE_NEXT]
    str     xzr, [\thread, #TCB_BODY + T_QUEUE_PREVIOUS]
    cbz     w9, .Lqueue_emptied\@
    str     w9, [\queue, #\head]
    add     x10, \base, x9, lsl #GRANULE_SHIFT
    str     wzr, [x10, #TCB_BODY + T_QUEUE_PREVIOUS]
    b       .Lqueue_left\@
.Lqueue_emptied\@:
    stp     wzr, wzr, [\queue, #\head]
    strb    wzr, [\queue, #\waiting]
.Lqueue_left\@:
.endm

// The caller (thread id w28, its context at SP_EL1) joins the wait
// queue at `queue` as its last receiver: previous the old tail, next none
// (one store: w10 is zero-extended); head and tail too, in one pair
// store, if the queue was empty, and then receivers wait. (A queue with
// waiters already had receivers: the paths that append checked that no
// sender waits.) `base` is object memory's base; x9 and x10 are
// clobbered.
.macro wait_queue_append_caller queue, base, head, tail, waiting
    ldr     w10, [\queue, #\tail]
    str     x10, [sp, #T_QUEUE_PREVIOUS]
    cbz     w10, .Lqueue_was_empty\@
    add     x9, \base, x10, lsl #GRANULE_SHIFT
    str     w28, [x9, #TCB_BODY + T_QUEUE_NEXT]
    str     w28, [\queue, #\tail]
    b       .Lqueue_linked\@
.Lqueue_was_empty\@:
    stp     w28, w28, [\queue, #\head]
    mov     w9, #WAITING_RECEIVERS
    strb    w9, [\queue, #\waiting]
.Lqueue_linked\@:
.endm
