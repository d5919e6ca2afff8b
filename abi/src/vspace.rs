//! Address spaces as user space sees them: where frames may be mapped and
//! with which permissions (`Syscall::FrameMap`).

/// Lowest user address a frame may be mapped at. Below it lie the
/// program image (linked at 4 MiB); the window stays clear of the stack
/// and the IPC buffer at the top of the user half.
pub const FRAME_MAP_START: u64 = 0x0000_1000_0000_0000;
/// One past the highest user address a frame may be mapped at.
pub const FRAME_MAP_END: u64 = 0x0000_7000_0000_0000;
/// Most page-table pages `FrameMap` may add to one address space (taken
/// from the kernel's frame pool and freed with the address space).
pub const MAX_TABLE_PAGES: usize = 16;

/// Most page-table pages a VSpace made by `Retype` may use besides its
/// root: `Retype`'s size parameter (1 ..= this) for `CapType::VSpace`.
/// The object takes `1 + size` pages of the Untyped, and every table a
/// mapping needs comes from them (`OutOfResources` once they are used).
pub const MAX_USER_TABLE_PAGES: u64 = 64;
/// Lowest address a frame may be mapped at in a VSpace made by `Retype`:
/// page 0 stays unmapped, so a null pointer always faults.
pub const USER_MAP_START: u64 = 0x1000;
/// One past the highest such address: the end of the user half.
pub const USER_MAP_END: u64 = 1 << 48;

/// The permissions of a mapping, as `x4` of `FrameMap` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapRights {
    /// Read only (1).
    Read,
    /// Read and write, never execute (3).
    ReadWrite,
    /// Read and execute, never write (5).
    ReadExecute,
}

impl MapRights {
    /// Bit 0: read.
    pub const READ: u64 = 1;
    /// Bit 1: write.
    pub const WRITE: u64 = 2;
    /// Bit 2: execute.
    pub const EXECUTE: u64 = 4;

    /// Decodes `x4`; `None` for anything but 1, 3 and 5 (write+execute
    /// included: W^X is never granted).
    pub const fn from_raw(raw: u64) -> Option<MapRights> {
        match raw {
            1 => Some(MapRights::Read),
            3 => Some(MapRights::ReadWrite),
            5 => Some(MapRights::ReadExecute),
            _ => None,
        }
    }

    /// The value user space passes in `x4`.
    pub const fn raw(self) -> u64 {
        match self {
            MapRights::Read => Self::READ,
            MapRights::ReadWrite => Self::READ | Self::WRITE,
            MapRights::ReadExecute => Self::READ | Self::EXECUTE,
        }
    }

    /// Does the mapping allow writing?
    pub const fn writable(self) -> bool {
        matches!(self, MapRights::ReadWrite)
    }
}

/// Is `[va, va + 4 KiB)` a page a frame may be mapped at in a VSpace made
/// by `Retype` (the whole user half but page 0)?
pub const fn is_user_map_address(va: u64) -> bool {
    va.is_multiple_of(4096) && va >= USER_MAP_START && va < USER_MAP_END
}

/// Is `[va, va + 4 KiB)` a page of the frame mapping window?
pub const fn is_frame_map_address(va: u64) -> bool {
    va.is_multiple_of(4096) && va >= FRAME_MAP_START && va < FRAME_MAP_END
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_r_rw_rx_are_rights() {
        for raw in 0..16 {
            let decoded = MapRights::from_raw(raw);
            assert_eq!(decoded.is_some(), matches!(raw, 1 | 3 | 5), "{raw}");
            if let Some(rights) = decoded {
                assert_eq!(rights.raw(), raw);
            }
        }
        assert_eq!(MapRights::from_raw(7), None, "write+execute");
        assert_eq!(MapRights::from_raw(u64::MAX), None);
    }

    #[test]
    fn the_window_is_page_aligned_user_addresses_clear_of_the_image_and_stack() {
        assert!(is_frame_map_address(FRAME_MAP_START));
        assert!(is_frame_map_address(FRAME_MAP_END - 4096));
        assert!(!is_frame_map_address(FRAME_MAP_END));
        assert!(!is_frame_map_address(FRAME_MAP_START - 4096));
        assert!(!is_frame_map_address(FRAME_MAP_START + 8));
        assert!(!is_frame_map_address(0x40_0000));
        assert!(!is_frame_map_address(crate::IPC_BUFFER_ADDRESS));
        assert!(!is_frame_map_address(!0xfff));
    }

    #[test]
    fn a_user_made_space_may_map_all_of_the_user_half_but_page_0() {
        assert!(!is_user_map_address(0));
        assert!(is_user_map_address(USER_MAP_START));
        assert!(is_user_map_address(0x40_0000));
        assert!(is_user_map_address(crate::IPC_BUFFER_ADDRESS));
        assert!(is_user_map_address(USER_MAP_END - 4096));
        assert!(!is_user_map_address(USER_MAP_END));
        assert!(!is_user_map_address(USER_MAP_START + 8));
        assert!(!is_user_map_address(!0xfff));
    }
}
