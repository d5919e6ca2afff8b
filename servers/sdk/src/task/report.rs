//! The task side of `abi::task`: how a loaded task reports its outcome to
//! the root.

use crate::ipc::{self, Cptr};
use crate::syscall::cnode;
use abi::cap::Rights;
use abi::task::{CNODE_SLOT, REPORT_SLOT, ROOT_NOTIFICATION_SLOT};
use abi::ErrorCode;

/// Sets `bit` in the root's notification word: mints the unbadged
/// capability in `ROOT_NOTIFICATION_SLOT` into `REPORT_SLOT` with `bit` as
/// its badge, signals it and deletes it again. If the mint fails, signals
/// `ROOT_NOTIFICATION_SLOT` itself (which sets `abi::task::REPORT_BROKEN`
/// when it is unbadged) so a waiting root still wakes, and returns the
/// mint's error.
pub fn report(bit: u64) -> Result<(), ErrorCode> {
    match cnode::mint(
        CNODE_SLOT,
        ROOT_NOTIFICATION_SLOT,
        REPORT_SLOT,
        Rights::WRITE,
        Some(bit),
    ) {
        Ok(()) => {
            let signalled = ipc::signal(Cptr(REPORT_SLOT));
            let deleted = cnode::delete(CNODE_SLOT, REPORT_SLOT);
            signalled.and(deleted)
        }
        Err(error) => {
            ipc::signal(Cptr(ROOT_NOTIFICATION_SLOT))?;
            Err(error)
        }
    }
}
