//! `portcullis new NAME`: a starting point for a system of one's own — an
//! app, a policy server and the system description that boots them —
//! written from `templates/new/` so that it boots as written.

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// The template's files: (path in the new directory, text with
/// `{{name}}`, `{{portcullis}}` and `{{path}}` to fill in).
const FILES: [(&str, &str); 7] = [
    ("Cargo.toml", include_str!("../templates/new/Cargo.toml.in")),
    (
        "system.toml",
        include_str!("../templates/new/system.toml.in"),
    ),
    ("README.md", include_str!("../templates/new/README.md.in")),
    (
        "app/Cargo.toml",
        include_str!("../templates/new/app/Cargo.toml.in"),
    ),
    (
        "app/src/main.rs",
        include_str!("../templates/new/app/src/main.rs.in"),
    ),
    (
        "policy/Cargo.toml",
        include_str!("../templates/new/policy/Cargo.toml.in"),
    ),
    (
        "policy/src/main.rs",
        include_str!("../templates/new/policy/src/main.rs.in"),
    ),
];

/// Why nothing was written.
#[derive(Debug, PartialEq, Eq)]
pub enum NewError {
    /// The name is not one a system (and its crates) can have.
    BadName(String),
    /// Something is already there.
    Exists(PathBuf),
    /// Writing failed.
    Io(PathBuf, String),
}

impl fmt::Display for NewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NewError::BadName(name) => write!(
                f,
                "`{name}` cannot name a system: use 1 to 32 lower-case letters, digits, `-` or `_`, \
                 starting with a letter"
            ),
            NewError::Exists(path) => {
                write!(f, "{} already exists; nothing was written", path.display())
            }
            NewError::Io(path, error) => write!(f, "cannot write {}: {error}", path.display()),
        }
    }
}

impl std::error::Error for NewError {}

/// Is `name` a system name that also makes valid crate names?
pub fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    (1..=32).contains(&name.len())
        && chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// Writes the template into `directory` (which must not exist; its last
/// component is the system's name). `portcullis` is this checkout: the
/// crates name its SDK by a path relative to them when they lie inside
/// it, else by its absolute path. Returns the files written.
pub fn create(directory: &Path, portcullis: &Path) -> Result<Vec<PathBuf>, NewError> {
    let name = directory
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    if !is_valid_name(&name) {
        return Err(NewError::BadName(name));
    }
    if directory.exists() {
        return Err(NewError::Exists(directory.to_path_buf()));
    }
    // Both as the file system resolves them (`..` and links), so that
    // "inside the checkout" is decided on the real places.
    fn io(path: &Path) -> impl Fn(std::io::Error) -> NewError + '_ {
        move |e| NewError::Io(path.to_path_buf(), e.to_string())
    }
    let parent = match directory.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let target = std::fs::canonicalize(parent)
        .map_err(io(parent))?
        .join(&name);
    let checkout = std::fs::canonicalize(portcullis).map_err(io(portcullis))?;
    let sdk_root = match target.strip_prefix(&checkout) {
        Ok(inside) => {
            let depth = inside
                .components()
                .filter(|c| matches!(c, Component::Normal(_)))
                .count();
            vec![".."; depth].join("/")
        }
        Err(_) => checkout.display().to_string(),
    };
    let mut written = Vec::new();
    for (file, text) in FILES {
        let path = directory.join(file);
        let text = text
            .replace("{{name}}", &name)
            .replace("{{portcullis}}", &sdk_root)
            .replace("{{path}}", &directory.display().to_string());
        let parent = path.parent().unwrap_or(directory);
        std::fs::create_dir_all(parent)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|e| NewError::Io(path.clone(), e.to_string()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(what: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("portcullis-new-{what}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn names_are_checked() {
        for good in ["a", "my-system", "x_1", &"a".repeat(32)] {
            assert!(is_valid_name(good), "{good}");
        }
        for bad in ["", "1abc", "My", "a b", "a/b", "-a", &"a".repeat(33)] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn outside_the_checkout_the_sdk_is_named_by_its_absolute_path() {
        let base = scratch("outside");
        let checkout = base.join("portcullis");
        std::fs::create_dir_all(&checkout).unwrap();
        let written = create(&base.join("mine"), &checkout).unwrap();
        assert_eq!(written.len(), FILES.len());
        let manifest = std::fs::read_to_string(base.join("mine/Cargo.toml")).unwrap();
        let real = std::fs::canonicalize(&checkout).unwrap();
        assert!(
            manifest.contains(&format!("path = \"{}/servers/sdk\"", real.display())),
            "{manifest}"
        );
        let system = std::fs::read_to_string(base.join("mine/system.toml")).unwrap();
        assert!(system.contains("name = \"mine\""), "{system}");
        assert!(!system.contains("{{"), "{system}");
        assert_eq!(
            create(&base.join("mine"), &checkout),
            Err(NewError::Exists(base.join("mine")))
        );
        assert!(matches!(
            create(&base.join("Mine"), &checkout),
            Err(NewError::BadName(_))
        ));
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn inside_the_checkout_the_sdk_is_named_relatively() {
        let checkout = scratch("inside");
        create(&checkout.join("apps/mine"), &checkout).unwrap();
        let manifest = std::fs::read_to_string(checkout.join("apps/mine/Cargo.toml")).unwrap();
        assert!(
            manifest.contains("path = \"../../servers/sdk\""),
            "{manifest}"
        );
        // `..` is resolved: this one is inside too, one level down.
        std::fs::create_dir_all(checkout.join("x")).unwrap();
        create(&checkout.join("x/../other"), &checkout).unwrap();
        let manifest = std::fs::read_to_string(checkout.join("other/Cargo.toml")).unwrap();
        assert!(manifest.contains("path = \"../servers/sdk\""), "{manifest}");
        std::fs::remove_dir_all(checkout).unwrap();
    }

    #[test]
    fn a_path_through_the_checkout_that_leaves_it_is_outside() {
        let base = scratch("through");
        let checkout = base.join("portcullis");
        std::fs::create_dir_all(&checkout).unwrap();
        // What `./qemu-run.sh new ../mine` run in the checkout passes.
        create(&checkout.join("../mine"), &checkout).unwrap();
        let manifest = std::fs::read_to_string(base.join("mine/Cargo.toml")).unwrap();
        let real = std::fs::canonicalize(&checkout).unwrap();
        assert!(
            manifest.contains(&format!("path = \"{}/servers/sdk\"", real.display())),
            "{manifest}"
        );
        std::fs::remove_dir_all(base).unwrap();
    }
}
