//! A small flattened-device-tree reader and writer, and the Raspberry Pi
//! firmware's documented changes to the tree it passes, for tests: the
//! host tests parse a tree shaped like the firmware's, and the QEMU tests
//! boot one (`tests/guest_raspi4b.rs`). It allocates, so it is for the
//! host only (feature `fdt-writer`, or this crate's own tests).

use alloc::string::{String, ToString};
use alloc::vec::Vec;

const FDT_MAGIC: u32 = 0xd00d_feed;
const BEGIN_NODE: u32 = 1;
const END_NODE: u32 = 2;
const PROP: u32 = 3;
const NOP: u32 = 4;
const END: u32 = 9;
const HEADER_BYTES: usize = 40;

/// A whole tree: the memory reservation map (`/memreserve/`) and the
/// nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    /// `(address, size)` of each `/memreserve/` entry.
    pub reservations: Vec<(u64, u64)>,
    /// The root node (its name is empty).
    pub root: Node,
}

/// One node: its properties in order, then its children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The name with its unit address (`memory@0`).
    pub name: String,
    /// `(name, value)` of each property.
    pub properties: Vec<(String, Vec<u8>)>,
    /// Child nodes.
    pub children: Vec<Node>,
}

/// Big-endian cells, as `reg` and friends hold them.
pub fn cells(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

/// A NUL-terminated string value.
pub fn string(text: &str) -> Vec<u8> {
    let mut value = text.as_bytes().to_vec();
    value.push(0);
    value
}

impl Node {
    /// An empty node.
    pub fn new(name: &str) -> Node {
        Node {
            name: name.to_string(),
            properties: Vec::new(),
            children: Vec::new(),
        }
    }

    /// Sets (or adds, at the end) property `name`.
    pub fn set(&mut self, name: &str, value: Vec<u8>) -> &mut Node {
        match self.properties.iter_mut().find(|(n, _)| n == name) {
            Some((_, old)) => *old = value,
            None => self.properties.push((name.to_string(), value)),
        }
        self
    }

    /// Property `name`'s value.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// The child named `name`, made (empty, last) if there is none.
    pub fn child(&mut self, name: &str) -> &mut Node {
        let index = match self.children.iter().position(|c| c.name == name) {
            Some(index) => index,
            None => {
                self.children.push(Node::new(name));
                self.children.len() - 1
            }
        };
        &mut self.children[index]
    }
}

fn be32(blob: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(blob[at..at + 4].try_into().expect("4 bytes"))
}

fn be64(blob: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(blob[at..at + 8].try_into().expect("8 bytes"))
}

fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).expect("NUL-terminated");
    String::from_utf8(bytes[..end].to_vec()).expect("UTF-8")
}

fn align4(n: usize) -> usize {
    n.div_ceil(4) * 4
}

impl Tree {
    /// Reads a well-formed blob (test input: panics on a malformed one).
    pub fn decode(blob: &[u8]) -> Tree {
        assert_eq!(be32(blob, 0), FDT_MAGIC, "not a device tree");
        let structure = be32(blob, 8) as usize;
        let strings = be32(blob, 12) as usize;
        let mut reservations = Vec::new();
        let mut at = be32(blob, 16) as usize;
        loop {
            let (address, size) = (be64(blob, at), be64(blob, at + 8));
            if address == 0 && size == 0 {
                break;
            }
            reservations.push((address, size));
            at += 16;
        }
        let mut at = structure;
        let mut open: Vec<Node> = Vec::new();
        loop {
            let token = be32(blob, at);
            at += 4;
            match token {
                BEGIN_NODE => {
                    let name = c_string(&blob[at..]);
                    at += align4(name.len() + 1);
                    open.push(Node::new(&name));
                }
                PROP => {
                    let length = be32(blob, at) as usize;
                    let name = c_string(&blob[strings + be32(blob, at + 4) as usize..]);
                    let value = blob[at + 8..at + 8 + length].to_vec();
                    at += 8 + align4(length);
                    open.last_mut()
                        .expect("inside a node")
                        .properties
                        .push((name, value));
                }
                END_NODE => {
                    let node = open.pop().expect("a node to close");
                    match open.last_mut() {
                        Some(parent) => parent.children.push(node),
                        None => {
                            return Tree {
                                reservations,
                                root: node,
                            }
                        }
                    }
                }
                NOP => {}
                END => panic!("END inside the root node"),
                other => panic!("unknown token {other}"),
            }
        }
    }

    /// The blob: header, reservation map, structure, strings (version 17).
    pub fn encode(&self) -> Vec<u8> {
        let mut structure = Vec::new();
        let mut strings: Vec<u8> = Vec::new();
        let mut names: Vec<(String, u32)> = Vec::new();
        encode_node(&self.root, &mut structure, &mut strings, &mut names);
        structure.extend_from_slice(&END.to_be_bytes());
        let reservations = HEADER_BYTES;
        let structure_offset = reservations + 16 * (self.reservations.len() + 1);
        let strings_offset = structure_offset + structure.len();
        let total = strings_offset + strings.len();
        let mut blob = Vec::with_capacity(total);
        for value in [
            FDT_MAGIC,
            total as u32,
            structure_offset as u32,
            strings_offset as u32,
            reservations as u32,
            17,
            16,
            0,
            strings.len() as u32,
            structure.len() as u32,
        ] {
            blob.extend_from_slice(&value.to_be_bytes());
        }
        for &(address, size) in self.reservations.iter().chain([&(0, 0)]) {
            blob.extend_from_slice(&address.to_be_bytes());
            blob.extend_from_slice(&size.to_be_bytes());
        }
        blob.extend_from_slice(&structure);
        blob.extend_from_slice(&strings);
        blob
    }

    /// The node at `path` (`/reserved-memory/nvram@0`), made if missing.
    pub fn node(&mut self, path: &str) -> &mut Node {
        path.split('/')
            .filter(|part| !part.is_empty())
            .fold(&mut self.root, |node, part| node.child(part))
    }
}

fn encode_node(
    node: &Node,
    structure: &mut Vec<u8>,
    strings: &mut Vec<u8>,
    names: &mut Vec<(String, u32)>,
) {
    structure.extend_from_slice(&BEGIN_NODE.to_be_bytes());
    structure.extend_from_slice(node.name.as_bytes());
    structure.push(0);
    structure.resize(align4(structure.len()), 0);
    for (name, value) in &node.properties {
        let offset = match names.iter().find(|(n, _)| n == name) {
            Some(&(_, offset)) => offset,
            None => {
                let offset = strings.len() as u32;
                strings.extend_from_slice(name.as_bytes());
                strings.push(0);
                names.push((name.clone(), offset));
                offset
            }
        };
        structure.extend_from_slice(&PROP.to_be_bytes());
        structure.extend_from_slice(&(value.len() as u32).to_be_bytes());
        structure.extend_from_slice(&offset.to_be_bytes());
        structure.extend_from_slice(value);
        structure.resize(align4(structure.len()), 0);
    }
    for child in &node.children {
        encode_node(child, structure, strings, names);
    }
    structure.extend_from_slice(&END_NODE.to_be_bytes());
}

/// What the Pi 4 firmware (start4.elf) writes into the tree it loads
/// before it starts the kernel. The defaults describe a 4 GB Pi 4 Model B
/// with the default `gpu_mem=76`; the values the firmware computes at run
/// time (where it copies the boot loader's configuration, the boot-loader
/// properties) are illustrative, of the documented form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirmwarePatches {
    /// `/memory@0` `reg`: `(start, size)` pairs, in the root's two
    /// address cells and one size cell.
    pub memory: Vec<(u64, u32)>,
    /// `cmdline.txt`, which the firmware appends to words of its own in
    /// `/chosen/bootargs`.
    pub cmdline: String,
    /// `/reserved-memory/nvram@0` (`blconfig`): where the firmware copied
    /// the boot loader's EEPROM configuration, `(start, size)`.
    pub blconfig: (u64, u32),
}

impl Default for FirmwarePatches {
    fn default() -> Self {
        FirmwarePatches {
            // The low GiB up to the VideoCore's 76 MiB, then the rest of
            // the first 4 GiB up to the peripherals (low-peripheral mode).
            memory: Vec::from([(0, 0x3b40_0000), (0x4000_0000, 0xbc00_0000)]),
            cmdline: "portcullis.mode=test".to_string(),
            // Not page aligned, and smaller than a page: a config file.
            blconfig: (0x2eff_7c00, 0x5a4),
        }
    }
}

/// Words of the kind the firmware puts before `cmdline.txt` on a Pi 4:
/// options of its own for Linux's drivers (the same as `boards`' test of
/// a long command line).
pub const FIRMWARE_BOOTARGS: &str = "coherent_pool=1M 8250.nr_uarts=1 \
    snd_bcm2835.enable_compat_alsa=0 snd_bcm2835.enable_hdmi=1 bcm2708_fb.fbwidth=1920 \
    bcm2708_fb.fbheight=1080 bcm2708_fb.fbswap=1 smsc95xx.macaddr=DC:A6:32:00:00:00 \
    vc_mem.mem_base=0x3eb00000 vc_mem.mem_size=0x3ff00000 console=ttyS0,115200 console=tty1";

impl FirmwarePatches {
    /// Applies the changes the Raspberry Pi documentation says the
    /// firmware makes (*Device Trees, overlays, and parameters*: "Firmware
    /// parameters" for `/chosen`, "NVMEM nodes" for `blconfig`; the memory
    /// node as raspberrypi/firmware issue 1191 shows it for a 4 GB board)
    /// to `base`, a tree as it is on the SD card. Debian's and upstream
    /// Linux's trees carry the `nvram@0` template (disabled, `reg` empty,
    /// `no-map`) that the firmware fills in.
    pub fn apply(&self, base: &[u8]) -> Vec<u8> {
        let mut tree = Tree::decode(base);
        let mut reg = Vec::new();
        for &(start, size) in &self.memory {
            reg.extend_from_slice(&cells(&[(start >> 32) as u32, start as u32, size]));
        }
        tree.node("/memory@0").set("reg", reg);
        let chosen = tree.node("/chosen");
        chosen
            .set(
                "bootargs",
                string(&alloc::format!("{FIRMWARE_BOOTARGS} {}", self.cmdline)),
            )
            .set("rpi-boardrev-ext", cells(&[0]))
            .set("os_prefix", string(""))
            .set("overlay_prefix", string("overlays/"));
        chosen
            .child("bootloader")
            .set("boot-mode", cells(&[1]))
            .set("partition", cells(&[0]))
            .set("pm_rsts", cells(&[0x1000]))
            .set("tryboot", cells(&[0]))
            .set("capabilities", cells(&[0x7f]))
            .set(
                "version",
                string("c2f8c388c4ee37ad709ace403467d163e8dd91ce"),
            );
        let (start, size) = self.blconfig;
        tree.node("/reserved-memory/nvram@0")
            .set("reg", cells(&[(start >> 32) as u32, start as u32, size]))
            .set("status", string("okay"));
        tree.encode()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RPI4: &[u8] = include_bytes!("../../tests/fixtures/bcm2711-rpi-4-b.dtb");

    #[test]
    fn a_decoded_tree_encodes_to_one_that_decodes_the_same() {
        let tree = Tree::decode(RPI4);
        assert_eq!(tree.reservations, [(0, 0x1000)]);
        let again = Tree::decode(&tree.encode());
        assert_eq!(again, tree);
    }

    #[test]
    fn the_firmware_fills_in_the_nodes_it_owns() {
        let mut tree = Tree::decode(&FirmwarePatches::default().apply(RPI4));
        let nvram = tree.node("/reserved-memory/nvram@0");
        assert_eq!(nvram.get("status"), Some(string("okay").as_slice()));
        assert!(nvram.get("no-map").is_some(), "Debian's tree says no-map");
        let bootargs = tree.node("/chosen").get("bootargs").unwrap().to_vec();
        assert!(bootargs.ends_with(b" portcullis.mode=test\0"));
    }
}
