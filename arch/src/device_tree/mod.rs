//! Reading the board description from the flattened device tree.
//!
//! The loader passes the device tree's address in `x0`. Everything the
//! kernel needs (RAM, UART, GIC, PSCI, the command line) is read from it;
//! what is missing falls back to the board's documented defaults.
//!
//! RAM the firmware keeps for itself is named two ways, and both are
//! honoured: `/memreserve/` entries, and the `reg` ranges of the enabled
//! children of `/reserved-memory` (the Pi firmware fills in `nvram@0`
//! with a copy of its boot loader's configuration, `no-map`). Neither is
//! handed out; `no-map` ranges are also left out of the linear map.
//! Regions the OS would allocate itself (`size` without `reg`, such as
//! `linux,cma`) reserve nothing: Portcullis makes no such pool.
//!
//! Device addresses under `/soc` on the Raspberry Pi are VideoCore bus
//! addresses (0x7e20_1000 for the UART); the `/soc` node's `ranges`
//! translate them to CPU physical addresses (0xfe20_1000). The `fdt` crate
//! does not translate, so `SocRanges` does.

use crate::boards::{Board, BoardInfo, CpuEntry, CpuStart, PhysRange, PsciConduit, MAX_CPUS};
use fdt::node::FdtNode;
use fdt::Fdt;

mod structure;
#[cfg(any(test, feature = "fdt-writer"))]
pub mod writer;

pub use structure::remove_nops;

/// Why a device tree could not be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceTreeError {
    /// The blob does not start with the FDT magic or is malformed.
    NotADeviceTree,
    /// The tree describes a GICv3, which this kernel does not drive.
    UnsupportedGicV3,
    /// The tree names neither a QEMU virt nor a Raspberry Pi 4.
    UnknownBoard,
    /// The tree reserves more ranges than the kernel can keep
    /// ([`crate::boards::MAX_RESERVED_RANGES`]): dropping one would hand
    /// out memory the firmware keeps.
    TooManyReservedRanges,
}

impl DeviceTreeError {
    /// A sentence for the boot log.
    pub const fn describe(self) -> &'static str {
        match self {
            DeviceTreeError::NotADeviceTree => "no valid device tree",
            DeviceTreeError::UnsupportedGicV3 => {
                "the device tree describes a GICv3; Portcullis drives GICv2/GIC-400 (use -M virt,gic-version=2)"
            }
            DeviceTreeError::UnknownBoard => "the device tree names an unknown board",
            DeviceTreeError::TooManyReservedRanges => {
                "the device tree reserves more RAM ranges than the kernel keeps track of"
            }
        }
    }

    /// Whether booting on without the tree is worse than stopping: the
    /// tree describes this machine, and the defaults would contradict it.
    pub const fn is_fatal(self) -> bool {
        matches!(self, DeviceTreeError::TooManyReservedRanges)
    }
}

/// The FDT header magic, big endian.
pub const FDT_MAGIC: u32 = 0xd00d_feed;

/// Reads `totalsize` from an FDT header, if `header` starts with one.
pub fn total_size(header: &[u8]) -> Option<usize> {
    let magic = u32::from_be_bytes(header.get(0..4)?.try_into().ok()?);
    if magic != FDT_MAGIC {
        return None;
    }
    let size = u32::from_be_bytes(header.get(4..8)?.try_into().ok()?);
    Some(size as usize)
}

/// Parses a device tree into the board description, using `scratch` (at
/// least as large as the tree) for a NOP-free copy (see `remove_nops`).
pub fn parse(blob: &[u8], scratch: &mut [u8]) -> Result<BoardInfo, DeviceTreeError> {
    let length = remove_nops(blob, scratch)?;
    parse_compact(&scratch[..length])
}

fn parse_compact(blob: &[u8]) -> Result<BoardInfo, DeviceTreeError> {
    let fdt = Fdt::new(blob).map_err(|_| DeviceTreeError::NotADeviceTree)?;
    let board = identify(&fdt).ok_or(DeviceTreeError::UnknownBoard)?;
    let mut info = board.defaults();
    info.from_device_tree = true;

    let ram = read_ram(&fdt);
    if !ram.is_empty() {
        info.ram = ram;
    }
    for reservation in fdt.memory_reservations() {
        let range = PhysRange {
            start: reservation.address() as u64,
            size: reservation.size() as u64,
        };
        keep(&mut info.reserved, range)?;
    }
    read_reserved_memory(&fdt, &mut info)?;

    let soc = SocRanges::read(&fdt);
    if let Some(uart) = find_enabled(&fdt, &["arm,pl011"]) {
        if let Some(base) = first_reg(&uart).and_then(|a| soc.translate(a)) {
            info.uart = base;
        }
    }
    if find_enabled(&fdt, &["arm,gic-v3"]).is_some() {
        return Err(DeviceTreeError::UnsupportedGicV3);
    }
    if let Some(gpio) = find_enabled(&fdt, &["brcm,bcm2711-gpio", "brcm,bcm2835-gpio"]) {
        info.gpio = first_reg(&gpio).and_then(|a| soc.translate(a));
    }
    if let Some(gic) = find_enabled(&fdt, &["arm,gic-400", "arm,cortex-a15-gic"]) {
        let mut regs = gic.reg().into_iter().flatten();
        let distributor = regs.next().map(|r| r.starting_address as u64);
        let cpu_interface = regs.next().map(|r| r.starting_address as u64);
        if let Some(base) = distributor.and_then(|a| soc.translate(a)) {
            info.gic_distributor = base;
        }
        if let Some(base) = cpu_interface.and_then(|a| soc.translate(a)) {
            info.gic_cpu_interface = base;
        }
    }
    info.initrd = read_initrd(&fdt);
    info.psci = fdt
        .find_node("/psci")
        .filter(is_enabled)
        .and_then(|psci| psci.property("method"))
        .and_then(|m| m.as_str())
        .and_then(|m| match m {
            "hvc" => Some(PsciConduit::Hvc),
            "smc" => Some(PsciConduit::Smc),
            _ => None,
        });
    let cpus = read_cpus(&fdt);
    if !cpus.is_empty() {
        info.cpus = cpus;
    }
    if let Some(args) = fdt
        .find_node("/chosen")
        .and_then(|c| c.property("bootargs"))
        .and_then(|p| p.as_str())
    {
        info.bootargs.clear();
        // Only the kernel's own words are kept: the Pi firmware puts ~200
        // characters of its own before cmdline.txt, which must not push
        // `portcullis.mode=` out. What is still too long is cut at a word.
        for word in args
            .split_ascii_whitespace()
            .filter(|word| word.starts_with("portcullis."))
        {
            let needed = word.len() + usize::from(!info.bootargs.is_empty());
            if info.bootargs.len() + needed > info.bootargs.capacity() {
                break;
            }
            if !info.bootargs.is_empty() {
                let _ = info.bootargs.push(' ');
            }
            let _ = info.bootargs.push_str(word);
        }
    }
    Ok(info)
}

/// The range `/chosen`'s `linux,initrd-start` and `linux,initrd-end`
/// name (each one or two cells, as QEMU and the Pi firmware write them),
/// if both are there and the range is not empty.
fn read_initrd(fdt: &Fdt<'_>) -> Option<PhysRange> {
    let chosen = fdt.find_node("/chosen")?;
    let address = |name: &str| {
        let value = chosen.property(name)?.value;
        match value.len() {
            4 | 8 => Some(
                value
                    .chunks_exact(4)
                    .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                    .fold(0u64, |acc, cell| (acc << 32) | u64::from(cell)),
            ),
            _ => None,
        }
    };
    let start = address("linux,initrd-start")?;
    let end = address("linux,initrd-end")?;
    (end > start).then(|| PhysRange {
        start,
        size: end - start,
    })
}

fn identify(fdt: &Fdt<'_>) -> Option<Board> {
    // `Fdt::root` and `Root::compatible` unwrap; a tree without them is
    // an unknown board, not a panic.
    let compatible = fdt.find_node("/")?.compatible()?;
    let mut names = compatible.all();
    names.find_map(|name| match name {
        "linux,dummy-virt" => Some(Board::QemuVirt),
        "raspberrypi,4-model-b" | "brcm,bcm2711" => Some(Board::RaspberryPi4),
        _ => None,
    })
}

fn read_ram(fdt: &Fdt<'_>) -> heapless::Vec<PhysRange, { crate::boards::MAX_RAM_RANGES }> {
    let mut ram = heapless::Vec::new();
    let Some(root) = fdt.find_node("/") else {
        return ram;
    };
    for node in root.children() {
        let is_memory = node
            .property("device_type")
            .and_then(|p| p.as_str())
            .is_some_and(|t| t == "memory");
        if !is_memory {
            continue;
        }
        for region in node.reg().into_iter().flatten() {
            let size = region.size.unwrap_or(0) as u64;
            if size > 0 {
                let _ = ram.push(PhysRange {
                    start: region.starting_address as u64,
                    size,
                });
            }
        }
    }
    ram.sort_unstable_by_key(|r| r.start);
    ram
}

/// The enabled `cpu` nodes under `/cpus`, the first [`MAX_CPUS`] of
/// them: each one's MPIDR affinity (`reg`, in `/cpus`' address cells; its
/// size cells are 0) and how it is started (`enable-method`, and for a
/// spin table `cpu-release-addr`, one or two cells).
fn read_cpus(fdt: &Fdt<'_>) -> heapless::Vec<CpuEntry, MAX_CPUS> {
    let mut cpus = heapless::Vec::new();
    let Some(node) = fdt.find_node("/cpus") else {
        return cpus;
    };
    let address_cells = node
        .property("#address-cells")
        .and_then(|p| p.as_usize())
        .unwrap_or(1);
    for cpu in node.children().filter(is_enabled) {
        let is_cpu = cpu
            .property("device_type")
            .and_then(|p| p.as_str())
            .is_some_and(|t| t == "cpu");
        let Some(reg) = cpu.property("reg").map(|p| p.value) else {
            continue;
        };
        if !is_cpu || address_cells == 0 || reg.len() < 4 * address_cells {
            continue;
        }
        let mpidr = cells_to_u64(&be_cells(&reg[..4 * address_cells]));
        let release_address = cpu
            .property("cpu-release-addr")
            .map(|p| p.value)
            .filter(|v| v.len() == 4 || v.len() == 8)
            .map(|v| cells_to_u64(&be_cells(v)));
        let method = cpu.property("enable-method").and_then(|p| p.as_str());
        let start = match (method, release_address) {
            (Some("psci"), _) => CpuStart::Psci,
            (Some("spin-table"), Some(release_address)) => CpuStart::SpinTable { release_address },
            _ => CpuStart::Unknown,
        };
        if cpus.push(CpuEntry { mpidr, start }).is_err() {
            break;
        }
    }
    cpus
}

/// Big-endian 32-bit cells (at most 4: an address of two or a `reg`).
fn be_cells(bytes: &[u8]) -> heapless::Vec<u32, 4> {
    bytes
        .chunks_exact(4)
        .take(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The `reg` ranges of the enabled children of `/reserved-memory`, into
/// `info.reserved`, and those of `no-map` ones into `info.no_map` too.
/// Their `reg` is in `/reserved-memory`'s own cells (its `ranges` is
/// empty: an identity mapping, as the binding requires).
fn read_reserved_memory(fdt: &Fdt<'_>, info: &mut BoardInfo) -> Result<(), DeviceTreeError> {
    let Some(reserved_memory) = fdt.find_node("/reserved-memory") else {
        return Ok(());
    };
    for node in reserved_memory.children().filter(is_enabled) {
        let no_map = node.property("no-map").is_some();
        for region in node.reg().into_iter().flatten() {
            let range = PhysRange {
                start: region.starting_address as u64,
                size: region.size.unwrap_or(0) as u64,
            };
            if range.size == 0 {
                continue;
            }
            keep(&mut info.reserved, range)?;
            if no_map {
                keep(&mut info.no_map, range)?;
            }
        }
    }
    Ok(())
}

/// Adds `range` to a list of reserved ranges, once (the board's defaults
/// already name the Pi's spin-table page, which its `/memreserve/` names
/// again); a full list refuses the tree.
fn keep(
    list: &mut heapless::Vec<PhysRange, { crate::boards::MAX_RESERVED_RANGES }>,
    range: PhysRange,
) -> Result<(), DeviceTreeError> {
    if list.contains(&range) {
        return Ok(());
    }
    list.push(range)
        .map_err(|_| DeviceTreeError::TooManyReservedRanges)
}

/// A node whose status is not "disabled" (absent means enabled).
fn is_enabled(node: &FdtNode<'_, '_>) -> bool {
    node.property("status")
        .and_then(|p| p.as_str())
        .is_none_or(|s| s == "okay" || s == "ok")
}

/// The first node compatible with one of `names` whose status is not
/// "disabled" (the Pi 4 tree lists five PL011s, only UART0 enabled).
fn find_enabled<'b, 'a>(fdt: &'b Fdt<'a>, names: &[&str]) -> Option<FdtNode<'b, 'a>> {
    fdt.all_nodes().find(|node| {
        let compatible = node
            .compatible()
            .is_some_and(|c| c.all().any(|n| names.contains(&n)));
        compatible && is_enabled(node)
    })
}

fn first_reg(node: &FdtNode<'_, '_>) -> Option<u64> {
    node.reg()?.next().map(|r| r.starting_address as u64)
}

/// The address translation of the `/soc` bus, if the tree has one.
struct SocRanges {
    entries: heapless::Vec<(u64, u64, u64), 8>,
}

impl SocRanges {
    fn read(fdt: &Fdt<'_>) -> Self {
        let mut entries = heapless::Vec::new();
        let Some(soc) = fdt.find_node("/soc") else {
            return SocRanges { entries };
        };
        let child = soc.cell_sizes();
        let parent_address_cells = fdt.root().cell_sizes().address_cells;
        let Some(ranges) = soc.property("ranges") else {
            return SocRanges { entries };
        };
        let cells: heapless::Vec<u32, 64> = ranges
            .value
            .chunks_exact(4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .take(64)
            .collect();
        let stride = child.address_cells + parent_address_cells + child.size_cells;
        if stride == 0 {
            return SocRanges { entries };
        }
        for entry in cells.chunks_exact(stride) {
            let (child_addr, rest) = entry.split_at(child.address_cells);
            let (parent_addr, size) = rest.split_at(parent_address_cells);
            let _ = entries.push((
                cells_to_u64(child_addr),
                cells_to_u64(parent_addr),
                cells_to_u64(size),
            ));
        }
        SocRanges { entries }
    }

    /// Translates a bus address; addresses outside every range (for
    /// example devices at the root of QEMU virt's tree) pass through.
    fn translate(&self, address: u64) -> Option<u64> {
        if self.entries.is_empty() {
            return Some(address);
        }
        for &(child, parent, size) in &self.entries {
            if address >= child && address - child < size {
                return Some(parent + (address - child));
            }
        }
        Some(address)
    }
}

fn cells_to_u64(cells: &[u32]) -> u64 {
    cells.iter().fold(0, |acc, &c| (acc << 32) | u64::from(c))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const VIRT_V2: &[u8] = include_bytes!("../../tests/fixtures/virt-gicv2.dtb");

    pub(super) fn parse(blob: &[u8]) -> Result<BoardInfo, DeviceTreeError> {
        let mut scratch = vec![0u8; 256 * 1024];
        super::parse(blob, &mut scratch)
    }
    const VIRT_V3: &[u8] = include_bytes!("../../tests/fixtures/virt-gicv3.dtb");

    #[test]
    fn reads_qemu_virt() {
        let info = parse(VIRT_V2).expect("valid tree");
        assert_eq!(info.board, Board::QemuVirt);
        assert_eq!(info.uart, 0x0900_0000);
        assert_eq!(info.gic_distributor, 0x0800_0000);
        assert_eq!(info.gic_cpu_interface, 0x0801_0000);
        assert_eq!(
            info.ram.as_slice(),
            &[PhysRange {
                start: 0x4000_0000,
                size: 1 << 30
            }]
        );
        assert_eq!(info.psci, Some(PsciConduit::Hvc));
        assert_eq!(info.boot_option("portcullis.mode"), Some("test"));
        assert!(info.from_device_tree);
        assert_eq!(info.gpio, None);
        assert_eq!(info.initrd, None, "no -initrd");
    }

    /// QEMU's `-M virt,gic-version=2 -cpu cortex-a72 -smp 4` tree
    /// (`dumpdtb`, cut to its content).
    const VIRT_V2_SMP4: &[u8] = include_bytes!("../../tests/fixtures/virt-gicv2-smp4.dtb");

    #[test]
    fn qemu_virts_cores_are_started_through_psci() {
        let info = parse(VIRT_V2_SMP4).expect("valid tree");
        assert_eq!(info.psci, Some(PsciConduit::Hvc));
        let expected: Vec<CpuEntry> = (0..4)
            .map(|mpidr| CpuEntry {
                mpidr,
                start: CpuStart::Psci,
            })
            .collect();
        assert_eq!(info.cpus.as_slice(), expected.as_slice());
        // One core in the older fixture (-smp 1); one without a tree.
        assert_eq!(parse(VIRT_V2).expect("valid tree").cpus.len(), 1);
        assert_eq!(Board::QemuVirt.defaults().cpus.len(), 1);
    }

    #[test]
    fn padded_trees_need_room_for_their_content_only() {
        let mut padded = VIRT_V2.to_vec();
        padded.resize(1 << 20, 0);
        padded[4..8].copy_from_slice(&(1u32 << 20).to_be_bytes());
        let mut scratch = vec![0u8; 64 * 1024];
        let info = super::parse(&padded, &mut scratch).expect("content fits");
        assert_eq!(info.board, Board::QemuVirt);
    }

    #[test]
    fn refuses_gicv3() {
        assert_eq!(parse(VIRT_V3), Err(DeviceTreeError::UnsupportedGicV3));
    }

    #[test]
    fn rejects_garbage() {
        assert_eq!(parse(&[0u8; 64]), Err(DeviceTreeError::NotADeviceTree));
        assert_eq!(
            total_size(&[0xd0, 0x0d, 0xfe, 0xed, 0, 0, 0x10, 0]),
            Some(0x1000)
        );
        assert_eq!(total_size(&[1, 2, 3]), None);
    }

    #[test]
    fn translates_soc_bus_addresses() {
        let soc = SocRanges {
            entries: heapless::Vec::from_slice(&[
                (0x7e00_0000, 0xfe00_0000, 0x180_0000),
                (0x4000_0000, 0xff80_0000, 0x80_0000),
            ])
            .unwrap(),
        };
        assert_eq!(soc.translate(0x7e20_1000), Some(0xfe20_1000));
        assert_eq!(soc.translate(0x4004_1000), Some(0xff84_1000));
        assert_eq!(soc.translate(0x0900_0000), Some(0x0900_0000));
    }
}

#[cfg(test)]
mod raspberry_pi_tests {
    use super::tests::parse;
    use super::writer::{cells, string, FirmwarePatches, Tree};
    use super::*;

    /// Debian's bcm2711-rpi-4-b.dtb (the one that goes on the SD card).
    const RPI4: &[u8] = include_bytes!("../../tests/fixtures/bcm2711-rpi-4-b.dtb");

    #[test]
    fn reads_raspberry_pi_4() {
        let info = parse(RPI4).expect("valid tree");
        assert_eq!(info.board, Board::RaspberryPi4);
        assert_eq!(info.uart, 0xfe20_1000, "UART0 through the /soc ranges");
        assert_eq!(info.gic_distributor, 0xff84_1000);
        assert_eq!(info.gic_cpu_interface, 0xff84_2000);
        assert_eq!(info.gpio, Some(0xfe20_0000));
        assert_eq!(info.psci, None);
        assert!(info.ram_bytes() > 0);
    }

    #[test]
    fn the_pi_4s_cores_wait_on_the_spin_table() {
        let info = parse(RPI4).expect("valid tree");
        let expected: Vec<CpuEntry> = (0..4)
            .map(|n| CpuEntry {
                mpidr: n,
                start: CpuStart::SpinTable {
                    release_address: 0xd8 + 8 * n,
                },
            })
            .collect();
        assert_eq!(info.cpus.as_slice(), expected.as_slice());
        // The board's defaults, for a boot without a tree, say the same.
        assert_eq!(Board::RaspberryPi4.defaults().cpus, info.cpus);
    }

    #[test]
    fn cores_past_the_limit_disabled_ones_and_unknown_methods() {
        let mut tree = Tree::decode(RPI4);
        tree.node("/cpus/cpu@1").set("status", string("disabled"));
        tree.node("/cpus/cpu@2")
            .set("enable-method", string("brcm,bcm2836-smp"));
        tree.node("/cpus/cpu@3")
            .set("cpu-release-addr", cells(&[0x1, 0x10]));
        for n in 4..7u32 {
            tree.node(&format!("/cpus/cpu@{n}"))
                .set("device_type", string("cpu"))
                .set("reg", cells(&[n]))
                .set("enable-method", string("psci"));
        }
        let info = parse(&tree.encode()).expect("valid tree");
        let mpidrs: Vec<u64> = info.cpus.iter().map(|c| c.mpidr).collect();
        assert_eq!(mpidrs, [0, 2, 3, 4], "cpu@1 is disabled; only four kept");
        assert_eq!(info.cpus[1].start, CpuStart::Unknown);
        assert_eq!(
            info.cpus[2].start,
            CpuStart::SpinTable {
                release_address: 0x1_0000_0010
            },
            "a two-cell release address"
        );
        assert_eq!(info.cpus[3].start, CpuStart::Psci);
        // A spin table without its address cannot be used.
        let mut tree = Tree::decode(RPI4);
        tree.node("/cpus/cpu@1")
            .properties
            .retain(|(name, _)| name != "cpu-release-addr");
        let info = parse(&tree.encode()).expect("valid tree");
        assert_eq!(info.cpus[1].start, CpuStart::Unknown);
    }

    #[test]
    fn psci_is_called_the_way_its_node_says() {
        let with = |method: &str| {
            let mut tree = Tree::decode(RPI4);
            tree.node("/psci")
                .set("compatible", string("arm,psci-1.0"))
                .set("method", string(method));
            parse(&tree.encode()).expect("valid tree").psci
        };
        assert_eq!(with("smc"), Some(PsciConduit::Smc));
        assert_eq!(with("hvc"), Some(PsciConduit::Hvc));
        assert_eq!(with("call"), None);
    }

    fn range(start: u64, size: u64) -> PhysRange {
        PhysRange { start, size }
    }

    #[test]
    fn the_trees_templates_reserve_only_the_spin_table_page() {
        // As on the SD card: `nvram@0` disabled with an empty `reg`,
        // `linux,cma` a size for the OS to place: neither reserves RAM.
        let info = parse(RPI4).expect("valid tree");
        assert_eq!(info.reserved.as_slice(), &[range(0, 0x1000)]);
        assert!(info.no_map.is_empty());
    }

    #[test]
    fn a_tree_shaped_like_the_firmwares_is_read_with_its_reservations() {
        let patches = FirmwarePatches::default();
        let info = parse(&patches.apply(RPI4)).expect("valid tree");
        assert_eq!(info.board, Board::RaspberryPi4);
        assert_eq!(info.uart, 0xfe20_1000);
        assert_eq!(
            info.ram.as_slice(),
            &[range(0, 0x3b40_0000), range(0x4000_0000, 0xbc00_0000)],
            "a 4 GB board, as the firmware describes it"
        );
        // cmdline.txt's word survives the firmware's ~300 characters.
        assert_eq!(info.boot_option("portcullis.mode"), Some("test"));
        let blconfig = range(0x2eff_7c00, 0x5a4);
        assert_eq!(info.reserved.as_slice(), &[range(0, 0x1000), blconfig]);
        assert_eq!(info.no_map.as_slice(), &[blconfig]);
        // The two pages the boot loader's configuration touches (it
        // crosses a page boundary) are neither mapped nor handed out; the
        // rest of that RAM is.
        let mapped = info.ram[0].without(&info.no_map);
        assert_eq!(
            mapped.as_slice(),
            &[
                range(0, 0x2eff_7000),
                range(0x2eff_9000, 0x3b40_0000 - 0x2eff_9000)
            ]
        );
    }

    #[test]
    fn more_reserved_ranges_than_the_kernel_keeps_are_refused() {
        let mut tree = Tree::decode(RPI4);
        for i in 0..crate::boards::MAX_RESERVED_RANGES as u32 {
            tree.node(&format!("/reserved-memory/region@{i:x}"))
                .set("reg", cells(&[0, 0x1000_0000 + i * 0x1000, 0x1000]));
        }
        // With the /memreserve/ entry, one too many.
        let error = parse(&tree.encode()).unwrap_err();
        assert_eq!(error, DeviceTreeError::TooManyReservedRanges);
        assert!(error.is_fatal());
        assert!(!DeviceTreeError::NotADeviceTree.is_fatal());
    }

    #[test]
    fn the_initrd_is_read_from_chosen_in_one_or_two_cells() {
        let with = |start: Vec<u8>, end: Vec<u8>| {
            let mut tree = Tree::decode(RPI4);
            tree.node("/chosen")
                .set("linux,initrd-start", start)
                .set("linux,initrd-end", end);
            parse(&tree.encode()).expect("valid tree").initrd
        };
        // The Pi firmware writes one cell each.
        assert_eq!(
            with(cells(&[0x0200_0000]), cells(&[0x0201_2345])),
            Some(range(0x0200_0000, 0x1_2345))
        );
        // QEMU writes two when the address needs them (or always).
        assert_eq!(
            with(cells(&[0x1, 0x0000_0000]), cells(&[0x1, 0x0010_0000])),
            Some(range(0x1_0000_0000, 0x10_0000))
        );
        assert_eq!(
            with(cells(&[0, 0x4800_0000]), cells(&[0x4800_1000])),
            Some(range(0x4800_0000, 0x1000)),
            "each property has its own width"
        );
        // Empty, backwards or malformed: no initrd.
        assert_eq!(with(cells(&[0x1000]), cells(&[0x1000])), None);
        assert_eq!(with(cells(&[0x2000]), cells(&[0x1000])), None);
        assert_eq!(with(vec![0; 3], cells(&[0x1000])), None);
        assert_eq!(with(cells(&[0, 0, 0x1000]), cells(&[0x2000])), None);
        // Only one of the two: none either.
        let mut tree = Tree::decode(RPI4);
        tree.node("/chosen")
            .set("linux,initrd-start", cells(&[0x0200_0000]));
        assert_eq!(parse(&tree.encode()).expect("valid tree").initrd, None);
        assert_eq!(parse(RPI4).expect("valid tree").initrd, None);
    }

    #[test]
    fn a_disabled_reserved_region_reserves_nothing_and_no_map_is_per_node() {
        let mut tree = Tree::decode(RPI4);
        tree.node("/reserved-memory/kept@20000000")
            .set("reg", cells(&[0, 0x2000_0000, 0x10_0000]));
        tree.node("/reserved-memory/off@21000000")
            .set("reg", cells(&[0, 0x2100_0000, 0x10_0000]))
            .set("no-map", Vec::new())
            .set("status", string("disabled"));
        let info = parse(&tree.encode()).expect("valid tree");
        assert_eq!(
            info.reserved.as_slice(),
            &[range(0, 0x1000), range(0x2000_0000, 0x10_0000)]
        );
        assert!(
            info.no_map.is_empty(),
            "kept@ is mapped, only not handed out"
        );
    }
}

#[cfg(test)]
mod raspi4b_qemu_tests {
    use super::tests::parse;
    use super::*;

    #[test]
    fn nops_are_removed_and_the_tree_shrinks() {
        let mut out = vec![0u8; 256 * 1024];
        let length = remove_nops(RASPI4B_QEMU, &mut out).expect("valid");
        assert!(length < RASPI4B_QEMU.len());
        assert_eq!(total_size(&out), Some(length));
        // Removing NOPs again changes nothing.
        let mut again = vec![0u8; 256 * 1024];
        assert_eq!(remove_nops(&out[..length], &mut again), Ok(length));
        assert_eq!(out[..length], again[..length]);
    }

    #[test]
    fn truncated_trees_are_refused_not_panicked_on() {
        let mut out = vec![0u8; 256 * 1024];
        for cut in [
            0,
            8,
            40,
            100,
            RASPI4B_QEMU.len() / 2,
            RASPI4B_QEMU.len() - 1,
        ] {
            assert!(remove_nops(&RASPI4B_QEMU[..cut], &mut out).is_err());
        }
        let mut small = [0u8; 64];
        assert!(remove_nops(RASPI4B_QEMU, &mut small).is_err());
    }

    /// The same tree as QEMU `-M raspi4b -dtb ... -append ...` passes it
    /// (memory, bootargs and disabled nodes rewritten by QEMU).
    const RASPI4B_QEMU: &[u8] = include_bytes!("../../tests/fixtures/raspi4b-qemu.dtb");

    #[test]
    fn reads_qemu_raspi4b() {
        let info = parse(RASPI4B_QEMU).expect("valid tree");
        assert_eq!(info.board, Board::RaspberryPi4);
        assert_eq!(info.uart, 0xfe20_1000);
        assert_eq!(info.boot_option("portcullis.mode"), Some("test"));
        assert_eq!(
            info.ram_bytes(),
            0x3c00_0000,
            "QEMU describes the low 960 MiB"
        );
    }
}
