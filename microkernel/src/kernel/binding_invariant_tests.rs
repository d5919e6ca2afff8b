//! The invariant checks catch a thread bound to an address space that is
//! gone or not its own: each test breaks one link by hand, the way a bug
//! in a destruction hook would, and `check_frame_mappings` names it.

use super::Kernel;
use crate::address_space::AddressSpace;
use crate::cap::{CNodeId, Capability, ObjectId};
use crate::platform::{MemoryMaintenance, PhysMemory};
use crate::thread::{ThreadId, ThreadState};
use abi::cap::{CapType, Rights};
use arch::mmu::{AsidAllocator, AsidBits};
use std::collections::HashMap;

#[derive(Default)]
struct Ram(HashMap<u64, u64>);

impl PhysMemory for Ram {
    fn read_phys(&self, _pa: u64, out: &mut [u8]) {
        out.fill(0);
    }
    fn write_phys(&mut self, _pa: u64, _data: &[u8]) {}
    fn read_phys_u64(&self, pa: u64) -> u64 {
        self.0.get(&pa).copied().unwrap_or(0)
    }
    fn write_phys_u64(&mut self, pa: u64, value: u64) {
        self.0.insert(pa, value);
    }
    fn zero_frame(&mut self, _pa: u64) {}
}

// These tests break bindings by hand, not maintenance: nothing to record
// (`address_space`'s own tests check what it asks of the caches).
impl MemoryMaintenance for Ram {
    fn sync_instruction_cache(&mut self, _pa: u64) {}
    fn publish_table_writes(&mut self) {}
    fn flush_tlb_page(&mut self, _asid: u16, _va: u64) {}
    fn flush_tlb_all(&mut self) {}
}

const UNTYPED_BASE: u64 = 0x10_0000;

/// A kernel with a CNode whose slot 0 holds a 64 KiB Untyped, slot 1 a
/// VSpace of 2 table pages made from it, slot 2 a Frame and slot 3 an
/// Endpoint; thread 0 (new, made from user space) is bound to the VSpace
/// with the Frame as IPC buffer and the Endpoint for faults.
struct Bound {
    kernel: Box<Kernel>,
    cnode: CNodeId,
    vspace: ObjectId,
}

fn bound() -> Bound {
    let mut kernel = Box::new(Kernel::new());
    let caps = &mut kernel.caps;
    let cnode = caps.create_cnode(4).unwrap();
    let untyped = caps
        .create_object(CapType::Untyped, UNTYPED_BASE, 64 * 1024)
        .unwrap();
    let slot = caps.slot(cnode, 0).unwrap();
    caps.install_original(
        slot,
        Capability::new(CapType::Untyped, Rights::ALL, untyped),
    )
    .unwrap();
    let vspace = caps.retype(slot, CapType::VSpace, 2, cnode, 1, 1).unwrap()[0];
    let frame = caps.retype(slot, CapType::Frame, 0, cnode, 2, 1).unwrap()[0];
    let endpoint = caps
        .retype(slot, CapType::Endpoint, 0, cnode, 3, 1)
        .unwrap()[0];
    let header = *caps.object(vspace).unwrap();
    let frame_phys = caps.object(frame).unwrap().phys;
    let asid = AsidAllocator::new(AsidBits::Eight).assign(None, None).asid;
    let space = AddressSpace::in_object(&mut Ram::default(), asid, header.phys, 3).unwrap();
    let space = kernel.install_space(space).unwrap();
    kernel.bind_space(ThreadId(0), space);
    let thread = &mut kernel.threads[0];
    thread.state = ThreadState::Inactive;
    thread.created_by_user = true;
    thread.vspace = Some(vspace);
    thread.ipc_buffer = Some(frame_phys);
    thread.ipc_buffer_frame = Some(frame);
    thread.fault_endpoint = Some((endpoint.index() as u32, 0));
    assert_eq!(kernel.check_frame_mappings(), Ok(()));
    assert_eq!(kernel.check_spaces(), Ok(()));
    Bound {
        kernel,
        cnode,
        vspace,
    }
}

fn delete_without_hooks(b: &mut Bound, index: u64) {
    let slot = b.kernel.caps.slot(b.cnode, index).unwrap();
    b.kernel.caps.delete(slot, |_, _| {}).unwrap();
}

#[test]
fn a_thread_bound_to_a_destroyed_vspace_is_caught() {
    let mut b = bound();
    delete_without_hooks(&mut b, 1);
    assert_eq!(
        b.kernel.check_frame_mappings(),
        Err("a thread's VSpace is no live VSpace")
    );
}

#[test]
fn a_space_left_behind_by_its_vspace_is_caught() {
    let mut b = bound();
    b.kernel.threads[0].vspace = None;
    assert_eq!(
        b.kernel.check_frame_mappings(),
        Err("a space built in a VSpace object outlived the object")
    );
}

/// Binds thread 1 to thread 0's space and VSpace, as `TcbSetSpace` does.
fn share(b: &mut Bound) {
    let space = b.kernel.threads[0].space.unwrap();
    b.kernel.bind_space(ThreadId(1), space);
    b.kernel.threads[1].state = ThreadState::Inactive;
    b.kernel.threads[1].created_by_user = true;
    b.kernel.threads[1].vspace = Some(b.vspace);
}

#[test]
fn two_threads_sharing_one_space_and_vspace_pass() {
    let mut b = bound();
    share(&mut b);
    assert_eq!(b.kernel.check_spaces(), Ok(()));
    assert_eq!(b.kernel.check_frame_mappings(), Ok(()));
}

#[test]
fn a_dangling_space_reference_is_caught() {
    let mut b = bound();
    share(&mut b);
    // The space goes while thread 1 still names it.
    b.kernel.threads[0].space = None;
    b.kernel.threads[0].ttbr0 = 0;
    let id = b.kernel.threads[1].space.unwrap();
    b.kernel.spaces[id.index()] = None;
    assert_eq!(
        b.kernel.check_spaces(),
        Err("a thread names an address space that is gone")
    );
}

#[test]
fn a_space_without_threads_is_caught() {
    let mut b = bound();
    b.kernel.threads[0].space = None;
    b.kernel.threads[0].ttbr0 = 0;
    assert_eq!(
        b.kernel.check_spaces(),
        Err("a live address space has no thread")
    );
}

#[test]
fn a_stale_cached_ttbr0_is_caught() {
    let mut b = bound();
    share(&mut b);
    b.kernel.threads[1].ttbr0 ^= 1 << 48;
    assert_eq!(
        b.kernel.check_spaces(),
        Err("a thread's cached TTBR0 or ASID generation is not its space's")
    );
}

#[test]
fn threads_sharing_a_space_under_different_vspaces_are_caught() {
    let mut b = bound();
    share(&mut b);
    b.kernel.threads[1].vspace = None;
    assert_eq!(
        b.kernel.check_spaces(),
        Err("threads sharing a space name different VSpace objects")
    );
}

#[test]
fn one_vspace_standing_for_two_spaces_is_caught() {
    let mut b = bound();
    let asid = AsidAllocator::new(AsidBits::Eight).assign(None, None).asid;
    let header = *b.kernel.caps.object(b.vspace).unwrap();
    let second = AddressSpace::in_object(&mut Ram::default(), asid, header.phys, 3).unwrap();
    let second = b.kernel.install_space(second).unwrap();
    b.kernel.bind_space(ThreadId(1), second);
    b.kernel.threads[1].vspace = Some(b.vspace);
    assert_eq!(
        b.kernel.check_spaces(),
        Err("a VSpace stands for more than one address space")
    );
}

#[test]
fn a_space_built_outside_its_vspace_object_is_caught() {
    let mut b = bound();
    let asid = AsidAllocator::new(AsidBits::Eight).assign(None, None).asid;
    let elsewhere = AddressSpace::in_object(&mut Ram::default(), asid, UNTYPED_BASE + 0x8000, 3);
    let id = b.kernel.threads[0].space.unwrap();
    b.kernel.spaces[id.index()] = elsewhere;
    assert_eq!(
        b.kernel.check_frame_mappings(),
        Err("an address space is not built in its VSpace object")
    );
}

#[test]
fn a_destroyed_ipc_buffer_or_fault_endpoint_still_named_is_caught() {
    let mut b = bound();
    delete_without_hooks(&mut b, 2);
    assert_eq!(
        b.kernel.check_frame_mappings(),
        Err("a thread's IPC buffer is no live Frame")
    );
    let mut b = bound();
    b.kernel.threads[0].ipc_buffer = Some(0x1000);
    assert_eq!(
        b.kernel.check_frame_mappings(),
        Err("a thread's IPC buffer is not its Frame's page")
    );
    let mut b = bound();
    delete_without_hooks(&mut b, 3);
    assert_eq!(
        b.kernel.check_frame_mappings(),
        Err("a thread's fault endpoint is no live Endpoint")
    );
}
