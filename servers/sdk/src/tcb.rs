//! Typed TCB capabilities: priority, MCP, suspend/resume, registers,
//! names.

use crate::ipc::Cptr;
use crate::syscall::{raw_syscall, raw_syscall_registers};
use abi::tcb::Register;
use abi::{ErrorCode, Syscall};

/// A TCB capability: names one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tcb(pub Cptr);

impl Tcb {
    fn invoke(self, syscall: Syscall, x2: u64, x3: u64) -> Result<(), ErrorCode> {
        raw_syscall(syscall.number(), self.0 .0, x2, x3).into_result()
    }

    /// Sets the thread's priority (at most the caller's MCP); takes a raw
    /// value so that out-of-range requests can be made (and refused).
    pub fn set_priority(self, priority: u64) -> Result<(), ErrorCode> {
        self.invoke(Syscall::TcbSetPriority, priority, 0)
    }

    /// Sets the thread's maximum controlled priority (at most the caller's).
    pub fn set_mcp(self, mcp: u64) -> Result<(), ErrorCode> {
        self.invoke(Syscall::TcbSetMcp, mcp, 0)
    }

    /// Stops the thread until `resume`.
    pub fn suspend(self) -> Result<(), ErrorCode> {
        self.invoke(Syscall::TcbSuspend, 0, 0)
    }

    /// Lets a suspended thread run again, or starts a new, configured one.
    pub fn resume(self) -> Result<(), ErrorCode> {
        self.invoke(Syscall::TcbResume, 0, 0)
    }

    /// Names the thread `name` in the console lines the kernel prints for
    /// it (`[name#N] text`, fault and end reports); its number stays. 1
    /// ..= `abi::tcb::MAX_NAME_BYTES` bytes of printable ASCII without
    /// space, `#`, `[` or `]` (`abi::tcb::is_valid_name`), else
    /// `InvalidArgument`. A thread made from user space is "task" until
    /// named.
    pub fn set_name(self, name: &str) -> Result<(), ErrorCode> {
        self.set_name_raw(name.as_ptr() as u64, name.len() as u64)
    }

    /// [`Tcb::set_name`] with any address and length (for tests of the
    /// kernel's checks).
    pub fn set_name_raw(self, address: u64, len: u64) -> Result<(), ErrorCode> {
        self.invoke(Syscall::TcbSetName, address, len)
    }

    /// Gives the thread affinity with CPU `cpu` (0 is the boot CPU): it
    /// runs there from now on, whatever it is doing (a running thread is
    /// stopped and moves; see `abi::Syscall::TcbSetAffinity`). Returns how
    /// many CPUs the kernel runs on; a CPU it does not run on is
    /// `InvalidArgument`.
    pub fn set_affinity(self, cpu: u64) -> Result<u64, ErrorCode> {
        let x = raw_syscall_registers(
            Syscall::TcbSetAffinity.number(),
            [self.0 .0, 0, cpu, 0, 0, 0, 0, 0],
        );
        crate::syscall::RawResult(x[0]).into_result().map(|()| x[8])
    }

    /// Binds the Notification capability `notification` (read right) to
    /// the thread, so that its signals end the thread's `Recv` (label
    /// `abi::message::NOTIFICATION_LABEL`, the word in `x8`); `None`
    /// unbinds.
    pub fn bind_notification(self, notification: Option<Cptr>) -> Result<(), ErrorCode> {
        let (slot, on) = notification.map_or((0, 0), |n| (n.0, 1));
        self.invoke(Syscall::TcbBindNotification, slot, on)
    }

    /// Gives a new thread (made by retyping a TCB) its CSpace and
    /// priority: `cspace` (a CNode capability, write right) becomes its
    /// CSpace, `priority` its priority and MCP (at most the caller's
    /// MCP). The kernel loads no program: its address space, code and
    /// start come from [`Tcb::set_space`] (before or after this), for a
    /// thread of the caller's own program from
    /// `sdk::thread::bind_to_own_space` (AArch64 builds).
    pub fn configure(self, cspace: Cptr, priority: u64) -> Result<(), ErrorCode> {
        self.configure_with_x4(cspace, priority, abi::tcb::NO_PROGRAM)
    }

    /// [`Tcb::configure`] with any `x4`: only `abi::tcb::NO_PROGRAM` is
    /// taken, anything else is `InvalidArgument` (for tests of that
    /// rule).
    pub fn configure_with_x4(self, cspace: Cptr, priority: u64, x4: u64) -> Result<(), ErrorCode> {
        crate::syscall::raw_syscall6(
            Syscall::TcbConfigure.number(),
            self.0 .0,
            [cspace.0, priority, x4, 0, 0],
        )
        .into_result()
    }

    /// Gives a new thread (configured or not yet) the
    /// address space `vspace` (made by `Retype`, or one already in use,
    /// which it then shares): see [`ThreadStart`]. It stays inactive until
    /// `resume`; map its code, stack and IPC buffer (at the
    /// [`IpcBuffer`]'s address, where it finds it in `TPIDR_EL0`) into
    /// `vspace` before that.
    pub fn set_space(
        self,
        vspace: crate::vspace::VSpace,
        start: ThreadStart,
    ) -> Result<(), ErrorCode> {
        let cptr = |c: Option<Cptr>| c.map_or(abi::tcb::NO_CAP, |c| c.0);
        crate::syscall::tcb_set_space(
            self.0 .0,
            vspace.0 .0,
            cptr(start.ipc_buffer.map(|buffer| buffer.frame.0)),
            start.ipc_buffer.map_or(0, |buffer| buffer.address),
            cptr(start.fault_endpoint),
            [start.pc, start.sp, start.x0],
        )
    }

    /// Reads one of the thread's registers.
    pub fn read_register(self, register: Register) -> Result<u64, ErrorCode> {
        self.read_register_number(register.number())
    }

    /// Reads register number `number` (for tests of invalid numbers).
    pub fn read_register_number(self, number: u64) -> Result<u64, ErrorCode> {
        let x = raw_syscall_registers(
            Syscall::TcbReadRegister.number(),
            [self.0 .0, 0, number, 0, 0, 0, 0, 0],
        );
        crate::syscall::RawResult(x[0]).into_result().map(|()| x[8])
    }

    /// Writes one of the thread's registers. `Ok(true)`: the register was
    /// one of `x0..x8` and the thread was inside a syscall (stopped for its
    /// tracer, a policy server or audit room, or blocked in IPC), which
    /// the write cancelled (it returns `Interrupted` and did not run).
    pub fn write_register(self, register: Register, value: u64) -> Result<bool, ErrorCode> {
        self.write_register_number(register.number(), value)
    }

    /// Writes register number `number` (for tests of invalid numbers).
    pub fn write_register_number(self, number: u64, value: u64) -> Result<bool, ErrorCode> {
        let x = raw_syscall_registers(
            Syscall::TcbWriteRegister.number(),
            [self.0 .0, 0, number, value, 0, 0, 0, 0],
        );
        crate::syscall::RawResult(x[0])
            .into_result()
            .map(|()| x[8] == 1)
    }
}

/// A thread's IPC buffer: the Frame (read and write rights) and where
/// the thread has it mapped (page aligned; its first `TPIDR_EL0`, where
/// [`crate::ipc::buffer_word`] finds it). Threads that share an address
/// space each have their own, at different addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpcBuffer {
    /// The Frame the kernel reads and writes message words in.
    pub frame: crate::vspace::Frame,
    /// Its user address in the thread's address space.
    pub address: u64,
}

/// How a thread given its address space by [`Tcb::set_space`] starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadStart {
    /// Its IPC buffer, if any.
    pub ipc_buffer: Option<IpcBuffer>,
    /// The endpoint (write right) its faults are sent to, with that
    /// capability's badge; `None`: a fault stops it.
    pub fault_endpoint: Option<Cptr>,
    /// Its first PC (4-byte aligned).
    pub pc: u64,
    /// Its first SP (16-byte aligned).
    pub sp: u64,
    /// Its first `x0`.
    pub x0: u64,
}

/// A Filter capability: a seccomp-like rule list (see `sdk::policy` for
/// building one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilterCap(pub Cptr);

impl FilterCap {
    /// Replaces the filter's rules with an encoded description (from
    /// `FilterBuilder::encode`). Refused once the filter is attached.
    pub fn load(self, description: &[u8]) -> Result<(), ErrorCode> {
        raw_syscall(
            Syscall::FilterLoad.number(),
            self.0 .0,
            description.as_ptr() as u64,
            description.len() as u64,
        )
        .into_result()
    }

    /// Hands the filter (this capability needs the write right: its
    /// maker's) to `server`: every attachment of it whose server is gone
    /// (its thread ended, faulted or was destroyed) gets this one; one
    /// whose server lives keeps it. Returns how many were handed over.
    /// `InvalidArgument` for a server thread that has ended or that the
    /// filter confines.
    pub fn set_server(self, server: FilterServer) -> Result<u64, ErrorCode> {
        let x = raw_syscall_registers(
            Syscall::FilterSetServer.number(),
            [
                self.0 .0,
                0,
                server.endpoint.0,
                server.thread.0 .0,
                0,
                0,
                0,
                0,
            ],
        );
        crate::syscall::RawResult(x[0]).into_result().map(|()| x[8])
    }
}

/// A filter's policy server: the endpoint its `Notify` requests go to
/// (a capability with the write right; its badge comes with every
/// request) and the thread that answers them (a TCB capability with the
/// read right). When that thread ends, faults or its TCB is destroyed,
/// the filter's requests are refused (`Denied`) until its maker hands it
/// to another ([`FilterCap::set_server`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilterServer {
    /// Where the requests go.
    pub endpoint: Cptr,
    /// Who answers them.
    pub thread: Tcb,
}

impl Tcb {
    /// Attaches `filter` to the thread (needs the policy right); `server`
    /// is its policy server, which its `Notify` verdicts ask. A filter
    /// that can say `Notify` needs one (`InvalidArgument` without), whose
    /// thread has not ended and is not this one.
    pub fn attach_filter(
        self,
        filter: FilterCap,
        server: Option<FilterServer>,
    ) -> Result<(), ErrorCode> {
        let (endpoint, thread, given) =
            server.map_or((0, 0, 0), |s| (s.endpoint.0, s.thread.0 .0, 1));
        crate::syscall::raw_syscall6(
            Syscall::TcbAttachFilter.number(),
            self.0 .0,
            [filter.0 .0, endpoint, given, thread, 0],
        )
        .into_result()
    }
}

impl Tcb {
    /// Attaches a tracer to the thread (needs the trace right): its
    /// syscalls stop at entry and exit, and each stop is sent through the
    /// endpoint capability `endpoint` (write right; see `sdk::trace`).
    pub fn attach_tracer(self, endpoint: Cptr) -> Result<(), ErrorCode> {
        self.invoke(Syscall::TcbAttachTracer, endpoint.0, 0)
    }

    /// Detaches the thread's tracer (needs the trace right and a
    /// capability to the endpoint the tracer was attached with: `Denied`
    /// otherwise); a stop it waits at ends as if the tracer had said
    /// "continue".
    pub fn detach_tracer(self, endpoint: Cptr) -> Result<(), ErrorCode> {
        self.invoke(Syscall::TcbDetachTracer, endpoint.0, 0)
    }
}

impl Tcb {
    /// Audits the thread (needs the policy right): one record per syscall
    /// into the ring in `ring` (a Frame, write right), `notification`
    /// (write right) signalled when the ring goes from empty to
    /// non-empty, every record carrying `badge`; `mode` `None` turns
    /// auditing off, which needs `ring` to be the thread's ring (see
    /// `abi::audit`). A thread already audited cannot be given another
    /// ring (`Denied`).
    pub fn set_audit(
        self,
        ring: crate::vspace::Frame,
        notification: Cptr,
        mode: Option<abi::audit::AuditMode>,
        badge: u64,
    ) -> Result<(), ErrorCode> {
        let mode = match mode {
            None => 0,
            Some(abi::audit::AuditMode::Lossy) => 1,
            Some(abi::audit::AuditMode::Lossless) => 2,
        };
        crate::syscall::raw_syscall6(
            Syscall::TcbSetAudit.number(),
            self.0 .0,
            [ring.0 .0, notification.0, mode, badge, 0],
        )
        .into_result()
    }
}
