//! Tests of `thread`.

use super::ThreadName;

#[test]
fn the_kernels_own_names_fit_a_tcb() {
    assert_eq!(ThreadName::from_static("root").as_str(), "root");
    assert_eq!(ThreadName::TASK.as_str(), "task");
}

#[test]
fn a_user_name_is_checked() {
    assert_eq!(
        ThreadName::from_user(b"echo-client").map(|n| n.as_str().len()),
        Some(11)
    );
    for bad in [
        &b""[..],
        b"a b",
        b"a#1",
        b"[a]",
        b"\xff",
        b"0123456789abcdefghijklmno",
    ] {
        assert_eq!(ThreadName::from_user(bad), None, "{bad:?}");
    }
}
