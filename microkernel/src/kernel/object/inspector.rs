//! The Inspector: its holder reads every thread's state and every
//! CSpace (`InspectThread`, `InspectCaps`; `abi::inspect` has the words
//! written). It changes nothing, so a supervisor can answer `ps` and
//! `caps` without any task being stopped.

use crate::cap::SlotId;
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::syscall::{inspect_arguments, Inspected};
use crate::thread::{Thread, ThreadId, ThreadState};
use abi::cap::{CapType, Rights};
use abi::inspect::{self, CapInfo, ThreadInfo};
use abi::ErrorCode;

impl Kernel {
    /// `InspectThread` or `InspectCaps` by `current` (decode checked the
    /// registers' form): the words go to its memory, `x8` says whether
    /// there were any.
    #[inline(never)]
    pub(in crate::kernel) fn inspect<P: Platform>(
        &mut self,
        platform: &mut P,
        current: ThreadId,
        inspected: Inspected,
    ) -> ErrorCode {
        let Ok((inspector, first, second, address)) =
            inspect_arguments(&self.objects[current].context, inspected)
        else {
            return ErrorCode::InvalidArgument;
        };
        if let Err(code) = self.thread_cap(current, inspector, CapType::Inspector, Rights::READ) {
            return code;
        }
        let mut bytes = [0u8; 8 * inspect::THREAD_INFO_WORDS];
        let length = match inspected {
            Inspected::Thread => self.thread_info(first).map(|info| {
                store_words(&mut bytes, &info.encode());
                8 * inspect::THREAD_INFO_WORDS
            }),
            Inspected::Caps => {
                let Some(thread) = self.thread_numbered(first) else {
                    return ErrorCode::InvalidArgument;
                };
                self.cap_info(thread, second).map(|info| {
                    store_words(&mut bytes, &info.encode());
                    8 * inspect::CAP_INFO_WORDS
                })
            }
        };
        if let Some(length) = length {
            let Some(space) = self.thread_space(current) else {
                return ErrorCode::InvalidAddress;
            };
            if space
                .copy_to_user(platform, address, &bytes[..length])
                .is_err()
            {
                return ErrorCode::InvalidAddress;
            }
        }
        self.objects[current]
            .context
            .set_value(u64::from(length.is_some()));
        ErrorCode::Ok
    }

    /// The thread with the smallest number at or above `first`.
    fn thread_info(&self, first: u64) -> Option<ThreadInfo> {
        let id = self
            .all_threads()
            .filter(|&id| u64::from(self.objects[id].number) >= first)
            .min_by_key(|&id| self.objects[id].number)?;
        Some(describe(&self.objects[id]))
    }

    /// The thread numbered `number`, if one is.
    fn thread_numbered(&self, number: u64) -> Option<ThreadId> {
        self.all_threads()
            .find(|&id| u64::from(self.objects[id].number) == number)
    }

    /// The first capability at slot `first` or above in `thread`'s CSpace.
    fn cap_info(&self, thread: ThreadId, first: u64) -> Option<CapInfo> {
        let (start, slots) = self.objects[thread].cspace_slots;
        (first..u64::from(slots)).find_map(|index| {
            let capability = self
                .objects
                .slot_content(SlotId(start.0 + index as u32))
                .filter(|c| !c.is_null())?;
            Some(CapInfo {
                slot: index,
                cap_type: capability.cap_type(),
                rights: capability.rights().into_bytes()[0],
                badge: capability.is_badged().then_some(capability.badge()),
                object: self
                    .objects
                    .object(capability.object())
                    .map_or(0, |header| header.serial),
            })
        })
    }
}

/// What inspection says of `thread`.
fn describe(thread: &Thread) -> ThreadInfo {
    use abi::inspect::ThreadState as Shown;
    let state = match thread.state() {
        ThreadState::Ready => Shown::Ready,
        ThreadState::Running => Shown::Running,
        ThreadState::Exited(_) | ThreadState::Faulted(_) => Shown::Ending,
        ThreadState::BlockedOnSend { .. } => Shown::Sending,
        ThreadState::BlockedOnReceive { .. } => Shown::Receiving,
        ThreadState::BlockedOnReply => Shown::WaitingForReply,
        ThreadState::BlockedOnAnswer => Shown::Stopped,
        ThreadState::Suspended => Shown::Suspended,
        ThreadState::Inactive | ThreadState::Free => Shown::Inactive,
        ThreadState::BlockedOnAudit => Shown::WaitingForAudit,
        ThreadState::BlockedOnNotification { .. } => Shown::Waiting,
        ThreadState::Ended | ThreadState::EndPending { .. } => Shown::Ended,
    };
    let name = thread.name.as_str().as_bytes();
    let mut bytes = [0u8; inspect::NAME_BYTES];
    let len = name.len().min(inspect::NAME_BYTES);
    bytes[..len].copy_from_slice(&name[..len]);
    ThreadInfo {
        number: thread.number,
        state,
        priority: thread.priority,
        mcp: thread.mcp,
        cpu: thread.affinity,
        filters: thread.filters.len() as u8,
        traced: thread.tracer.is_some(),
        audited: thread.audit.is_some(),
        name: bytes,
        name_len: len as u8,
        end: thread.end,
    }
}

/// `words` as little-endian bytes at the start of `out`.
fn store_words(out: &mut [u8], words: &[u64]) {
    for (chunk, word) in out.chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
}
