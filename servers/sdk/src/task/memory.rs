//! Where a task's memory comes from: a set of Untyped capabilities of the
//! caller's CNode with their sizes (the root task's from
//! `abi::bootinfo::BootInfo`), from which each task gets a child Untyped
//! of its own. Every object of the task is retyped from that child, so
//! revoking and deleting it is one step that ends the task and gives all
//! of its memory back to the parent.
//!
//! The pool keeps no free-space books of its own: the kernel knows how
//! full each Untyped is, and the pool tries them in order until one has
//! room (`NotEnoughMemory` moves on to the next).

use crate::ipc::Cptr;
use crate::syscall::retype;
use abi::bootinfo::{BootInfo, MAX_BOOT_UNTYPEDS};
use abi::cap::CapType;
use abi::ErrorCode;

/// Most Untypeds one pool holds.
pub const MAX_POOL_UNTYPEDS: usize = MAX_BOOT_UNTYPEDS;

/// One Untyped of the pool: its slot in the caller's CNode and log2 of
/// its size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolUntyped {
    /// Its capability (write right) in the caller's CNode.
    pub cap: Cptr,
    /// log2 of its size in bytes.
    pub size_bits: u8,
}

/// Why no child Untyped could be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryError {
    /// More Untypeds than [`MAX_POOL_UNTYPEDS`] were added.
    Full,
    /// No Untyped of the pool is large enough, or every large enough one
    /// answered `NotEnoughMemory`.
    Exhausted {
        /// log2 of the size asked for.
        size_bits: u8,
    },
    /// `Retype` failed for another reason (a bad slot, a missing right).
    Retype(ErrorCode),
}

/// A set of Untyped capabilities to carve task memory from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UntypedPool {
    untypeds: [Option<PoolUntyped>; MAX_POOL_UNTYPEDS],
}

impl Default for UntypedPool {
    fn default() -> Self {
        UntypedPool::new()
    }
}

impl UntypedPool {
    /// An empty pool.
    pub const fn new() -> UntypedPool {
        UntypedPool {
            untypeds: [None; MAX_POOL_UNTYPEDS],
        }
    }

    /// Every Untyped the kernel gave the root task, in their boot slots.
    pub fn from_boot_info(info: &BootInfo) -> UntypedPool {
        let mut pool = UntypedPool::new();
        for (index, untyped) in info.untypeds.iter().enumerate() {
            // Cannot be full: the boot information holds at most as many.
            let _ = pool.add(PoolUntyped {
                cap: Cptr(BootInfo::untyped_slot(index)),
                size_bits: untyped.size_bits,
            });
        }
        pool
    }

    /// Adds an Untyped; the pool tries Untypeds in the order they were
    /// added.
    pub fn add(&mut self, untyped: PoolUntyped) -> Result<(), MemoryError> {
        let free = self
            .untypeds
            .iter_mut()
            .find(|u| u.is_none())
            .ok_or(MemoryError::Full)?;
        *free = Some(untyped);
        Ok(())
    }

    /// The Untypeds, in the order they are tried.
    pub fn untypeds(&self) -> impl Iterator<Item = PoolUntyped> + '_ {
        self.untypeds.iter().flatten().copied()
    }

    /// Makes a child Untyped of `2^size_bits` bytes at the empty slot
    /// `target` of the caller's CNode, from the first Untyped of the pool
    /// with room for it; returns the Untyped it came from.
    pub fn carve(&self, size_bits: u8, target: u64) -> Result<PoolUntyped, MemoryError> {
        for untyped in self.untypeds().filter(|u| u.size_bits >= size_bits) {
            match retype(
                untyped.cap.0,
                CapType::Untyped,
                u64::from(size_bits),
                target,
                1,
            ) {
                Ok(()) => return Ok(untyped),
                Err(ErrorCode::NotEnoughMemory) => continue,
                Err(code) => return Err(MemoryError::Retype(code)),
            }
        }
        Err(MemoryError::Exhausted { size_bits })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi::bootinfo::BootUntyped;

    #[test]
    fn the_boot_untypeds_are_taken_in_slot_order() {
        let mut info = BootInfo {
            irq: 30,
            kernel_kept_pages: 0,
            untypeds: Default::default(),
            devices: Default::default(),
            image_bytes: 0,
            system_image_bytes: 0,
            command_line: Default::default(),
        };
        for (base, size_bits) in [(0x4800_0000, 27), (0x4060_1000, 12)] {
            info.untypeds.push(BootUntyped { base, size_bits }).unwrap();
        }
        let pool = UntypedPool::from_boot_info(&info);
        let got: Vec<_> = pool.untypeds().collect();
        assert_eq!(
            got,
            [
                PoolUntyped {
                    cap: Cptr(BootInfo::untyped_slot(0)),
                    size_bits: 27
                },
                PoolUntyped {
                    cap: Cptr(BootInfo::untyped_slot(1)),
                    size_bits: 12
                },
            ]
        );
        // On the host every syscall fails: the first error is reported,
        // and a size no Untyped has is refused before any call.
        assert_eq!(
            pool.carve(18, 100),
            Err(MemoryError::Retype(ErrorCode::InvalidSyscall))
        );
        assert_eq!(
            pool.carve(28, 100),
            Err(MemoryError::Exhausted { size_bits: 28 })
        );
    }

    #[test]
    fn a_pool_holds_at_most_its_capacity() {
        let mut pool = UntypedPool::new();
        let one = PoolUntyped {
            cap: Cptr(1),
            size_bits: 12,
        };
        for _ in 0..MAX_POOL_UNTYPEDS {
            pool.add(one).unwrap();
        }
        assert_eq!(pool.add(one), Err(MemoryError::Full));
    }
}
