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

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    crate::println!("panic: {info}");
    crate::syscall::exit(101)
}
