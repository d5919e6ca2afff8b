//! Tests of `object_size`.

use super::*;

#[test]
fn the_cost_table() {
    let endpoint = cost(CapType::Endpoint, 0).unwrap();
    assert_eq!((endpoint.memory, endpoint.record), (0, 64));
    let frame = cost(CapType::Frame, 0).unwrap();
    assert_eq!((frame.memory, frame.alignment), (4096, 4096));
    let vspace = cost(CapType::VSpace, 64).unwrap();
    assert_eq!((vspace.memory, vspace.alignment), (65 * 4096, 4096));
    let untyped = cost(CapType::Untyped, 20).unwrap();
    assert_eq!((untyped.memory, untyped.alignment), (1 << 20, 1 << 20));
    let cnode = cost(CapType::CNode, 16).unwrap();
    assert_eq!(cnode.record, 64 + (32 << 16));
    assert_eq!(cost(CapType::Reply, 0).map(|c| c.memory), Ok(0));
}

#[test]
fn bad_parameters_are_refused() {
    let bad = Err(CapError::InvalidArgument);
    assert_eq!(cost(CapType::CNode, 0), bad);
    assert_eq!(cost(CapType::CNode, 17), bad);
    assert_eq!(cost(CapType::Untyped, 11), bad);
    assert_eq!(cost(CapType::Untyped, 48), bad);
    assert_eq!(cost(CapType::Tcb, 1), bad);
    assert_eq!(cost(CapType::Frame, 12), bad);
    assert_eq!(cost(CapType::VSpace, 0), bad);
    assert_eq!(
        cost(CapType::VSpace, abi::vspace::MAX_USER_TABLE_PAGES + 1),
        bad
    );
    assert_eq!(cost(CapType::VSpace, u64::MAX), bad);
    assert_eq!(cost(CapType::Null, 0), bad);
    assert_eq!(cost(CapType::IrqHandler, 0), bad);
    assert_eq!(cost(CapType::DebugConsole, 0), bad);
    assert_eq!(cost(CapType::IrqControl, 0), bad);
}
