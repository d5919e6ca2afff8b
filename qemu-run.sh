#!/usr/bin/env bash
# qemu-run.sh: the one command to set up, build, boot and test Portcullis.
#
# Usage:
#   ./qemu-run.sh [--machine virt|raspi4b] [--elf] [--gdb] [--icount]
#                 [--timeout SECS] [--dtb PATH] [--mode demo|test]
#                 [--system-image PATH]
#                                  build the kernel and boot the demo in QEMU
#                                  (the system systems/demo.toml describes;
#                                  exit status = the guest's: 0 ok, 1 a test
#                                  failed, 2 kernel panic, 124 timeout)
#   ./qemu-run.sh run SYSTEM.toml [BOOT OPTIONS]
#                                  check a system description (docs/systems.md),
#                                  build its tasks and boot it; a mistake is an
#                                  error naming FILE:LINE:COLUMN and the field
#                                  (exit status 65), and nothing boots
#   ./qemu-run.sh shell [--script FILE] [--capture FILE] [BOOT OPTIONS]
#                                  boot the shell's system (systems/shell.toml,
#                                  docs/shell.md): a prompt on this terminal to
#                                  inspect and steer the running system (`exit`
#                                  ends it, Ctrl-A x quits QEMU); --script types
#                                  FILE's lines instead, --capture keeps the
#                                  serial bytes for `portcullis decode`
#   ./qemu-run.sh new DIRECTORY    write a starting point there (an app, a policy
#                                  server, their system.toml) that boots as written
#   ./qemu-run.sh test [ARGS...]   run every test: `cargo test --workspace`,
#                                  which boots the kernel on virt and raspi4b
#                                  (ARGS go to cargo test)
#   ./qemu-run.sh bench [ARGS...]  run the benchmark suite under -icount shift=0:
#                                  `cargo run --release -- bench ARGS` (table and
#                                  JSON lines on stdout; --compare FILE, --filter,
#                                  --iterations N, --json FILE, --no-icount). Results
#                                  go under target/bench/ (a whole-suite run also
#                                  writes results.md and results.svg there);
#                                  --update-docs writes those two to docs/bench/
#   ./qemu-run.sh fuzz [--seed S] [--calls N]
#                                  run the in-guest syscall fuzzer: N random
#                                  syscalls (default 100000) from seed S (default:
#                                  a new one, printed); TAP, one line per round;
#                                  fails on a kernel panic or a broken invariant
#   ./qemu-run.sh lint             rustfmt and clippy (host and AArch64 crates)
#   ./qemu-run.sh sdcard [--out FILE] [--system SYSTEM.toml | --system-image FILE]
#                                  write a bootable Raspberry Pi 4 SD card image
#                                  (default target/sdcard/portcullis-rpi4.img) of
#                                  a system (default: the demo's);
#                                  scripts/sdcard.sh --help has the details
#   ./qemu-run.sh --help           this text
#
# Boot options (passed to the runner, `cargo run -- run --help` has more):
#   --machine virt|raspi4b  virt (default): ELF entered at EL1. raspi4b: kernel8.img
#                           entered at EL2 with bcm2711-rpi-4-b.dtb (QEMU 9+)
#   --elf                   raspi4b: boot the ELF instead (entered at EL3)
#   --gdb                   wait for gdb on :1234 (gdb-multiarch, a Debian package)
#   --icount                -icount shift=0: one tick per guest instruction
#   --timeout SECS          kill QEMU after SECS (default 120, 0 = never)
#   --system-image PATH     load a system image beside the kernel, at the board's
#                           fixed address (docs/boot.md, "System images")
#
# Set-up, done every time (quick once done), so a fresh Debian bookworm
# machine needs nothing else:
#   1. the pinned Rust toolchain with its AArch64 targets (rust-toolchain.toml);
#   2. QEMU 9 or newer (raspi4b needs it; bookworm has 7.2, bookworm-backports
#      has 9+), installed with apt-get when run as root;
#   3. for raspi4b and for `test`: the Raspberry Pi 4 device tree, taken from
#      Debian's arm64 kernel package and cached in target/firmware/.
# Without root, the script prints the commands to run and exits 1.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Paths a user gives (a system description, a new system's directory)
# are relative to where they ran the command.
CALLER_DIR="$PWD"
cd "$ROOT"

QEMU_MIN_MAJOR=9
DTB_NAME=bcm2711-rpi-4-b.dtb
FIRMWARE_DIR="$ROOT/target/firmware"
DTB_CACHE="$FIRMWARE_DIR/$DTB_NAME"
BACKPORTS_LIST=/etc/apt/sources.list.d/bookworm-backports.list
export DEBIAN_FRONTEND=noninteractive

say() { echo "qemu-run: $*" >&2; }
die() {
	say "$*"
	exit 1
}
have() { command -v "$1" >/dev/null 2>&1; }
is_root() { [ "$(id -u)" -eq 0 ]; }
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

# ---------------------------------------------------------------- toolchain

# rustup does not install a missing toolchain by itself when
# RUSTUP_AUTO_INSTALL=0; with no arguments it installs what
# rust-toolchain.toml pins, targets and components included.
ensure_toolchain() {
	have rustup || die "rustup is missing: install Rust with rustup (https://rustup.rs), then run this again"
	local output
	if ! output="$(rustup toolchain install 2>&1)"; then
		echo "$output" >&2
		die "\`rustup toolchain install\` failed: the toolchain pinned in rust-toolchain.toml is needed"
	fi
}

# --------------------------------------------------------------------- QEMU

# The major version of qemu-system-aarch64, or nothing if it is missing.
qemu_major() {
	have qemu-system-aarch64 || return 0
	qemu-system-aarch64 --version | sed -n '1s/.*version \([0-9]\{1,\}\)\..*/\1/p'
}

os_codename() {
	# shellcheck disable=SC1091
	(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
}

# Every apt source file there is.
apt_source_files() {
	local file
	for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$file" ] && echo "$file"
	done
}

# The mirror this machine already uses for Debian bookworm, so that
# backports come from the same place (one-line and deb822 formats).
debian_mirror() {
	local files
	mapfile -t files < <(apt_source_files)
	[ "${#files[@]}" -gt 0 ] || return 0
	awk '
		# deb822 stanzas: a blank line or the end of a file ends one.
		function stanza_end() {
			if (deb && uri != "" && suites ~ / bookworm /) { print uri; found = 1; exit }
			uri = ""; suites = ""; deb = 0
		}
		FNR == 1 { stanza_end() }
		# one-line format: deb [options] URI suite components
		$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
			if ($(i + 1) == "bookworm") { print $i; found = 1; exit }
		}
		/^Types:/ && / deb( |$)/ { deb = 1 }
		/^URIs:/ { uri = $2 }
		/^Suites:/ { suites = " " $0 " " }
		/^[ \t]*$/ { stanza_end() }
		END { if (!found) stanza_end() }
	' "${files[@]}"
}

has_backports_source() {
	local files
	mapfile -t files < <(apt_source_files)
	[ "${#files[@]}" -gt 0 ] && grep -Eqs '^[^#]*bookworm-backports' "${files[@]}"
}

# Prints the commands that install a new enough QEMU, for a person to run.
print_qemu_install_commands() {
	local mirror="$1"
	if [ "$(os_codename)" = bookworm ]; then
		has_backports_source ||
			echo "  echo 'deb $mirror bookworm-backports main' > $BACKPORTS_LIST"
		echo "  apt-get update"
		echo "  apt-get install -y --no-install-recommends -t bookworm-backports qemu-system-arm"
	else
		echo "  apt-get update"
		echo "  apt-get install -y --no-install-recommends qemu-system-arm"
	fi
}

install_qemu_with_apt() {
	local mirror="$1"
	if [ "$(os_codename)" = bookworm ]; then
		if ! has_backports_source; then
			say "adding bookworm-backports ($mirror) in $BACKPORTS_LIST"
			echo "deb $mirror bookworm-backports main" >"$BACKPORTS_LIST"
		fi
		apt-get update -q
		apt-get install -y -q --no-install-recommends -t bookworm-backports qemu-system-arm
	else
		apt-get update -q
		apt-get install -y -q --no-install-recommends qemu-system-arm
	fi
}

ensure_qemu() {
	local major mirror
	major="$(qemu_major)"
	if [ -n "$major" ] && [ "$major" -ge "$QEMU_MIN_MAJOR" ]; then
		return 0
	fi
	say "QEMU $QEMU_MIN_MAJOR or newer is needed (raspi4b arrived in 9.0); found: ${major:-none}"
	mirror="$(debian_mirror)"
	if [ "$(os_codename)" = bookworm ] && ! has_backports_source && [ -z "$mirror" ]; then
		die "no Debian bookworm source in /etc/apt to take the mirror from; add bookworm-backports to your apt sources and install qemu-system-arm from it (QEMU $QEMU_MIN_MAJOR+)"
	fi
	if ! is_root || ! have apt-get; then
		say "as root, run:"
		print_qemu_install_commands "$mirror" >&2
		exit 1
	fi
	install_qemu_with_apt "$mirror"
	major="$(qemu_major)"
	{ [ -n "$major" ] && [ "$major" -ge "$QEMU_MIN_MAJOR" ]; } ||
		die "QEMU is still older than $QEMU_MIN_MAJOR (${major:-missing}) after installing qemu-system-arm"
	say "installed $(qemu-system-aarch64 --version | head -n 1)"
}

# Starts each named machine once with the runner's own QEMU command line
# (`portcullis probe`, src/qemu/probe.rs) and a guest that only exits, so
# that a QEMU that cannot start a machine (a firmware file missing) is named
# in one sentence before the tests start, not as a failure of every test
# that boots. (`run`, `bench` and `fuzz` need no call here: the runner
# probes a machine before its first boot.) Building the runner also builds
# the kernel image, which the tests need next anyway.
probe_qemu() {
	local machines=() machine status=0
	for machine in "$@"; do machines+=(--machine "$machine"); done
	cargo run --quiet -p portcullis --bin portcullis -- probe "${machines[@]}" || status=$?
	[ "$status" -eq 0 ] || exit "$status"
}

# ------------------------------------------------------- Raspberry Pi 4 DTB

arm64_architecture_enabled() { dpkg --print-foreign-architectures | grep -qx arm64; }
arm64_indices_present() { apt-cache show linux-image-arm64:arm64 >/dev/null 2>&1; }

# The versioned kernel package (e.g. linux-image-6.1.0-41-arm64) that the
# candidate of the linux-image-arm64 metapackage depends on.
current_arm64_kernel_package() {
	local meta_version
	meta_version="$(apt-cache policy linux-image-arm64:arm64 | awk '/Candidate:/ { print $2 }')"
	[ -n "$meta_version" ] && [ "$meta_version" != "(none)" ] || return 0
	apt-cache depends "linux-image-arm64:arm64=$meta_version" |
		awk '/Depends: linux-image-/ { sub(/:arm64$/, "", $2); print $2; exit }'
}

# Downloads the arm64 kernel package, unpacks it and keeps only the DTB.
download_rpi4_dtb() {
	local package="$1" work deb dtb
	mkdir -p "$FIRMWARE_DIR"
	work="$(mktemp -d "$FIRMWARE_DIR/fetch.XXXXXX")"
	# shellcheck disable=SC2064 # expand now: $work is local
	trap "rm -rf '$work'" EXIT
	# apt-get download fetches as the _apt user when it can write there.
	chmod 0777 "$work"
	say "downloading $package:arm64 for $DTB_NAME"
	(cd "$work" && apt-get download -q "$package:arm64") >&2
	deb="$(find "$work" -maxdepth 1 -name "${package}_*_arm64.deb" | head -n 1)"
	[ -n "$deb" ] || die "apt-get download $package:arm64 left no .deb in $work"
	dpkg-deb -x "$deb" "$work/unpacked"
	dtb="$(find "$work/unpacked/usr/lib" -path "*/linux-image-*/broadcom/$DTB_NAME" | head -n 1)"
	[ -n "$dtb" ] || die "$package has no usr/lib/linux-image-*/broadcom/$DTB_NAME"
	cp "$dtb" "$DTB_CACHE.partial"
	mv "$DTB_CACHE.partial" "$DTB_CACHE"
	rm -rf "$work"
	trap - EXIT
	say "cached $DTB_CACHE (from $(basename "$deb"))"
}

# Makes sure the DTB is cached; returns 1 (after saying what to run) if it
# cannot be fetched without root.
ensure_rpi4_dtb() {
	local package
	if [ ! -f "$DTB_CACHE" ]; then
		{ have apt-get && have dpkg-deb; } ||
			die "$DTB_NAME is missing and this is not a Debian system: copy it from a Raspberry Pi firmware or arm64 kernel package to $DTB_CACHE"
		if ! arm64_architecture_enabled || ! arm64_indices_present; then
			if ! is_root; then
				say "$DTB_NAME is missing; it comes from Debian's arm64 kernel package. As root, run:"
				arm64_architecture_enabled || echo "  dpkg --add-architecture arm64" >&2
				echo "  apt-get update" >&2
				say "then run this again (the download itself needs no root)"
				return 1
			fi
			if ! arm64_architecture_enabled; then
				say "adding the arm64 architecture to dpkg (to download the arm64 kernel package)"
				dpkg --add-architecture arm64
			fi
			apt-get update -q
		fi
		package="$(current_arm64_kernel_package)"
		[ -n "$package" ] || die "cannot tell which kernel package linux-image-arm64:arm64 depends on"
		download_rpi4_dtb "$package"
	fi
	export PORTCULLIS_DTB="$DTB_CACHE"
}

# ----------------------------------------------------------------- commands

# A path the caller gave, made absolute against where they ran the command.
from_caller() {
	case "$1" in
	/*) echo "$1" ;;
	*) echo "$CALLER_DIR/$1" ;;
	esac
}

run_demo() {
	boot_with run "$@"
}

# `shell [--script FILE] [--capture FILE] [BOOT OPTIONS]`: the shell's
# system (systems/shell.toml) on this terminal, or typed from FILE.
run_shell() {
	boot_with shell "$@"
}

# Set-up, then the runner's COMMAND (run or shell) with the arguments,
# paths the caller gave made absolute.
boot_with() {
	local command="$1"
	shift
	local args=("$@") machine=virt i
	for ((i = 0; i < ${#args[@]}; i++)); do
		case "${args[$i]}" in
		--machine) machine="${args[$((i + 1))]:-}" ;;
		--machine=*) machine="${args[$i]#--machine=}" ;;
		--system | --system-image | --dtb | --script | --capture)
			i=$((i + 1))
			[ "$i" -lt "${#args[@]}" ] && args[i]="$(from_caller "${args[$i]}")"
			;;
		*.toml) args[i]="$(from_caller "${args[$i]}")" ;;
		-h | --help)
			usage
			exit 0
			;;
		esac
	done
	ensure_toolchain
	ensure_qemu
	if [ "$machine" = raspi4b ]; then
		# The runner boots without a DTB (and warns) if this fails.
		ensure_rpi4_dtb || say "continuing without $DTB_NAME"
	fi
	say "building the kernel and the runner"
	cargo build -p portcullis --bin portcullis
	cargo run --quiet -p portcullis --bin portcullis -- "$command" "${args[@]}"
}

# `run SYSTEM.toml [OPTIONS]`: build and boot a described system.
run_system() {
	[ "$#" -ge 1 ] && [[ "$1" == *.toml ]] || die "run: name a system description (SYSTEM.toml) first"
	run_demo "$@"
}

# `new DIRECTORY`: a starting point for a system of one's own.
run_new() {
	[ "$#" -eq 1 ] || die "new: name the directory to write (e.g. ./qemu-run.sh new ../my-system)"
	ensure_toolchain
	cargo run --quiet -p portcullis --bin portcullis -- new "$(from_caller "$1")"
}

# `sdcard [--system SYSTEM.toml] [sdcard.sh's options]`.
run_sdcard() {
	local args=() system=""
	while [ "$#" -gt 0 ]; do
		case "$1" in
		--system) system="${2:?--system needs a value}" && shift 2 ;;
		--system=*) system="${1#--system=}" && shift ;;
		--out | --kernel | --dtb | --system-image)
			args+=("$1" "$(from_caller "${2:?$1 needs a value}")") && shift 2
			;;
		*) args+=("$1") && shift ;;
		esac
	done
	if [ -n "$system" ]; then
		ensure_toolchain
		local image="$ROOT/target/sdcard/portcullis-system.img"
		mkdir -p "$ROOT/target/sdcard"
		cargo run --quiet -p portcullis --bin portcullis -- build-system "$(from_caller "$system")" \
			--out "$image" >/dev/null || exit $?
		args+=(--system-image "$image")
	fi
	exec "$ROOT/scripts/sdcard.sh" "${args[@]}"
}

run_tests() {
	local started=$SECONDS status=0
	ensure_toolchain
	ensure_qemu
	ensure_rpi4_dtb || die "the raspi4b tests need $DTB_NAME (see above)"
	"$ROOT/scripts/sdcard.sh" --prepare || die "the SD card image test needs mtools, dosfstools and the Pi firmware (see above)"
	probe_qemu virt raspi4b
	# --no-fail-fast: one failing test binary must not hide the others.
	say "cargo test --workspace --no-fail-fast $*"
	cargo test --workspace --no-fail-fast "$@" || status=$?
	say "tests finished in $((SECONDS - started)) s (status $status)"
	return "$status"
}

run_bench() {
	ensure_toolchain
	ensure_qemu
	cargo run --quiet --release -p portcullis --bin portcullis -- bench "$@"
}

run_fuzz() {
	local seed="" calls=100000
	while [ "$#" -gt 0 ]; do
		case "$1" in
		--seed) seed="${2:?--seed needs a value}" && shift 2 ;;
		--calls) calls="${2:?--calls needs a value}" && shift 2 ;;
		*) die "fuzz: unknown option $1 (expected --seed S, --calls N)" ;;
		esac
	done
	[ -n "$seed" ] || seed=$(( (RANDOM << 15) | RANDOM ))
	say "fuzz: seed $seed, $calls syscalls (repeat with --seed $seed --calls $calls)"
	ensure_toolchain
	ensure_qemu
	# A long run needs time: about 1 s per 100 000 syscalls, plus the boot.
	local timeout=$(( 120 + calls / 20000 ))
	# Under -icount: the guest's ticks fall at the same instructions on any
	# host, so a seed repeats the same run (tests/guest_fuzz.rs).
	cargo run --quiet --release -p portcullis --bin portcullis -- run --mode fuzz --icount \
		--boot-option "portcullis.fuzz.seed=$seed" --boot-option "portcullis.fuzz.calls=$calls" \
		--timeout "$timeout"
}

run_lint() {
	local failed=()
	ensure_toolchain
	lint_step() {
		say "$*"
		"$@" || failed+=("$*")
	}
	lint_step cargo fmt --all -- --check
	lint_step cargo clippy --workspace --all-targets -- -D warnings
	# The kernel binary embeds the root task's ELF, named by
	# PORTCULLIS_ROOT_ELF, which only build.rs's nested build sets: point
	# it at the ELF that build (run by the step above) made.
	local root_elf="${CARGO_TARGET_DIR:-$ROOT/target}/image/root/portcullis-root"
	lint_step env PORTCULLIS_ROOT_ELF="${PORTCULLIS_ROOT_ELF:-$root_elf}" \
		cargo clippy -p portcullis-microkernel --features image \
		--target aarch64-unknown-none-softfloat -- -D warnings
	lint_step cargo clippy -p portcullis-init -p portcullis-root -p portcullis-shell -p portcullis-ticker --features image \
		--target aarch64-unknown-none -- -D warnings
	# The examples' tasks are a workspace of their own (programs for
	# AArch64 only), linted as the system tool builds them.
	lint_step env CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}/systems" \
		cargo clippy --manifest-path examples/Cargo.toml --workspace \
		--target aarch64-unknown-none -- -D warnings
	if [ "${#failed[@]}" -gt 0 ]; then
		say "lint failed:"
		printf '  %s\n' "${failed[@]}" >&2
		return 1
	fi
	say "lint clean"
}

main() {
	case "${1:-}" in
	-h | --help | help) usage ;;
	test)
		shift
		run_tests "$@"
		;;
	bench)
		shift
		run_bench "$@"
		;;
	sdcard) shift && run_sdcard "$@" ;;
	run)
		shift
		run_system "$@"
		;;
	shell)
		shift
		run_shell "$@"
		;;
	new)
		shift
		run_new "$@"
		;;
	fuzz)
		shift
		run_fuzz "$@"
		;;
	lint)
		shift
		[ "$#" -eq 0 ] || die "lint takes no arguments"
		run_lint
		;;
	"" | -*) run_demo "$@" ;;
	*)
		say "unknown command \`$1\`"
		usage >&2
		exit 64
		;;
	esac
}

# scripts/sdcard.sh sources this file for its set-up helpers; only a run
# of this file itself runs a command.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
