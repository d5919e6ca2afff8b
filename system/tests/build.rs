//! The build step: a crate of the workspace is cross-built with the image
//! profile, stripped, checked and estimated.

use std::path::{Path, PathBuf};
use system::{build_image, BuildOptions};

/// Builds `servers/echo` (about 13 s from a cold cache on two cores),
/// linked with the SDK's script through the flags `build` passes (a crate
/// whose build script passes the script too would give it to lld twice).
#[test]
fn a_workspace_crate_is_built_stripped_and_estimated() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("system-build");
    std::fs::create_dir_all(&dir).unwrap();
    let description = format!(
        r#"[system]
name = "echo"
[endpoints]
requests = {{}}
[tasks.echo]
crate = "{}"
bin = "portcullis-echo"
features = ["image"]
caps = [ {{ slot = 1, console = true }}, {{ slot = 2, endpoint = "requests", rights = "rw" }} ]
"#,
        workspace.join("servers/echo").display()
    );
    let path = dir.join("system.toml");
    std::fs::write(&path, description).unwrap();
    let options = BuildOptions {
        target_dir: PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("system-build-target"),
        workspace: workspace.clone(),
        quiet: true,
    };
    let (image, summary) = build_image(&path, &options).unwrap_or_else(|d| panic!("{d}"));
    println!("{summary}");
    let plan = abi::system::plan::Plan::open(&image).unwrap();
    let echo = plan.task(0).unwrap();
    let elf = plan.file(echo.elf).unwrap();
    let parsed = abi::elf::parse(elf).expect("an AArch64 executable");
    assert_eq!(parsed.segments()[0].vaddr, 0x40_0000, "linked by user.ld");
    // Stripped: no section names of a debug build are left.
    assert!(!elf.windows(12).any(|w| w == b".debug_info\0"));
    assert_eq!(summary.tasks[0].name, "echo");
    assert!(summary.tasks[0].memory >= summary.tasks[0].estimate);
}
