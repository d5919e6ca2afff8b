//! Unit tests of the kernel as a whole (host only).

mod binding_invariant_tests;
mod core_tests;
mod entry_mask_invariant_tests;
mod entry_order_tests;
mod judged_capability_tests;
mod queue_invariant_tests;
mod register_program_invariant_tests;
pub(in crate::kernel) mod test_kernel;
mod user_dispatch_invariant_tests;
