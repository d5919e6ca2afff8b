//! How much Untyped memory each kind of object takes.
//!
//! Every size but a VSpace's is a power of two and those objects are
//! aligned to their size, so they never straddle a boundary of their own
//! size and the space left between objects is only ever alignment padding.
//! A VSpace is its root table and the page-table pages it may use
//! (`1 + size` pages, not a power of two): it is page aligned. Thread, endpoint and
//! similar objects keep their working state in the kernel's static tables;
//! their size here is what retype charges the Untyped for them, so that
//! user space can make no more objects than its memory pays for.
use super::error::CapError;
use abi::cap::CapType;

/// The page (and Frame) size.
pub const PAGE_SIZE: u64 = 4096;
/// Smallest CNode radix: 2 slots.
pub const MIN_CNODE_RADIX: u8 = 1;
/// Largest CNode radix: 1024 slots.
pub const MAX_CNODE_RADIX: u8 = 10;
/// What one CNode slot costs (a capability and its derivation links).
pub const CNODE_SLOT_BYTES: u64 = 32;
/// Smallest Untyped made by retype: one page.
pub const MIN_UNTYPED_BITS: u8 = 12;
/// Largest Untyped made by retype (the 48-bit physical address space).
pub const MAX_UNTYPED_BITS: u8 = 47;
/// Bytes retype charges for a TCB.
pub const TCB_BYTES: u64 = 1024;
/// Bytes retype charges for a Filter: its rules (`policy::Filter`, about
/// 10 KiB) rounded up to a power of two.
pub const FILTER_BYTES: u64 = 16 * 1024;
/// Bytes retype charges for an Endpoint or a Notification.
pub const SMALL_OBJECT_BYTES: u64 = 16;

/// The size in bytes of one object of `cap_type`. `size_param` is the
/// radix for a CNode, log2 of the size for an Untyped, and must be 0 for
/// every fixed-size type. Types retype cannot make (`Null`, `IrqHandler`,
/// `DebugConsole`: the kernel hands those out at boot; `Reply`: made only
/// by `ReplySave`, from no memory) are refused.
pub fn object_size(cap_type: CapType, size_param: u64) -> Result<u64, CapError> {
    let fixed = |bytes: u64| {
        if size_param == 0 {
            Ok(bytes)
        } else {
            Err(CapError::InvalidArgument)
        }
    };
    match cap_type {
        CapType::Untyped => {
            if (MIN_UNTYPED_BITS as u64..=MAX_UNTYPED_BITS as u64).contains(&size_param) {
                Ok(1 << size_param)
            } else {
                Err(CapError::InvalidArgument)
            }
        }
        CapType::CNode => {
            if (MIN_CNODE_RADIX as u64..=MAX_CNODE_RADIX as u64).contains(&size_param) {
                Ok(CNODE_SLOT_BYTES << size_param)
            } else {
                Err(CapError::InvalidArgument)
            }
        }
        CapType::Tcb => fixed(TCB_BYTES),
        CapType::Endpoint | CapType::Notification => fixed(SMALL_OBJECT_BYTES),
        CapType::Frame => fixed(PAGE_SIZE),
        CapType::VSpace => {
            if (1..=abi::vspace::MAX_USER_TABLE_PAGES).contains(&size_param) {
                Ok((1 + size_param) * PAGE_SIZE)
            } else {
                Err(CapError::InvalidArgument)
            }
        }
        CapType::Filter => fixed(FILTER_BYTES),
        CapType::Null | CapType::IrqHandler | CapType::DebugConsole | CapType::Reply => {
            Err(CapError::InvalidArgument)
        }
    }
}

/// The alignment of an object of `cap_type` that is `size_bytes` large:
/// its size, but a page for a VSpace.
pub fn object_alignment(cap_type: CapType, size_bytes: u64) -> u64 {
    match cap_type {
        CapType::VSpace => PAGE_SIZE,
        _ => size_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_table() {
        assert_eq!(object_size(CapType::Tcb, 0), Ok(1024));
        assert_eq!(object_size(CapType::Endpoint, 0), Ok(16));
        assert_eq!(object_size(CapType::Notification, 0), Ok(16));
        assert_eq!(object_size(CapType::Frame, 0), Ok(4096));
        assert_eq!(object_size(CapType::VSpace, 1), Ok(2 * 4096));
        assert_eq!(object_size(CapType::VSpace, 64), Ok(65 * 4096));
        assert_eq!(object_size(CapType::CNode, 1), Ok(64));
        assert_eq!(object_size(CapType::CNode, 10), Ok(32 * 1024));
        assert_eq!(object_size(CapType::Untyped, 12), Ok(4096));
        assert_eq!(object_size(CapType::Untyped, 47), Ok(1 << 47));
    }

    #[test]
    fn every_size_but_a_vspaces_is_a_power_of_two() {
        for t in CapType::ALL {
            for param in 0..64 {
                if let Ok(size) = object_size(t, param) {
                    if t == CapType::VSpace {
                        assert!(size.is_multiple_of(PAGE_SIZE), "{param}");
                        assert_eq!(object_alignment(t, size), PAGE_SIZE);
                    } else {
                        assert!(size.is_power_of_two(), "{t:?} {param}");
                        assert_eq!(object_alignment(t, size), size);
                    }
                }
            }
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        let bad = CapError::InvalidArgument;
        assert_eq!(object_size(CapType::CNode, 0), Err(bad));
        assert_eq!(object_size(CapType::CNode, 11), Err(bad));
        assert_eq!(object_size(CapType::Untyped, 11), Err(bad));
        assert_eq!(object_size(CapType::Untyped, 48), Err(bad));
        assert_eq!(object_size(CapType::Tcb, 1), Err(bad));
        assert_eq!(object_size(CapType::Frame, 12), Err(bad));
        assert_eq!(object_size(CapType::VSpace, 0), Err(bad));
        assert_eq!(object_size(CapType::VSpace, 65), Err(bad));
        assert_eq!(object_size(CapType::VSpace, u64::MAX), Err(bad));
        assert_eq!(object_size(CapType::Null, 0), Err(bad));
        assert_eq!(object_size(CapType::IrqHandler, 0), Err(bad));
        assert_eq!(object_size(CapType::DebugConsole, 0), Err(bad));
        assert_eq!(object_size(CapType::Reply, 0), Err(bad), "ReplySave only");
    }
}
