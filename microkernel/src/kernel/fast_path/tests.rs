//! Tests of `fast_path`.

use abi::Syscall;

/// `vectors.s` sends an SVC to the fast path's two entries only when
/// `x8` is exactly `SYSCALL_CALL` or `SYSCALL_REPLY_RECV`: `Call` to
/// the one, `ReplyRecv` to the other.
#[test]
fn the_vector_sends_exactly_call_and_reply_recv_here() {
    let vectors = include_str!("../../../../arch/src/cpu/vectors.s");
    // The numbers are const operands (`arch/src/cpu/mod.rs`) of the
    // syscalls themselves.
    let operands = include_str!("../../../../arch/src/cpu/mod.rs");
    for (name, syscall) in [
        ("SYSCALL_CALL", Syscall::Call),
        ("SYSCALL_REPLY_RECV", Syscall::ReplyRecv),
    ] {
        assert!(vectors.contains(&format!(".equ {name}, {{{name}}} ")));
        assert!(operands.contains(&format!(
            "pub const {name}: u64 = abi::Syscall::{syscall:?}.number();"
        )));
    }
    for (number, entry) in [
        ("SYSCALL_CALL", "el0_call_x9_x10_saved"),
        ("SYSCALL_REPLY_RECV", "el0_reply_recv_x9_x10_saved"),
    ] {
        let test = format!("cmp     x8, #{number}\n    b.eq    {entry}\n");
        assert!(vectors.contains(&test), "{number} goes to {entry}");
        assert_eq!(vectors.matches(&format!("b.eq    {entry}")).count(), 1);
    }
    assert!(vectors.contains(
        "el0_call_x9_x10_saved:\n    fits_in_registers_or_slow\n    save_user_context x9_x10_saved=1\n    bl      portcullis_el0_call\n"
    ));
    assert!(vectors.contains(
        "el0_reply_recv_x9_x10_saved:\n    fits_in_registers_or_slow\n    save_user_context x9_x10_saved=1\n    bl      portcullis_el0_reply_recv\n"
    ));
}
