//! Address-space programs of the in-guest suite: frames retyped from
//! Untyped memory, mapped read-only, read-write and read-execute into the
//! program's own address space, every refusal, and the faults that show a
//! mapping's permissions and its removal; then the SDK's ELF loader
//! (`sdk::loader::load_elf`) through the same syscalls, loading a one-page
//! program into the window. Each returns its exit status: 0
//! when every check passed, else the number of the first failed check.
//!
//! The mapper's address space is one the driver built from user space
//! (a `VSpace` object, its image, stack and IPC buffer mapped as Frames),
//! so `FrameMap` takes the whole user half but page 0
//! (`abi::vspace::is_user_map_address`), not only the window a kernel-made
//! space allows; what keeps its program, stack and IPC buffer out of
//! reach is that their pages are taken (`AlreadyMapped`).

use abi::cap::{CapType, Rights};
use abi::tcb::Register;
use abi::vspace::{MapRights, FRAME_MAP_END, FRAME_MAP_START, USER_MAP_END};
use abi::ErrorCode;
use sdk::ipc::{self, Cptr};
use sdk::loader::{load_elf, ElfError, LoadError, LoadFailure, LoadedTask, TaskMemory};
use sdk::println;
use sdk::probe;
use sdk::supervision::{self, FaultMessage, FaultReply};
use sdk::syscall::{cnode, retype};
use sdk::tcb::Tcb;
use sdk::vspace::{Frame, VSpace};

/// The mapper's Untyped, read-write: the case asks for 5 pages (four
/// frames and their records); the driver gives a power-of-two block at
/// least that large, so how many frames it holds beyond four is counted,
/// not assumed (`loader`).
const UNTYPED: u64 = 2;
/// The mapper's own address space, read-write and read-only.
const SPACE: VSpace = VSpace(Cptr(4));
const SPACE_READ_ONLY: VSpace = VSpace(Cptr(5));
/// Frames retyped into slots 8, 9, 10.
const FRAME_R: Frame = Frame(Cptr(8));
const FRAME_RW: Frame = Frame(Cptr(9));
const FRAME_X: Frame = Frame(Cptr(10));
/// `FRAME_RW` minted read-only; `FRAME_X` minted write-only.
const FRAME_RW_READ_ONLY: Frame = Frame(Cptr(11));
const FRAME_X_WRITE_ONLY: Frame = Frame(Cptr(12));
/// A slot the case leaves empty.
const EMPTY: u64 = 15;
/// Slots free while `loader` runs, for the frames that use up the rest of
/// the Untyped.
const FILL_SLOTS: [u64; 4] = [3, 7, 11, 12];
/// The mapper's own CNode.
const CNODE: u64 = crate::programs::CNODE_SLOT;

/// The first page of init's program (linked at 4 MiB: `servers/sdk/user.ld`).
const PROGRAM_PAGE: u64 = 0x40_0000;

/// Where the frames go: two in one last-level table, one in another.
const VA_R: u64 = FRAME_MAP_START;
const VA_RW: u64 = FRAME_MAP_START + 0x1000;
const VA_X: u64 = FRAME_MAP_START + 0x20_0000;

const MAGIC: u64 = 0x5eed_f00d_cafe_0042;
/// `mov x0, #42; ret`, little-endian: the first instruction in the low
/// half.
const RETURN_42: u64 = 0xd65f_03c0_d280_0540;

/// The handler's endpoint (receive) and the mapper's TCB (read).
const FAULTS: Cptr = Cptr(crate::programs::ENDPOINT_SLOT);
const MAPPER: Tcb = Tcb(Cptr(4));

/// The faults the mapper provokes, in order: (exception class, address,
/// permission fault (else translation fault)).
const DATA_ABORT: u64 = 0x24;
const INSTRUCTION_ABORT: u64 = 0x20;
const EXPECTED_FAULTS: [(u64, u64, bool); 5] = [
    // A store to the read-only page.
    (DATA_ABORT, VA_R, true),
    // A call into the read-write page (never executable).
    (INSTRUCTION_ABORT, VA_RW, true),
    // A load from the read-only page after FrameUnmap.
    (DATA_ABORT, VA_R, false),
    // A load from the read-write page after its last capability went.
    (DATA_ABORT, VA_RW + 8, false),
    // A call into the executable page after its Untyped was revoked.
    (INSTRUCTION_ABORT, VA_X, false),
];

/// Receives the mapper's five faults, checks each, and resumes the mapper
/// after the access: past the load or store, or at its link register for
/// a call that could not fetch.
pub fn fault_handler() -> i32 {
    for (index, &(class, address, permission)) in EXPECTED_FAULTS.iter().enumerate() {
        let number = 10 * (index as i32 + 1);
        let Ok(fault) = ipc::recv(FAULTS) else {
            return number;
        };
        let Some(FaultMessage {
            class: got_class,
            far: got_address,
            esr,
            pc,
        }) = supervision::fault_of(&fault.message)
        else {
            return number + 1;
        };
        expect!(number + 2, (got_class, got_address), (class, address));
        // Fault status code, ESR bits 5..0: 0b0001LL translation,
        // 0b0011LL permission (at level LL).
        let status = esr & 0b11_1100;
        expect!(
            number + 3,
            status,
            if permission { 0b00_1100 } else { 0b00_0100 }
        );
        let resume = if class == INSTRUCTION_ABORT {
            match MAPPER.read_register(Register::X(30)) {
                Ok(link) => link,
                Err(_) => return number + 4,
            }
        } else {
            pc + 4
        };
        expect!(
            number + 5,
            ipc::reply(&supervision::fault_reply(FaultReply::SetPc(resume))),
            Ok(())
        );
    }
    0
}

/// Maps, uses, refuses and unmaps (see the module docs); its faults go to
/// `fault_handler`.
pub fn mapper() -> i32 {
    expect!(
        1,
        retype(UNTYPED, CapType::Frame, 1, 8, 1),
        Err(ErrorCode::InvalidArgument)
    );
    expect!(2, retype(UNTYPED, CapType::Frame, 0, 8, 3), Ok(()));
    expect!(3, cnode::mint(CNODE, 9, 11, Rights::READ, None), Ok(()));
    expect!(4, cnode::mint(CNODE, 10, 12, Rights::WRITE, None), Ok(()));

    // Read-only: a fresh frame reads as zero; a store faults.
    expect!(5, FRAME_R.map(SPACE, VA_R, MapRights::Read), Ok(()));
    expect!(6, probe::read_u64(VA_R), 0);
    probe::store_u64(VA_R, MAGIC); // fault 1, skipped by the handler
    expect!(7, probe::read_u64(VA_R), 0);

    // Rights of the Frame and VSpace capabilities.
    expect!(
        8,
        FRAME_RW_READ_ONLY.map(SPACE, VA_RW, MapRights::ReadWrite),
        Err(ErrorCode::MissingRights)
    );
    expect!(
        9,
        FRAME_X_WRITE_ONLY.map(SPACE, VA_X, MapRights::Read),
        Err(ErrorCode::MissingRights)
    );
    expect!(
        10,
        FRAME_RW.map(SPACE_READ_ONLY, VA_RW, MapRights::ReadWrite),
        Err(ErrorCode::MissingRights)
    );

    // Read-write: what is stored reads back; the page does not execute.
    expect!(11, FRAME_RW.map(SPACE, VA_RW, MapRights::ReadWrite), Ok(()));
    probe::store_u64(VA_RW + 8, MAGIC);
    expect!(12, probe::read_u64(VA_RW + 8), MAGIC);
    probe::store_u64(VA_RW, RETURN_42);
    let _ = probe::call(VA_RW); // fault 2, resumed at the return address
                                // Still mapped and holding what was stored after the fault.
    expect!(13, probe::read_u64(VA_RW + 8), MAGIC);

    // Once mapped, a frame cannot be mapped again, and a taken address
    // cannot take another frame.
    expect!(
        14,
        FRAME_RW.map(SPACE, VA_X, MapRights::Read),
        Err(ErrorCode::AlreadyMapped)
    );
    expect!(
        15,
        FRAME_RW_READ_ONLY.map(SPACE, VA_X, MapRights::Read),
        Err(ErrorCode::AlreadyMapped)
    );
    expect!(
        16,
        FRAME_X.map(SPACE, VA_RW, MapRights::Read),
        Err(ErrorCode::AlreadyMapped)
    );

    // Permissions: only R, RW and RX; write+execute never.
    for (i, bad) in [7u64, 0, 2, 4, 6, 8, u64::MAX].into_iter().enumerate() {
        expect!(
            20 + i as i32,
            FRAME_X.map_raw(SPACE, VA_X, bad),
            Err(ErrorCode::InvalidArgument)
        );
    }
    // Addresses: page aligned, in the user half, never page 0.
    expect!(
        30,
        FRAME_X.map(SPACE, VA_X + 8, MapRights::Read),
        Err(ErrorCode::InvalidArgument)
    );
    for (i, outside) in [0u64, USER_MAP_END, 0xffff_0000_0000_0000, !0xfff]
        .into_iter()
        .enumerate()
    {
        expect!(
            31 + i as i32,
            FRAME_X.map(SPACE, outside, MapRights::Read),
            Err(ErrorCode::InvalidAddress)
        );
    }
    // The program, its stack and its IPC buffer are taken: no frame
    // replaces them.
    for (i, taken) in [
        PROGRAM_PAGE,
        abi::USER_STACK_TOP - 0x1000,
        abi::IPC_BUFFER_ADDRESS,
    ]
    .into_iter()
    .enumerate()
    {
        expect!(
            35 + i as i32,
            FRAME_X.map(SPACE, taken, MapRights::Read),
            Err(ErrorCode::AlreadyMapped)
        );
    }
    // Outside the old window is no refusal in this space: the frame maps
    // just past its end, and comes off again.
    expect!(
        38,
        FRAME_X.map(SPACE, FRAME_MAP_END, MapRights::Read),
        Ok(())
    );
    expect!(39, FRAME_X.unmap(), Ok(()));
    // Types and empty slots.
    expect!(
        40,
        Frame(Cptr(UNTYPED)).map(SPACE, VA_X, MapRights::Read),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        41,
        FRAME_X.map(VSpace(FRAME_R.0), VA_X, MapRights::Read),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        42,
        Frame(Cptr(EMPTY)).map(SPACE, VA_X, MapRights::Read),
        Err(ErrorCode::InvalidCapability)
    );
    expect!(
        43,
        FRAME_X.map(VSpace(Cptr(EMPTY)), VA_X, MapRights::Read),
        Err(ErrorCode::InvalidCapability)
    );
    expect!(
        44,
        Frame(SPACE.0).unmap(),
        Err(ErrorCode::WrongCapabilityType)
    );
    expect!(
        45,
        Frame(Cptr(EMPTY)).unmap(),
        Err(ErrorCode::InvalidCapability)
    );

    // Read-execute: code written through a read-write mapping, which is
    // then replaced by a read-execute one, runs.
    expect!(50, FRAME_X.map(SPACE, VA_X, MapRights::ReadWrite), Ok(()));
    probe::store_u64(VA_X, RETURN_42);
    expect!(51, FRAME_X.unmap(), Ok(()));
    expect!(52, FRAME_X.unmap(), Ok(()));
    expect!(53, FRAME_X.map(SPACE, VA_X, MapRights::ReadExecute), Ok(()));
    expect!(54, probe::call(VA_X), 42);
    expect!(55, probe::read_u64(VA_X), RETURN_42);

    // Unmapping: the page faults again.
    expect!(60, FRAME_R.unmap(), Ok(()));
    let _ = probe::read_u64(VA_R); // fault 3
                                   // The address is free again, for another frame too.
    expect!(61, FRAME_R.map(SPACE, VA_R, MapRights::Read), Ok(()));
    expect!(62, FRAME_R.unmap(), Ok(()));

    // Deleting the last capability to a mapped frame unmaps it.
    expect!(70, cnode::delete(CNODE, 11), Ok(()));
    expect!(71, probe::read_u64(VA_RW + 8), MAGIC);
    expect!(72, cnode::delete(CNODE, 9), Ok(()));
    let _ = probe::read_u64(VA_RW + 8); // fault 4

    // Revoking the Untyped destroys the frames, unmapping the one still
    // mapped; its memory comes back zeroed in the next frame made of it.
    expect!(80, cnode::revoke(CNODE, UNTYPED), Ok(()));
    expect!(81, FRAME_X.unmap(), Err(ErrorCode::InvalidCapability));
    let _ = probe::call(VA_X); // fault 5
    expect!(82, retype(UNTYPED, CapType::Frame, 0, 8, 3), Ok(()));
    for (i, frame) in [FRAME_R, FRAME_RW, FRAME_X].into_iter().enumerate() {
        let va = FRAME_MAP_START + 0x10_0000 + 0x1000 * i as u64;
        expect!(
            83 + 3 * i as i32,
            frame.map(SPACE, va, MapRights::Read),
            Ok(())
        );
        expect!(84 + 3 * i as i32, probe::read_u64(va), 0);
        expect!(85 + 3 * i as i32, probe::read_u64(va + 8), 0);
    }
    loader()
}

/// Where `loader` has its program loaded, and the page it fills frames
/// through.
const VA_LOADED: u64 = FRAME_MAP_START + 0x40_0000;
const VA_SCRATCH: u64 = FRAME_MAP_START + 0x50_0000;
/// Where the program's code starts in its file and its page: right after
/// the ELF header and the one program header.
const CODE_OFFSET: u64 = 64 + 56;

/// An ELF file of one read-execute segment holding `RETURN_42` at
/// `VA_LOADED + CODE_OFFSET`, its entry point.
fn return_42_elf() -> [u8; 128] {
    let mut file = [0u8; 128];
    let entry = VA_LOADED + CODE_OFFSET;
    file[0..4].copy_from_slice(b"\x7fELF");
    file[4..7].copy_from_slice(&[2, 1, 1]); // ELF64, little-endian, v1
    file[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    file[18..20].copy_from_slice(&183u16.to_le_bytes()); // EM_AARCH64
    file[24..32].copy_from_slice(&entry.to_le_bytes());
    file[32..40].copy_from_slice(&64u64.to_le_bytes()); // program headers
    file[54..56].copy_from_slice(&56u16.to_le_bytes());
    file[56..58].copy_from_slice(&1u16.to_le_bytes());
    let header = 64;
    file[header..header + 4].copy_from_slice(&1u32.to_le_bytes()); // PT_LOAD
    file[header + 4..header + 8].copy_from_slice(&5u32.to_le_bytes()); // R+X
    file[header + 8..header + 16].copy_from_slice(&CODE_OFFSET.to_le_bytes());
    file[header + 16..header + 24].copy_from_slice(&entry.to_le_bytes());
    file[header + 32..header + 40].copy_from_slice(&8u64.to_le_bytes());
    file[header + 40..header + 48].copy_from_slice(&8u64.to_le_bytes());
    file[120..128].copy_from_slice(&RETURN_42.to_le_bytes());
    file
}

/// Loads `return_42_elf` into this thread's own address space with a
/// page of the Untyped, calls it, uses up the rest, and checks the
/// loader's refusals.
fn loader() -> i32 {
    let file = return_42_elf();
    let memory = |slots| TaskMemory {
        untyped: Cptr(UNTYPED),
        own: SPACE,
        target: SPACE,
        slots,
        scratch: VA_SCRATCH,
    };
    let entry = VA_LOADED + CODE_OFFSET;
    expect!(
        90,
        load_elf(&file, &memory(13..15)),
        Ok(LoadedTask {
            entry,
            slots: 13..14
        })
    );
    expect!(91, probe::call(entry), 42);
    // The page holds zeros before the segment, then the file's bytes.
    expect!(92, probe::read_u64(VA_LOADED), 0);
    expect!(93, probe::read_u64(entry), RETURN_42);
    // Use up the rest of the Untyped (the driver's block holds more than
    // the four frames made so far): frames until it has room for none.
    let mut extra = 0;
    for slot in FILL_SLOTS {
        match retype(UNTYPED, CapType::Frame, 0, slot, 1) {
            Ok(()) => extra += 1,
            Err(ErrorCode::NotEnoughMemory) => break,
            Err(error) => {
                println!("check 102 failed: filling the Untyped: {error:?}");
                return 102;
            }
        }
    }
    expect!(
        103,
        retype(UNTYPED, CapType::Frame, 0, EMPTY, 1),
        Err(ErrorCode::NotEnoughMemory)
    );
    println!("mapper: the Untyped held {extra} frames beyond four");
    // The Untyped is used up: the next load stops at its first Retype.
    expect!(
        94,
        load_elf(&file, &memory(14..15)),
        Err(LoadFailure {
            error: LoadError::Retype(ErrorCode::NotEnoughMemory),
            slots_used: 14..14
        })
    );
    expect!(
        95,
        load_elf(&file[..100], &memory(14..15)),
        Err(LoadFailure {
            error: LoadError::Elf(ElfError::Truncated),
            slots_used: 14..14
        })
    );
    // Deleting the frame's capability unmaps the program; the scratch
    // page was unmapped by the loader: both take a new frame.
    expect!(96, cnode::delete(CNODE, 13), Ok(()));
    expect!(97, cnode::revoke(CNODE, UNTYPED), Ok(()));
    expect!(98, retype(UNTYPED, CapType::Frame, 0, 13, 2), Ok(()));
    expect!(
        99,
        Frame(Cptr(13)).map(SPACE, VA_LOADED, MapRights::Read),
        Ok(())
    );
    expect!(
        100,
        Frame(Cptr(14)).map(SPACE, VA_SCRATCH, MapRights::Read),
        Ok(())
    );
    expect!(101, probe::read_u64(entry), 0);
    0
}
