//! Links the kernel binary with its layout script (AArch64 only).

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo");
    println!("cargo:rerun-if-changed=kernel.ld");
    println!("cargo:rerun-if-env-changed=PORTCULLIS_ROOT_ELF");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("none") {
        println!("cargo:rustc-link-arg-bins=-T{dir}/kernel.ld");
        println!("cargo:rustc-link-arg-bins=--no-pie");
    }
}
