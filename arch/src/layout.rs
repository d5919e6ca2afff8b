//! The kernel's virtual memory map (48-bit addresses, 4 KiB granule).
//!
//! | range (TTBR1, high half)          | what                                   |
//! |-----------------------------------|----------------------------------------|
//! | `LINEAR_BASE + pa`                | all RAM except the kernel image, RW, never executable |
//! | `DEVICE_BASE + pa`                | MMIO pages the kernel maps, Device-nGnRE |
//! | `DTB_WINDOW + pa`                 | the device tree, read at boot          |
//! | `KIMAGE_VBASE + TEXT_OFFSET ..`   | the kernel image: text RX, rodata R, data RW |
//!
//! The low half (TTBR0) belongs to the running thread's address space and
//! is tagged with its ASID; it holds the boot identity map only until the
//! kernel runs at its link address.

/// Base of the 1 GiB window the kernel image is linked in.
pub const KIMAGE_VBASE: u64 = 0xFFFF_FFFF_C000_0000;
/// Offset of the image inside its window, and the arm64 Image
/// `text_offset` (where the Pi firmware and QEMU raspi4b load kernel8.img).
pub const TEXT_OFFSET: u64 = 0x8_0000;
/// Virtual address of physical address 0 in the linear map.
pub const LINEAR_BASE: u64 = 0xFFFF_0000_0000_0000;
/// Virtual address of physical address 0 in the device window.
pub const DEVICE_BASE: u64 = 0xFFFF_8000_0000_0000;
/// Virtual address of physical address 0 in the device-tree window.
pub const DTB_WINDOW: u64 = 0xFFFF_FE00_0000_0000;
/// One page.
pub const PAGE_SIZE: u64 = 4096;
/// First address above the user half.
pub const USER_END: u64 = 1 << 48;

/// Most cores the kernel starts (the boot core included): each has a
/// kernel stack slot in the image (`kernel.ld` reserves this many).
pub const MAX_CPUS: usize = 4;
/// Bytes of one core's kernel stack slot: an unmapped guard page, then
/// its stack, whose last [`CPU_RECORD_BYTES`] hold the core's record.
pub const KERNEL_STACK_SLOT_BYTES: u64 = PAGE_SIZE + 32 * 1024;
/// The per-core record at the top of each stack slot, just above the
/// stack top that TPIDR_EL1 holds: the core's index (a `u64`), then 8
/// unused bytes that keep the stack top 16-byte aligned.
pub const CPU_RECORD_BYTES: u64 = 16;

/// Offset of core `cpu`'s unmapped guard page from the first slot.
pub const fn kernel_stack_guard_offset(cpu: usize) -> u64 {
    cpu as u64 * KERNEL_STACK_SLOT_BYTES
}

/// Offset of core `cpu`'s stack top (the initial SP, and its record's
/// address) from the first slot.
pub const fn kernel_stack_top_offset(cpu: usize) -> u64 {
    (cpu as u64 + 1) * KERNEL_STACK_SLOT_BYTES - CPU_RECORD_BYTES
}

// The windows are ordered and do not overlap (checked at build time).
const _: () =
    assert!(LINEAR_BASE < DEVICE_BASE && DEVICE_BASE < DTB_WINDOW && DTB_WINDOW < KIMAGE_VBASE);

/// The linear-map address of a physical address.
pub const fn phys_to_linear(pa: u64) -> u64 {
    LINEAR_BASE + pa
}

/// The physical address behind a linear-map address, if it is one.
pub const fn linear_to_phys(va: u64) -> Option<u64> {
    if va >= LINEAR_BASE && va < DEVICE_BASE {
        Some(va - LINEAR_BASE)
    } else {
        None
    }
}

/// Is `va..va+len` entirely inside the user half?
pub const fn is_user_range(va: u64, len: u64) -> bool {
    match va.checked_add(len) {
        Some(end) => end <= USER_END,
        None => false,
    }
}

/// Rounds `value` down to a page boundary.
pub const fn page_floor(value: u64) -> u64 {
    value & !(PAGE_SIZE - 1)
}

/// Rounds `value` up to a page boundary (saturating at the top page).
pub const fn page_ceil(value: u64) -> u64 {
    match value.checked_add(PAGE_SIZE - 1) {
        Some(v) => v & !(PAGE_SIZE - 1),
        None => !(PAGE_SIZE - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_slots_are_page_aligned_and_tops_leave_room_for_the_record() {
        assert_eq!(KERNEL_STACK_SLOT_BYTES % PAGE_SIZE, 0);
        for cpu in 0..MAX_CPUS {
            let guard = kernel_stack_guard_offset(cpu);
            let top = kernel_stack_top_offset(cpu);
            assert_eq!(guard % PAGE_SIZE, 0);
            assert_eq!(top % 16, 0, "SP must stay 16-byte aligned");
            assert_eq!(top + CPU_RECORD_BYTES, kernel_stack_guard_offset(cpu + 1));
            assert!(top - (guard + PAGE_SIZE) >= 32 * 1024 - CPU_RECORD_BYTES);
        }
    }

    #[test]
    fn user_ranges() {
        assert!(is_user_range(0, 4096));
        assert!(is_user_range(USER_END - 8, 8));
        assert!(!is_user_range(USER_END - 8, 9));
        assert!(!is_user_range(u64::MAX - 1, 4));
        assert!(!is_user_range(KIMAGE_VBASE, 1));
    }

    #[test]
    fn page_rounding() {
        assert_eq!(page_floor(0x1fff), 0x1000);
        assert_eq!(page_ceil(0x1001), 0x2000);
        assert_eq!(page_ceil(0x1000), 0x1000);
        assert_eq!(
            linear_to_phys(phys_to_linear(0x4000_0000)),
            Some(0x4000_0000)
        );
        assert_eq!(linear_to_phys(KIMAGE_VBASE), None);
    }
}
