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

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    crate::println!("panic: {info}");
    crate::syscall::exit(101)
}
