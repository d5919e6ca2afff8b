//! Syscall numbers (passed in `x8`).

/// A system call, numbered as user space passes it in `x8`.
///
/// Numbers are stable ABI: new syscalls take new numbers, old numbers are
/// never reused.
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syscall {
    /// Does nothing and returns success: the cost of the entry path itself.
    Null = 0,
    /// Gives up the rest of the time slice to the next runnable thread of
    /// the same priority.
    Yield = 1,
    /// Ends the calling thread. `x2` = exit status.
    Exit = 2,
    /// Writes `x3` bytes at user address `x2` to the debug console.
    /// `x0` names a DebugConsole capability with the write right.
    DebugPrint = 3,
    /// Bench image only (the kernel's `bench-calls` feature; elsewhere
    /// `InvalidSyscall`): `x2 = 1` makes every later syscall of this
    /// thread return at once from the vector (the architecture's floor:
    /// `svc`, a check that it is an SVC, `eret`), until the thread's next
    /// kernel entry of any kind (`BenchFloor` itself, a fault, an
    /// interrupt), which ends it; a thread with entry or exit work gets
    /// `InvalidArgument`. `x2 = 0`: `Ok`, or `Interrupted` if an interrupt
    /// ended the thread's last floor (its samples are spoiled).
    BenchFloor = 4,
    /// Sends the message (x1, x2..x7, IPC buffer) through the endpoint
    /// capability `x0`; waits for a receiver.
    Send = 5,
    /// `Send` without waiting: `WouldBlock` when no receiver waits.
    NBSend = 6,
    /// Receives from the endpoint capability `x0`; waits for a sender.
    /// Returns the message in x1..x7 and the sender's badge in x8.
    Recv = 7,
    /// `Recv` without waiting: `WouldBlock` when no sender waits.
    NBRecv = 8,
    /// Sends through `x0` and waits for the reply (returned like `Recv`,
    /// badge 0).
    Call = 9,
    /// Replies (x1, x2..x7) to the thread whose `Call` this thread received.
    Reply = 10,
    /// `Reply` (if a reply is owed), then `Recv` on `x0`.
    ReplyRecv = 11,
    /// In the CNode named by the CNode capability `x0` (write right):
    /// copy the capability at index `x2` to empty index `x3`.
    CapCopy = 12,
    /// As `CapCopy`, with rights `x4` (a subset of the source's) and, if
    /// `x6 == 1`, badge `x5` (endpoints and notifications, once).
    CapMint = 13,
    /// As `CapCopy`, but the capability leaves `x2`.
    CapMove = 14,
    /// Deletes the capability at `x2` and everything derived from it; the
    /// last capability to an object destroys it.
    CapDelete = 15,
    /// Deletes everything derived from the capability at `x2`, keeping it.
    CapRevoke = 16,
    /// ORs the badge of the notification capability `x0` (bit 0 if it is
    /// unbadged) into the notification's word, waking its first waiter.
    Signal = 17,
    /// Waits on the notification capability `x0` until its word is not
    /// zero; returns the word in `x8` and clears it.
    Wait = 18,
    /// `Wait` without waiting: returns the word (maybe 0) in `x8`.
    Poll = 19,
    /// Makes `x5` objects of type `x2` (`abi::cap::CapType`; size
    /// parameter `x3`: a CNode's radix, log2 of an Untyped's size, else 0)
    /// from the Untyped capability `x0` (write right), their capabilities
    /// in the caller's CNode at indices `x4 ..`.
    Retype = 20,
    /// Binds the IrqHandler capability `x0` (write right) to the
    /// notification capability `x2` (write right) and lets the interrupt
    /// through: each interrupt signals the notification (the badge of the
    /// notification capability `x2`, or bit 0 if it is unbadged) and is
    /// masked until acknowledged.
    IrqSetNotification = 21,
    /// Acknowledges the interrupt of the IrqHandler capability `x0` (write
    /// right): it may arrive again.
    IrqAck = 22,
    /// Sets the priority of the thread named by the TCB capability `x0`
    /// (write right) to `x2` (0..=255), which may not exceed the caller's
    /// maximum controlled priority (MCP): `Denied` if it does.
    TcbSetPriority = 23,
    /// Sets the MCP of the thread named by the TCB capability `x0` (write
    /// right) to `x2`, at most the caller's own MCP (`Denied` above it).
    TcbSetMcp = 24,
    /// Stops the thread named by the TCB capability `x0` (write right): it
    /// leaves the run queue, or the IPC it waits in (that syscall then
    /// returns `Interrupted` once the thread is resumed).
    TcbSuspend = 25,
    /// Makes a suspended thread (TCB capability `x0`, write right) ready;
    /// `Ok` and no change for a thread that is not suspended.
    TcbResume = 26,
    /// Reads register `x2` (`abi::tcb::Register`) of the thread named by
    /// the TCB capability `x0` (read right) into `x8`.
    TcbReadRegister = 27,
    /// Writes `x3` to register `x2` of the thread named by the TCB
    /// capability `x0` (write right); of PSTATE only NZCV can be written.
    /// Writing one of `x0..x8` of a thread inside a syscall (stopped for
    /// its tracer, a policy server or audit room, or blocked in IPC)
    /// cancels that syscall first: it returns `Interrupted` without
    /// running; `x8` of the caller is 1 when a syscall was cancelled, else
    /// 0. The caller's own `x0` and `x8` cannot be written
    /// (`InvalidArgument`).
    TcbWriteRegister = 28,
    /// Loads the postcard-encoded filter description of `x3` bytes (at
    /// most `abi::policy::MAX_DESCRIPTION_BYTES`) at user address `x2`
    /// into the Filter capability `x0` (write right), replacing its rules.
    /// A malformed description is `InvalidArgument` and changes nothing; a
    /// filter attached to any thread is frozen (`Denied`).
    FilterLoad = 29,
    /// Attaches the Filter capability `x2` (read right) to the thread named
    /// by the TCB capability `x0` (policy right), on top of its filters;
    /// if `x4 == 1`, the filter's policy server, which its `Notify`
    /// verdicts ask: the endpoint capability `x3` (write right) and the
    /// TCB capability `x5` (read right) of the thread that answers. A
    /// filter that can say `Notify` needs one, and its thread must not
    /// have ended nor be the target (`InvalidArgument`).
    TcbAttachFilter = 30,
    /// Maps the Frame capability `x0` into the address space named by the
    /// VSpace capability `x2` (write right) at user virtual address `x3`
    /// (page aligned; inside `abi::vspace::FRAME_MAP_START ..
    /// FRAME_MAP_END` for a space the kernel built, anywhere in the user
    /// half but page 0 for a VSpace made by `Retype`, which must be bound
    /// by `TcbSetSpace` first) with permissions `x4`
    /// (`abi::vspace::MapRights`: 1 read, 3 read-write, 5 read-execute;
    /// never write+execute). The Frame capability needs `read`, and
    /// `write` too for read-write. A frame is mapped at most once at a
    /// time (`AlreadyMapped`). Page-table pages the mapping needs come
    /// from the kernel's frame pool, charged to a kernel-built space (at
    /// most `abi::vspace::MAX_TABLE_PAGES` of them), or from a retyped
    /// VSpace's own pages; `OutOfResources` past that, with nothing
    /// taken.
    FrameMap = 31,
    /// Unmaps the Frame capability `x0` from wherever it is mapped (the
    /// TLB entries for that ASID and address are invalidated); `Ok` and no
    /// change if it is not mapped.
    FrameUnmap = 32,
    /// Attaches a tracer to the thread named by the TCB capability `x0`
    /// (trace right): from now on its syscalls stop at entry and exit, and
    /// each stop is sent to the endpoint capability `x2` (write right; its
    /// badge arrives with every stop) as an `abi::trace` message. A thread
    /// has at most one tracer (`Denied` if it has one already).
    TcbAttachTracer = 33,
    /// Detaches the tracer of the thread named by the TCB capability `x0`
    /// (trace right), given a capability `x2` to the endpoint it was
    /// attached with (the same endpoint and badge; any rights): `Denied`
    /// for any other, so the trace right alone cannot take a tracer away.
    /// A stop the thread is waiting at lets it continue. `InvalidArgument`
    /// for a thread without a tracer.
    TcbDetachTracer = 34,
    /// Audits the thread named by the TCB capability `x0` (policy right):
    /// one record per syscall into the ring in the Frame capability `x2`
    /// (write right), signalling the notification capability `x3` (write
    /// right) when the ring goes from empty to non-empty; `x4` = 0 off,
    /// 1 lossy, 2 lossless; `x5` = the badge records carry (see
    /// `abi::audit`). An audited thread stays audited into its ring: a
    /// second `TcbSetAudit` is `Denied`, and turning it off (`x4` = 0)
    /// needs `x2` to be a capability to that ring's Frame (any rights),
    /// else `Denied`.
    TcbSetAudit = 35,
    /// Binds the notification capability `x2` (read right) to the thread
    /// named by the TCB capability `x0` (write right) when `x3 == 1`, or
    /// unbinds its notification when `x3 == 0`: a signal to a bound
    /// notification also ends the thread's `Recv` (label
    /// `abi::message::NOTIFICATION_LABEL`, the word in `x8`).
    TcbBindNotification = 36,
    /// Syscall user dispatch for the calling thread (`abi::user_dispatch`):
    /// syscalls it makes from outside the PC range `[x2, x3)` while the
    /// selector byte at user address `x6` says block are not run: the
    /// kernel saves the context into the buffer at `x5` and enters the
    /// handler at `x4`. `x2..x6` all 0 turns it off. `x0` is reserved (0).
    SetUserDispatch = 37,
    /// Returns from a user-dispatch handler: restores the context saved in
    /// the frame at user address `x0` (`abi::user_dispatch`), `x0`
    /// included; never redirected. On success it does not return to its
    /// caller; on failure `x0` holds the error.
    UserDispatchReturn = 38,
    /// Gives the new thread named by the TCB capability `x0` (write
    /// right; a thread made by `Retype` of `CapType::Tcb`, still
    /// inactive) its CSpace and priority: the CNode capability `x2`
    /// (write right) becomes its CSpace (it holds no other capability),
    /// `x3` its priority and MCP (0..=255, at most the caller's MCP:
    /// `Denied` above it), before or after `TcbSetSpace` gives it an
    /// address space. `x4` must be `abi::tcb::NO_PROGRAM`: the kernel
    /// loads no program for user space (any other value, a program
    /// selector included, is `InvalidArgument`, checked with the
    /// priority before any capability). The thread stays inactive until
    /// `TcbResume`. A thread that is not new (not inactive):
    /// `InvalidArgument`.
    TcbConfigure = 39,
    /// As `CapMint`, across CNodes: mints the capability at index `x2` of
    /// the caller's own CSpace into empty index `x3` of the CNode named by
    /// the CNode capability `x0` (write right), with rights `x4` (a subset
    /// of the source's) and, if `x6 == 1`, badge `x5`. How a thread fills
    /// the CSpace of a thread it creates.
    CapMintInto = 40,
    /// Turns the reply this thread owes (it received a `Call`) into a
    /// Reply capability at empty index `x2` of the CNode named by the
    /// CNode capability `x0` (write right). The thread then owes nothing
    /// (a later `Reply` is `NoReplyTarget`); the caller keeps waiting
    /// until a `Send` or `NBSend` through the Reply capability answers it
    /// (or the capability is deleted: `ObjectDeleted`; for a policy
    /// request, `Denied`). Nothing owed: `NoReplyTarget`; a fault or trace
    /// reply: `InvalidArgument`.
    ReplySave = 41,
    /// Gives the new thread named by the TCB capability `x0` (write
    /// right; made by `Retype`, inactive, configured with
    /// `abi::tcb::NO_PROGRAM` or not configured, and with no address space
    /// yet) the address space of the VSpace capability `x2` (write right;
    /// one made by `Retype`, or one already in use, kernel-made or not,
    /// which the thread then shares), which it is bound to from now on. `x3`: a Frame capability (read and write rights) that
    /// becomes its IPC buffer, or `abi::tcb::NO_CAP`; `x4`: an Endpoint
    /// capability (write right) its faults are sent to, with that
    /// capability's badge, or `NO_CAP` (a fault stops the thread); `x5`
    /// its entry PC (4-byte aligned), `x6` its initial SP (16-byte
    /// aligned), `x7` its initial `x0`. The thread stays inactive until
    /// `TcbResume`. An ended thread (kept for its supervisor) takes a new
    /// space the same way, leaving its old one, before `TcbRestart`. Any
    /// bad argument: a typed error, nothing changed.
    TcbSetSpace = 42,
    /// Arms the EL1 physical timer to interrupt `x2` counter ticks from
    /// now (0: disarms it), through the IrqHandler capability `x0` (write
    /// right) for the timer's interrupt (PPI 30): the only way to program
    /// that timer (EL0 has no access to its registers), so only the holder
    /// of its IrqHandler can. Another IrqHandler: `InvalidArgument`.
    IrqSetTimer = 43,
    /// Test image only (the kernel's `test-calls` feature; elsewhere
    /// `InvalidSyscall`): the counters the kernel keeps for the thread of
    /// the TCB capability `x0` (any rights): `x1` syscalls that reached
    /// the generic path, `x2` interrupts taken at EL0, `x3` preemptions by
    /// the timer, `x4` yields; `x5` whether it runs or may run (ready),
    /// waits (blocked, suspended, not started) or has ended
    /// (`abi::debug`).
    DebugThreadStats = 44,
    /// Test image only (`test-calls`; elsewhere `InvalidSyscall`): checks
    /// the kernel's invariants now (capabilities, objects, queues, thread
    /// states) and returns `x1` = 0 if they hold, 1 if not (the kernel
    /// prints which on the console). `x2 = 1` also checks them at every 4th
    /// timer tick from now on, `x2 = 0` stops that; `x2` returns the
    /// number of tick checks made since the last call and `x3` = 1 if one
    /// of them found a broken invariant (printed when found).
    DebugCheckInvariants = 45,
    /// Restarts the *ended* thread named by the TCB capability `x0` (write
    /// right) in the address space it is bound to (its own, or a new one
    /// `TcbSetSpace` gave it after the end): `x2` its PC (4-byte aligned),
    /// `x3` its SP (16-byte aligned), `x4` its `x0`, `x5` its TPIDR_EL0;
    /// its other registers are zero. It keeps its CSpace, IPC buffer, fault
    /// endpoint, priority and confinement; its pending end message, if no
    /// one took it, is withdrawn; it becomes ready. `InvalidArgument` for a
    /// thread that has not ended (or for a misaligned PC or SP), for one with
    /// no address space, `InvalidAddress` for a PC or SP outside the user
    /// half, `Denied` for one that lost a filter confining it.
    TcbRestart = 46,
    /// Names the thread of the TCB capability `x0` (write right): the
    /// `x3` bytes at user address `x2` (1 ..= `abi::tcb::MAX_NAME_BYTES`,
    /// printable ASCII without space, `#`, `[` or `]`: see
    /// `abi::tcb::is_valid_name`) replace its name in the console lines
    /// the kernel prints for it (`[name#N]`); its number stays. Another
    /// length or byte: `InvalidArgument`; memory outside the user half or
    /// not readable: `InvalidAddress`. Nothing changes on a refusal.
    TcbSetName = 47,
    /// Moves the capability at index `x2` of the caller's own CSpace to
    /// the empty index `x3` of the CNode the capability `x0` names (write
    /// right), keeping its place in the derivation tree (as `CapMove`
    /// within one CNode): how a supervisor hands a task the original of an
    /// object, so that the task's delete or revoke destroys it.
    CapMoveInto = 48,
    /// Makes an IrqHandler for interrupt `x2` from the IrqControl
    /// capability `x0` (write right), in the empty slot `x3` of the
    /// caller's own CNode; the new capability is a child of `x0`'s. Refused:
    /// an interrupt the GIC does not have (`InvalidArgument`), one the
    /// kernel keeps (SGIs 0..15, its tick PPI 27, the console UART's:
    /// `Denied`), a slot past the CNode (`InvalidArgument`) or occupied
    /// (`SlotOccupied`), an interrupt that has an IrqHandler already
    /// (`IrqInUse`). Deleting the handler's last capability masks the
    /// interrupt and frees it for another `IrqControlGet`.
    IrqControlGet = 49,
    /// Hands the Filter capability `x0` (write right: its maker's; attaching
    /// needs only read) to a new policy server: the endpoint capability
    /// `x2` (write right), where its requests go, and the TCB capability
    /// `x3` (read right) of the thread that answers them. Every attachment
    /// of the filter without a live server (its thread ended, faulted or
    /// destroyed, its endpoint destroyed) gets this one; an attachment
    /// whose server lives keeps it. `x8` returns how many were handed
    /// over. `InvalidArgument` for a thread that has ended or that the
    /// filter confines.
    FilterSetServer = 50,
    /// Gives the thread of the TCB capability `x0` (write right) affinity
    /// with CPU `x2`: it runs there from now on (a ready thread moves to
    /// that CPU's run queue, a running one is stopped and moves, a waiting
    /// one runs there when it wakes). A CPU the kernel does not run on:
    /// `InvalidArgument`. `x8` returns how many CPUs the kernel runs on
    /// (they are numbered from 0). A thread starts with its creator's
    /// affinity (the root task's is CPU 0).
    TcbSetAffinity = 51,
    /// Restartable sequences for the calling thread (`abi::rseq`): `x4 =
    /// REGISTER` registers the area at `x2` (`AREA_ALIGN`-aligned,
    /// `AREA_BYTES` writable) with signature `x3` (a `u32`) and writes its
    /// CPU ids; a second registration is `InvalidArgument`. `x4 =
    /// UNREGISTER` with the same `x2` and `x3` unregisters it (writes
    /// `CPU_ID_UNREGISTERED`). Bad alignment or an unwritable area:
    /// `InvalidAddress`; anything else wrong: `InvalidArgument`. `x0` is
    /// reserved (0).
    SetRseq = 52,
    /// Ends a time-slice extension (`abi::rseq::SLICE_GRANTED`): if the
    /// kernel granted the calling thread one, it clears the granted bit
    /// and the thread yields, `x8 = 1`; otherwise nothing happens, `x8 =
    /// 0`.
    SliceYield = 53,
    /// Test image only (the kernel's `rseq-counters` feature; elsewhere
    /// `InvalidSyscall`): writes the kernel's rseq counters
    /// (`abi::rseq::Counters`, `COUNTERS_BYTES`) to user address `x2`
    /// (0: nowhere) and prints them on the console.
    DebugRseqCounters = 54,
    /// Reads console input through the DebugConsole capability `x0`
    /// (read right): up to `x3` bytes (at most `DEBUG_PRINT_MAX`) into
    /// user memory at `x2`, oldest first; `x8` returns how many (0: none
    /// waiting; it never waits). The kernel keeps up to
    /// `abi::console::INPUT_BYTES` bytes that nobody has read; bytes
    /// beyond that are dropped and counted, and `x1` returns how many
    /// were dropped since the last `ConsoleRead` (`docs/shell.md`).
    ConsoleRead = 55,
    /// Through the DebugConsole capability `x0` (read right): when `x3 ==
    /// 1`, the notification capability `x2` (write right) is signalled
    /// (its badge, or bit 0 if unbadged) whenever console input arrives,
    /// and at once if some waits; `x3 == 0` unbinds it. From the first bind on
    /// the kernel takes input from the UART. One notification at a time:
    /// a bind replaces the last one.
    ConsoleSetNotification = 56,
    /// Writes `x3` bytes (1 ..= `DEBUG_PRINT_MAX`) at user address `x2`
    /// through the DebugConsole capability `x0` (read and write rights:
    /// a frame's bytes are neither tagged nor made printable, so only the
    /// console's owner, who prints untagged, may write them) as one
    /// binary frame: `0x00`, the bytes, `0x00`, after ending any line a
    /// thread left open, with nothing between them (`abi::export`). A
    /// zero byte among them is `InvalidArgument`: it would end the frame.
    ConsoleWriteFrame = 57,
    /// Through the Inspector capability `x0` (read right): writes the
    /// thread with the smallest number at or above `x2` as
    /// `abi::inspect::THREAD_INFO_WORDS` words at user address `x3`
    /// (8-byte aligned) and returns `x8 = 1`; `x8 = 0` and nothing
    /// written when there is none.
    InspectThread = 58,
    /// Through the Inspector capability `x0` (read right): writes the
    /// first capability at slot `x3` or above in the CSpace of the thread
    /// numbered `x2` as `abi::inspect::CAP_INFO_WORDS` words at user
    /// address `x4` (8-byte aligned) and returns `x8 = 1`; `x8 = 0` when
    /// there is none. No thread with that number: `InvalidArgument`.
    InspectCaps = 59,
}

impl Syscall {
    /// Every syscall, in number order.
    pub const ALL: [Syscall; 60] = [
        Syscall::Null,
        Syscall::Yield,
        Syscall::Exit,
        Syscall::DebugPrint,
        Syscall::BenchFloor,
        Syscall::Send,
        Syscall::NBSend,
        Syscall::Recv,
        Syscall::NBRecv,
        Syscall::Call,
        Syscall::Reply,
        Syscall::ReplyRecv,
        Syscall::CapCopy,
        Syscall::CapMint,
        Syscall::CapMove,
        Syscall::CapDelete,
        Syscall::CapRevoke,
        Syscall::Signal,
        Syscall::Wait,
        Syscall::Poll,
        Syscall::Retype,
        Syscall::IrqSetNotification,
        Syscall::IrqAck,
        Syscall::TcbSetPriority,
        Syscall::TcbSetMcp,
        Syscall::TcbSuspend,
        Syscall::TcbResume,
        Syscall::TcbReadRegister,
        Syscall::TcbWriteRegister,
        Syscall::FilterLoad,
        Syscall::TcbAttachFilter,
        Syscall::FrameMap,
        Syscall::FrameUnmap,
        Syscall::TcbAttachTracer,
        Syscall::TcbDetachTracer,
        Syscall::TcbSetAudit,
        Syscall::TcbBindNotification,
        Syscall::SetUserDispatch,
        Syscall::UserDispatchReturn,
        Syscall::TcbConfigure,
        Syscall::CapMintInto,
        Syscall::ReplySave,
        Syscall::TcbSetSpace,
        Syscall::IrqSetTimer,
        Syscall::DebugThreadStats,
        Syscall::DebugCheckInvariants,
        Syscall::TcbRestart,
        Syscall::TcbSetName,
        Syscall::CapMoveInto,
        Syscall::IrqControlGet,
        Syscall::FilterSetServer,
        Syscall::TcbSetAffinity,
        Syscall::SetRseq,
        Syscall::SliceYield,
        Syscall::DebugRseqCounters,
        Syscall::ConsoleRead,
        Syscall::ConsoleSetNotification,
        Syscall::ConsoleWriteFrame,
        Syscall::InspectThread,
        Syscall::InspectCaps,
    ];

    /// One past the highest syscall number.
    pub const END: u64 = 60;

    /// Decodes `x8`; `None` for a number no syscall has.
    pub const fn from_number(number: u64) -> Option<Syscall> {
        match number {
            0 => Some(Syscall::Null),
            1 => Some(Syscall::Yield),
            2 => Some(Syscall::Exit),
            3 => Some(Syscall::DebugPrint),
            4 => Some(Syscall::BenchFloor),
            5 => Some(Syscall::Send),
            6 => Some(Syscall::NBSend),
            7 => Some(Syscall::Recv),
            8 => Some(Syscall::NBRecv),
            9 => Some(Syscall::Call),
            10 => Some(Syscall::Reply),
            11 => Some(Syscall::ReplyRecv),
            12 => Some(Syscall::CapCopy),
            13 => Some(Syscall::CapMint),
            14 => Some(Syscall::CapMove),
            15 => Some(Syscall::CapDelete),
            16 => Some(Syscall::CapRevoke),
            17 => Some(Syscall::Signal),
            18 => Some(Syscall::Wait),
            19 => Some(Syscall::Poll),
            20 => Some(Syscall::Retype),
            21 => Some(Syscall::IrqSetNotification),
            22 => Some(Syscall::IrqAck),
            23 => Some(Syscall::TcbSetPriority),
            24 => Some(Syscall::TcbSetMcp),
            25 => Some(Syscall::TcbSuspend),
            26 => Some(Syscall::TcbResume),
            27 => Some(Syscall::TcbReadRegister),
            28 => Some(Syscall::TcbWriteRegister),
            29 => Some(Syscall::FilterLoad),
            30 => Some(Syscall::TcbAttachFilter),
            31 => Some(Syscall::FrameMap),
            32 => Some(Syscall::FrameUnmap),
            33 => Some(Syscall::TcbAttachTracer),
            34 => Some(Syscall::TcbDetachTracer),
            35 => Some(Syscall::TcbSetAudit),
            36 => Some(Syscall::TcbBindNotification),
            37 => Some(Syscall::SetUserDispatch),
            38 => Some(Syscall::UserDispatchReturn),
            39 => Some(Syscall::TcbConfigure),
            40 => Some(Syscall::CapMintInto),
            41 => Some(Syscall::ReplySave),
            42 => Some(Syscall::TcbSetSpace),
            43 => Some(Syscall::IrqSetTimer),
            44 => Some(Syscall::DebugThreadStats),
            45 => Some(Syscall::DebugCheckInvariants),
            46 => Some(Syscall::TcbRestart),
            47 => Some(Syscall::TcbSetName),
            48 => Some(Syscall::CapMoveInto),
            49 => Some(Syscall::IrqControlGet),
            50 => Some(Syscall::FilterSetServer),
            51 => Some(Syscall::TcbSetAffinity),
            52 => Some(Syscall::SetRseq),
            53 => Some(Syscall::SliceYield),
            54 => Some(Syscall::DebugRseqCounters),
            55 => Some(Syscall::ConsoleRead),
            56 => Some(Syscall::ConsoleSetNotification),
            57 => Some(Syscall::ConsoleWriteFrame),
            58 => Some(Syscall::InspectThread),
            59 => Some(Syscall::InspectCaps),
            _ => None,
        }
    }

    /// The number user space puts in `x8`.
    pub const fn number(self) -> u64 {
        self as u64
    }

    /// Does it name a capability in `x0`? All but `Null`, `Yield`,
    /// `Exit`, `BenchFloor` and `Reply` do. For these five a filter
    /// knows no object type or badge (a rule that asks for them does not
    /// match), a policy request says 0 for both, and an audit record names
    /// no object, whatever `x0` holds.
    pub const fn names_capability(self) -> bool {
        !matches!(
            self,
            Syscall::Null | Syscall::Yield | Syscall::Exit | Syscall::BenchFloor | Syscall::Reply
        )
    }

    /// [`Syscall::names_capability`] by number, for a number that may be
    /// unknown (one is judged as naming a capability): a bit test, where
    /// decoding the number first cost a forwarded syscall some 10
    /// instructions.
    pub const fn number_names_capability(number: u64) -> bool {
        const NAME_NONE: u64 = {
            let mut mask = 0u64;
            let mut i = 0;
            while i < Syscall::ALL.len() {
                let syscall = Syscall::ALL[i];
                if !syscall.names_capability() {
                    assert!(syscall.number() < 64);
                    mask |= 1 << syscall.number();
                }
                i += 1;
            }
            mask
        };
        number >= 64 || NAME_NONE & (1 << number) == 0
    }

    /// Does it carry memory beyond its registers, which a filter may judge
    /// and a policy server is sent: `DebugPrint`'s text, `ConsoleWriteFrame`'s
    /// frame and `FilterLoad`'s description (`x2` address, `x3` length),
    /// and the IPC buffer words
    /// of a message `Send`, `NBSend`, `Call`, `Reply` or `ReplyRecv`
    /// sends. No other syscall does.
    pub const fn carries_memory(self) -> bool {
        matches!(
            self,
            Syscall::DebugPrint
                | Syscall::ConsoleWriteFrame
                | Syscall::FilterLoad
                | Syscall::Send
                | Syscall::NBSend
                | Syscall::Call
                | Syscall::Reply
                | Syscall::ReplyRecv
        )
    }

    /// A short lower-case name, for traces and reports.
    pub const fn name(self) -> &'static str {
        match self {
            Syscall::Null => "null",
            Syscall::Yield => "yield",
            Syscall::Exit => "exit",
            Syscall::DebugPrint => "debug_print",
            Syscall::BenchFloor => "bench_floor",
            Syscall::Send => "send",
            Syscall::NBSend => "nb_send",
            Syscall::Recv => "recv",
            Syscall::NBRecv => "nb_recv",
            Syscall::Call => "call",
            Syscall::Reply => "reply",
            Syscall::ReplyRecv => "reply_recv",
            Syscall::CapCopy => "cap_copy",
            Syscall::CapMint => "cap_mint",
            Syscall::CapMove => "cap_move",
            Syscall::CapDelete => "cap_delete",
            Syscall::CapRevoke => "cap_revoke",
            Syscall::Signal => "signal",
            Syscall::Wait => "wait",
            Syscall::Poll => "poll",
            Syscall::Retype => "retype",
            Syscall::IrqSetNotification => "irq_set_notification",
            Syscall::IrqAck => "irq_ack",
            Syscall::TcbSetPriority => "tcb_set_priority",
            Syscall::TcbSetMcp => "tcb_set_mcp",
            Syscall::TcbSuspend => "tcb_suspend",
            Syscall::TcbResume => "tcb_resume",
            Syscall::TcbReadRegister => "tcb_read_register",
            Syscall::TcbWriteRegister => "tcb_write_register",
            Syscall::FilterLoad => "filter_load",
            Syscall::TcbAttachFilter => "tcb_attach_filter",
            Syscall::FrameMap => "frame_map",
            Syscall::FrameUnmap => "frame_unmap",
            Syscall::TcbAttachTracer => "tcb_attach_tracer",
            Syscall::TcbDetachTracer => "tcb_detach_tracer",
            Syscall::TcbSetAudit => "tcb_set_audit",
            Syscall::TcbBindNotification => "tcb_bind_notification",
            Syscall::SetUserDispatch => "set_user_dispatch",
            Syscall::UserDispatchReturn => "user_dispatch_return",
            Syscall::TcbConfigure => "tcb_configure",
            Syscall::CapMintInto => "cap_mint_into",
            Syscall::ReplySave => "reply_save",
            Syscall::TcbSetSpace => "tcb_set_space",
            Syscall::IrqSetTimer => "irq_set_timer",
            Syscall::DebugThreadStats => "debug_thread_stats",
            Syscall::DebugCheckInvariants => "debug_check_invariants",
            Syscall::TcbRestart => "tcb_restart",
            Syscall::TcbSetName => "tcb_set_name",
            Syscall::CapMoveInto => "cap_move_into",
            Syscall::IrqControlGet => "irq_control_get",
            Syscall::FilterSetServer => "filter_set_server",
            Syscall::TcbSetAffinity => "tcb_set_affinity",
            Syscall::SetRseq => "set_rseq",
            Syscall::SliceYield => "slice_yield",
            Syscall::DebugRseqCounters => "debug_rseq_counters",
            Syscall::ConsoleRead => "console_read",
            Syscall::ConsoleSetNotification => "console_set_notification",
            Syscall::ConsoleWriteFrame => "console_write_frame",
            Syscall::InspectThread => "inspect_thread",
            Syscall::InspectCaps => "inspect_caps",
        }
    }

    /// The syscall named `name` (as [`Syscall::name`] spells it), for rule
    /// files (`rules`) and tools that take names from people.
    pub fn from_name(name: &str) -> Option<Syscall> {
        Syscall::ALL.iter().copied().find(|s| s.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        let mut listed = 0;
        for number in 0..Syscall::END + 8 {
            match Syscall::from_number(number) {
                Some(s) => {
                    assert_eq!(s.number(), number);
                    assert_eq!(Syscall::ALL[listed], s, "ALL is in number order");
                    listed += 1;
                }
                None => assert!(number >= Syscall::END, "{number} has no syscall"),
            }
        }
        assert_eq!(listed, Syscall::ALL.len());
        assert_eq!(Syscall::ALL[listed - 1].number() + 1, Syscall::END);
        assert_eq!(Syscall::from_number(u64::MAX), None);
    }

    #[test]
    fn names_round_trip() {
        for s in Syscall::ALL {
            assert_eq!(Syscall::from_name(s.name()), Some(s), "{s:?}");
        }
        assert_eq!(Syscall::from_name("Yield"), None);
        assert_eq!(Syscall::from_name(""), None);
    }
}
