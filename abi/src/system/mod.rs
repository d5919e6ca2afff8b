//! Systems described on the host and executed by the root task: the
//! image format the host tool writes ([`image`]) and the plan inside it
//! ([`plan`]). `docs/systems.md` describes the description file the
//! plan is made from.

pub mod image;
pub mod plan;
