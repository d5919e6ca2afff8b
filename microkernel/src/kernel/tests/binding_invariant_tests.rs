//! The invariant checks catch a thread bound to an address space, IPC
//! buffer or CSpace that is gone or not its own: each test breaks one link
//! by hand, the way a bug in a destruction hook would, and the checks
//! name it.

use crate::address_space::AddressSpace;
use crate::cap::{CNodeId, ObjectId};
use crate::kernel::members::{self, Use};
use crate::kernel::tests::test_kernel::{delete_and_reap, kernel_with_untyped, UNTYPED_BASE};
use crate::kernel::Kernel;
use crate::platform::{MemoryMaintenance, PhysMemory};
use crate::thread::{ThreadId, ThreadState};
use abi::cap::CapType;
use arch::mmu::{AsidAllocator, AsidBits};
use arch::object_memory::kind;
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

/// A kernel with a CNode whose slot 0 holds a 64 KiB Untyped, slot 1 a
/// VSpace of 2 table pages made from it, slot 2 a Frame, slot 3 an
/// Endpoint and slots 4 and 5 two TCBs; thread 0 (new, made from user
/// space) has the CNode as its CSpace and is bound to the VSpace with the
/// Frame as IPC buffer.
struct Bound {
    kernel: Box<Kernel>,
    cnode: CNodeId,
    vspace: ObjectId,
    threads: [ThreadId; 2],
}

fn bound() -> Bound {
    let (mut kernel, cnode, _) = kernel_with_untyped(64 * 1024);
    let slot = kernel.objects.slot(cnode, 0).unwrap();
    let caps = &mut kernel.objects;
    let vspace = caps.retype(slot, CapType::VSpace, 2, cnode, 1, 1).unwrap()[0];
    let frame = caps.retype(slot, CapType::Frame, 0, cnode, 2, 1).unwrap()[0];
    caps.retype(slot, CapType::Endpoint, 0, cnode, 3, 1)
        .unwrap();
    let tcbs = caps.retype(slot, CapType::Tcb, 0, cnode, 4, 2).unwrap();
    let threads = [ThreadId::of(tcbs[0]), ThreadId::of(tcbs[1])];
    let vspace_phys = caps.get::<kind::VSpace>(vspace).unwrap().phys;
    let frame_phys = caps.get::<kind::Frame>(frame).unwrap().phys;
    let asid = AsidAllocator::new(AsidBits::Eight).assign(None, None).asid;
    let space = AddressSpace::in_object(&mut Ram::default(), asid, vspace_phys, 3).unwrap();
    assert!(kernel.install_space(&Ram::default(), vspace, space));
    for thread in threads {
        let t = &mut kernel.objects[thread];
        t.set_state_for_test(ThreadState::Inactive);
        t.created_by_user = true;
    }
    kernel.bind_space(threads[0], vspace);
    kernel.set_cspace(threads[0], cnode).unwrap();
    kernel.set_buffer_frame(threads[0], frame, frame_phys);
    assert_eq!(kernel.check_frame_mappings(), Ok(()));
    assert_eq!(kernel.check_spaces(), Ok(()));
    assert_eq!(kernel.check_invariants(), Ok(()));
    Bound {
        kernel,
        cnode,
        vspace,
        threads,
    }
}

/// Deletes the capability in slot `index`, and frees what that destroys,
/// without the kernel letting go of it (as a missing hook would).
fn delete_without_hooks(b: &mut Bound, index: u64) {
    delete_and_reap(&mut b.kernel, b.cnode, index);
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
fn two_threads_sharing_one_space_pass() {
    let mut b = bound();
    b.kernel.bind_space(b.threads[1], b.vspace);
    assert_eq!(b.kernel.check_spaces(), Ok(()));
    assert_eq!(b.kernel.check_frame_mappings(), Ok(()));
}

#[test]
fn a_space_gone_from_under_its_threads_is_caught() {
    let mut b = bound();
    b.kernel.bind_space(b.threads[1], b.vspace);
    let body = b.kernel.objects.get_mut::<kind::VSpace>(b.vspace).unwrap();
    body.space = None;
    assert_eq!(
        b.kernel.check_spaces(),
        Err("a thread names an address space that is gone")
    );
}

#[test]
fn a_space_without_threads_is_caught() {
    let mut b = bound();
    let thread = b.threads[0];
    members::leave(&mut b.kernel.objects, b.vspace, thread, Use::Space);
    b.kernel.objects[thread].space = None;
    b.kernel.objects[thread].ttbr0 = 0;
    assert_eq!(
        b.kernel.check_spaces(),
        Err("a live address space has no thread")
    );
}

#[test]
fn a_thread_missing_from_its_vspaces_list_is_caught() {
    let mut b = bound();
    members::leave(&mut b.kernel.objects, b.vspace, b.threads[0], Use::Space);
    assert_eq!(
        b.kernel.check_spaces(),
        Err("a thread is not on its VSpace's list")
    );
}

#[test]
fn a_stale_cached_ttbr0_is_caught() {
    let mut b = bound();
    b.kernel.bind_space(b.threads[1], b.vspace);
    b.kernel.objects[b.threads[1]].ttbr0 ^= 1 << 48;
    assert_eq!(
        b.kernel.check_spaces(),
        Err("a thread's cached TTBR0 or ASID generation is not its space's")
    );
}

#[test]
fn a_space_built_outside_its_vspace_object_is_caught() {
    let mut b = bound();
    let asid = AsidAllocator::new(AsidBits::Eight).assign(None, None).asid;
    let elsewhere = AddressSpace::in_object(&mut Ram::default(), asid, UNTYPED_BASE + 0x8000, 3);
    let body = b.kernel.objects.get_mut::<kind::VSpace>(b.vspace).unwrap();
    body.space = elsewhere;
    assert_eq!(
        b.kernel.check_frame_mappings(),
        Err("an address space is not built in its VSpace object")
    );
}

#[test]
fn a_destroyed_or_wrong_ipc_buffer_is_caught() {
    let mut b = bound();
    delete_without_hooks(&mut b, 2);
    assert_eq!(
        b.kernel.check_frame_mappings(),
        Err("a thread's IPC buffer is no live Frame")
    );
    let mut b = bound();
    b.kernel.objects[b.threads[0]].ipc_buffer = Some(0x1000);
    assert_eq!(
        b.kernel.check_frame_mappings(),
        Err("a thread's IPC buffer is not its Frame's page")
    );
}

#[test]
fn a_thread_missing_from_its_cspaces_list_is_caught() {
    let mut b = bound();
    let cnode = b.cnode.object();
    members::leave(&mut b.kernel.objects, cnode, b.threads[0], Use::CSpace);
    assert_eq!(
        b.kernel.check_invariants(),
        Err("a thread is not on its CSpace CNode's list")
    );
}
