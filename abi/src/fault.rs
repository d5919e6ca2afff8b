//! Fault messages: what a thread's fault handler receives and replies.
//!
//! A thread with a fault endpoint does not stop when it faults: the kernel
//! sends the endpoint a message as if the thread had called it, with label
//! `FAULT_LABEL` and four words — the exception class (ESR_EL1.EC), the
//! fault address (FAR_EL1), ESR_EL1 and the faulting PC — and the fault
//! endpoint's badge in `x8`. The thread's registers are untouched. The
//! handler's reply (its label) decides what happens next.

/// Label of a fault message.
pub const FAULT_LABEL: u64 = 0xfa17;
/// Reply label: run the faulting instruction again.
pub const FAULT_REPLY_RETRY: u64 = 0;
/// Reply label: resume at the address in the reply's word 0.
pub const FAULT_REPLY_SET_PC: u64 = 1;
/// Reply label: stop the thread (it is reported as faulted).
pub const FAULT_REPLY_STOP: u64 = 2;
