//! The programs of init's ELF and what they share (init's business
//! alone: the kernel knows none of this).
//!
//! The root task (`root_task::root_task`, started by the kernel with
//! `abi::bootinfo::ROOT_ARGUMENT` in `x0`) starts every other thread of
//! init itself, at the ELF's entry (`sdk::entry_point`) with a selector in
//! `x0` (`sdk::task`, `sdk::thread::bind_to_own_space`): the low byte
//! selects the program, the rest is its parameter. The test driver
//! (`driver/`) and the programs agree here on those selectors, the slots
//! the driver fills and the constants of their scenarios.

/// Programs init knows.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootProgram {
    /// The demo: greets from EL0 and shows a few syscalls.
    Demo = 0,
    /// Checks syscall results and error codes from EL0; exits 0 if all match.
    Syscalls = 1,
    /// Writes to address 0 (must fault).
    NullWrite = 2,
    /// Reads a kernel address (must fault).
    ReadKernel = 3,
    /// Executes an undefined instruction (must fault).
    Undefined = 4,
    /// Branches to a misaligned address (PC alignment fault).
    MisalignedPc = 5,
    /// Writes to its own code (W^X: must fault).
    WriteText = 6,
    /// Jumps into its stack (W^X: must fault).
    ExecuteStack = 7,
    /// Spins for the parameter's number of milliseconds, then exits 0.
    Spin = 8,
    /// Fills the FP/SIMD registers from the parameter, spins, checks them.
    FpCheck = 9,
    /// Yields the parameter's number of times, then exits 0.
    Yield = 10,
    /// An exclusive load from a misaligned address (alignment fault).
    MisalignedExclusive = 11,
    /// The benchmark rows run in one thread (parameter: `bench::BenchParameter`).
    Bench = 12,
    /// Measures yield round trips to a `BenchYieldPartner` (same parameter).
    BenchYieldPing = 13,
    /// Yields back to `BenchYieldPing` until it is done.
    BenchYieldPartner = 14,
    /// Answers calls on the endpoint in slot `ENDPOINT_SLOT`: replies with
    /// the sender's badge and each word plus one, until a `STOP` label.
    IpcEchoServer = 15,
    /// Calls the echo server with register-only and buffer messages and
    /// checks the replies (parameter: the badge its capability carries).
    IpcClient = 16,
    /// Checks every IPC error path from one thread.
    IpcErrors = 17,
    /// Sends its parameter through the endpoint once (FIFO test).
    IpcFifoSender = 18,
    /// Receives three messages and checks they come in FIFO order.
    IpcFifoReceiver = 19,
    /// Benchmark server: answers calls, times one-way calls.
    BenchIpcServer = 20,
    /// Benchmark client: times calls, replies and round trips.
    BenchIpcClient = 21,
    /// Owns an endpoint: mints, copies and moves capabilities to it (every
    /// error path), then revokes and deletes it while another thread waits.
    CapOwner = 22,
    /// Waits on the owner's endpoint; must wake with `ObjectDeleted`.
    CapWaiter = 23,
    /// Polls, then signals the notification through two badged capabilities.
    NotifySignaler = 24,
    /// Takes the OR of both badges with one `Wait`; a `Poll` then gets 0.
    NotifyWaiter = 25,
    /// Waits on an empty notification (blocks) until it is signalled.
    NotifySleeper = 26,
    /// Signals the sleeper's notification once.
    NotifyWaker = 27,
    /// Benchmark: signals slot 2, waits on slot 3, timing the round trip.
    BenchNotifyPing = 28,
    /// Benchmark: waits on slot 2, signals slot 3, until ping is done.
    BenchNotifyPong = 29,
    /// Retypes objects from the 16 KiB Untyped in slot 2 and uses them.
    UntypedUser = 30,
    /// Receives one fault message and resumes the faulter after the
    /// faulting instruction.
    FaultHandler = 31,
    /// Loads from an unmapped address; its fault handler skips the load.
    HandledFaulter = 32,
    /// Issues random syscalls (parameter: `FuzzParameter`).
    Fuzzer = 33,
    /// Tries every slot of its CNode with every kind of operation and
    /// checks exactly the granted ones are allowed.
    Confined = 34,
    /// Waits on the notification the confined task signals; the badge
    /// must be the one the kernel minted.
    BadgeWitness = 35,
    /// Receives a call and exits without replying.
    Quitter = 36,
    /// Calls the quitter; must wake with `ObjectDeleted`.
    AbandonedCaller = 37,
    /// Sends its notification capability: refused through an endpoint
    /// capability without grant, transferred through one with it.
    CapGiver = 38,
    /// Receives the capability and uses it (the badge came along).
    CapTaker = 39,
    /// Binds the IrqHandler in slot 2 to the notification in slot 3 and
    /// takes two interrupts of the EL1 physical timer through it.
    IrqUser = 40,
    /// Benchmark client of `BenchIpcServer` that first retypes endpoints
    /// from the Untyped in slot 3 into its (1024-slot) CNode, then times
    /// the null syscall and fast-path calls again (`bench::SCALE_STEPS`).
    BenchScaleClient = 41,
    /// Checks priority and MCP rules through TCB capabilities (slot 4:
    /// the first peer's TCB, read-write; 5: the same, read-only; 6: a
    /// notification the peers signal; 7: its own TCB).
    TcbPriority = 42,
    /// Signals the notification in slot 6 and exits (a peer whose running
    /// shows when the scheduler let it run).
    TcbPeer = 43,
    /// Suspends, resumes and rewrites the registers of the thread whose
    /// TCB is in slot 4 (read-only in 5) while it waits in `Recv`;
    /// parameter 0: suspend/resume, 1: registers.
    TcbController = 44,
    /// Waits in `Recv` on slot 2 for `TcbController` to act on it
    /// (parameter as the controller's; its own TCB in slot 7).
    TcbSubject = 45,
    /// Retypes two filters from the Untyped in slot 2, loads and attaches
    /// them to itself through its TCB (slot 3 with the policy right, 4
    /// without) and checks every verdict; a `Kill` rule ends it.
    PolicyUser = 46,
    /// The most urgent of three: answers one call, wakes the middle
    /// thread, then replies with ReplyRecv; exits on the next message.
    PrioServer = 47,
    /// Waits on its notification, then signals the caller's and exits.
    PrioMiddle = 48,
    /// The least urgent: calls the server; once the reply is in, the
    /// middle thread must already have run (its signal is there).
    PrioCaller = 49,
    /// Benchmark mode: turns the syscall floor on, then writes to address
    /// 0. The fault must stop it (not return to the faulting store forever).
    FloorFaulter = 50,
    /// Attaches a filter whose rules `Notify` its policy server (the
    /// endpoint in slot 2) and checks each answer: allow, errno, emulate,
    /// allow with changed arguments (re-checked), the server dying
    /// mid-request and later calls failing closed.
    PolicyAsker = 51,
    /// The policy server of `PolicyAsker`: checks each request and answers
    /// from a script; exits without answering the last.
    PolicyServer = 52,
    /// Retypes frames from the Untyped in slot 2, maps them read-only,
    /// read-write and read-execute into its own address space (VSpace in
    /// slot 4; read-only in 5), uses them, checks every refusal, unmaps
    /// and touches them again (faults its handler resumes it from).
    VSpaceMapper = 53,
    /// The mapper's fault handler: receives the faults `VSpaceMapper`
    /// provokes, checks each (class, address, kind) and resumes it past
    /// the access (reading its link register through the TCB in slot 4
    /// for an instruction abort).
    VSpaceFaultHandler = 54,
    /// The demo's supervisor: attaches a filter to the demo app (its TCB
    /// in slot 3, with the policy right) naming the policy server.
    DemoSupervisor = 55,
    /// The demo's policy server: the reference rule-file server
    /// (`servers/policy`) on the endpoint in slot 2.
    DemoPolicyServer = 56,
    /// The demo's app: allowed calls, one refused by a filter rule, two
    /// forwarded to the policy server; then it stops the server.
    DemoApp = 57,
    /// Makes an audit ring (a Frame from the Untyped in slot 4, mapped
    /// into its own VSpace, slot 6), audits the thread whose TCB is in slot
    /// 3 (policy right) into it, and checks every record; parameter: 0
    /// lossy with a stall, 1 lossless.
    AuditServer = 58,
    /// The audited thread: a burst of syscalls larger than the ring, then
    /// it reports to the server (endpoint in slot 2).
    AuditedApp = 59,
    /// Benchmark: attaches filters to itself (Untyped in slot 2, its own
    /// TCB with the policy right in slot 3) and times a constant-`Allow`
    /// null syscall, a cached `Errno` and an evaluated `Allow`.
    BenchPolicy = 60,
    /// `BenchIpcServer` after attaching a filter whose verdict for its
    /// IPC is a constant `Allow` (Untyped in slot 3, its TCB in slot 4).
    BenchIpcServerFiltered = 61,
    /// The filtered twin of `BenchIpcClient` (slots as the server's).
    BenchIpcClientFiltered = 62,
    /// Benchmark: attaches a filter whose verdict for `Null` is `Notify`
    /// (its policy server's endpoint in slot 2, its TCB in slot 3, Untyped
    /// in slot 4) and times forwarded null syscalls.
    BenchPolicyAsker = 63,
    /// The policy server of `BenchPolicyAsker`: allows every request.
    BenchPolicyServer = 64,
    /// Makes an endpoint and a frame from its Untyped (slot 4), gives the
    /// endpoint to `RevokeWaiter` through the case endpoint (grant), maps
    /// the frame (own VSpace in slot 6), then revokes the Untyped.
    RevokeOwner = 65,
    /// Receives the endpoint, waits on it, wakes with `ObjectDeleted`.
    RevokeWaiter = 66,
    /// A tracer: attaches to `TraceTracee` (its TCB, trace and policy
    /// rights, in slot 3; read-write only in slot 5) with a filter of its
    /// own making, then answers its stops from a script that checks every
    /// ordering and prints strace-like lines; exits holding the last stop.
    TraceTracer = 67,
    /// The traced thread: syscalls the tracer skips, rewrites, steps over
    /// and stops at, each result checked.
    TraceTracee = 68,
    /// Audits and traces `OneNull` (see `init/src/audit_tests.rs`): its
    /// record is in the ring before its trace exit stop arrives.
    AuditThenTrace = 69,
    /// Makes one `Null` and exits.
    OneNull = 70,
    /// Binds the notification in slot 3 to itself (its TCB in slot 4) and
    /// receives on the endpoint in slot 2: signals end its `Recv`.
    BindWaiter = 71,
    /// Signals the notification in slot 3 and sends on the endpoint.
    BindSignaller = 72,
    /// Ends the receiver of an in-progress call by attaching a filter that
    /// kills it (its TCB in slot 3, policy right; Untyped in slot 4).
    KillSupervisor = 73,
    /// Receives a call and waits on the notification in slot 5.
    KillServer = 74,
    /// Calls the server; its call ends with `ObjectDeleted`.
    KillClient = 75,
    /// Attaches a filter whose `Yield` rule is `Trap` (Untyped in slot 2,
    /// its TCB with the policy right in slot 3); its faults go to the
    /// case's endpoint.
    PolicyTrapped = 76,
    /// The fault handler of `PolicyTrapped` (receives on slot 2).
    PolicyTrapHandler = 77,
    /// The demo's tracer: strace-like lines for each stop of the app
    /// (`servers/tracer`), until the app exits.
    DemoTracer = 78,
    /// Benchmark: audits itself (lossy) and times `Null`
    /// (`audit_lossy_null_syscall`, `init/src/bench/watch.rs`).
    BenchAudited = 79,
    /// Benchmark: attaches to `BenchTraced` and continues every stop.
    BenchTracer = 80,
    /// Benchmark: times `Null` while traced (`trace_syscall_entry_exit`).
    BenchTraced = 81,
    /// Syscall user dispatch (`init/src/user_dispatch_tests.rs`): bad
    /// configurations, redirects with an emulated result, the selector
    /// flipped without a syscall, calls from the trampoline range.
    UserDispatch = 82,
    /// User dispatch whose selector, then buffer, are unmapped: a redirect
    /// flagged "selector unreadable", then the thread killed with
    /// `abi::user_dispatch::KILLED_BY_USER_DISPATCH`.
    UserDispatchUnmapped = 83,
    /// Makes two threads from user space (`init/src/thread_tests.rs`):
    /// retypes CNodes and TCBs from the Untyped in slot 2, gives each child
    /// only the capabilities it needs, configures and resumes them, and
    /// waits for their reports on the endpoint in slot 4.
    ThreadsRoot = 84,
    /// A thread made by `ThreadsRoot`: calls `ThreadsServer` on the
    /// endpoint in slot 2, checks the reply, reports on slot 3.
    ThreadsCaller = 85,
    /// A thread made by `ThreadsRoot`: answers one call on slot 2, checks
    /// the slots it was not given are empty, reports on slot 3.
    ThreadsServer = 86,
    /// Reply capabilities (`ReplySave`): takes calls from two
    /// `ReplyClient`s and a thread it makes, saves replies, answers out
    /// of order and checks every refusal and stale capability.
    ReplyServer = 87,
    /// Calls `ReplyServer` on slot 2 and checks each answer; the parameter
    /// says which client it is (`REPLY_CLIENT_FIRST` or `_SECOND`).
    ReplyClient = 88,
    /// The root task (`init/src/root_task.rs`): started with what
    /// `abi::bootinfo` lists (its own TCB, CNode, VSpace and IPC buffer,
    /// an IrqHandler, all free RAM as Untypeds), it checks them and starts
    /// the tasks embedded in init from their ELFs.
    RootTask = 89,
    /// Builds a thread in an address space of its own making
    /// (`init/src/user_space_tests.rs`): retypes a VSpace, TCB, CNode and
    /// Frames from the Untyped in slot 2, writes a tiny program into a
    /// frame, binds the space with `TcbSetSpace`, and checks the child
    /// signals, faults to its fault endpoint, and every refusal and
    /// lifetime rule.
    UserSpaceRoot = 90,
    /// Calls `PolicyFastServer` on slot 2 under filters whose verdict for
    /// `Call` is not a constant `Allow`, with the server waiting in `Recv`
    /// (everything else the IPC fast path asks for holds): the refusals
    /// must hold (`init/src/policy_tests.rs`).
    PolicyFastCaller = 91,
    /// Answers each call on slot 2 with the number of calls it has had.
    PolicyFastServer = 92,
    /// Benchmark client of a more urgent `BenchIpcServer`: register-only
    /// calls it times one-way (`ipc_call_one_way_higher_prio`).
    BenchLowPrioCaller = 93,
    /// Benchmark: times `Send` to a less urgent `BenchLowPrioReceiver`
    /// waiting on endpoint 0 (slot 2), syncs by calling it on endpoint 1
    /// (slot 3), and checks on the notification in slot 4 that the
    /// receiver did not run during the `Send` (`ipc_send_lower_prio`).
    BenchHighPrioSender = 94,
    /// The receiver of `BenchHighPrioSender`: receives on slot 2, answers
    /// its sync calls on slot 3, signals slot 4 after each message.
    BenchLowPrioReceiver = 95,
    /// Benchmark: times a `Null` redirected to its own user-dispatch
    /// handler and resumed with `UserDispatchReturn`
    /// (`user_dispatch_redirect`).
    BenchUserDispatch = 96,
    /// Gets the refusals of `IrqSetTimer` (an IrqHandler for another
    /// interrupt in slot 2), then writes CNTP_CTL_EL0 from EL0: it must
    /// fault there (`init/src/el0_device_tests.rs`).
    TimerRegisterWriter = 97,
    /// Reads the PMU cycle counter, then writes PMCR_EL0 from EL0: it
    /// must fault there.
    PmuWriter = 98,
    /// Holds the physical timer's IrqHandler (slot 2; read-only in 5),
    /// bound to the notification in slot 3, and is the fault handler
    /// (endpoint in slot 4) of `DeviceProber`: checks each trapped access
    /// and that only `IrqSetTimer` programs the timer.
    TimerHolder = 99,
    /// With no capability, writes and reads the physical timer's and the
    /// PMU's registers (each access trapped), then reads the counters EL0
    /// may read.
    DeviceProber = 100,
    /// Makes three audited threads (`SelfEnder`) that end themselves with
    /// their first syscall, and checks each left its record
    /// (`init/src/audit_record_tests.rs`; Untyped in slot 2, its VSpace in
    /// 3, its TCB in 4).
    SelfEndAuditor = 101,
    /// A thread made from user space that ends itself with its first
    /// syscall: `Exit`, deleting its own TCB or revoking the Untyped its
    /// TCB came from (parameter: `audit_record_tests::SELF_END_*` in the
    /// low byte, the slot or status above).
    SelfEnder = 102,
    /// A thread with three filters from two servers and one without
    /// (`init/src/policy_routing_tests.rs`): each result is what the
    /// filter's own server decides (A's endpoint in slot 2, a notification
    /// in 3).
    RoutedApp = 103,
    /// Attaches the app's first filter naming itself, audits the app, and
    /// answers its requests (endpoint: slots 2 receive, 3 send badged; the
    /// app's TCB in 4, Untyped in 5).
    RouteServerA = 104,
    /// Attaches a filter naming itself and one naming no server to the
    /// app, cannot take its audit, and answers only its own filter's
    /// requests, each after A's.
    RouteServerB = 105,
    /// A thread whose `Poll`, `Signal` and `DebugPrint` go to its policy
    /// server (`PolicyWarden`) while `CancelAttacker` writes its registers
    /// and suspends it (`init/src/stopped_call_tests.rs`): each result is
    /// the call as judged, or `Interrupted`.
    PolicyVictim = 106,
    /// Holds the victim's TCB (slot 2; its own in 3) and makes its moves
    /// each time the warden signals slot 4, signalling slot 5 after
    /// (parameter: `CANCEL_SCENARIO_POLICY` or `CANCEL_SCENARIO_TRACE`).
    CancelAttacker = 107,
    /// The policy server and auditor of `PolicyVictim`: receives each
    /// request, hands the CPU to the attacker, answers, and checks the
    /// victim's audit records.
    PolicyWarden = 108,
    /// A traced thread whose `Poll` also goes to its policy server, both
    /// `TraceWarden`, while `CancelAttacker` writes its registers.
    TraceVictim = 109,
    /// The tracer and policy server of `TraceVictim`: checks that a
    /// cancelled call runs nothing and that its exit stop says so.
    TraceWarden = 110,
    /// A traced, audited thread whose calls get every verdict: a filter's
    /// allow, errno and log, its policy server's errno, emulate and allow,
    /// a `Trap` and a `Kill` (`init/src/audit_record_tests.rs`; a
    /// notification in slot 2, the warden's endpoint in 3).
    VerdictApp = 111,
    /// The tracer, policy server, fault handler and auditor of
    /// `VerdictApp`: checks each call's stops and its one record.
    VerdictWarden = 112,
    /// A confined thread (filtered, audited and traced by
    /// `ConfinementWarden`) that makes a thread (`ConfinedChild`) from its
    /// Untyped (slot 2; its own TCB in 3, an endpoint of its own in 4),
    /// tries to lift the child's confinement and starts it
    /// (`init/src/confinement_tests.rs`).
    ConfinementParent = 113,
    /// Confines `ConfinementParent` (policy server, auditor and tracer, all
    /// through the endpoint in slot 2) and checks the child inherited all
    /// of it.
    ConfinementWarden = 114,
    /// The thread `ConfinementParent` makes: its results are those of the
    /// filter, server and tracer it inherited.
    ConfinedChild = 115,
    /// Retypes 62 VSpaces of 65 pages (16 MiB zeroed) from the Untyped in
    /// slot 2, twice: the first is cancelled while preempted, the second
    /// goes on to its end (`init/src/preemption_tests.rs`).
    PreemptedRetyper = 116,
    /// The retyper's tracer, policy server and auditor, woken by the
    /// physical timer (IrqHandler in slot 2, notification in 3 bound to
    /// its own TCB in 8) while the retyper's zeroing runs.
    Preemptor = 117,
    /// Audited losslessly into a ring nobody drains: its `Null`s fill it,
    /// the next waits for room and is cancelled by `RoomAttacker`
    /// (`init/src/stopped_call_tests.rs`; the auditor's endpoint in
    /// slot 2).
    RoomApp = 118,
    /// Audits `RoomApp` losslessly (its TCB in slot 3, Untyped in 4, own
    /// VSpace in 5), waits for the attacker's word on its endpoint (slot
    /// 2), then drains the ring and finds the cancelled call's gap.
    RoomAuditor = 119,
    /// Below both: cancels the app's call waiting for audit room by
    /// writing its `x2` (its TCB in slot 2), then tells the auditor (slot
    /// 3).
    RoomAttacker = 120,
    /// Shares its CNode with the thread it makes (`SwapVictim`), confines
    /// it (a filter sending `Signal` to `SwapWarden`, audit) and moves
    /// capabilities in and out of the slot the victim's `Signal` names
    /// while the warden judges it (`init/src/capability_swap_tests.rs`;
    /// Untyped in slot 2, its VSpace in 3, its TCB in 4).
    SwapSibling = 121,
    /// The victim's policy server: receives each `Signal`, hands the CPU
    /// to the sibling (before or after its allow) and allows it.
    SwapWarden = 122,
    /// Made by `SwapSibling`, sharing its CNode: signals the slot the
    /// sibling changes and reports each result to it.
    SwapVictim = 123,
    /// Benchmark: makes `BenchSameAsClient` a second thread of its own
    /// address space and CSpace (the endpoint in slot 2, the Untyped in
    /// 3, its own VSpace in 4) and serves it as `BenchIpcServer`.
    BenchSameAsServer = 124,
    /// The client of `BenchSameAsServer`, started by it at the program's
    /// entry with this selector (not by the kernel).
    BenchSameAsClient = 125,
    /// Fills a 512 KiB Untyped of its own with each kind of object in
    /// turn (the case's Untyped in slot 2; `init/src/exhaustion_tests.rs`).
    Exhauster = 126,
    /// Makes every kind of object while the exhauster's memory is full.
    Survivor = 127,
    /// Confines two threads of its own with a filter from a one-filter
    /// Untyped, then deletes the filter (and later revokes the Untyped):
    /// the threads end, the memory is back
    /// (`init/src/filter_lifetime_tests.rs`; the case's Untyped in slot
    /// 2, its VSpace in 3, notifications in 4 and 5).
    FilterOwner = 128,
    /// A thread `FilterOwner` starts in its own space: checks it is
    /// confined, reports through the slot its parameter names, waits.
    FilterChild = 129,
    /// Starts threads of its own with its fault endpoint and sees each
    /// end (an exit, a Kill rule, a stopped fault) as an end message;
    /// restarts one, deletes them (`init/src/supervision_tests.rs`; the
    /// case's Untyped in slot 2, its VSpace in 3).
    Supervisor = 130,
    /// A thread `Supervisor` starts: ends as its parameter says.
    Supervised = 131,
    /// Confines three askers with a filter naming itself as policy server
    /// and answers their requests later, in reverse order
    /// (`init/src/policy_server_tests.rs`; the requests' endpoint in slot
    /// 2, the Untyped in 3, the askers' TCBs in 4..=6, its server
    /// capability in 7, its own TCB in 8).
    AsyncPolicyServer = 132,
    /// An asker of `AsyncPolicyServer` (its parameter: which; the server's
    /// endpoint in slot 2).
    AsyncAsker = 133,
    /// Makes a policy server and three askers of its own, loses the
    /// server as its parameter says (exit, fault, TCB deleted) and checks
    /// what it is told; after an exit hands the filter to the restarted
    /// server (the case's Untyped in slot 2, its VSpace in 3).
    LossSupervisor = 134,
    /// The server `LossSupervisor` makes.
    LossServer = 135,
    /// An asker `LossSupervisor` makes.
    LossAsker = 136,
    /// Makes `JudgedApp` a thread of its own space and CSpace, confines
    /// it, then rewrites its IPC buffer while its calls are judged and
    /// wait (`init/src/judged_memory_tests.rs`; Untyped in slot 2, its
    /// VSpace in 3, its TCB in 4).
    JudgedScribbler = 137,
    /// The app's policy server and the receiver of its calls: every
    /// message must arrive as judged.
    JudgedServer = 138,
    /// Made by `JudgedScribbler`: calls with the safe pattern in its
    /// buffer, judged by a rule on its bytes or by the server.
    JudgedApp = 139,
    /// A fuzzer's helper, a thread of its space (`init/src/fuzz.rs`):
    /// rewrites the fuzzer's IPC buffer and argument buffers when woken,
    /// and sends judged messages the fuzzer checks.
    FuzzScribbler = 140,
    /// A case of several CPUs (`init/src/smp_tests.rs`; parameter: its
    /// scenario, `smp_tests::SMP_*`): makes its workers in its own space
    /// (Untyped in slot 2, its VSpace in 3, its TCB in 4), puts them on
    /// their CPUs and checks what they saw.
    SmpMain = 141,
    /// A worker `SmpMain` makes (parameter: its role and index).
    SmpWorker = 142,
    /// The SMP rows' benchmark thread (`init/src/bench/smp.rs`): makes its
    /// servers and clients threads of its own space, places them on CPUs
    /// and times cross-core IPC and throughput (the case's endpoint in
    /// slot 2, Untyped in 3, its VSpace in 4).
    BenchSmp = 143,
    /// Made by `BenchSmp`: the cross-core server on CPU 1.
    BenchCrossCoreServer = 144,
    /// Made by `BenchSmp`: pair N's client (parameter: N).
    BenchPairClient = 145,
    /// Made by `BenchSmp`: pair N's server (parameter: N).
    BenchPairServer = 146,
    /// A restartable-sequence case (`init/src/rseq_tests.rs`; parameter:
    /// its scenario, `rseq_tests::RSEQ_*`): makes its workers in its own
    /// space (Untyped in slot 2, its VSpace in 3, its TCB in 4, the
    /// physical timer's IrqHandler in 5 for the one-CPU scenario) and
    /// checks what they counted.
    RseqMain = 147,
    /// A worker `RseqMain` makes (parameter: its role and index).
    RseqWorker = 148,
    /// The rseq rows' benchmark thread (`init/src/bench/rseq.rs`): the
    /// per-CPU add against an atomic and a lock, and syscalls with an
    /// area registered.
    BenchRseq = 149,
    /// Retypes 62 VSpaces of 65 pages (16 MiB zeroed) from the Untyped in
    /// slot 2, with no entry work, while `RetypeYielder` (of its
    /// priority) yields; checks all were made, then signals the
    /// notification in slot 3 (`init/src/preemption_tests.rs`).
    YieldRetyper = 150,
    /// Yields until the notification in slot 3 is signalled; at least
    /// twice before it, so that a yield found the retyper preempted in
    /// its `Retype` and queued with its call kept.
    RetypeYielder = 151,
    /// User dispatch on both paths (`init/src/user_dispatch_tests.rs`):
    /// a redirect and its return with the SDK's buffer (one page: the
    /// fast path) and with one across two pages (the generic entry) agree;
    /// an Untyped in slot 4, its own VSpace in 6, its own TCB in 7.
    UserDispatchPaths = 152,
    /// The policy fast path against the generic entry
    /// (`init/src/policy_paths_tests.rs`): the same calls judged by the
    /// vector's walk of the compiled verdicts and by the generic entry
    /// agree; an Untyped in slot 4, its own TCB in 7.
    PolicyPaths = 153,
    /// A trace exit stop answered on both paths
    /// (`init/src/trace_answer_tests.rs`): the tracer, its endpoint in
    /// slot 2 (receive) and 4 (send), the tracee's TCB in 3, its own in
    /// 5, the bystander's notifications in 6 (to wake it) and 7 (its
    /// mark).
    TraceAnswerTracer = 154,
    /// The thread it traces.
    TraceAnswerTracee = 155,
    /// A thread more urgent than the tracee that the tracer wakes once.
    TraceAnswerBystander = 156,
    /// A trace entry stop sent on both paths
    /// (`init/src/trace_entry_tests.rs`): the tracer, its endpoint in
    /// slot 2 (receive) and 4 (send), the tracee's TCB in 3, the tracee's
    /// start notification in 6, the bystander's in 7 (to arm its timer)
    /// and 8 (its mark).
    TraceEntryTracer = 157,
    /// The thread it traces (its start notification in 2).
    TraceEntryTracee = 158,
    /// A thread between the two that a timer wakes while the tracee runs
    /// (the physical timer's IrqHandler in slot 2, its notification in 3,
    /// the tracer's in 4 and 5).
    TraceEntryBystander = 159,
    /// A policy request sent on both paths
    /// (`init/src/policy_request_tests.rs`): the server, its endpoint in
    /// slot 2 (receive), the asker's TCB in 3 (its statistics), its start
    /// notification in 6.
    PolicyRequestServer = 160,
    /// The thread whose filter asks it: the endpoint in slot 2 (send, with
    /// `policy_request_tests::ASKER_BADGE`), its own TCB in 3 (with the
    /// policy right), an Untyped in 4, the server's TCB in 5 (read), the
    /// server's start notification in 6.
    PolicyRequestAsker = 161,
}

/// `ReplyClient`'s parameter: the client whose reply the server saves.
pub const REPLY_CLIENT_FIRST: u64 = 1;
/// `ReplyClient`'s parameter: the client the server answers first.
pub const REPLY_CLIENT_SECOND: u64 = 2;

/// `AuditServer`'s scenario: lossy, the server stalled during the burst.
pub const AUDIT_SCENARIO_LOSSY: u64 = 0;
/// `AuditServer`'s scenario: lossless, the burst waits for the server.
pub const AUDIT_SCENARIO_LOSSLESS: u64 = 1;
/// Syscalls in `AuditedApp`'s burst.
pub const AUDIT_BURST: u64 = 40;
/// The badge `AuditServer` gives the app's records.
pub const AUDIT_APP_BADGE: u64 = 0x7a;

/// `TcbController`'s scenarios (its parameter and its subject's).
pub const TCB_SCENARIO_SUSPEND: u64 = 0;
/// See [`TCB_SCENARIO_SUSPEND`].
pub const TCB_SCENARIO_REGISTERS: u64 = 1;
/// The value `TcbController` writes into its subject's `x0`.
pub const TCB_REGISTER_MAGIC: u64 = 0x7cb0_5ca1_ab1e_0001;

/// `CancelAttacker`'s scenarios: the victim waits for its policy server
/// (`PolicyVictim`) or for its tracer (`TraceVictim`).
pub const CANCEL_SCENARIO_POLICY: u64 = 0;
/// See [`CANCEL_SCENARIO_POLICY`].
pub const CANCEL_SCENARIO_TRACE: u64 = 1;

/// What one fuzzer thread does: its index in the round, its seed and how
/// many syscalls it makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuzzParameter {
    /// The thread's index in its round (0..=3).
    pub index: u8,
    /// The round's seed.
    pub seed: u32,
    /// Syscalls this thread makes (< 2^22).
    pub calls: u32,
}

/// A fuzzer that made all its syscalls exits with this in the high 32 bits
/// of its status and the count in the low 32 (a random `Exit` the fuzzer
/// makes itself cannot be mistaken for it).
pub const FUZZ_DONE: i64 = 0x4655_5a5a << 32;
/// Bits 22..32 of a finished fuzzer's status: the judged messages it
/// checked (at most this many are counted).
pub const FUZZ_JUDGED_MAX: u64 = (1 << 10) - 1;
/// A fuzzer that received a judged message with bytes other than those
/// its filter allowed exits with this in the high 32 bits and the low 32
/// bits of the message's info in the low (whose label, `FUZZ_JUDGED_LABEL`,
/// tells a real report from a jump there by a fuzzer whose control flow a
/// random user dispatch or register write has sent anywhere).
pub const FUZZ_JUDGED_MISMATCH: i64 = 0x4a55_4447 << 32;
/// The label of the fuzzer's judged messages.
pub const FUZZ_JUDGED_LABEL: u64 = 0x4_d6ed;

impl FuzzParameter {
    /// Packs the parameter into the selector's 56 parameter bits.
    pub const fn encode(self) -> u64 {
        (self.index as u64 & 3)
            | ((self.seed as u64) << 2)
            | (((self.calls as u64) & ((1 << 22) - 1)) << 34)
    }

    /// Unpacks it.
    pub const fn decode(raw: u64) -> Self {
        FuzzParameter {
            index: (raw & 3) as u8,
            seed: (raw >> 2) as u32,
            calls: ((raw >> 34) & ((1 << 22) - 1)) as u32,
        }
    }
}

/// The unmapped address `HandledFaulter` loads from.
pub const UNMAPPED_PROBE_ADDRESS: u64 = 0x1000;

/// The slot of a case task's own CNode capability (the task slot
/// convention of `abi::task`).
pub const CNODE_SLOT: u64 = abi::task::CNODE_SLOT;
/// The slot of the debug console capability (write right).
pub const CONSOLE_SLOT: u64 = abi::task::CONSOLE_SLOT;
/// The slot of the endpoint capability of IPC cases.
pub const ENDPOINT_SLOT: u64 = 2;
/// A second endpoint capability slot (other rights) in IPC cases.
pub const SECOND_ENDPOINT_SLOT: u64 = 3;
/// Label that ends the IPC echo server.
pub const STOP_LABEL: u64 = 0x5709;

/// Bits of the selector above the program number.
pub const PARAMETER_SHIFT: u32 = 8;

/// A kernel text address user space probes (the kernel's link address).
pub const KERNEL_PROBE_ADDRESS: u64 = 0xFFFF_FFFF_C008_0000;

impl BootProgram {
    /// Every program, by number.
    pub const ALL: [BootProgram; 162] = [
        BootProgram::Demo,
        BootProgram::Syscalls,
        BootProgram::NullWrite,
        BootProgram::ReadKernel,
        BootProgram::Undefined,
        BootProgram::MisalignedPc,
        BootProgram::WriteText,
        BootProgram::ExecuteStack,
        BootProgram::Spin,
        BootProgram::FpCheck,
        BootProgram::Yield,
        BootProgram::MisalignedExclusive,
        BootProgram::Bench,
        BootProgram::BenchYieldPing,
        BootProgram::BenchYieldPartner,
        BootProgram::IpcEchoServer,
        BootProgram::IpcClient,
        BootProgram::IpcErrors,
        BootProgram::IpcFifoSender,
        BootProgram::IpcFifoReceiver,
        BootProgram::BenchIpcServer,
        BootProgram::BenchIpcClient,
        BootProgram::CapOwner,
        BootProgram::CapWaiter,
        BootProgram::NotifySignaler,
        BootProgram::NotifyWaiter,
        BootProgram::NotifySleeper,
        BootProgram::NotifyWaker,
        BootProgram::BenchNotifyPing,
        BootProgram::BenchNotifyPong,
        BootProgram::UntypedUser,
        BootProgram::FaultHandler,
        BootProgram::HandledFaulter,
        BootProgram::Fuzzer,
        BootProgram::Confined,
        BootProgram::BadgeWitness,
        BootProgram::Quitter,
        BootProgram::AbandonedCaller,
        BootProgram::CapGiver,
        BootProgram::CapTaker,
        BootProgram::IrqUser,
        BootProgram::BenchScaleClient,
        BootProgram::TcbPriority,
        BootProgram::TcbPeer,
        BootProgram::TcbController,
        BootProgram::TcbSubject,
        BootProgram::PolicyUser,
        BootProgram::PrioServer,
        BootProgram::PrioMiddle,
        BootProgram::PrioCaller,
        BootProgram::FloorFaulter,
        BootProgram::PolicyAsker,
        BootProgram::PolicyServer,
        BootProgram::VSpaceMapper,
        BootProgram::VSpaceFaultHandler,
        BootProgram::DemoSupervisor,
        BootProgram::DemoPolicyServer,
        BootProgram::DemoApp,
        BootProgram::AuditServer,
        BootProgram::AuditedApp,
        BootProgram::BenchPolicy,
        BootProgram::BenchIpcServerFiltered,
        BootProgram::BenchIpcClientFiltered,
        BootProgram::BenchPolicyAsker,
        BootProgram::BenchPolicyServer,
        BootProgram::RevokeOwner,
        BootProgram::RevokeWaiter,
        BootProgram::TraceTracer,
        BootProgram::TraceTracee,
        BootProgram::AuditThenTrace,
        BootProgram::OneNull,
        BootProgram::BindWaiter,
        BootProgram::BindSignaller,
        BootProgram::KillSupervisor,
        BootProgram::KillServer,
        BootProgram::KillClient,
        BootProgram::PolicyTrapped,
        BootProgram::PolicyTrapHandler,
        BootProgram::DemoTracer,
        BootProgram::BenchAudited,
        BootProgram::BenchTracer,
        BootProgram::BenchTraced,
        BootProgram::UserDispatch,
        BootProgram::UserDispatchUnmapped,
        BootProgram::ThreadsRoot,
        BootProgram::ThreadsCaller,
        BootProgram::ThreadsServer,
        BootProgram::ReplyServer,
        BootProgram::ReplyClient,
        BootProgram::RootTask,
        BootProgram::UserSpaceRoot,
        BootProgram::PolicyFastCaller,
        BootProgram::PolicyFastServer,
        BootProgram::BenchLowPrioCaller,
        BootProgram::BenchHighPrioSender,
        BootProgram::BenchLowPrioReceiver,
        BootProgram::BenchUserDispatch,
        BootProgram::TimerRegisterWriter,
        BootProgram::PmuWriter,
        BootProgram::TimerHolder,
        BootProgram::DeviceProber,
        BootProgram::SelfEndAuditor,
        BootProgram::SelfEnder,
        BootProgram::RoutedApp,
        BootProgram::RouteServerA,
        BootProgram::RouteServerB,
        BootProgram::PolicyVictim,
        BootProgram::CancelAttacker,
        BootProgram::PolicyWarden,
        BootProgram::TraceVictim,
        BootProgram::TraceWarden,
        BootProgram::VerdictApp,
        BootProgram::VerdictWarden,
        BootProgram::ConfinementParent,
        BootProgram::ConfinementWarden,
        BootProgram::ConfinedChild,
        BootProgram::PreemptedRetyper,
        BootProgram::Preemptor,
        BootProgram::RoomApp,
        BootProgram::RoomAuditor,
        BootProgram::RoomAttacker,
        BootProgram::SwapSibling,
        BootProgram::SwapWarden,
        BootProgram::SwapVictim,
        BootProgram::BenchSameAsServer,
        BootProgram::BenchSameAsClient,
        BootProgram::Exhauster,
        BootProgram::Survivor,
        BootProgram::FilterOwner,
        BootProgram::FilterChild,
        BootProgram::Supervisor,
        BootProgram::Supervised,
        BootProgram::AsyncPolicyServer,
        BootProgram::AsyncAsker,
        BootProgram::LossSupervisor,
        BootProgram::LossServer,
        BootProgram::LossAsker,
        BootProgram::JudgedScribbler,
        BootProgram::JudgedServer,
        BootProgram::JudgedApp,
        BootProgram::FuzzScribbler,
        BootProgram::SmpMain,
        BootProgram::SmpWorker,
        BootProgram::BenchSmp,
        BootProgram::BenchCrossCoreServer,
        BootProgram::BenchPairClient,
        BootProgram::BenchPairServer,
        BootProgram::RseqMain,
        BootProgram::RseqWorker,
        BootProgram::BenchRseq,
        BootProgram::YieldRetyper,
        BootProgram::RetypeYielder,
        BootProgram::UserDispatchPaths,
        BootProgram::PolicyPaths,
        BootProgram::TraceAnswerTracer,
        BootProgram::TraceAnswerTracee,
        BootProgram::TraceAnswerBystander,
        BootProgram::TraceEntryTracer,
        BootProgram::TraceEntryTracee,
        BootProgram::TraceEntryBystander,
        BootProgram::PolicyRequestServer,
        BootProgram::PolicyRequestAsker,
    ];

    /// A short name, used to name the thread.
    pub const fn name(self) -> &'static str {
        match self {
            BootProgram::Demo => "demo",
            BootProgram::Syscalls => "syscalls",
            BootProgram::NullWrite => "null-write",
            BootProgram::ReadKernel => "read-kernel",
            BootProgram::Undefined => "undefined",
            BootProgram::MisalignedPc => "misaligned-pc",
            BootProgram::WriteText => "write-text",
            BootProgram::ExecuteStack => "execute-stack",
            BootProgram::Spin => "spin",
            BootProgram::FpCheck => "fp-check",
            BootProgram::Yield => "yield",
            BootProgram::MisalignedExclusive => "misaligned-exclusive",
            BootProgram::Bench => "bench",
            BootProgram::BenchYieldPing => "bench-ping",
            BootProgram::BenchYieldPartner => "bench-pong",
            BootProgram::IpcEchoServer => "echo-server",
            BootProgram::IpcClient => "ipc-client",
            BootProgram::IpcErrors => "ipc-errors",
            BootProgram::IpcFifoSender => "fifo-sender",
            BootProgram::IpcFifoReceiver => "fifo-receiver",
            BootProgram::BenchIpcServer => "bench-server",
            BootProgram::BenchIpcClient => "bench-client",
            BootProgram::CapOwner => "cap-owner",
            BootProgram::CapWaiter => "cap-waiter",
            BootProgram::NotifySignaler => "signaler",
            BootProgram::NotifyWaiter => "waiter",
            BootProgram::NotifySleeper => "sleeper",
            BootProgram::NotifyWaker => "waker",
            BootProgram::BenchNotifyPing => "notify-ping",
            BootProgram::BenchNotifyPong => "notify-pong",
            BootProgram::UntypedUser => "untyped-user",
            BootProgram::FaultHandler => "fault-handler",
            BootProgram::HandledFaulter => "handled-faulter",
            BootProgram::Fuzzer => "fuzzer",
            BootProgram::Confined => "confined",
            BootProgram::BadgeWitness => "badge-witness",
            BootProgram::Quitter => "quitter",
            BootProgram::AbandonedCaller => "abandoned-caller",
            BootProgram::CapGiver => "cap-giver",
            BootProgram::CapTaker => "cap-taker",
            BootProgram::IrqUser => "irq-user",
            BootProgram::BenchScaleClient => "bench-scale",
            BootProgram::TcbPriority => "tcb-priority",
            BootProgram::TcbPeer => "tcb-peer",
            BootProgram::TcbController => "tcb-controller",
            BootProgram::TcbSubject => "tcb-subject",
            BootProgram::PolicyUser => "policy-user",
            BootProgram::PolicyAsker => "policy-asker",
            BootProgram::PolicyServer => "policy-server",
            BootProgram::PrioServer => "prio-server",
            BootProgram::PrioMiddle => "prio-middle",
            BootProgram::PrioCaller => "prio-caller",
            BootProgram::FloorFaulter => "floor-faulter",
            BootProgram::VSpaceMapper => "vspace-mapper",
            BootProgram::VSpaceFaultHandler => "vspace-fault-handler",
            BootProgram::DemoSupervisor => "supervisor",
            BootProgram::DemoPolicyServer => "policy-server",
            BootProgram::DemoApp => "app",
            BootProgram::AuditServer => "audit-server",
            BootProgram::AuditedApp => "audited-app",
            BootProgram::BenchPolicy => "bench-policy",
            BootProgram::BenchIpcServerFiltered => "bench-server-filtered",
            BootProgram::BenchIpcClientFiltered => "bench-client-filtered",
            BootProgram::BenchPolicyAsker => "bench-policy-asker",
            BootProgram::BenchPolicyServer => "bench-policy-server",
            BootProgram::RevokeOwner => "revoke-owner",
            BootProgram::RevokeWaiter => "revoke-waiter",
            BootProgram::TraceTracer => "tracer",
            BootProgram::TraceTracee => "tracee",
            BootProgram::AuditThenTrace => "audit-tracer",
            BootProgram::OneNull => "one-null",
            BootProgram::BindWaiter => "bound-waiter",
            BootProgram::BindSignaller => "signaller",
            BootProgram::KillSupervisor => "kill-supervisor",
            BootProgram::KillServer => "kill-server",
            BootProgram::KillClient => "kill-client",
            BootProgram::PolicyTrapped => "trapped",
            BootProgram::PolicyTrapHandler => "trap-handler",
            BootProgram::DemoTracer => "tracer",
            BootProgram::BenchAudited => "bench-audited",
            BootProgram::BenchTracer => "bench-tracer",
            BootProgram::BenchTraced => "bench-traced",
            BootProgram::UserDispatch => "user-dispatch",
            BootProgram::UserDispatchUnmapped => "dispatch-unmapped",
            BootProgram::ThreadsRoot => "threads-root",
            BootProgram::ThreadsCaller => "threads-caller",
            BootProgram::ThreadsServer => "threads-server",
            BootProgram::ReplyServer => "reply-server",
            BootProgram::ReplyClient => "reply-client",
            BootProgram::RootTask => "root",
            BootProgram::UserSpaceRoot => "user-space-root",
            BootProgram::PolicyFastCaller => "fast-caller",
            BootProgram::PolicyFastServer => "fast-server",
            BootProgram::BenchLowPrioCaller => "bench-low-caller",
            BootProgram::BenchHighPrioSender => "bench-high-sender",
            BootProgram::BenchLowPrioReceiver => "bench-low-receiver",
            BootProgram::BenchUserDispatch => "bench-dispatch",
            BootProgram::TimerRegisterWriter => "timer-writer",
            BootProgram::PmuWriter => "pmu-writer",
            BootProgram::TimerHolder => "timer-holder",
            BootProgram::DeviceProber => "device-prober",
            BootProgram::SelfEndAuditor => "self-end-auditor",
            BootProgram::SelfEnder => "self-ender",
            BootProgram::RoutedApp => "routed-app",
            BootProgram::RouteServerA => "server-a",
            BootProgram::RouteServerB => "server-b",
            BootProgram::PolicyVictim => "victim",
            BootProgram::CancelAttacker => "attacker",
            BootProgram::PolicyWarden => "warden",
            BootProgram::TraceVictim => "victim",
            BootProgram::TraceWarden => "warden",
            BootProgram::VerdictApp => "verdict-app",
            BootProgram::VerdictWarden => "verdict-warden",
            BootProgram::ConfinementParent => "parent",
            BootProgram::ConfinementWarden => "warden",
            BootProgram::ConfinedChild => "child",
            BootProgram::PreemptedRetyper => "retyper",
            BootProgram::Preemptor => "preemptor",
            BootProgram::RoomApp => "room-app",
            BootProgram::RoomAuditor => "room-auditor",
            BootProgram::RoomAttacker => "room-attacker",
            BootProgram::SwapSibling => "sibling",
            BootProgram::SwapWarden => "warden",
            BootProgram::SwapVictim => "victim",
            BootProgram::BenchSameAsServer => "bench-server",
            BootProgram::BenchSameAsClient => "bench-client",
            BootProgram::Exhauster => "exhauster",
            BootProgram::Survivor => "survivor",
            BootProgram::FilterOwner => "filter-owner",
            BootProgram::FilterChild => "confined-child",
            BootProgram::Supervisor => "supervisor",
            BootProgram::Supervised => "supervised",
            BootProgram::AsyncPolicyServer => "async-server",
            BootProgram::AsyncAsker => "asker",
            BootProgram::LossSupervisor => "supervisor",
            BootProgram::LossServer => "policy-server",
            BootProgram::LossAsker => "asker",
            BootProgram::JudgedScribbler => "scribbler",
            BootProgram::JudgedServer => "judged-server",
            BootProgram::JudgedApp => "judged-app",
            BootProgram::FuzzScribbler => "fuzz-scribbler",
            BootProgram::SmpMain => "smp-case",
            BootProgram::SmpWorker => "smp-worker",
            BootProgram::BenchSmp => "bench-smp",
            BootProgram::BenchCrossCoreServer => "bench-cross-server",
            BootProgram::BenchPairClient => "bench-pair-client",
            BootProgram::BenchPairServer => "bench-pair-server",
            BootProgram::RseqMain => "rseq-case",
            BootProgram::RseqWorker => "rseq-worker",
            BootProgram::BenchRseq => "bench-rseq",
            BootProgram::YieldRetyper => "yield-retyper",
            BootProgram::RetypeYielder => "retype-yielder",
            BootProgram::UserDispatchPaths => "dispatch-paths",
            BootProgram::PolicyPaths => "policy-paths",
            BootProgram::TraceAnswerTracer => "answer-tracer",
            BootProgram::TraceAnswerTracee => "answer-tracee",
            BootProgram::TraceAnswerBystander => "answer-bystander",
            BootProgram::TraceEntryTracer => "entry-tracer",
            BootProgram::TraceEntryTracee => "entry-tracee",
            BootProgram::TraceEntryBystander => "entry-bystander",
            BootProgram::PolicyRequestServer => "request-server",
            BootProgram::PolicyRequestAsker => "request-asker",
        }
    }

    /// The selector for this program with `parameter`.
    pub const fn selector(self, parameter: u64) -> u64 {
        (self as u64) | (parameter << PARAMETER_SHIFT)
    }

    /// Splits a selector into program and parameter.
    pub fn decode(selector: u64) -> Option<(BootProgram, u64)> {
        let program = *Self::ALL.get((selector & 0xff) as usize)?;
        Some((program, selector >> PARAMETER_SHIFT))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzz_parameters_round_trip() {
        let p = FuzzParameter {
            index: 2,
            seed: 0xdead_beef,
            calls: 40_000,
        };
        assert_eq!(FuzzParameter::decode(p.encode()), p);
        assert!(p.encode() < 1 << 56);
    }

    #[test]
    fn selectors_round_trip() {
        for program in BootProgram::ALL {
            assert_eq!(
                BootProgram::decode(program.selector(42)),
                Some((program, 42))
            );
        }
        assert_eq!(BootProgram::decode(200), None);
    }
}
