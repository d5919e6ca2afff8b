//! Typed Frame and VSpace capabilities: mapping pages into an address
//! space and unmapping them.

use crate::ipc::Cptr;
use crate::syscall::{raw_syscall, raw_syscall6};
use abi::vspace::MapRights;
use abi::{ErrorCode, Syscall};

/// A Frame capability: one 4 KiB page of memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame(pub Cptr);

/// A VSpace capability: names one address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VSpace(pub Cptr);

impl Frame {
    /// Maps the frame into `vspace` at `va` with `rights`.
    pub fn map(self, vspace: VSpace, va: u64, rights: MapRights) -> Result<(), ErrorCode> {
        self.map_raw(vspace, va, rights.raw())
    }

    /// Maps with a raw permissions value (for tests of refused values,
    /// such as write+execute, 7).
    pub fn map_raw(self, vspace: VSpace, va: u64, rights: u64) -> Result<(), ErrorCode> {
        raw_syscall6(
            Syscall::FrameMap.number(),
            self.0 .0,
            [vspace.0 .0, va, rights, 0, 0],
        )
        .into_result()
    }

    /// Unmaps the frame from wherever it is mapped (`Ok` if it is not).
    pub fn unmap(self) -> Result<(), ErrorCode> {
        raw_syscall(Syscall::FrameUnmap.number(), self.0 .0, 0, 0).into_result()
    }
}
