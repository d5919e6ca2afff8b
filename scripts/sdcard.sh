#!/usr/bin/env bash
# sdcard.sh: write a bootable Raspberry Pi 4 SD card image of Portcullis.
#
# Usage:
#   ./qemu-run.sh sdcard [--out FILE]     (runs this script)
#   scripts/sdcard.sh [OPTIONS]
#
# Options:
#   --out FILE     the image to write (default target/sdcard/portcullis-rpi4.img)
#   --kernel FILE  put FILE on the card as kernel8.img instead of building it
#                  with `cargo build` (the host test passes the image its own
#                  build made: a nested cargo would wait for the test's lock)
#   --dtb FILE     the device tree for the card (default: the one the QEMU
#                  raspi4b tests boot: $PORTCULLIS_DTB, else
#                  target/firmware/bcm2711-rpi-4-b.dtb, fetched when missing)
#   --system-image FILE
#                  (default, when the kernel is built here: the demo's,
#                  target/image/systems/demo.img; `./qemu-run.sh sdcard
#                  --system SYSTEM.toml` builds one from a description)
#                  put FILE (a system image: abi::system::image) on the card
#                  as portcullis-system.img, and have the firmware load it at
#                  the Pi 4's fixed system-image address (config.txt's
#                  `initramfs portcullis-system.img 0x2000000`), which it then
#                  names in the device tree's /chosen (linux,initrd-start/end)
#   --offline      install and download nothing; fail, saying what to run,
#                  when a tool or a file is missing (the host test uses this)
#   --prepare      only set up: install mtools and dosfstools, fetch the
#                  firmware (`./qemu-run.sh test` runs this before cargo test)
#   -h, --help     this text
#
# The image is an MBR disk with one FAT32 partition (type 0x0c) from 1 MiB
# to 65 MiB, built in a plain file with mkfs.fat and mtools: no mount, no
# root. The partition holds what the Pi 4's boot ROM and firmware read:
#   start4.elf, fixup4.dat   the VideoCore firmware, from Debian's
#                            raspi-firmware package (non-free-firmware),
#                            downloaded with apt-get and unpacked with
#                            dpkg-deb into target/firmware/raspi-firmware/
#                            (nothing is installed into the host system)
#   bcm2711-rpi-4-b.dtb      the device tree from Debian's arm64 kernel
#                            package: the same file the QEMU tests boot with
#   kernel8.img              the kernel: an arm64 Image loaded at its
#                            text_offset (kernel_address in config.txt)
#   config.txt, cmdline.txt  firmware settings and the kernel command line
#   portcullis-system.img    the system image, with --system-image only
#   firmware-copyright.txt   the firmware's licence, from the same package
#
# Set-up needs root for apt-get (installing mtools/dosfstools, and adding the
# non-free-firmware component when no apt source offers raspi-firmware);
# without root the script prints the commands to run and exits 1.
set -euo pipefail

SDCARD_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Paths on the command line are relative to where the user stands;
# sourcing qemu-run.sh moves into the repository.
SDCARD_CALLER_DIR="$PWD"
SDCARD_SCRIPT="$SDCARD_ROOT/scripts/sdcard.sh"

# qemu-run.sh's helpers: the apt-source reading (debian_mirror), the DTB
# download (ensure_rpi4_dtb) and the toolchain set-up. Sourcing it defines
# them without running its main.
# shellcheck source=SCRIPTDIR/../qemu-run.sh
. "$SDCARD_ROOT/qemu-run.sh"

say() { echo "sdcard: $*" >&2; }
die() {
	say "$*"
	exit 1
}
sdcard_usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$SDCARD_SCRIPT"; }

DEFAULT_OUT="$ROOT/target/sdcard/portcullis-rpi4.img"
RPI_FIRMWARE_PACKAGE=raspi-firmware
RPI_FIRMWARE_CACHE="$FIRMWARE_DIR/raspi-firmware"
RPI_FIRMWARE_FILES=(start4.elf fixup4.dat)
RPI_FIRMWARE_COPYRIGHT=firmware-copyright.txt
NON_FREE_FIRMWARE_LIST=/etc/apt/sources.list.d/portcullis-non-free-firmware.list
DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# The disk: 1 MiB for the MBR (and alignment, as SD cards like it), then
# the FAT32 partition. 64 MiB of 512-byte clusters is ~130000 clusters, well
# above the 65525 that make a FAT32 a FAT32 for every reader.
SECTOR=512
PARTITION_START_SECTOR=2048
PARTITION_MIB=64
PARTITION_SECTORS=$((PARTITION_MIB * 1024 * 1024 / SECTOR))
DISK_MIB=$((PARTITION_MIB + 1))
FAT32_LBA_TYPE=0c
# Fixed IDs keep two builds of the same files alike.
DISK_ID=0x50435553
VOLUME_ID=50435553
VOLUME_LABEL=PORTCULLIS

# mtools checks that the FAT's size is a multiple of its idea of a track;
# a file image need not be.
export MTOOLS_SKIP_CHECK=1

# ------------------------------------------------------------------ tools

# mkfs.fat lives in /usr/sbin, which a normal user's PATH may lack.
mkfs_fat() {
	if have mkfs.fat; then
		command -v mkfs.fat
	elif [ -x /usr/sbin/mkfs.fat ]; then
		echo /usr/sbin/mkfs.fat
	fi
}

missing_image_packages() {
	have mcopy && have mdir || echo mtools
	[ -n "$(mkfs_fat)" ] || echo dosfstools
}

ensure_image_tools() {
	local offline="$1" missing
	mapfile -t missing < <(missing_image_packages)
	[ "${#missing[@]}" -gt 0 ] || return 0
	if [ "$offline" = 1 ]; then
		die "${missing[*]} missing: run \`./qemu-run.sh test\` or \`./qemu-run.sh sdcard\`, which install them"
	fi
	if ! is_root || ! have apt-get; then
		say "${missing[*]} needed to build the FAT image without mounting it. As root, run:"
		echo "  apt-get update" >&2
		echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
		exit 1
	fi
	say "installing ${missing[*]}"
	apt-get update -q >&2
	apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
	mapfile -t missing < <(missing_image_packages)
	[ "${#missing[@]}" -eq 0 ] || die "still missing after apt-get install: ${missing[*]}"
}

# ---------------------------------------------------- Raspberry Pi firmware

raspi_firmware_cached() {
	local file
	for file in "${RPI_FIRMWARE_FILES[@]}" "$RPI_FIRMWARE_COPYRIGHT"; do
		[ -s "$RPI_FIRMWARE_CACHE/$file" ] || return 1
	done
}

# The version apt would download, or nothing when no source offers it
# (raspi-firmware is in the non-free-firmware component).
raspi_firmware_candidate() {
	apt-cache policy "$RPI_FIRMWARE_PACKAGE" 2>/dev/null |
		awk '/Candidate:/ && $2 != "(none)" { print $2 }'
}

# The one-line apt source that offers non-free-firmware from the mirror the
# machine already uses for Debian.
non_free_firmware_source() {
	local mirror codename
	mirror="$(debian_mirror)"
	codename="$(os_codename)"
	[ -n "$mirror" ] && [ -n "$codename" ] || return 0
	echo "deb [signed-by=$DEBIAN_KEYRING] $mirror $codename non-free-firmware"
}

add_non_free_firmware_source() {
	local source
	source="$(non_free_firmware_source)"
	[ -n "$source" ] ||
		die "no Debian source in /etc/apt to take the mirror from: add the non-free-firmware component to your apt sources, run apt-get update, then run this again"
	if ! is_root; then
		say "$RPI_FIRMWARE_PACKAGE (start4.elf, fixup4.dat) is in Debian's non-free-firmware component, which no apt source offers. As root, run:"
		echo "  echo '$source' > $NON_FREE_FIRMWARE_LIST" >&2
		echo "  apt-get update" >&2
		say "then run this again (the download itself needs no root)"
		exit 1
	fi
	say "adding Debian's non-free-firmware component in $NON_FREE_FIRMWARE_LIST"
	echo "$source" >"$NON_FREE_FIRMWARE_LIST"
	apt-get update -q >&2
}

download_raspi_firmware() {
	local work deb file
	mkdir -p "$FIRMWARE_DIR"
	work="$(mktemp -d "$FIRMWARE_DIR/fetch.XXXXXX")"
	# shellcheck disable=SC2064 # expand now: $work is local
	trap "rm -rf '$work'" EXIT
	# apt-get download fetches as the _apt user when it can write there.
	chmod 0777 "$work"
	say "downloading $RPI_FIRMWARE_PACKAGE for ${RPI_FIRMWARE_FILES[*]}"
	(cd "$work" && apt-get download -q "$RPI_FIRMWARE_PACKAGE") >&2
	deb="$(find "$work" -maxdepth 1 -name "${RPI_FIRMWARE_PACKAGE}_*.deb" | head -n 1)"
	[ -n "$deb" ] || die "apt-get download $RPI_FIRMWARE_PACKAGE left no .deb in $work"
	dpkg-deb -x "$deb" "$work/unpacked"
	rm -rf "$work/cache"
	mkdir -p "$work/cache"
	for file in "${RPI_FIRMWARE_FILES[@]}"; do
		[ -s "$work/unpacked/usr/lib/raspi-firmware/$file" ] ||
			die "$(basename "$deb") has no usr/lib/raspi-firmware/$file"
		cp "$work/unpacked/usr/lib/raspi-firmware/$file" "$work/cache/"
	done
	cp "$work/unpacked/usr/share/doc/$RPI_FIRMWARE_PACKAGE/copyright" \
		"$work/cache/$RPI_FIRMWARE_COPYRIGHT"
	basename "$deb" >"$work/cache/SOURCE"
	rm -rf "$RPI_FIRMWARE_CACHE"
	mv "$work/cache" "$RPI_FIRMWARE_CACHE"
	rm -rf "$work"
	trap - EXIT
	say "cached $RPI_FIRMWARE_CACHE (from $(basename "$deb"))"
}

ensure_raspi_firmware() {
	local offline="$1"
	raspi_firmware_cached && return 0
	if [ "$offline" = 1 ]; then
		die "${RPI_FIRMWARE_FILES[*]} are not in $RPI_FIRMWARE_CACHE: run \`./qemu-run.sh test\` or \`./qemu-run.sh sdcard\`, which fetch them"
	fi
	{ have apt-get && have dpkg-deb; } ||
		die "this is not a Debian system: copy ${RPI_FIRMWARE_FILES[*]} (from the Raspberry Pi firmware's boot/ folder) and its licence as $RPI_FIRMWARE_COPYRIGHT to $RPI_FIRMWARE_CACHE"
	[ -n "$(raspi_firmware_candidate)" ] || add_non_free_firmware_source
	[ -n "$(raspi_firmware_candidate)" ] ||
		die "no apt source offers $RPI_FIRMWARE_PACKAGE, even with non-free-firmware in $NON_FREE_FIRMWARE_LIST"
	download_raspi_firmware
}

# --------------------------------------------------------- the card's files

# The DTB the QEMU raspi4b tests use: --dtb, else $PORTCULLIS_DTB, else the
# cached copy (fetched by qemu-run.sh's ensure_rpi4_dtb when allowed).
card_dtb() {
	local explicit="$1" offline="$2"
	if [ -n "$explicit" ]; then
		[ -s "$explicit" ] || die "--dtb $explicit: no such file"
		echo "$explicit"
	elif [ -n "${PORTCULLIS_DTB:-}" ]; then
		[ -s "$PORTCULLIS_DTB" ] || die "\$PORTCULLIS_DTB names $PORTCULLIS_DTB, which does not exist"
		echo "$PORTCULLIS_DTB"
	elif [ -s "$DTB_CACHE" ]; then
		echo "$DTB_CACHE"
	elif [ "$offline" = 1 ]; then
		die "$DTB_NAME is not in $FIRMWARE_DIR: run \`./qemu-run.sh test\` or \`./qemu-run.sh sdcard\`, which fetch it"
	else
		# Prints what to run as root when it cannot fetch.
		ensure_rpi4_dtb >&2 || exit 1
		echo "$DTB_CACHE"
	fi
}

# Builds the kernel (build.rs writes kernel8.img) unless one was given.
card_kernel() {
	local explicit="$1"
	if [ -n "$explicit" ]; then
		[ -s "$explicit" ] || die "--kernel $explicit: no such file"
		echo "$explicit"
		return
	fi
	ensure_toolchain
	say "building the kernel (cargo build)"
	(cd "$ROOT" && cargo build -q -p portcullis --bin portcullis) >&2
	local image="${CARGO_TARGET_DIR:-$ROOT/target}/image/kernel8.img"
	[ -s "$image" ] || die "cargo build made no $image"
	echo "$image"
}

# The arm64 Image header: "ARM\x64" at byte 56, text_offset (u64, little
# endian) at byte 8. Prints text_offset in hex.
kernel_load_address() {
	local kernel="$1" magic bytes
	magic="$(head -c 60 "$kernel" | tail -c 4)"
	[ "$magic" = $'ARM\x64' ] ||
		die "$kernel is not an arm64 Image (no \"ARM\\x64\" at byte 56): the Pi firmware would not know where to enter it"
	read -r -a bytes < <(od -An -v -t x1 -j 8 -N 8 "$kernel")
	printf '0x%x\n' "0x${bytes[7]}${bytes[6]}${bytes[5]}${bytes[4]}${bytes[3]}${bytes[2]}${bytes[1]}${bytes[0]}"
}

# Where the firmware loads a system image: arch::boards::rpi4::
# SYSTEM_IMAGE_ADDRESS (32 MiB in; the comment there says why nothing else
# is there), where the kernel also looks when the tree names no initrd.
SYSTEM_IMAGE_ADDRESS=0x2000000
# Its name on the card.
SYSTEM_IMAGE_NAME=portcullis-system.img
# The largest image the kernel takes (abi::system::image::MAX_IMAGE_BYTES).
SYSTEM_IMAGE_MAX_BYTES=$((64 << 20))

write_config_txt() {
	local file="$1" load_address="$2" system_image="$3"
	cat >"$file" <<EOF
# config.txt: read by the Raspberry Pi 4 firmware (start4.elf) at power-on.
# Written by scripts/sdcard.sh; each setting says why it is here.

# Start the cores in AArch64 state: Portcullis is a 64-bit kernel.
arm_64bit=1

# The kernel file (arm_64bit=1 alone would pick kernel8.img too; naming it
# keeps the card working if that default ever changes).
kernel=kernel8.img

# Load the kernel at its arm64 Image text_offset, where it is linked to run
# before the MMU is on. Without this line current firmware loads 64-bit
# kernels at 0x200000.
kernel_address=$load_address

# Route interrupts through the GIC-400: the kernel drives the GIC (timer
# ticks, preemption) and has no driver for the legacy controller. This is
# the Pi 4 default, written down because the kernel depends on it.
enable_gic=1

# The PL011 (UART0) reference clock. The kernel programs 115200 8N1 from a
# 48 MHz clock; this is the firmware's default, pinned so the console baud
# rate cannot drift if the default changes.
init_uart_clock=48000000

# Turn on the primary UART on GPIO14 (TX, header pin 8) and GPIO15 (RX,
# header pin 10).
enable_uart=1

# Put PL011 UART0, the UART the kernel writes to, on GPIO14/15: alternate
# function 0 of these pins is TXD0/RXD0. On a Pi 4 the PL011 otherwise talks
# to the Bluetooth chip and the mini UART sits on these pins. Raspberry Pi
# OS swaps them with dtoverlay=disable-bt, but that overlay comes from the
# Raspberry Pi kernel tree: no Debian package ships overlays/disable-bt.dtbo,
# and Debian's device tree has no __symbols__ for it to patch anyway. The
# firmware's gpio= setting sets a pin's function with no overlay file.
gpio=14,15=a0

# No black border on an HDMI screen: the kernel draws nothing there, so a
# border would only shrink the firmware's framebuffer for no gain.
disable_overscan=1
EOF
	if [ -n "$system_image" ]; then
		cat >>"$file" <<EOF

# The system image: the firmware loads it at this address (the kernel's
# fixed system-image address for the Pi 4) and names it in the device
# tree's /chosen (linux,initrd-start and linux,initrd-end), where the
# kernel finds it and hands it to the root task.
initramfs $SYSTEM_IMAGE_NAME $SYSTEM_IMAGE_ADDRESS
EOF
	fi
}

# The kernel command line. The firmware puts it, after words of its own,
# into the device tree's /chosen/bootargs. What runs is the system image's
# business (its description names its mode), so the line is empty: the
# firmware's own words are all the kernel gets. cmdline.txt is one line
# with no comment syntax.
write_cmdline_txt() {
	echo "" >"$1"
}

# ---------------------------------------------------------------- the disk

# One byte as a printf escape.
byte() { printf '\\x%02x' "$(($1 & 0xff))"; }
le32() { printf '%b' "$(byte "$1")$(byte "$(($1 >> 8))")$(byte "$(($1 >> 16))")$(byte "$(($1 >> 24))")"; }

# Cylinder/head/sector of an LBA in the usual 255-head, 63-sector geometry,
# or the "beyond CHS" marker; only very old readers look at it.
chs() {
	local lba="$1" cylinder head sector
	cylinder=$((lba / (255 * 63)))
	if [ "$cylinder" -gt 1023 ]; then
		printf '\xfe\xff\xff'
		return
	fi
	head=$(((lba / 63) % 255))
	sector=$((lba % 63 + 1))
	printf '%b' "$(byte "$head")$(byte "$((sector | ((cylinder >> 2) & 0xc0)))")$(byte "$cylinder")"
}

# The MBR: disk ID, one FAT32 (LBA) partition, three empty entries, 55 AA.
write_mbr() {
	local image="$1" start="$2" count="$3" mbr
	mbr="$(mktemp)"
	{
		head -c 440 /dev/zero
		le32 "$DISK_ID"
		head -c 2 /dev/zero
		printf '\x00' # not "active": the Pi's boot ROM does not look
		chs "$start"
		printf '%b' "\\x$FAT32_LBA_TYPE"
		chs "$((start + count - 1))"
		le32 "$start"
		le32 "$count"
		head -c 48 /dev/zero
		printf '\x55\xaa'
	} >"$mbr"
	[ "$(stat -c %s "$mbr")" -eq "$SECTOR" ] || die "internal error: the MBR is not $SECTOR bytes"
	dd if="$mbr" of="$image" bs="$SECTOR" count=1 conv=notrunc status=none
	rm -f "$mbr"
}

# Copies FILE onto the card's FAT as NAME.
put_file() {
	local image="$1" source="$2" name="$3"
	mcopy -i "$image@@$((PARTITION_START_SECTOR * SECTOR))" "$source" "::/$name"
}

build_image() {
	local out="$1" kernel="$2" dtb="$3" system_image="$4" partial staging load_address file
	load_address="$(kernel_load_address "$kernel")"
	mkdir -p "$(dirname "$out")"
	partial="$out.partial"
	staging="$(mktemp -d)"
	rm -f "$partial"
	truncate -s "${DISK_MIB}M" "$partial"
	"$(mkfs_fat)" -F 32 -n "$VOLUME_LABEL" -i "$VOLUME_ID" \
		-h "$PARTITION_START_SECTOR" --offset="$PARTITION_START_SECTOR" \
		"$partial" "$((PARTITION_SECTORS * SECTOR / 1024))" >/dev/null
	write_mbr "$partial" "$PARTITION_START_SECTOR" "$PARTITION_SECTORS"

	write_config_txt "$staging/config.txt" "$load_address" "$system_image"
	write_cmdline_txt "$staging/cmdline.txt"
	for file in "${RPI_FIRMWARE_FILES[@]}"; do
		put_file "$partial" "$RPI_FIRMWARE_CACHE/$file" "$file"
	done
	put_file "$partial" "$dtb" "$DTB_NAME"
	put_file "$partial" "$kernel" kernel8.img
	if [ -n "$system_image" ]; then
		put_file "$partial" "$system_image" "$SYSTEM_IMAGE_NAME"
	fi
	put_file "$partial" "$staging/config.txt" config.txt
	put_file "$partial" "$staging/cmdline.txt" cmdline.txt
	put_file "$partial" "$RPI_FIRMWARE_CACHE/$RPI_FIRMWARE_COPYRIGHT" "$RPI_FIRMWARE_COPYRIGHT"
	rm -rf "$staging"
	mv "$partial" "$out"
}

print_next_steps() {
	local out="$1"
	cat <<EOF

Write it to a microSD card (1 GB or more; everything on the card is lost):
  lsblk -d -o NAME,SIZE,MODEL,TRAN      # find the card, e.g. sdb or mmcblk0
  dd if=$out of=/dev/sdX bs=4M conv=fsync status=progress
Check the device name twice: dd to the wrong disk destroys it. Or use
Raspberry Pi Imager: Choose OS -> Use custom -> this file.

Wire a 3.3 V USB serial adapter (never 5 V) to the 40-pin header:
  Pi pin 6  (GND)            -> adapter GND
  Pi pin 8  (GPIO14, UART TX) -> adapter RX
  Pi pin 10 (GPIO15, UART RX) -> adapter TX
Open the console at 115200 8N1, then power the Pi on:
  picocom -b 115200 /dev/ttyUSB0
The kernel runs the card's system (by default the demo, systems/demo.toml)
and ends with "[kernel] halted; power the board off". For another system:
  ./qemu-run.sh sdcard --system PATH/TO/system.toml    (a system of yours)
  ./qemu-run.sh sdcard --system systems/test.toml \
      --kernel target/image/test/kernel8.img            (the in-guest suite)
EOF
}

# -------------------------------------------------------------------- main

sdcard_main() {
	local out="$DEFAULT_OUT" kernel="" dtb="" system_image="" offline=0 prepare_only=0 started=$SECONDS
	while [ "$#" -gt 0 ]; do
		case "$1" in
		--out | --kernel | --dtb | --system-image)
			[ "$#" -ge 2 ] || die "$1 needs a value"
			case "$1" in
			--out) out="$2" ;;
			--kernel) kernel="$2" ;;
			--dtb) dtb="$2" ;;
			--system-image) system_image="$2" ;;
			esac
			shift 2
			;;
		--system-image=*) system_image="${1#--system-image=}" && shift ;;
		--out=*) out="${1#--out=}" && shift ;;
		--kernel=*) kernel="${1#--kernel=}" && shift ;;
		--dtb=*) dtb="${1#--dtb=}" && shift ;;
		--offline) offline=1 && shift ;;
		--prepare) prepare_only=1 && shift ;;
		-h | --help)
			sdcard_usage
			exit 0
			;;
		*)
			say "unknown option \`$1\`"
			sdcard_usage >&2
			exit 64
			;;
		esac
	done

	ensure_image_tools "$offline"
	ensure_raspi_firmware "$offline"
	if [ "$prepare_only" = 1 ]; then
		say "ready: mtools, dosfstools and ${RPI_FIRMWARE_FILES[*]} ($(cat "$RPI_FIRMWARE_CACHE/SOURCE"))"
		return 0
	fi
	dtb="$(card_dtb "$dtb" "$offline")"
	local built_kernel=0
	[ -n "$kernel" ] || built_kernel=1
	kernel="$(card_kernel "$kernel")"
	if [ -z "$system_image" ] && [ "$built_kernel" = 1 ]; then
		# The build that made the kernel also made the demo's system
		# (systems/demo.toml): a card boots the demo unless told.
		system_image="${CARGO_TARGET_DIR:-$ROOT/target}/image/systems/demo.img"
	fi
	if [ -n "$system_image" ]; then
		[ -s "$system_image" ] || die "--system-image $system_image: no such file"
		[ "$(stat -c %s "$system_image")" -le "$SYSTEM_IMAGE_MAX_BYTES" ] ||
			die "--system-image $system_image: larger than the 64 MiB the kernel takes"
	fi
	build_image "$out" "$kernel" "$dtb" "$system_image"
	say "wrote $out ($DISK_MIB MiB: FAT32 partition at 1 MiB) in $((SECONDS - started)) s"
	print_next_steps "$out"
}

cd "$SDCARD_CALLER_DIR"
sdcard_main "$@"
