//! Tests of `error`.

use super::*;

#[test]
fn every_error_has_its_own_code() {
    let all = [
        CapError::InvalidCapability,
        CapError::WrongCapabilityType,
        CapError::MissingRights,
        CapError::InvalidArgument,
        CapError::SlotOccupied,
        CapError::NotEnoughMemory,
        CapError::OutOfResources,
    ];
    for (i, a) in all.iter().enumerate() {
        let code = ErrorCode::from(*a);
        assert_ne!(code, ErrorCode::Ok);
        for b in &all[i + 1..] {
            assert_ne!(code, ErrorCode::from(*b), "{a:?} and {b:?}");
        }
    }
}
