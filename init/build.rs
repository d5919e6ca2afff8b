//! Tells `src/tasks.rs`, for the `image` build, where the stripped task
//! ELFs are. (Like every user program, init is linked with the SDK's
//! layout through the flags its builder passes: `system::user_rustflags`.)
//!
//! The root `build.rs` builds and strips the tasks before init and passes
//! their directory in `PORTCULLIS_TASK_ELF_DIR`. Built on its own (`cargo
//! clippy -p portcullis-init --features image --target
//! aarch64-unknown-none`), init looks where the root build puts them,
//! `<workspace>/target/image/tasks`: any root build (`cargo build`,
//! `cargo clippy --workspace`, `cargo test`) leaves them there.

use std::path::PathBuf;

/// The task ELFs init embeds: (file name, variable `src/tasks.rs` reads).
const TASKS: [(&str, &str); 2] = [
    ("portcullis-echo", "PORTCULLIS_ECHO_ELF"),
    ("portcullis-echo-client", "PORTCULLIS_ECHO_CLIENT_ELF"),
];

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));

    if std::env::var_os("CARGO_FEATURE_IMAGE").is_none() {
        return;
    }
    println!("cargo:rerun-if-env-changed=PORTCULLIS_TASK_ELF_DIR");
    let task_dir = std::env::var_os("PORTCULLIS_TASK_ELF_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("../target/image/tasks"));
    for (file, variable) in TASKS {
        let path = task_dir.join(file);
        assert!(
            path.is_file(),
            "{} is missing: build the workspace once (`cargo build` at its root builds and strips \
             the task ELFs) or set PORTCULLIS_TASK_ELF_DIR to a directory holding {file}",
            path.display()
        );
        println!("cargo:rerun-if-changed={}", path.display());
        println!("cargo:rustc-env={variable}={}", path.display());
    }
}
