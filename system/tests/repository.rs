//! Every description in the repository checks: the project's own
//! systems, the examples and the template `portcullis new` writes.

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn the_repositorys_descriptions_check() {
    let root = workspace();
    let mut descriptions = vec![];
    for name in ["demo", "test", "bench", "fuzz"] {
        descriptions.push(root.join("systems").join(format!("{name}.toml")));
    }
    for name in [
        "hello",
        "confined",
        "traced",
        "supervised",
        "devices",
        "rules",
    ] {
        descriptions.push(root.join("examples").join(name).join("system.toml"));
    }
    for description in descriptions {
        if let Err(errors) = system::load(&description) {
            panic!("{}:\n{errors}", description.display());
        }
    }
}
