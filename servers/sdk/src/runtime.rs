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

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    crate::println!("panic: {info}");
    crate::syscall::exit(101)
}
