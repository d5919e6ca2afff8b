//! Tests of `layout`.

use super::*;

#[test]
fn small_objects_take_a_granule_or_two_and_a_slot_half_of_one() {
    for t in [CapType::Endpoint, CapType::Reply, CapType::DebugConsole] {
        assert_eq!(record_bytes(t, 0), Some(64), "{t:?}");
    }
    for t in [
        CapType::Notification,
        CapType::Frame,
        CapType::Untyped,
        CapType::IrqHandler,
    ] {
        assert!(record_bytes(t, 0).unwrap() <= 128, "{t:?}");
    }
    assert_eq!(record_bytes(CapType::CNode, 1), Some(128));
    assert_eq!(record_bytes(CapType::CNode, 10), Some(64 + 32 * 1024));
    assert!(record_bytes(CapType::VSpace, 0).unwrap() <= 192);
    assert!(record_bytes(CapType::Tcb, 0).unwrap() <= 4096);
    // 64 rules of six comparisons and a 64-byte pattern each.
    assert!(record_bytes(CapType::Filter, 0).unwrap() <= 20 * 1024);
}
