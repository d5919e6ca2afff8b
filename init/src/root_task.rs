//! init as a root task: it is given what `abi::bootinfo` lists, in the
//! root's slots. In the project's own systems it is not the root the
//! kernel starts but the privileged task `driver`, which the root
//! (`root/src/privileged.rs`) hands what the kernel handed the root.
//! It reads its boot information, checks every capability it was given
//! does what it should, and then builds the system's other tasks itself
//! from its Untyped memory.
//!
//! Returns its exit status: 0 when every check passed, else the number of
//! the first failed check.

use crate::tasks::{ECHO_CLIENT_ELF, ECHO_ELF};
use abi::bootinfo::ROOT_CNODE_RADIX;
use abi::bootinfo::{BootInfo, BOOT_INFO_WORDS, ROOT_CNODE_SLOT, ROOT_CONSOLE_SLOT};
use abi::bootinfo::{ROOT_FIRST_FREE_SLOT, ROOT_IPC_BUFFER_SLOT, ROOT_IRQ_SLOT};
use abi::bootinfo::{ROOT_IRQ_CONTROL_SLOT, ROOT_TCB_SLOT, ROOT_VSPACE_SLOT};
use abi::cap::{CapType, Rights};
use abi::message::NOTIFICATION_LABEL;
use abi::task::{CLIENT_DONE, CLIENT_FAULT_ADDRESS, MIN_STACK_PAGES, SERVER_DONE};
use abi::tcb::Register;
use abi::vspace::{MapRights, FRAME_MAP_START};
use abi::ErrorCode;
use sdk::ipc::{self, Cptr};
use sdk::println;
use sdk::supervision::{self, FaultReply, ThreadEnd, END_LABEL, FAULT_LABEL};
use sdk::syscall::{cnode, irq_control_get, irq_set_notification, retype};
use sdk::task::UntypedPool;
use sdk::task::{PoolUntyped, SlotAllocator, Step, Supervisor, Task, TaskBuilder, TaskError};
use sdk::tcb::Tcb;
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

/// The root task's program: its own checks of what it was given, then
/// what the command line asks for (`crate::driver`). Its exit status is
/// the system's: 0 when everything passed.
pub fn root_task() -> i32 {
    // The boot information is in the IPC buffer, which the first long
    // message would overwrite: read it before anything else.
    let words: [u64; BOOT_INFO_WORDS] = core::array::from_fn(sdk::ipc::buffer_word);
    let info = match BootInfo::decode(&words) {
        Ok(info) => info,
        Err(error) => {
            println!("driver: the boot information is unreadable: {error:?}");
            return 1;
        }
    };
    let checks = root_checks(&info);
    crate::driver::run(&info, checks)
}

/// Its checks: the capabilities it was given, its ELF and command line,
/// the echo tasks it builds, time. 0 or the number of the failed check.
fn root_checks(info: &BootInfo) -> i32 {
    let largest = info.untypeds.iter().map(|u| u.size_bits).max().unwrap_or(0);
    println!(
        "driver: given {} Untypeds, {} KiB of free RAM (largest block 2^{largest} bytes); the kernel kept {} pages",
        info.untypeds.len(),
        info.untyped_bytes() / 1024,
        info.kernel_kept_pages
    );
    match check_boot_capabilities(info) {
        0 => {}
        failed => return failed,
    }
    println!("driver: every boot capability checked");
    match crate::device_checks::check(info) {
        0 => {}
        failed => return failed,
    }
    // Its own ELF file, read-only, to load its programs elsewhere; and
    // the kernel's command line.
    let image = sdk::root_image(info.image_bytes);
    expect!(73, image.get(..4), Some(&b"\x7fELF"[..]));
    expect!(
        74,
        sdk::loader::plan(image).map(|plan| plan.entry()),
        Ok(sdk::entry_point())
    );
    println!(
        "driver: its own ELF is mapped read-only ({} bytes, entry {:#x}); the command line is {:?}",
        image.len(),
        sdk::entry_point(),
        core::str::from_utf8(&info.command_line).unwrap_or("(not UTF-8)")
    );
    match start_echo_tasks(info) {
        0 => {}
        failed => return failed,
    }
    crate::timer_checks::check(info)
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
            println!("driver: mapping a frame into its own VSpace failed: {error:?}");
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
    check_irq_control(largest)
}

/// An SPI no device of either board uses in the checks (intid 200: below
/// the 256 lines of the Pi 4's GIC-400 and the 288 of QEMU virt's GIC).
const UNUSED_SPI: u32 = 200;
/// The kernel's tick: the EL1 virtual timer's PPI.
const KERNEL_TICK: u32 = 27;
/// The EL1 physical timer's PPI, whose IrqHandler the root holds.
const PHYSICAL_TIMER: u32 = 30;

/// The IrqControl: one IrqHandler per interrupt the kernel does not keep,
/// free again once deleted.
fn check_irq_control(largest: usize) -> i32 {
    const C: u64 = ROOT_IRQ_CONTROL_SLOT;
    let handler = SCRATCH;
    let other = ROOT_FIRST_FREE_SLOT + 5;
    expect!(80, irq_control_get(C, UNUSED_SPI, handler), Ok(()));
    expect!(
        81,
        irq_control_get(C, UNUSED_SPI, other),
        Err(ErrorCode::IrqInUse)
    );
    expect!(
        82,
        irq_control_get(C, KERNEL_TICK, other),
        Err(ErrorCode::Denied)
    );
    expect!(
        83,
        irq_control_get(C, 1020, other),
        Err(ErrorCode::InvalidArgument)
    );
    // The physical timer's handler is the root's already (slot 5).
    expect!(
        84,
        irq_control_get(C, PHYSICAL_TIMER, other),
        Err(ErrorCode::IrqInUse)
    );
    expect!(
        85,
        irq_control_get(C, UNUSED_SPI + 1, handler),
        Err(ErrorCode::SlotOccupied)
    );
    expect!(
        86,
        retype(
            BootInfo::untyped_slot(largest),
            CapType::Notification,
            0,
            NOTIFICATION,
            1
        ),
        Ok(())
    );
    expect!(87, irq_set_notification(handler, NOTIFICATION), Ok(()));
    expect!(88, cnode::delete(ROOT_CNODE_SLOT, handler), Ok(()));
    // Deleted (its last capability), the interrupt is free again.
    expect!(89, irq_control_get(C, UNUSED_SPI, other), Ok(()));
    expect!(90, cnode::delete(ROOT_CNODE_SLOT, other), Ok(()));
    expect!(91, cnode::delete(ROOT_CNODE_SLOT, NOTIFICATION), Ok(()));
    0
}

/// Objects of the echo system, in the root's CNode.
const ECHO_ENDPOINT: u64 = ROOT_FIRST_FREE_SLOT + 2;
/// The notification both tasks report on; bound to the root's TCB, so a
/// report also ends the root's wait for faults.
const REPORTS: u64 = ROOT_FIRST_FREE_SLOT + 3;
/// The endpoint the client's faults come to (the builder gives the
/// client's TCB a copy badged `CLIENT_FAULT_BADGE`).
const FAULTS: u64 = ROOT_FIRST_FREE_SLOT + 4;
const CLIENT_FAULT_BADGE: u64 = 0xfa;
/// The badge of the server's copy (the builder mints it): its end
/// message (it has no fault to serve) comes to the same endpoint, told
/// apart by the badge.
const SERVER_FAULT_BADGE: u64 = 0xfb;
/// The badge of the client's endpoint capability (its entry argument:
/// it checks the server saw the same).
const CLIENT_BADGE: u64 = 0xc1;
/// The slots the task builder hands out (each task's objects, its image's
/// Frames and its badged fault endpoint).
const TASK_SLOTS: u64 = ROOT_FIRST_FREE_SLOT + 16;
/// Each task's CNode: 8 slots (`abi::task` needs slots 0..=4).
const TASK_CNODE_RADIX: u8 = 3;
/// The tasks run at the root's priority: the root blocks while they work.
const TASK_PRIORITY: u64 = ROOT_PRIORITY;

/// One task to build.
struct TaskSpec {
    name: &'static str,
    elf: &'static [u8],
    /// Rights and badge of its echo endpoint capability.
    endpoint: (Rights, Option<u64>),
    /// Its faults go to the root (badged) or stop it.
    fault_endpoint: Option<(Cptr, u64)>,
    /// Its `x0` at entry.
    argument: u64,
}

/// Builds the echo server and client from the ELFs embedded in init with
/// the SDK's task builder, each in an address space of its own made from
/// a child of the root's largest Untyped, with only the capabilities
/// `abi::task` lists; serves the client's fault; waits for both reports;
/// then destroys both (a revoke each of its Untyped) and revokes the
/// largest Untyped, which takes every object back.
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
    expect!(35, OWN_TCB.bind_notification(Some(Cptr(REPORTS))), Ok(()));
    // The tasks' memory comes from the largest Untyped only, so that
    // check 39 sees all of it given back.
    let mut memory = UntypedPool::new();
    expect!(
        56,
        memory.add(PoolUntyped {
            cap: Cptr(untyped),
            size_bits: info.untypeds[largest].size_bits,
        }),
        Ok(())
    );
    let Ok(slots) = SlotAllocator::new(TASK_SLOTS..1 << ROOT_CNODE_RADIX) else {
        return 57;
    };
    let mut supervisor = Supervisor {
        cnode: Cptr(ROOT_CNODE_SLOT),
        vspace: OWN_VSPACE,
        scratch: FRAME_MAP_START,
        slots,
        memory,
    };
    let specs = [
        TaskSpec {
            name: "echo",
            elf: ECHO_ELF,
            endpoint: (Rights::READ, None),
            fault_endpoint: Some((Cptr(FAULTS), SERVER_FAULT_BADGE)),
            argument: 0,
        },
        TaskSpec {
            name: "echo-client",
            elf: ECHO_CLIENT_ELF,
            endpoint: (Rights::WRITE.union(Rights::GRANT_REPLY), Some(CLIENT_BADGE)),
            fault_endpoint: Some((Cptr(FAULTS), CLIENT_FAULT_BADGE)),
            argument: CLIENT_BADGE,
        },
    ];
    let mut tasks: [Option<Task>; 2] = [None, None];
    for (spec, task) in specs.iter().zip(tasks.iter_mut()) {
        match build_task(spec, &mut supervisor) {
            Ok(built) => *task = Some(built),
            Err(failed) => return failed,
        }
    }
    let [Some(server), Some(client)] = tasks else {
        return 58;
    };
    // Both are built; the server first, so it waits when the client calls.
    for task in [&server, &client] {
        expect!(36, task.start(), Ok(()));
    }
    match serve_until_reported() {
        0 => {}
        failed => return failed,
    }
    // Both have exited, their TCBs kept ended. Everything each task was
    // made of came from its own Untyped: destroying it (one revoke)
    // destroys every object, the ended TCB, mappings and tables too, and
    // gives the memory back.
    let server_tcb = server.tcb();
    for task in [server, client] {
        expect!(37, task.destroy(&mut supervisor), Ok(()));
    }
    expect!(38, server_tcb.resume(), Err(ErrorCode::InvalidCapability));
    expect!(
        59,
        supervisor.slots.free_count(),
        (1 << ROOT_CNODE_RADIX) - TASK_SLOTS
    );
    // The root's own objects of the echo system came from the largest
    // Untyped directly.
    expect!(68, cnode::revoke(ROOT_CNODE_SLOT, untyped), Ok(()));
    // All of it is free again: an Untyped takes its memory back only when
    // the last object carved from it is gone, and only then does a child
    // of half its size fit at its start again (the tasks' Untypeds had
    // moved its memory watermark up; any object left would keep it there).
    let half = u64::from(info.untypeds[largest].size_bits) - 1;
    expect!(
        39,
        retype(untyped, CapType::Untyped, half, SCRATCH, 1),
        Ok(())
    );
    expect!(40, cnode::delete(ROOT_CNODE_SLOT, SCRATCH), Ok(()));
    println!("driver: both tasks reported; revoking their Untyped took back every object");
    0
}

/// Builds one task (inactive until started) and checks it starts as a
/// kernel-made thread would: at its entry, `sp` at `abi::USER_STACK_TOP`.
/// `Err`: the number of the failed check.
fn build_task(spec: &TaskSpec, supervisor: &mut Supervisor) -> Result<Task, i32> {
    let (rights, badge) = spec.endpoint;
    let mut builder = TaskBuilder::new(spec.name, spec.elf)
        .cnode_radix(TASK_CNODE_RADIX)
        .priority(TASK_PRIORITY)
        .stack(MIN_STACK_PAGES, abi::USER_STACK_TOP)
        .argument(spec.argument)
        // Its capabilities, and nothing else.
        .mint(
            Cptr(ROOT_CONSOLE_SLOT),
            abi::task::CONSOLE_SLOT,
            Rights::WRITE,
            None,
        )
        .mint(
            Cptr(ECHO_ENDPOINT),
            abi::task::ECHO_ENDPOINT_SLOT,
            rights,
            badge,
        )
        .mint(
            Cptr(REPORTS),
            abi::task::ROOT_NOTIFICATION_SLOT,
            Rights::WRITE,
            None,
        );
    if let Some((endpoint, badge)) = spec.fault_endpoint {
        builder = builder.fault_endpoint(endpoint, Some(badge));
    }
    let task = builder.build(supervisor).map_err(|error| {
        println!("driver: building {} failed: {error:?}", spec.name);
        build_check(&error)
    })?;
    let register = |r| task.tcb().read_register(r);
    if register(Register::Pc) != Ok(task.entry())
        || register(Register::Sp) != Ok(abi::USER_STACK_TOP)
    {
        println!(
            "driver: {} starts at pc {:?} sp {:?}",
            spec.name,
            register(Register::Pc),
            register(Register::Sp)
        );
        return Err(69);
    }
    println!(
        "driver: built {} from its {}-byte ELF: {} image pages, entry {:#x}, {} stack pages, its own VSpace",
        spec.name,
        spec.elf.len(),
        task.image_pages(),
        task.entry(),
        task.stack_pages(),
    );
    Ok(task)
}

/// The check a failed build fails: the number each step had when the
/// root made the task by hand.
fn build_check(error: &TaskError) -> i32 {
    match error {
        TaskError::Syscall { step, .. } => match step {
            Step::RetypeCNode => 41,
            Step::RetypeTcb => 42,
            Step::RetypeVSpace => 43,
            Step::RetypeIpcBuffer => 44,
            Step::RetypeStack => 45,
            Step::MintOwnCNode => 46,
            Step::Grant(abi::task::CONSOLE_SLOT) => 47,
            Step::Grant(abi::task::ECHO_ENDPOINT_SLOT) => 48,
            Step::Grant(_) => 49,
            Step::MintFaultEndpoint => 34,
            Step::Configure => 51,
            Step::SetSpace => 52,
            Step::MapIpcBuffer => 54,
            Step::MapStack(_) => 55,
            _ => 58,
        },
        TaskError::Elf(_) | TaskError::EntryOutsideCode(_) => 50,
        TaskError::Load(_) => 53,
        _ => 57,
    }
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
                println!("driver: receiving on the fault endpoint failed: {error:?}");
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
                let Some(fault) = supervision::fault_of(&message) else {
                    return 63;
                };
                expect!(63, fault.class, 0x24); // data abort from EL0
                expect!(64, fault.far, CLIENT_FAULT_ADDRESS);
                let resume_at = fault.pc + 4;
                println!(
                    "driver: the client faulted at {:#x} (pc {:#x}); resuming it past the load",
                    fault.far, fault.pc
                );
                expect!(
                    65,
                    ipc::reply(&supervision::fault_reply(FaultReply::SetPc(resume_at))),
                    Ok(())
                );
            }
            END_LABEL => {
                let bit = match received.badge {
                    SERVER_FAULT_BADGE => 0b01,
                    CLIENT_FAULT_BADGE => 0b10,
                    other => {
                        println!("driver: an end message with badge {other:#x}");
                        return 72;
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
                println!("driver: unexpected message label {other:#x}");
                return 66;
            }
        }
    }
    expect!(67, faults, 1);
    println!("driver: both tasks exited with status 0 (their end messages)");
    0
}
