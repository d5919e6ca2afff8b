//! Tests of `stopped_call`.

use super::*;
use entry::EntryStop;

#[test]
fn only_a_call_waiting_at_its_entry_stop_is_unseen_by_the_tracer() {
    let mut call = StoppedCall::new([0; 9], CallStop::Entry(EntryStop::TraceEntry));
    assert!(!call.passed_entry_stop());
    call.answer = Some(StopAnswer::TraceContinue);
    assert!(call.passed_entry_stop());
    let at_policy = StoppedCall::new([0; 9], CallStop::Entry(EntryStop::Policy));
    assert!(at_policy.passed_entry_stop());
    assert!(!at_policy.is_answered());
}
