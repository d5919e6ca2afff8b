//! Tasks: what a supervisor does to start one, and what a started task
//! does to report.
//!
//! * [`builder`]: [`TaskBuilder`] makes a task from an ELF file — CNode,
//!   TCB, VSpace, IPC buffer, stack, image, capabilities, fault endpoint —
//!   from a child Untyped of its own, and returns a [`Task`] handle that
//!   starts, stops, restarts and destroys it (one revoke gives every
//!   object back).
//! * [`slots`]: [`SlotAllocator`], the free slots of the supervisor's
//!   CNode.
//! * [`memory`]: [`UntypedPool`], the Untyped capabilities task memory is
//!   carved from.
//! * [`report`]: the task side of `abi::task`.
//!
//! `docs/tasks.md` has an example a supervisor can copy.

pub mod builder;
pub mod memory;
pub mod report;
pub mod slots;

pub use builder::{Grant, Step, Supervisor, Task, TaskBuilder, TaskError};
pub use memory::{MemoryError, PoolUntyped, UntypedPool};
pub use report::report;
pub use slots::{SlotAllocator, SlotError};
