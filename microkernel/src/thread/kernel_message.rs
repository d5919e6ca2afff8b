//! The message the kernel sends on a thread's behalf (`Thread`'s
//! `kernel_message`), and a trace stop's.

use super::kernel_message_tag;
use super::PolicyRequest;
use crate::fault::FaultReport;

/// A message the kernel sends on a thread's behalf, as if the thread had
/// called the receiver, and whose answer the thread waits for (seL4's
/// `tcbFault`, which also covers more than faults). One at a time: a
/// thread that waits for one answer makes no syscall and takes no fault.
///
/// `repr(u8)`, its tags fixed (`kernel_message_tag`), so that the IPC fast
/// path's assembly can tell from a thread's `kernel_message` that it waits
/// for the answer to a trace exit stop, and take the message when the
/// answer comes (`fast_paths.rs` checks at build time the bytes of an
/// `Option` of it that the assembly reads and writes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum KernelMessage {
    /// A fault, to its fault endpoint (`abi::fault`): the handler's
    /// answer retries, moves the PC or stops the thread.
    Fault(FaultReport) = kernel_message_tag::FAULT,
    /// A `Notify` verdict's request, to the filter's policy server
    /// (`abi::policy_request`): the answer is the verdict on the stopped
    /// call.
    PolicyRequest(PolicyRequest) = kernel_message_tag::POLICY_REQUEST,
    /// A syscall entry or exit stop or a single step, to the tracer
    /// (`abi::trace`): the answer lets the thread go on.
    TraceStop(TraceStop) = kernel_message_tag::TRACE_STOP,
}

/// A trace stop sent to the tracer (see `abi::trace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceStop {
    /// Entry, exit or step.
    pub kind: abi::trace::StopKind,
    /// Word 0 of the message: the syscall number (entry, exit) or `x8`.
    pub number: u64,
    /// The counter (CNTVCT_EL0) when the thread stopped.
    pub time: u64,
}
