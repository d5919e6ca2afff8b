//! The root task: the kernel starts it with what `abi::bootinfo` lists
//! and makes nothing more for it. It reads its boot information, checks
//! every capability it was given does what it should, and then builds the
//! system's other tasks itself from its Untyped memory.
//!
//! Returns its exit status: 0 when every check passed, else the number of
//! the first failed check.

use crate::tasks::{ECHO_CLIENT_ELF, ECHO_ELF};
use abi::bootinfo::{BootInfo, BOOT_INFO_WORDS, ROOT_CNODE_SLOT, ROOT_CONSOLE_SLOT};
use abi::bootinfo::{ROOT_FIRST_FREE_SLOT, ROOT_IPC_BUFFER_SLOT, ROOT_IRQ_SLOT};
use abi::bootinfo::{ROOT_TCB_SLOT, ROOT_VSPACE_SLOT};
use abi::cap::{CapType, Rights};
use abi::fault::{FAULT_LABEL, FAULT_REPLY_SET_PC};
use abi::message::NOTIFICATION_LABEL;
use abi::task::{CLIENT_DONE, CLIENT_FAULT_ADDRESS, MIN_STACK_PAGES, SERVER_DONE};
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::{ErrorCode, IPC_BUFFER_ADDRESS};
use sdk::ipc::{self, Cptr, Message};
use sdk::loader::{load_elf, plan, TaskMemory};
use sdk::println;
use sdk::supervision::{self, ThreadEnd, END_LABEL};
use sdk::syscall::{cnode, irq_set_notification, retype};
use sdk::tcb::{IpcBuffer, Tcb, ThreadStart};
use sdk::vspace::{Frame, VSpace};

/// The root's own VSpace and TCB, as the kernel placed them.
const OWN_VSPACE: VSpace = VSpace(Cptr(ROOT_VSPACE_SLOT));
const OWN_TCB: Tcb = Tcb(Cptr(ROOT_TCB_SLOT));
/// Free slots the checks use (everything from `ROOT_FIRST_FREE_SLOT` on
/// is empty at start).
const SCRATCH: u64 = ROOT_FIRST_FREE_SLOT;
const NOTIFICATION: u64 = ROOT_FIRST_FREE_SLOT + 1;
/// The boot-suite priority the kernel starts the root with.
const ROOT_PRIORITY: u64 = 100;

/// The root task's program.
pub fn root_task() -> i32 {
    // The boot information is in the IPC buffer, which the first long
    // message would overwrite: read it before anything else.
    let words: [u64; BOOT_INFO_WORDS] = core::array::from_fn(sdk::ipc::buffer_word);
    let info = match BootInfo::decode(&words) {
        Ok(info) => info,
        Err(error) => {
            println!("root: the boot information is unreadable: {error:?}");
            return 1;
        }
    };
    let largest = info.untypeds.iter().map(|u| u.size_bits).max().unwrap_or(0);
    println!(
        "root: given {} Untypeds, {} KiB of free RAM (largest block 2^{largest} bytes); the kernel kept {} pages",
        info.untypeds.len(),
        info.untyped_bytes() / 1024,
        info.kernel_kept_pages
    );
    match check_boot_capabilities(&info) {
        0 => {}
        failed => return failed,
    }
    println!("root: every boot capability checked");
    match start_echo_tasks(&info) {
        0 => {}
        failed => return failed,
    }
    0
}

/// Each capability of the boot information is there with the type and
/// rights it should have, and does what it names.
fn check_boot_capabilities(info: &BootInfo) -> i32 {
    // Both boards have far more than 64 MiB free when the root starts.
    expect!(2, info.untyped_bytes() >= 64 << 20, true);
    // Every Untyped slot holds an Untyped (a page is carved from each and
    // given back; from a one-page block, whose Untyped keeps its own
    // record in that page, an endpoint, which is a record only), and the
    // slot after the last is empty.
    for (index, untyped) in info.untypeds.iter().enumerate() {
        let slot = BootInfo::untyped_slot(index);
        let carved = if untyped.size_bits > 12 {
            CapType::Frame
        } else {
            CapType::Endpoint
        };
        expect!(3, retype(slot, carved, 0, SCRATCH, 1), Ok(()));
        expect!(4, cnode::delete(ROOT_CNODE_SLOT, SCRATCH), Ok(()));
    }
    let past_last = BootInfo::untyped_slot(info.untypeds.len());
    expect!(
        5,
        retype(past_last, CapType::Frame, 0, SCRATCH, 1),
        Err(ErrorCode::InvalidCapability)
    );
    // Its own TCB: it may set its own priority (to what it is: its MCP).
    expect!(6, OWN_TCB.set_priority(ROOT_PRIORITY), Ok(()));
    // Its own VSpace: a frame from the largest Untyped, mapped, written,
    // read back, unmapped.
    let Some(largest) = (0..info.untypeds.len()).max_by_key(|&i| info.untypeds[i].size_bits) else {
        return 7;
    };
    let frame = Frame(Cptr(SCRATCH));
    expect!(
        8,
        retype(
            BootInfo::untyped_slot(largest),
            CapType::Frame,
            0,
            SCRATCH,
            1
        ),
        Ok(())
    );
    let view = match frame.map_view(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite) {
        Ok(view) => view,
        Err(error) => {
            println!("root: mapping a frame into its own VSpace failed: {error:?}");
            return 9;
        }
    };
    expect!(10, view.write_u64(8, 0x600d_f00d), Ok(()));
    expect!(11, view.read_u64(8), 0x600d_f00d);
    expect!(12, frame.unmap(), Ok(()));
    expect!(13, cnode::delete(ROOT_CNODE_SLOT, SCRATCH), Ok(()));
    // Its IPC buffer's Frame: mapped already (at the IPC buffer address).
    expect!(
        14,
        Frame(Cptr(ROOT_IPC_BUFFER_SLOT)).map(OWN_VSPACE, FRAME_MAP_START, MapRights::ReadWrite),
        Err(ErrorCode::AlreadyMapped)
    );
    // The IrqHandler: its interrupt can be routed to a notification
    // retyped from its own memory.
    expect!(
        15,
        retype(
            BootInfo::untyped_slot(largest),
            CapType::Notification,
            0,
            NOTIFICATION,
            1
        ),
        Ok(())
    );
    expect!(
        16,
        irq_set_notification(ROOT_IRQ_SLOT, NOTIFICATION),
        Ok(())
    );
    expect!(17, cnode::delete(ROOT_CNODE_SLOT, NOTIFICATION), Ok(()));
    0
}

/// Objects of the echo system, in the root's CNode.
const ECHO_ENDPOINT: u64 = ROOT_FIRST_FREE_SLOT + 2;
/// The notification both tasks report on; bound to the root's TCB, so a
/// report also ends the root's wait for faults.
const REPORTS: u64 = ROOT_FIRST_FREE_SLOT + 3;
/// The endpoint the client's faults come to, and the badged copy the
/// client's TCB is given.
const FAULTS: u64 = ROOT_FIRST_FREE_SLOT + 4;
const CLIENT_FAULTS: u64 = ROOT_FIRST_FREE_SLOT + 5;
const CLIENT_FAULT_BADGE: u64 = 0xfa;
/// The server's badged copy: its end message (it has no fault to serve)
/// comes to the same endpoint, told apart by the badge.
const SERVER_FAULTS: u64 = ROOT_FIRST_FREE_SLOT + 6;
const SERVER_FAULT_BADGE: u64 = 0xfb;
/// The badge of the client's endpoint capability (its entry argument:
/// it checks the server saw the same).
const CLIENT_BADGE: u64 = 0xc1;
/// Each task's objects: 64 slots from here (task 0 the server, 1 the
/// client): CNode, TCB, VSpace, IPC buffer Frame, stack Frames, then the
/// image's Frames.
const TASK_SLOTS: u64 = ROOT_FIRST_FREE_SLOT + 16;
const SLOTS_PER_TASK: u64 = 64;
const IMAGE_SLOTS_FROM: u64 = 16;
/// Each task's CNode: 8 slots (`abi::task` needs slots 0..=4).
const TASK_CNODE_RADIX: u64 = 3;
/// Page-table pages each task's VSpace may take from the Untyped: image
/// (low), stack and IPC buffer (high) need about 7.
const TASK_TABLE_PAGES: u64 = 8;
/// Where each task's stack ends (exclusive), below its IPC buffer.
const TASK_STACK_TOP: u64 = 0x0000_7fff_0000_0000;
/// The tasks run at the root's priority: the root blocks while they work.
const TASK_PRIORITY: u64 = ROOT_PRIORITY;

/// One task to build.
struct TaskSpec {
    name: &'static str,
    elf: &'static [u8],
    /// Rights and badge of its echo endpoint capability.
    endpoint: (Rights, Option<u64>),
    /// Its faults go to the root (badged) or stop it.
    fault_endpoint: Option<Cptr>,
    /// Its `x0` at entry.
    argument: u64,
}

/// Slot `offset` of task `index`'s range.
const fn task_slot(index: u64, offset: u64) -> u64 {
    TASK_SLOTS + index * SLOTS_PER_TASK + offset
}

/// Builds the echo server and client from the ELFs embedded in init, each
/// in an address space of its own made from the root's Untyped memory,
/// with only the capabilities `abi::task` lists; serves the client's
/// fault; waits for both reports; then revokes the Untyped, which ends
/// them and takes every object back.
fn start_echo_tasks(info: &BootInfo) -> i32 {
    let Some(largest) = (0..info.untypeds.len()).max_by_key(|&i| info.untypeds[i].size_bits) else {
        return 30;
    };
    let untyped = BootInfo::untyped_slot(largest);
    expect!(
        31,
        retype(untyped, CapType::Endpoint, 0, ECHO_ENDPOINT, 1),
        Ok(())
    );
    expect!(
        32,
        retype(untyped, CapType::Notification, 0, REPORTS, 1),
        Ok(())
    );
    expect!(33, retype(untyped, CapType::Endpoint, 0, FAULTS, 1), Ok(()));
    expect!(
        34,
        cnode::mint(
            ROOT_CNODE_SLOT,
            FAULTS,
            CLIENT_FAULTS,
            Rights::WRITE,
            Some(CLIENT_FAULT_BADGE)
        ),
        Ok(())
    );
    expect!(
        68,
        cnode::mint(
            ROOT_CNODE_SLOT,
            FAULTS,
            SERVER_FAULTS,
            Rights::WRITE,
            Some(SERVER_FAULT_BADGE)
        ),
        Ok(())
    );
    expect!(35, OWN_TCB.bind_notification(Some(Cptr(REPORTS))), Ok(()));
    let tasks = [
        TaskSpec {
            name: "echo",
            elf: ECHO_ELF,
            endpoint: (Rights::READ, None),
            fault_endpoint: Some(Cptr(SERVER_FAULTS)),
            argument: 0,
        },
        TaskSpec {
            name: "echo-client",
            elf: ECHO_CLIENT_ELF,
            endpoint: (Rights::WRITE.union(Rights::GRANT_REPLY), Some(CLIENT_BADGE)),
            fault_endpoint: Some(Cptr(CLIENT_FAULTS)),
            argument: CLIENT_BADGE,
        },
    ];
    for (index, task) in tasks.iter().enumerate() {
        match build_task(index as u64, task, untyped) {
            0 => {}
            failed => return failed,
        }
    }
    // Both are built; the server first, so it waits when the client calls.
    for index in 0..tasks.len() as u64 {
        expect!(36, Tcb(Cptr(task_slot(index, 1))).resume(), Ok(()));
    }
    match serve_until_reported() {
        0 => {}
        failed => return failed,
    }
    // Both have exited, their TCBs kept ended. Everything the tasks were
    // made of came from this Untyped: revoking it destroys every object,
    // the ended TCBs, mappings and tables too.
    expect!(37, cnode::revoke(ROOT_CNODE_SLOT, untyped), Ok(()));
    for index in 0..tasks.len() as u64 {
        expect!(
            38,
            Tcb(Cptr(task_slot(index, 1))).resume(),
            Err(ErrorCode::InvalidCapability)
        );
    }
    // All of it is free again: an Untyped takes its memory back only when
    // the last object carved from it is gone, and only then does a child
    // of half its size fit at its start again (the tasks' frames had
    // moved its memory watermark up; any object left would keep it there).
    let half = u64::from(info.untypeds[largest].size_bits) - 1;
    expect!(
        39,
        retype(untyped, CapType::Untyped, half, SCRATCH, 1),
        Ok(())
    );
    expect!(40, cnode::delete(ROOT_CNODE_SLOT, SCRATCH), Ok(()));
    println!("root: both tasks reported; revoking their Untyped took back every object");
    0
}

/// Makes task `index`'s objects, gives it its capabilities, loads its ELF
/// and binds its address space; it stays inactive until resumed.
fn build_task(index: u64, task: &TaskSpec, untyped: u64) -> i32 {
    let (cnode_slot, tcb, vspace) = (
        task_slot(index, 0),
        Tcb(Cptr(task_slot(index, 1))),
        task_slot(index, 2),
    );
    let ipc_buffer = Frame(Cptr(task_slot(index, 3)));
    let stack = task_slot(index, 4);
    expect!(
        41,
        retype(untyped, CapType::CNode, TASK_CNODE_RADIX, cnode_slot, 1),
        Ok(())
    );
    expect!(42, retype(untyped, CapType::Tcb, 0, tcb.0 .0, 1), Ok(()));
    let Ok(vspace) = VSpace::retype(Cptr(untyped), TASK_TABLE_PAGES, vspace) else {
        return 43;
    };
    expect!(
        44,
        retype(untyped, CapType::Frame, 0, ipc_buffer.0 .0, 1),
        Ok(())
    );
    expect!(
        45,
        retype(untyped, CapType::Frame, 0, stack, MIN_STACK_PAGES),
        Ok(())
    );
    // Its capabilities, and nothing else.
    let give = |source: u64, slot: u64, rights: Rights, badge: Option<u64>| {
        cnode::mint_into(cnode_slot, source, slot, rights, badge)
    };
    expect!(
        46,
        give(cnode_slot, abi::task::CNODE_SLOT, Rights::READ_WRITE, None),
        Ok(())
    );
    expect!(
        47,
        give(
            ROOT_CONSOLE_SLOT,
            abi::task::CONSOLE_SLOT,
            Rights::WRITE,
            None
        ),
        Ok(())
    );
    let (rights, badge) = task.endpoint;
    expect!(
        48,
        give(ECHO_ENDPOINT, abi::task::ECHO_ENDPOINT_SLOT, rights, badge),
        Ok(())
    );
    expect!(
        49,
        give(
            REPORTS,
            abi::task::ROOT_NOTIFICATION_SLOT,
            Rights::WRITE,
            None
        ),
        Ok(())
    );
    // Its program: the ELF embedded in init, in an address space of its own.
    let entry = match plan(task.elf) {
        Ok(plan) => plan.entry(),
        Err(error) => {
            println!("root: {} is not a loadable ELF: {error:?}", task.name);
            return 50;
        }
    };
    expect!(51, tcb.configure(Cptr(cnode_slot), TASK_PRIORITY), Ok(()));
    let start = ThreadStart {
        ipc_buffer: Some(IpcBuffer {
            frame: ipc_buffer,
            address: IPC_BUFFER_ADDRESS,
        }),
        fault_endpoint: task.fault_endpoint,
        pc: entry,
        sp: TASK_STACK_TOP,
        x0: task.argument,
    };
    expect!(52, tcb.set_space(vspace, start), Ok(()));
    let memory = TaskMemory {
        untyped: Cptr(untyped),
        own: OWN_VSPACE,
        target: vspace,
        slots: task_slot(index, IMAGE_SLOTS_FROM)..task_slot(index, SLOTS_PER_TASK),
        scratch: FRAME_MAP_START,
    };
    let loaded = match load_elf(task.elf, &memory) {
        Ok(loaded) => loaded,
        Err(failure) => {
            println!("root: loading {} failed: {:?}", task.name, failure.error);
            return 53;
        }
    };
    expect!(
        54,
        ipc_buffer.map(vspace, IPC_BUFFER_ADDRESS, MapRights::ReadWrite),
        Ok(())
    );
    for page in 0..MIN_STACK_PAGES {
        let va = TASK_STACK_TOP - (page + 1) * 4096;
        expect!(
            55,
            Frame(Cptr(stack + page)).map(vspace, va, MapRights::ReadWrite),
            Ok(())
        );
    }
    println!(
        "root: built {} from its {}-byte ELF: {} image pages, entry {entry:#x}, {MIN_STACK_PAGES} stack pages, its own VSpace",
        task.name,
        task.elf.len(),
        loaded.slots.end - loaded.slots.start,
    );
    0
}

/// Receives on the fault endpoint until both tasks have reported (their
/// reports arrive through the bound notification) and both have ended
/// (their end messages, told apart by the fault endpoint's badge, say they
/// exited with status 0): resumes the client past its deliberate fault,
/// and checks every report bit and every end.
fn serve_until_reported() -> i32 {
    let mut reported = 0;
    let mut faults = 0;
    // Bit 0: the server's end message came, bit 1: the client's.
    let mut ended = 0u64;
    while reported & (SERVER_DONE | CLIENT_DONE) != SERVER_DONE | CLIENT_DONE || ended != 0b11 {
        let received = match ipc::recv(Cptr(FAULTS)) {
            Ok(received) => received,
            Err(error) => {
                println!("root: receiving on the fault endpoint failed: {error:?}");
                return 60;
            }
        };
        let message = received.message;
        match message.info.label() {
            NOTIFICATION_LABEL => {
                reported |= received.badge;
                expect!(61, reported & !(SERVER_DONE | CLIENT_DONE), 0);
            }
            FAULT_LABEL => {
                faults += 1;
                expect!(62, received.badge, CLIENT_FAULT_BADGE);
                expect!(63, message.words[0], 0x24); // data abort from EL0
                expect!(64, message.words[1], CLIENT_FAULT_ADDRESS);
                let resume_at = message.words[3] + 4;
                println!(
                    "root: the client faulted at {:#x} (pc {:#x}); resuming it past the load",
                    message.words[1], message.words[3]
                );
                expect!(
                    65,
                    ipc::reply(&Message::new(FAULT_REPLY_SET_PC, &[resume_at])),
                    Ok(())
                );
            }
            END_LABEL => {
                let bit = match received.badge {
                    SERVER_FAULT_BADGE => 0b01,
                    CLIENT_FAULT_BADGE => 0b10,
                    other => {
                        println!("root: an end message with badge {other:#x}");
                        return 69;
                    }
                };
                expect!(70, ended & bit, 0);
                ended |= bit;
                expect!(
                    71,
                    supervision::end_of(&message),
                    Some(ThreadEnd::Exited { status: 0 })
                );
            }
            other => {
                println!("root: unexpected message label {other:#x}");
                return 66;
            }
        }
    }
    expect!(67, faults, 1);
    println!("root: both tasks exited with status 0 (their end messages)");
    0
}
