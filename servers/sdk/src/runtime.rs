//! Program entry and panic handling for user programs.

extern "Rust" {
    fn portcullis_main(argument: u64) -> i32;
}

/// The kernel enters here at EL0 with `x0` = argument and a stack.
#[no_mangle]
extern "C" fn _start(argument: u64) -> ! {
    // SAFETY: the program defines `portcullis_main` with this signature
    // (documented in the crate docs); a missing one fails to link.
    let status = unsafe { portcullis_main(argument) };
    crate::syscall::exit(status)
}

/// Where the program starts (`_start`): the first PC of another thread
/// of the same program, made with `Tcb::set_space`, which then runs
/// `portcullis_main` with the `x0` it is given.
pub fn entry_point() -> u64 {
    _start as *const () as u64
}

/// The root task's read-only copy of its own ELF file, which the kernel
/// maps at `abi::bootinfo::ROOT_IMAGE_ADDRESS` (`BootInfo::image_bytes`
/// long; empty for 0): what a root loads into the spaces it builds to run
/// its own programs there. Only the root task has it; another program
/// must pass 0.
pub fn root_image(image_bytes: u64) -> &'static [u8] {
    if image_bytes == 0 {
        return &[];
    }
    // SAFETY: the kernel maps `image_bytes` bytes read-only at that
    // address in the root's space for as long as the space lives, and
    // never changes them; nothing can map over them (they are mapped,
    // so `FrameMap` there is `AlreadyMapped`).
    unsafe {
        core::slice::from_raw_parts(
            abi::bootinfo::ROOT_IMAGE_ADDRESS as *const u8,
            image_bytes as usize,
        )
    }
}

/// The system image the loader placed beside the kernel, read-only,
/// which the kernel maps in the root's space at
/// `abi::bootinfo::SYSTEM_IMAGE_ADDRESS` (`BootInfo::system_image_bytes`
/// long; `None` for 0: there is none): the plan and files a generic root
/// builds the system from. The kernel checked only its header's magic and
/// sizes; `abi::system::image::ImageHeader::check` is the caller's. Only
/// the root task has it; another program must pass 0.
pub fn system_image(system_image_bytes: u64) -> Option<&'static [u8]> {
    if system_image_bytes == 0 {
        return None;
    }
    // SAFETY: the kernel maps `system_image_bytes` bytes read-only at
    // that address in the root's space for as long as the space lives
    // (the RAM is never handed out, nor written), and nothing can map
    // over them (they are mapped, so `FrameMap` there is
    // `AlreadyMapped`).
    Some(unsafe {
        core::slice::from_raw_parts(
            abi::bootinfo::SYSTEM_IMAGE_ADDRESS as *const u8,
            system_image_bytes as usize,
        )
    })
}

/// A file the task's system description maps for it (`[files]`, then
/// `maps = [{ file = "NAME", address = ... }]`, docs/systems.md): the root
/// copies it into Frames mapped read-only at `address` before the task
/// starts, its length first (8 bytes, little-endian), the file after.
/// `address` must be where the description maps it: anywhere else the
/// first read faults (the task stops).
pub fn described_file(address: u64) -> &'static [u8] {
    // SAFETY: the description maps the file's pages read-only at
    // `address` for the task's whole life and nothing writes them (the
    // root's copies are unmapped before the task starts); the length word
    // is the root's, written from the image's plan, and the pages mapped
    // cover the 8 bytes and that many more (the root maps
    // `ceil((length + 8) / 4096)` pages). Nothing else can be mapped over
    // them (`FrameMap` there is `AlreadyMapped`).
    unsafe {
        let length = (address as *const u64).read_volatile();
        core::slice::from_raw_parts((address + 8) as *const u8, length as usize)
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    crate::println!("panic: {info}");
    crate::syscall::exit(101)
}
