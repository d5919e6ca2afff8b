//! The kernel objects' syscalls and lifecycles, one module per object.
//! The capability layer (`crate::cap`) keeps their records and the
//! capabilities that name them; here is what each object does.

pub(in crate::kernel) mod cnode;
pub(in crate::kernel) mod console;
pub(in crate::kernel) mod console_input;
pub(in crate::kernel) mod endpoint;
pub(in crate::kernel) mod filter;
pub(in crate::kernel) mod filter_server;
pub(in crate::kernel) mod inspector;
pub(in crate::kernel) mod irq;
pub(in crate::kernel) mod irq_control;
pub(in crate::kernel) mod lifecycle;
pub(in crate::kernel) mod notification;
pub(in crate::kernel) mod notification_binding;
pub(in crate::kernel) mod reply;
pub(in crate::kernel) mod tcb;
pub(in crate::kernel) mod untyped;
pub(in crate::kernel) mod vspace;
