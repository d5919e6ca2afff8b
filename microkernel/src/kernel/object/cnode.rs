//! CNodes: the capability operations (copy, mint, move, delete,
//! revoke, ...) on the slots of a CSpace.

use crate::cap::CNodeId;
use crate::cap::ObjectId;
use crate::kernel::members::{self, Use};
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::syscall::CapOperation;
use crate::thread::ThreadId;
use abi::cap::{CapType, Rights};
use abi::ErrorCode;

impl Kernel {
    /// A CNode operation through the caller's CNode capability `cnode_cptr`
    /// (write right). Objects destroyed by a delete or revoke wake their
    /// waiters with `ObjectDeleted`.
    // Inlined into `dispatch`, for the reason `tcb_syscall` is.
    #[inline(always)]
    pub(in crate::kernel) fn cap_syscall<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        operation: CapOperation,
        cnode_cptr: u64,
        source: u64,
        target: u64,
    ) -> Result<(), ErrorCode> {
        let cnode_cap = self.thread_cap(current, cnode_cptr, CapType::CNode, Rights::WRITE)?;
        let cnode = CNodeId(cnode_cap.object());
        // `MintInto` and `MoveInto` take their source from the caller's
        // own CSpace.
        let source_cnode = match operation {
            CapOperation::MintInto { .. } | CapOperation::MoveInto => self.objects[current]
                .cspace
                .ok_or(ErrorCode::InvalidCapability)?,
            _ => cnode,
        };
        let source = self
            .objects
            .slot(source_cnode, source)
            .map_err(ErrorCode::from)?;
        let target = || self.objects.slot(cnode, target).map_err(ErrorCode::from);
        match operation {
            CapOperation::Copy => {
                let target = target()?;
                self.objects.copy(source, target)
            }
            CapOperation::Mint { rights, badge } | CapOperation::MintInto { rights, badge } => {
                let target = target()?;
                self.objects.mint(source, target, rights, badge)
            }
            CapOperation::Move | CapOperation::MoveInto => {
                let target = target()?;
                self.objects.move_cap(source, target)
            }
            CapOperation::Delete => {
                return self.destroying(platform, |objects| objects.delete(source))
            }
            CapOperation::Revoke => {
                let result = self.destroying(platform, |objects| objects.revoke(source));
                self.reclaim_pinned(platform, source);
                return result;
            }
            CapOperation::ReplySave => return self.reply_save(current, source),
        }
        .map_err(ErrorCode::from)
    }
}

impl Kernel {
    /// A CNode is destroyed: the threads whose CSpace it was have none.
    pub(in crate::kernel) fn cnode_destroyed(&mut self, object: ObjectId) {
        while let Some(user) = members::first(&self.objects, object, Use::CSpace) {
            members::leave(&mut self.objects, object, user, Use::CSpace);
            let thread = &mut self.objects[user];
            thread.cspace = None;
            thread.cspace_slots = crate::thread::NO_CSPACE_SLOTS;
        }
    }
}
