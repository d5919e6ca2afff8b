//! Host tests of the syscall path against a fake arch and kernel that record
//! every hook call. Each test states one guarantee of docs/entry.md.

mod enter;
mod exit;
mod exit_loop;
mod fake;
mod rseq;
mod stops;
