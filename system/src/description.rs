//! The description file as written: serde types with the span of every
//! value a later check may need to point at. Nothing here is checked
//! beyond TOML types and unknown keys (`deny_unknown_fields` everywhere);
//! `check` does the rest, so it can report every mistake at once.
//!
//! Tables keep file order (`IndexMap` and toml's `preserve_order`): the
//! plan lists objects and tasks in the order the user wrote them.

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer};
use toml::Spanned;

/// A name and its span.
pub type Name = Spanned<String>;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Description {
    pub system: Spanned<SystemSection>,
    #[serde(default)]
    pub endpoints: IndexMap<Name, Spanned<Empty>>,
    #[serde(default)]
    pub notifications: IndexMap<Name, Spanned<Empty>>,
    #[serde(default)]
    pub memory: IndexMap<Name, Spanned<MemoryRegion>>,
    #[serde(default)]
    pub devices: IndexMap<Name, Spanned<Device>>,
    #[serde(default)]
    pub files: IndexMap<Name, Spanned<File>>,
    #[serde(default)]
    pub tasks: IndexMap<Name, Spanned<Task>>,
}

/// `[system]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemSection {
    pub name: Spanned<String>,
    pub memory: Option<Spanned<Size>>,
}

/// An object with no settings (`requests = {}`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

/// `[memory]` entries.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryRegion {
    pub size: Spanned<Size>,
}

/// `[devices]` entries.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub address: Spanned<u64>,
    pub size: Spanned<Size>,
}

/// `[files]` entries.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    pub path: Spanned<String>,
    pub rules: Option<Spanned<String>>,
}

/// `[tasks.NAME]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    #[serde(rename = "crate")]
    pub krate: Option<Spanned<String>>,
    pub elf: Option<Spanned<String>>,
    pub bin: Option<Spanned<String>>,
    #[serde(default)]
    pub features: Vec<Spanned<String>>,
    pub priority: Option<Spanned<i64>>,
    pub mcp: Option<Spanned<i64>>,
    pub stack: Option<Spanned<Size>>,
    pub memory: Option<Spanned<Size>>,
    pub cnode_slots: Option<Spanned<i64>>,
    #[serde(default)]
    pub argument: u64,
    pub privileged: Option<Spanned<bool>>,
    pub command_line: Option<Spanned<String>>,
    pub fault_handler: Option<Spanned<FaultHandler>>,
    pub restart: Option<Spanned<String>>,
    pub max_restarts: Option<Spanned<i64>>,
    #[serde(default)]
    pub ends_system: bool,
    #[serde(default)]
    pub caps: Vec<Spanned<Cap>>,
    #[serde(default)]
    pub maps: Vec<Spanned<Map>>,
    #[serde(default)]
    pub filters: Vec<Spanned<Filter>>,
    pub trace: Option<Spanned<Trace>>,
    pub audit: Option<Spanned<Audit>>,
}

/// `fault_handler = { endpoint, badge }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultHandler {
    pub endpoint: Name,
    pub badge: Option<Spanned<u64>>,
}

/// One entry of `caps`: a slot and exactly one kind.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cap {
    pub slot: Spanned<i64>,
    pub console: Option<Spanned<bool>>,
    pub supervisor: Option<Spanned<bool>>,
    pub endpoint: Option<Name>,
    pub notification: Option<Name>,
    pub irq: Option<Spanned<i64>>,
    pub tcb: Option<Name>,
    pub vspace: Option<Name>,
    pub untyped: Option<Spanned<Size>>,
    pub rights: Option<Spanned<String>>,
    pub badge: Option<Spanned<u64>>,
}

/// One entry of `maps`: exactly one of memory, device, file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Map {
    pub memory: Option<Name>,
    pub device: Option<Name>,
    pub file: Option<Name>,
    pub address: Spanned<u64>,
    pub rights: Option<Spanned<String>>,
}

/// One entry of `filters`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    pub rules: Option<Spanned<String>>,
    pub rules_file: Option<Spanned<String>>,
    pub server: Option<Name>,
    pub endpoint: Option<Name>,
    pub badge: Option<Spanned<u64>>,
}

/// `trace = { tracer, endpoint, badge }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    pub tracer: Name,
    pub endpoint: Name,
    pub badge: Option<Spanned<u64>>,
}

/// `audit = { server, ring, notification, mode, badge }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Audit {
    pub server: Name,
    pub ring: Name,
    pub notification: Name,
    pub mode: Option<Spanned<String>>,
    pub badge: Option<Spanned<u64>>,
}

/// A size as written: an integer of bytes or text such as `"16 KiB"`;
/// [`Size::bytes`] reads the text.
#[derive(Debug, Clone)]
pub enum Size {
    /// An integer.
    Bytes(i64),
    /// A string.
    Text(String),
}

impl Size {
    /// The size in bytes, or why the text is not one.
    pub fn bytes(&self) -> Result<u64, String> {
        match self {
            Size::Bytes(n) => u64::try_from(*n).map_err(|_| format!("{n} is negative")),
            Size::Text(text) => parse_size(text),
        }
    }
}

/// `"N"`, `"N KiB"`, `"N MiB"`, `"N GiB"` (digits may carry `_`).
fn parse_size(text: &str) -> Result<u64, String> {
    let bad = || format!("{text:?} is not a size (\"N\", \"N KiB\", \"N MiB\" or \"N GiB\")");
    let text_trimmed = text.trim();
    let split = text_trimmed
        .find(|c: char| !c.is_ascii_digit() && c != '_')
        .unwrap_or(text_trimmed.len());
    let (digits, unit) = text_trimmed.split_at(split);
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    let number: u64 = digits.parse().map_err(|_| bad())?;
    let shift = match unit.trim() {
        "" | "B" => 0,
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        _ => return Err(bad()),
    };
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Size, D::Error> {
        struct SizeVisitor;
        impl serde::de::Visitor<'_> for SizeVisitor {
            type Value = Size;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a size: an integer of bytes or a string such as \"16 KiB\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Size, E> {
                Ok(Size::Bytes(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Size, E> {
                i64::try_from(v)
                    .map(Size::Bytes)
                    .map_err(|_| E::custom("too large"))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Size, E> {
                Ok(Size::Text(v.to_string()))
            }
        }
        deserializer.deserialize_any(SizeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_their_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4 KiB"), Ok(4096));
        assert_eq!(parse_size("16KiB"), Ok(16 << 10));
        assert_eq!(parse_size("64 MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1_024 KiB"), Ok(1 << 20));
        assert!(parse_size("4 kb").is_err());
        assert!(parse_size("lots").is_err());
        assert!(parse_size("").is_err());
    }
}
