//! The structure check: a device tree is walked token by token, copied
//! without NOPs, and refused unless it is one the `fdt` crate can read
//! without panicking.
//!
//! `fdt` 0.1.5 trusts its input: it indexes, `unwrap`s and `assert`s on
//! the blob, so a malformed tree from the boot loader would be a kernel
//! panic at boot instead of a fall-back to the board's defaults. The host
//! fuzzer (`fuzz/`, target `device_tree`) found each class this walk now
//! refuses: a name offset outside the strings block, a name that is not
//! UTF-8, a node closed by `FDT_END`, no root node, a reservation map
//! outside the blob, a short `#address-cells`, a property after a child.

use super::{total_size, DeviceTreeError};

const FDT_BEGIN_NODE: u32 = 1;
const FDT_END_NODE: u32 = 2;
const FDT_PROP: u32 = 3;
const FDT_NOP: u32 = 4;
const FDT_END: u32 = 9;

/// The header's size (version 17): the blocks start after it.
const HEADER_BYTES: usize = 40;

/// Deeper trees are refused. Real ones are a few levels deep, `fdt`
/// keeps at most 63 parents, and one bit per level fits a `u32`.
const MAX_DEPTH: usize = 32;

fn be32(data: &[u8], at: usize) -> Option<u32> {
    let end = at.checked_add(4)?;
    Some(u32::from_be_bytes(data.get(at..end)?.try_into().ok()?))
}

fn be64(data: &[u8], at: usize) -> Option<u64> {
    let end = at.checked_add(8)?;
    Some(u64::from_be_bytes(data.get(at..end)?.try_into().ok()?))
}

fn put_be32(data: &mut [u8], at: usize, value: u32) -> Option<()> {
    data.get_mut(at..at + 4)?
        .copy_from_slice(&value.to_be_bytes());
    Some(())
}

/// The NUL-terminated UTF-8 string at the start of `bytes`, without its
/// NUL, or `None`.
fn c_string(bytes: &[u8]) -> Option<&str> {
    let length = bytes.iter().position(|&b| b == 0)?;
    core::str::from_utf8(&bytes[..length]).ok()
}

/// Copies `blob` into `out` without the NOP tokens of its structure block
/// and returns the copy's length, or refuses a malformed tree.
///
/// Firmware and QEMU delete properties by overwriting them with NOPs, and
/// the `fdt` crate's node skipping does not expect a NOP between a node's
/// properties (it asserts). A tree without NOPs means the same.
pub fn remove_nops(blob: &[u8], out: &mut [u8]) -> Result<usize, DeviceTreeError> {
    let bad = DeviceTreeError::NotADeviceTree;
    let total = total_size(blob).ok_or(bad)?;
    let struct_offset = be32(blob, 8).ok_or(bad)? as usize;
    let strings_offset = be32(blob, 12).ok_or(bad)? as usize;
    let reservations_offset = be32(blob, 16).ok_or(bad)? as usize;
    let strings_size = be32(blob, 32).ok_or(bad)? as usize;
    let struct_size = be32(blob, 36).ok_or(bad)? as usize;
    // The copy holds the content only: trees are often padded (QEMU virt
    // pads to 1 MiB), and the padding need not fit in `out`.
    let struct_end = struct_offset.checked_add(struct_size).ok_or(bad)?;
    let strings_end = strings_offset.checked_add(strings_size).ok_or(bad)?;
    if total > blob.len() || struct_end > total || strings_end > total {
        return Err(bad);
    }
    if struct_offset < HEADER_BYTES || strings_offset < HEADER_BYTES {
        return Err(bad);
    }
    check_reservations(blob, reservations_offset, struct_offset).ok_or(bad)?;
    if struct_end + strings_size > out.len() {
        return Err(bad);
    }
    let strings = &blob[strings_offset..strings_end];
    // Header and memory reservations are copied as they are.
    out[..struct_offset].copy_from_slice(&blob[..struct_offset]);
    let mut nesting = Nesting::default();
    let mut read = struct_offset;
    let mut write = struct_offset;
    loop {
        let token = be32(blob, read).filter(|_| read < struct_end).ok_or(bad)?;
        let length = match token {
            FDT_NOP => {
                read += 4;
                continue;
            }
            FDT_BEGIN_NODE => {
                let name_bytes = blob.get(read + 4..struct_end).ok_or(bad)?;
                let name = c_string(name_bytes).ok_or(bad)?;
                nesting.begin_node(name).ok_or(bad)?;
                4 + (name.len() + 1).div_ceil(4) * 4
            }
            FDT_PROP => {
                let value_length = be32(blob, read + 4).ok_or(bad)? as usize;
                let name_offset = be32(blob, read + 8).ok_or(bad)? as usize;
                let name = c_string(strings.get(name_offset..).ok_or(bad)?).ok_or(bad)?;
                // `fdt` expects a whole cell in the cell-count properties.
                let is_cell_count = name == "#address-cells" || name == "#size-cells";
                if is_cell_count && value_length != 4 {
                    return Err(bad);
                }
                nesting.property().ok_or(bad)?;
                value_length
                    .div_ceil(4)
                    .checked_mul(4)
                    .and_then(|v| v.checked_add(12))
                    .ok_or(bad)?
            }
            FDT_END_NODE => {
                nesting.end_node().ok_or(bad)?;
                4
            }
            FDT_END => {
                nesting.end().ok_or(bad)?;
                4
            }
            _ => return Err(bad),
        };
        let token_end = read
            .checked_add(length)
            .filter(|&end| end <= struct_end)
            .ok_or(bad)?;
        out.get_mut(write..write + length)
            .ok_or(bad)?
            .copy_from_slice(&blob[read..token_end]);
        read = token_end;
        write += length;
        if token == FDT_END {
            break;
        }
    }
    let new_struct_size = write - struct_offset;
    // Strings follow the structure block in the copy.
    let new_strings_offset = write;
    out.get_mut(write..write + strings_size)
        .ok_or(bad)?
        .copy_from_slice(strings);
    let new_total = write + strings_size;
    put_be32(out, 4, new_total as u32).ok_or(bad)?;
    put_be32(out, 12, new_strings_offset as u32).ok_or(bad)?;
    put_be32(out, 36, new_struct_size as u32).ok_or(bad)?;
    Ok(new_total)
}

/// The memory reservation map lies between the header and the structure
/// block and ends with an all-zero entry there (`fdt` reads entries until
/// that one).
fn check_reservations(blob: &[u8], offset: usize, struct_offset: usize) -> Option<()> {
    if offset < HEADER_BYTES || offset > struct_offset {
        return None;
    }
    let mut entry = offset;
    while entry.checked_add(16)? <= struct_offset {
        if be64(blob, entry)? == 0 && be64(blob, entry + 8)? == 0 {
            return Some(());
        }
        entry += 16;
    }
    None
}

/// Where the walk is in the tree: one root node, nodes balanced, each
/// node's properties before its children (as `fdt` reads them).
#[derive(Default)]
struct Nesting {
    /// Nodes open now.
    depth: usize,
    /// Bit `d`: the open node at depth `d + 1` has had a child.
    had_child: u32,
    /// The root node has been closed: only `FDT_END` may follow.
    root_closed: bool,
}

impl Nesting {
    fn begin_node(&mut self, name: &str) -> Option<()> {
        if self.root_closed || self.depth >= MAX_DEPTH {
            return None;
        }
        if self.depth == 0 && !name.is_empty() {
            // The root node's name is empty.
            return None;
        }
        if self.depth > 0 {
            self.had_child |= 1 << (self.depth - 1);
        }
        self.had_child &= !(1 << self.depth);
        self.depth += 1;
        Some(())
    }

    fn property(&self) -> Option<()> {
        let inside_a_node = self.depth > 0;
        let after_a_child = self.depth > 0 && self.had_child & (1 << (self.depth - 1)) != 0;
        (inside_a_node && !after_a_child).then_some(())
    }

    fn end_node(&mut self) -> Option<()> {
        self.depth = self.depth.checked_sub(1)?;
        if self.depth == 0 {
            self.root_closed = true;
        }
        Some(())
    }

    fn end(&self) -> Option<()> {
        (self.depth == 0 && self.root_closed).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One structure-block token for `build`.
    enum Token<'a> {
        Begin(&'a [u8]),
        Prop(&'a str, &'a [u8]),
        /// A property whose name offset is given raw.
        PropAt(u32),
        EndNode,
        End,
    }
    use Token::*;

    /// A device tree blob with an empty reservation map at
    /// `reservations` (`None`: right after the header).
    fn build(tokens: &[Token<'_>], reservations: Option<u32>) -> Vec<u8> {
        let mut strings = Vec::new();
        let mut structure = Vec::new();
        for token in tokens {
            match token {
                Begin(name) => {
                    structure.extend_from_slice(&FDT_BEGIN_NODE.to_be_bytes());
                    structure.extend_from_slice(name);
                    structure.push(0);
                    while !structure.len().is_multiple_of(4) {
                        structure.push(0);
                    }
                }
                Prop(name, value) => {
                    let offset = strings.len() as u32;
                    strings.extend_from_slice(name.as_bytes());
                    strings.push(0);
                    push_property(&mut structure, offset, value);
                }
                PropAt(offset) => push_property(&mut structure, *offset, &[]),
                EndNode => structure.extend_from_slice(&FDT_END_NODE.to_be_bytes()),
                End => structure.extend_from_slice(&FDT_END.to_be_bytes()),
            }
        }
        let struct_offset = HEADER_BYTES + 16;
        let strings_offset = struct_offset + structure.len();
        let total = strings_offset + strings.len();
        let mut blob = vec![0u8; HEADER_BYTES + 16];
        for (at, value) in [
            (0, 0xd00d_feed),
            (4, total as u32),
            (8, struct_offset as u32),
            (12, strings_offset as u32),
            (16, reservations.unwrap_or(HEADER_BYTES as u32)),
            (20, 17),
            (24, 16),
            (32, strings.len() as u32),
            (36, structure.len() as u32),
        ] {
            blob[at..at + 4].copy_from_slice(&u32::to_be_bytes(value));
        }
        blob.extend_from_slice(&structure);
        blob.extend_from_slice(&strings);
        blob
    }

    fn push_property(structure: &mut Vec<u8>, name_offset: u32, value: &[u8]) {
        structure.extend_from_slice(&FDT_PROP.to_be_bytes());
        structure.extend_from_slice(&(value.len() as u32).to_be_bytes());
        structure.extend_from_slice(&name_offset.to_be_bytes());
        structure.extend_from_slice(value);
        while !structure.len().is_multiple_of(4) {
            structure.push(0);
        }
    }

    fn check(blob: &[u8]) -> Result<usize, DeviceTreeError> {
        let mut out = vec![0u8; blob.len()];
        remove_nops(blob, &mut out)
    }

    const VIRT: &[u8] = b"linux,dummy-virt\0";

    #[test]
    fn a_small_well_formed_tree_passes_and_parses() {
        let blob = build(
            &[
                Begin(b""),
                Prop("compatible", VIRT),
                Prop("#address-cells", &[0, 0, 0, 2]),
                Begin(b"chosen"),
                EndNode,
                EndNode,
                End,
            ],
            None,
        );
        assert_eq!(check(&blob), Ok(blob.len()));
        let mut scratch = vec![0u8; blob.len()];
        let info = super::super::parse(&blob, &mut scratch).expect("a virt tree");
        assert_eq!(info.board, crate::boards::Board::QemuVirt);
    }

    #[test]
    fn a_root_without_compatible_is_an_unknown_board() {
        let blob = build(&[Begin(b""), EndNode, End], None);
        let mut scratch = vec![0u8; blob.len()];
        assert_eq!(
            super::super::parse(&blob, &mut scratch),
            Err(DeviceTreeError::UnknownBoard)
        );
    }

    #[test]
    fn malformed_structures_are_refused() {
        let bad = Err(DeviceTreeError::NotADeviceTree);
        let cases: &[(&str, &[Token<'_>])] = &[
            ("no root node", &[End]),
            ("a named root", &[Begin(b"soc"), EndNode, End]),
            (
                "two roots",
                &[Begin(b""), EndNode, Begin(b""), EndNode, End],
            ),
            ("a node closed by END", &[Begin(b""), Begin(b"a"), End]),
            (
                "END_NODE without a node",
                &[Begin(b""), EndNode, EndNode, End],
            ),
            ("no END", &[Begin(b""), EndNode]),
            (
                "a property outside the root",
                &[Prop("x", b""), Begin(b""), EndNode, End],
            ),
            (
                "a property after a child",
                &[
                    Begin(b""),
                    Begin(b"a"),
                    EndNode,
                    Prop("x", b""),
                    EndNode,
                    End,
                ],
            ),
            (
                "a name offset past the strings",
                &[Begin(b""), PropAt(999), EndNode, End],
            ),
            (
                "a node name not UTF-8",
                &[Begin(b""), Begin(b"\xff\xfe"), EndNode, EndNode, End],
            ),
            (
                "a short #address-cells",
                &[Begin(b""), Prop("#address-cells", &[2]), EndNode, End],
            ),
        ];
        for (what, tokens) in cases {
            assert_eq!(check(&build(tokens, None)), bad, "{what}");
        }
        // The root and `children` nested nodes, all closed.
        let nested = |children: usize| -> Vec<Token<'static>> {
            core::iter::once(Begin(b""))
                .chain((0..children).map(|_| Begin(b"n")))
                .chain((0..=children).map(|_| EndNode))
                .chain(core::iter::once(End))
                .collect()
        };
        assert!(check(&build(&nested(MAX_DEPTH - 1), None)).is_ok());
        assert_eq!(check(&build(&nested(MAX_DEPTH), None)), bad, "too deep");
    }

    #[test]
    fn property_names_must_be_utf8_with_a_nul_in_the_strings() {
        let mut blob = build(&[Begin(b""), Prop("ab", b""), EndNode, End], None);
        let strings_offset = be32(&blob, 12).unwrap() as usize;
        blob[strings_offset] = 0xff;
        assert_eq!(check(&blob), Err(DeviceTreeError::NotADeviceTree));
        let last = blob.len() - 1;
        blob[strings_offset] = b'a';
        blob[last] = b'c';
        assert_eq!(check(&blob), Err(DeviceTreeError::NotADeviceTree));
    }

    #[test]
    fn the_reservation_map_must_lie_before_the_structure_and_end() {
        let tokens = [Begin(b""), EndNode, End];
        for offset in [0, 8, 48, 1 << 20] {
            assert_eq!(
                check(&build(&tokens, Some(offset))),
                Err(DeviceTreeError::NotADeviceTree),
                "reservations at {offset}"
            );
        }
        assert!(check(&build(&tokens, Some(40))).is_ok());
    }
}
