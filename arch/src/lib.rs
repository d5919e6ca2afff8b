//! Everything AArch64 and board-specific in Portcullis.
//!
//! Design principles:
//!
//! 1. This crate is the only place with `asm!`, system-register access and
//!    MMIO; every `unsafe` block says why it is sound.
//! 2. What can be computed without the hardware (exception decoding, page
//!    table layout, device-tree parsing, register layouts) is plain safe
//!    Rust that unit-tests on the host; only `cpu` and `drivers` are built
//!    for the target alone.
//! 3. A board's addresses live in one file under `boards/`; the device
//!    tree overrides them.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(any(test, feature = "fdt-writer", feature = "heap-object-memory"))]
extern crate alloc;

pub mod boards;
pub mod cache;
pub mod context;
pub mod device_tree;
pub mod exception;
pub mod gic;
pub mod layout;
pub mod mmu;
pub mod object_memory;

#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub mod cpu;
#[cfg(all(target_arch = "aarch64", target_os = "none"))]
pub mod drivers;
