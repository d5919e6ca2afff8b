//! The kernel the host tests of kernel internals start from: object
//! memory on the heap, a CNode of 16 slots and, in its slot 0, the
//! original capability to an Untyped of the size the test asks for.

use crate::cap::{CNodeId, Capability, Memory, ObjectId};
use crate::kernel::Kernel;
use abi::cap::CapType;
use abi::cap::Rights;

/// Object memory: the CNode's record, then free records room, then the
/// Untyped's own memory. It starts a page lower: the first page holds
/// granule 0, which holds no record.
pub(in crate::kernel) const MEMORY_BASE: u64 = 0x10_0000;
pub(in crate::kernel) const UNTYPED_BASE: u64 = 0x20_0000;
/// Where tests may place records of their own (`create_object`).
pub(in crate::kernel) const SPARE_RECORDS: u64 = MEMORY_BASE + 0x2000;

/// The kernel, its CNode, and the Untyped of `untyped_bytes` in slot 0.
pub(in crate::kernel) fn kernel_with_untyped(
    untyped_bytes: u64,
) -> (Box<Kernel>, CNodeId, ObjectId) {
    let mut kernel = Box::new(Kernel::new());
    let bytes = (UNTYPED_BASE - MEMORY_BASE + 0x1000 + untyped_bytes) as usize;
    assert!(kernel.install_object_memory(Memory::on_heap(MEMORY_BASE - 0x1000, bytes)));
    let caps = &mut kernel.objects;
    let cnode = caps.create_cnode(4, MEMORY_BASE).unwrap();
    let untyped = caps
        .create_object(
            CapType::Untyped,
            UNTYPED_BASE,
            untyped_bytes,
            MEMORY_BASE + 0x1000,
        )
        .unwrap();
    let slot = caps.slot(cnode, 0).unwrap();
    caps.install_original(
        slot,
        Capability::new(CapType::Untyped, Rights::ALL, untyped),
    )
    .unwrap();
    (kernel, cnode, untyped)
}

/// Deletes the capability in slot `index` of `cnode` and frees what that
/// destroys, as the end of a kernel entry does (without the kernel's own
/// destruction hooks).
pub(in crate::kernel) fn delete_and_reap(kernel: &mut Kernel, cnode: CNodeId, index: u64) {
    let slot = kernel.objects.slot(cnode, index).unwrap();
    kernel.objects.delete(slot).unwrap();
    while kernel.objects.take_destroyed().is_some() {}
    kernel.reap();
}
