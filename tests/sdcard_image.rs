//! The Raspberry Pi 4 SD card image: `scripts/sdcard.sh` writes it, and
//! these tests read it back the way the Pi reads a card: the MBR, the FAT32
//! partition at 1 MiB, then the files the firmware loads (through mtools,
//! so no mount and no root are needed).
//!
//! The image is built once per run from the `kernel8.img` this test binary
//! was built with and the device tree the QEMU raspi4b tests boot, with
//! `--offline`: `./qemu-run.sh test` installs mtools and dosfstools and
//! fetches the firmware before `cargo test`, so nothing here needs the
//! network. A missing tool or file fails the test with what to run. A
//! second card, built with `--system-image`, checks how a system image
//! gets on the card and into config.txt.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use portcullis::artifacts::{self, RPI4_DTB_FILE_NAME};

const SECTOR: usize = 512;
/// The partition starts at 1 MiB, where SD cards like their first
/// allocation unit to begin.
const PARTITION_START_SECTOR: u32 = 2048;
/// The image as mtools names the FAT inside it: `image@@offset`.
const FAT_OFFSET_SUFFIX: &str = "@@1M";
/// MBR partition type: FAT32 addressed by LBA.
const FAT32_LBA: u8 = 0x0c;
/// Fewer clusters than this and readers take a FAT for FAT16.
const FAT32_MIN_CLUSTERS: u64 = 65_525;

/// Everything on the card, and nothing else.
const CARD_FILES: [&str; 7] = [
    "start4.elf",
    "fixup4.dat",
    RPI4_DTB_FILE_NAME,
    "kernel8.img",
    "config.txt",
    "cmdline.txt",
    "firmware-copyright.txt",
];

/// Settings the kernel needs, each as the firmware must end up reading it
/// (`kernel_address` is checked against the kernel's header separately).
const REQUIRED_CONFIG: [(&str, &str); 7] = [
    ("arm_64bit", "1"),
    ("kernel", "kernel8.img"),
    ("enable_uart", "1"),
    ("gpio", "14,15=a0"),
    ("enable_gic", "1"),
    ("init_uart_clock", "48000000"),
    ("disable_overscan", "1"),
];

/// Where the arm64 Image header keeps its magic, "ARM\x64".
const IMAGE_MAGIC_OFFSET: usize = 56;
const IMAGE_MAGIC: &[u8; 4] = b"ARM\x64";

const SET_UP_HINT: &str = "run `./qemu-run.sh test`, which installs mtools and dosfstools and fetches the Pi firmware before running the tests";

/// The card image, built on first use (the tests of this file share it).
fn card() -> &'static Path {
    static CARD: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match CARD.get_or_init(|| build_card("portcullis-rpi4.img", None)) {
        Ok(path) => path,
        Err(message) => panic!("{message}"),
    }
}

/// A tiny valid system image (`abi::system::image`), as a file.
fn system_image_file() -> PathBuf {
    use abi::system::image::{checksum, ImageHeader, HEADER_BYTES};
    let body = b"a plan would be here".repeat(10);
    let header = ImageHeader {
        total_bytes: (HEADER_BYTES + body.len()) as u64,
        plan_offset: HEADER_BYTES as u64,
        plan_bytes: body.len() as u64,
        checksum: checksum(&body),
    };
    let mut image = header.encode().to_vec();
    image.extend_from_slice(&body);
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sdcard/system.img");
    fs::create_dir_all(path.parent().expect("a folder")).expect("make the folder");
    fs::write(&path, image).expect("write the system image");
    path
}

/// A card built with `--system-image` ([`system_image_file`]).
fn card_with_system_image() -> &'static Path {
    static CARD: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let card =
        CARD.get_or_init(|| build_card("portcullis-rpi4-system.img", Some(&system_image_file())));
    match card {
        Ok(path) => path,
        Err(message) => panic!("{message}"),
    }
}

fn build_card(name: &str, system_image: Option<&Path>) -> Result<PathBuf, String> {
    require_mtools()?;
    let kernel = artifacts::kernel_image().map_err(|e| e.to_string())?;
    let dtb = qemu_dtb()?;
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("sdcard")
        .join(name);
    let script = artifacts::workspace_root().join("scripts/sdcard.sh");
    let mut command = Command::new("bash");
    if let Some(image) = system_image {
        command.arg(&script).arg("--system-image").arg(image);
    } else {
        command.arg(&script);
    }
    let output = command
        .arg("--offline")
        .arg("--kernel")
        .arg(&kernel)
        .arg("--dtb")
        .arg(&dtb)
        .arg("--out")
        .arg(&out)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed ({}); {SET_UP_HINT}\n{}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(out)
}

/// mtools is the only way these tests read the FAT: a missing copy is a
/// set-up fault to report, not a reason to skip.
fn require_mtools() -> Result<(), String> {
    for tool in ["mdir", "mtype"] {
        match Command::new(tool).arg("--version").output() {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(format!("{tool} (mtools) is not installed: {SET_UP_HINT}"));
            }
            Err(e) => return Err(format!("cannot run {tool}: {e}")),
        }
    }
    Ok(())
}

/// The device tree the QEMU raspi4b tests boot with.
fn qemu_dtb() -> Result<PathBuf, String> {
    match artifacts::find_rpi4_dtb(None) {
        Ok(Some(path)) => Ok(path),
        Ok(None) => Err(format!("{RPI4_DTB_FILE_NAME} is missing: {SET_UP_HINT}")),
        Err(e) => Err(e.to_string()),
    }
}

fn mtools(tool: &str, args: &[&str]) -> Vec<u8> {
    mtools_on(card(), tool, args)
}

fn mtools_on(card: &Path, tool: &str, args: &[&str]) -> Vec<u8> {
    let image = format!("{}{FAT_OFFSET_SUFFIX}", card.display());
    let output = Command::new(tool)
        .arg("-i")
        .arg(&image)
        .args(args)
        // mtools wants the FAT's size to be a multiple of its idea of a
        // track; an image file need not be.
        .env("MTOOLS_SKIP_CHECK", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}; {SET_UP_HINT}"));
    assert!(
        output.status.success(),
        "{tool} -i {image} {args:?} failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// A file from the card's FAT, as the firmware would read it.
fn card_file(name: &str) -> Vec<u8> {
    mtools("mtype", &[&format!("::/{name}")])
}

fn card_text(name: &str) -> String {
    String::from_utf8(card_file(name)).unwrap_or_else(|e| panic!("{name} is not UTF-8: {e}"))
}

fn u16_at(bytes: &[u8], offset: usize) -> u16 {
    u16::from_le_bytes([bytes[offset], bytes[offset + 1]])
}

fn u32_at(bytes: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes([
        bytes[offset],
        bytes[offset + 1],
        bytes[offset + 2],
        bytes[offset + 3],
    ])
}

/// The settings of config.txt in order, comments and blank lines left out.
fn config_settings(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| match line.split_once('=') {
            Some((key, value)) => (key.trim().to_owned(), value.trim().to_owned()),
            None => (line.to_owned(), String::new()),
        })
        .collect()
}

/// The value the firmware uses: a later line overrides an earlier one.
fn setting<'a>(settings: &'a [(String, String)], key: &str) -> Option<&'a str> {
    settings
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[test]
fn mbr_holds_one_fat32_partition_at_1_mib() {
    let disk = fs::read(card()).expect("read the card image");
    assert!(
        disk.len().is_multiple_of(SECTOR),
        "image is not whole sectors"
    );
    let mbr = &disk[..SECTOR];
    assert_eq!(&mbr[510..512], &[0x55, 0xaa], "no MBR signature");

    let entry = &mbr[446..462];
    assert_eq!(entry[4], FAT32_LBA, "partition 1 type is {:#04x}", entry[4]);
    let start = u32_at(entry, 8);
    let sectors = u32_at(entry, 12);
    assert_eq!(
        start, PARTITION_START_SECTOR,
        "partition 1 must start at 1 MiB"
    );
    assert!(sectors > 0, "partition 1 is empty");
    assert!(
        (start as usize + sectors as usize) * SECTOR <= disk.len(),
        "partition 1 runs past the end of the image"
    );
    assert!(
        mbr[462..510].iter().all(|&b| b == 0),
        "partitions 2 to 4 must be empty"
    );

    // The partition's first sector is a FAT32 boot sector that agrees with
    // the partition table.
    let boot = &disk[start as usize * SECTOR..][..SECTOR];
    assert_eq!(&boot[510..512], &[0x55, 0xaa], "no boot sector signature");
    assert_eq!(&boot[0x52..0x5a], b"FAT32   ", "not a FAT32 boot sector");
    assert_eq!(u16_at(boot, 0x0b) as usize, SECTOR, "bytes per sector");
    assert_eq!(
        u32_at(boot, 0x1c),
        start,
        "hidden sectors != partition start"
    );
    assert_eq!(u32_at(boot, 0x20), sectors, "FAT size != partition size");
    let reserved = u64::from(u16_at(boot, 0x0e));
    let fat_sectors = u64::from(boot[0x10]) * u64::from(u32_at(boot, 0x24));
    let clusters = (u64::from(sectors) - reserved - fat_sectors) / u64::from(boot[0x0d]);
    assert!(
        clusters >= FAT32_MIN_CLUSTERS,
        "{clusters} clusters: readers would take this FAT for FAT16"
    );
}

#[test]
fn card_holds_every_boot_file_and_nothing_else() {
    let listing = String::from_utf8(mtools("mdir", &["-b", "::/"])).expect("mdir lists UTF-8");
    let mut found: Vec<&str> = listing
        .lines()
        .filter_map(|line| line.trim().strip_prefix("::/"))
        .collect();
    found.sort_unstable();
    let mut expected = CARD_FILES.to_vec();
    expected.sort_unstable();
    assert_eq!(found, expected, "mdir -b listed:\n{listing}");
    for name in CARD_FILES {
        assert!(!card_file(name).is_empty(), "{name} is empty on the card");
    }
    // The VideoCore firmware is an ELF; a truncated or HTML download is not.
    assert_eq!(&card_file("start4.elf")[..4], b"\x7fELF");
}

#[test]
fn kernel8_img_on_the_card_is_the_built_kernel() {
    let built_path = artifacts::kernel_image().unwrap_or_else(|e| panic!("{e}"));
    let built = fs::read(&built_path).expect("read the built kernel8.img");
    let on_card = card_file("kernel8.img");
    assert!(
        on_card == built,
        "kernel8.img on the card ({} bytes) differs from {} ({} bytes)",
        on_card.len(),
        built_path.display(),
        built.len()
    );
    assert_eq!(
        &on_card[IMAGE_MAGIC_OFFSET..IMAGE_MAGIC_OFFSET + 4],
        IMAGE_MAGIC,
        "kernel8.img has no arm64 Image magic"
    );
}

#[test]
fn kernel8_img_is_a_whole_number_of_8_byte_words() {
    // Older Pi firmware refused an image whose size was not a multiple of
    // 4; build.rs pads to 8 (read without the card: no mtools needed).
    let built = artifacts::kernel_image().unwrap_or_else(|e| panic!("{e}"));
    let size = fs::metadata(&built).expect("stat kernel8.img").len();
    assert_eq!(size % 8, 0, "{} is {size} bytes", built.display());
}

#[test]
fn device_tree_on_the_card_is_the_one_qemu_boots() {
    let dtb = qemu_dtb().unwrap_or_else(|e| panic!("{e}"));
    let expected = fs::read(&dtb).expect("read the DTB");
    assert!(
        card_file(RPI4_DTB_FILE_NAME) == expected,
        "{RPI4_DTB_FILE_NAME} on the card differs from {}",
        dtb.display()
    );
}

#[test]
fn config_txt_sets_what_the_kernel_needs() {
    let text = card_text("config.txt");
    let settings = config_settings(&text);
    for (key, value) in REQUIRED_CONFIG {
        assert_eq!(
            setting(&settings, key),
            Some(value),
            "config.txt must set {key}={value}:\n{text}"
        );
    }

    // The firmware loads the kernel at kernel_address; the kernel runs from
    // its Image header's text_offset until the MMU is on.
    let kernel = card_file("kernel8.img");
    let text_offset = u64::from_le_bytes(kernel[8..16].try_into().expect("8 bytes"));
    assert_eq!(text_offset, 0x80000, "the kernel's text_offset moved");
    assert_eq!(
        setting(&settings, "kernel_address"),
        Some(format!("{text_offset:#x}").as_str()),
        "kernel_address must be the kernel's text_offset:\n{text}"
    );

    // The firmware skips an overlay it cannot find, and the card holds no
    // overlays/ folder (no Debian package ships one): a dtoverlay line
    // would only look as if it did something.
    let overlays: Vec<&str> = settings
        .iter()
        .filter(|(key, _)| key == "dtoverlay")
        .map(|(_, value)| value.as_str())
        .collect();
    assert!(
        overlays.is_empty(),
        "config.txt loads overlays {overlays:?}, which the card does not hold"
    );
    // No system image, no initramfs line (the firmware would stop at a
    // file it cannot find).
    assert!(
        !text.lines().any(|line| line.starts_with("initramfs")),
        "{text}"
    );
}

#[test]
fn a_system_image_goes_on_the_card_and_the_firmware_loads_it_where_the_kernel_looks() {
    let card = card_with_system_image();
    let on_card = mtools_on(card, "mtype", &["::/portcullis-system.img"]);
    assert_eq!(
        on_card,
        fs::read(system_image_file()).expect("read it back")
    );
    let config = String::from_utf8(mtools_on(card, "mtype", &["::/config.txt"]))
        .expect("config.txt is UTF-8");
    let lines: Vec<&str> = config
        .lines()
        .filter(|line| line.starts_with("initramfs"))
        .collect();
    assert_eq!(lines.len(), 1, "one initramfs line:\n{config}");
    let words: Vec<&str> = lines[0].split_ascii_whitespace().collect();
    assert_eq!(words[..2], ["initramfs", "portcullis-system.img"]);
    let address =
        u64::from_str_radix(words[2].trim_start_matches("0x"), 16).expect("a hexadecimal address");
    assert_eq!(address, arch::boards::rpi4::SYSTEM_IMAGE_ADDRESS);
    // Everything else is as on the card without one.
    assert_eq!(
        mtools_on(card, "mtype", &["::/cmdline.txt"]),
        card_file("cmdline.txt")
    );
}

#[test]
fn cmdline_txt_leaves_the_system_to_its_image_and_halts_on_hardware() {
    let text = card_text("cmdline.txt");
    assert_eq!(
        text.lines().count(),
        1,
        "cmdline.txt must be one line: {text:?}"
    );
    let words: Vec<&str> = text.split_ascii_whitespace().collect();
    // What runs is the system image's (its description names the mode).
    assert!(
        !words.iter().any(|w| w.starts_with("portcullis.mode=")),
        "cmdline.txt: {text:?}"
    );
    // Semihosting needs a debugger or QEMU: on a bare Pi, `hlt` would trap.
    assert!(
        !words.iter().any(|w| w.starts_with("portcullis.exit=")),
        "cmdline.txt must not choose an exit method: {text:?}"
    );
}
