//! Inspection through an Inspector capability (`abi::inspect`): every
//! thread's state, and the capabilities in a thread's CSpace.

use crate::syscall::raw_syscall_registers;
use abi::inspect::{CapInfo, ThreadInfo, CAP_INFO_WORDS, THREAD_INFO_WORDS};
use abi::{ErrorCode, Syscall};

/// The thread with the smallest number at or above `first`, if any.
pub fn thread(inspector: u64, first: u64) -> Result<Option<ThreadInfo>, ErrorCode> {
    let mut words = [0u64; THREAD_INFO_WORDS];
    let x = raw_syscall_registers(
        Syscall::InspectThread.number(),
        [inspector, 0, first, words.as_mut_ptr() as u64, 0, 0, 0, 0],
    );
    crate::syscall::RawResult(x[0]).into_result()?;
    if x[8] == 0 {
        return Ok(None);
    }
    ThreadInfo::decode(&words)
        .map(Some)
        .ok_or(ErrorCode::InvalidArgument)
}

/// The first capability at slot `first` or above in the CSpace of the
/// thread numbered `number`, if any (`InvalidArgument`: no such thread).
pub fn cap(inspector: u64, number: u32, first: u64) -> Result<Option<CapInfo>, ErrorCode> {
    let mut words = [0u64; CAP_INFO_WORDS];
    let x = raw_syscall_registers(
        Syscall::InspectCaps.number(),
        [
            inspector,
            0,
            u64::from(number),
            first,
            words.as_mut_ptr() as u64,
            0,
            0,
            0,
        ],
    );
    crate::syscall::RawResult(x[0]).into_result()?;
    if x[8] == 0 {
        return Ok(None);
    }
    CapInfo::decode(&words)
        .map(Some)
        .ok_or(ErrorCode::InvalidArgument)
}

/// Every thread, in number order.
pub fn threads(inspector: u64) -> impl Iterator<Item = Result<ThreadInfo, ErrorCode>> {
    let mut next = Some(0u64);
    core::iter::from_fn(move || {
        let first = next?;
        match thread(inspector, first) {
            Ok(Some(info)) => {
                next = Some(u64::from(info.number) + 1);
                Some(Ok(info))
            }
            Ok(None) => {
                next = None;
                None
            }
            Err(code) => {
                next = None;
                Some(Err(code))
            }
        }
    })
}
