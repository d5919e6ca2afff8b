//! Links the program with the SDK's user-program layout (AArch64 only),
//! with segments aligned to 4 KiB pages in the file rather than lld's
//! default 64 KiB: init embeds the file, and the padding would be most of
//! it.

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo");
    let link_script = format!("{dir}/../sdk/user.ld");
    println!("cargo:rerun-if-changed={link_script}");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("none") {
        println!("cargo:rustc-link-arg-bins=-T{link_script}");
        println!("cargo:rustc-link-arg-bins=-zmax-page-size=4096");
    }
}
