//! How much Untyped memory each kind of object takes.
//!
//! An object costs its record (`layout::record_bytes`: a TCB's thread, an
//! endpoint's queue, a CNode's slots, ...), packed at 64-byte granules from
//! the top of the Untyped, and, for the three kinds with memory of their
//! own, that memory from the bottom: a Frame's page, a VSpace's root and
//! table pages (page aligned), a smaller Untyped's range (aligned to its
//! size; that Untyped keeps its record at its own top, so it costs its
//! parent only its range).
use super::error::CapError;
use super::layout::record_bytes;
use abi::cap::CapType;

/// The page (and Frame) size.
pub const PAGE_SIZE: u64 = 4096;
/// Smallest CNode radix: 2 slots.
pub const MIN_CNODE_RADIX: u8 = 1;
/// Largest CNode radix: 65 536 slots (2 MiB of slots). A CSpace is one
/// CNode, so this is the most capabilities one thread can name; the
/// kernel fills a new CNode's slots in one go, so the bound also bounds
/// that work.
pub const MAX_CNODE_RADIX: u8 = 16;
/// Smallest Untyped made by retype: one page.
pub const MIN_UNTYPED_BITS: u8 = 12;
/// Largest Untyped made by retype (the 48-bit physical address space).
pub const MAX_UNTYPED_BITS: u8 = 47;

/// What one object of a type costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cost {
    /// Bytes of memory of its own (0 for most types).
    pub memory: u64,
    /// The alignment that memory needs.
    pub alignment: u64,
    /// Bytes of its record.
    pub record: u64,
}

/// What one object of `cap_type` costs. `size_param` is the radix for a
/// CNode, log2 of the size for an Untyped, the table pages besides the
/// root for a VSpace, and must be 0 for every other type. Types retype
/// cannot make (`Null`, and `IrqHandler` and `DebugConsole`, which the
/// kernel hands out at boot) are refused.
pub fn cost(cap_type: CapType, size_param: u64) -> Result<Cost, CapError> {
    let bad = CapError::InvalidArgument;
    let record_only = |radix: u8| {
        record_bytes(cap_type, radix)
            .map(|record| Cost {
                memory: 0,
                alignment: 1,
                record,
            })
            .ok_or(bad)
    };
    match cap_type {
        CapType::Untyped => {
            if !(u64::from(MIN_UNTYPED_BITS)..=u64::from(MAX_UNTYPED_BITS)).contains(&size_param) {
                return Err(bad);
            }
            Ok(Cost {
                memory: 1 << size_param,
                alignment: 1 << size_param,
                record: 0,
            })
        }
        CapType::CNode => {
            if !(u64::from(MIN_CNODE_RADIX)..=u64::from(MAX_CNODE_RADIX)).contains(&size_param) {
                return Err(bad);
            }
            record_only(size_param as u8)
        }
        CapType::Frame if size_param == 0 => Ok(Cost {
            memory: PAGE_SIZE,
            alignment: PAGE_SIZE,
            ..record_only(0)?
        }),
        CapType::VSpace => {
            if !(1..=abi::vspace::MAX_USER_TABLE_PAGES).contains(&size_param) {
                return Err(bad);
            }
            Ok(Cost {
                memory: (1 + size_param) * PAGE_SIZE,
                alignment: PAGE_SIZE,
                ..record_only(0)?
            })
        }
        CapType::Tcb
        | CapType::Endpoint
        | CapType::Notification
        | CapType::Reply
        | CapType::Filter
            if size_param == 0 =>
        {
            record_only(0)
        }
        _ => Err(bad),
    }
}

#[cfg(test)]
mod tests;
