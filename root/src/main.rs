//! The root task: the one thread the kernel starts. It reads the system
//! image loaded beside the kernel (`abi::system`), builds what its plan
//! says — shared objects first, then every task in plan order, the
//! privileged one last — starts the tasks, and supervises them: it
//! prints how each one ends, rebuilds those whose restart rule says so,
//! and ends the run when a task marked `ends_system` ends for good (with
//! its status) or when every task has ended.
//!
//! The host tool checked the description the plan came from
//! (`docs/systems.md`); what only the kernel can answer (memory, a
//! device's address) the root reports by task and step, and the run
//! ends with status 1. Its own console lines are untagged and start
//! with `system:`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

mod control;
mod objects;
mod privileged;
mod supervise;
mod tasks;

use abi::bootinfo::{BootInfo, BOOT_INFO_WORDS, ROOT_TCB_SLOT};
use abi::system::plan::Plan;
use sdk::ipc::Cptr;
use sdk::println;
use sdk::tcb::Tcb;

/// The root's priority while it builds and supervises: above every
/// task, so a task's end is reported before anything else runs.
const ROOT_PRIORITY: u64 = abi::tcb::MAX_PRIORITY;

/// The program's entry, called by the SDK's `_start`.
// `no_mangle` counts as unsafe code: `_start` finds the entry by this name.
#[allow(unsafe_code)]
#[no_mangle]
fn portcullis_main(_argument: u64) -> i32 {
    // The boot information is in the IPC buffer, which the first long
    // message would overwrite: read it before anything else.
    let words: [u64; BOOT_INFO_WORDS] = core::array::from_fn(sdk::ipc::buffer_word);
    let info = match BootInfo::decode(&words) {
        Ok(info) => info,
        Err(error) => {
            println!("system: the boot information is unreadable: {error:?}");
            return 1;
        }
    };
    let Some(image) = sdk::system_image(info.system_image_bytes) else {
        println!(
            "system: no system image was loaded beside the kernel; build and boot one with \
             `./qemu-run.sh run SYSTEM.toml` (docs/systems.md)"
        );
        return 1;
    };
    let plan = match Plan::open(image) {
        Ok(plan) => plan,
        Err(error) => {
            println!("system: the system image is unusable: {}", error.describe());
            return 1;
        }
    };
    let _ = Tcb(Cptr(ROOT_TCB_SLOT)).set_priority(ROOT_PRIORITY);
    let mut system = match tasks::System::new(&info, plan) {
        Ok(system) => system,
        Err(failure) => {
            println!("system: {failure}");
            return 1;
        }
    };
    if let Err(failure) = system.build_all() {
        println!("system: {failure}");
        return 1;
    }
    supervise::run(&mut system)
}
