//! What the kernel writes to a GICv2 distributor (GIC-400 on the Pi 4) at
//! init, computed on the host; `drivers::gicv2` applies it.
//!
//! QEMU's GIC comes out of reset clean; a real board's comes from the
//! firmware, which may have left interrupts enabled, pending or active (a
//! watchdog's, the VideoCore's, an SGI from its own spin loop). The kernel
//! enables only the interrupts it owns, so everything else starts off:
//! with the distributor disabled, every interrupt's enable, pending and
//! active bit is cleared (the SGIs' pending state through their own
//! registers), every priority set to the one the kernel uses, and every
//! shared interrupt (SPI) aimed at this CPU, which the reset value (no
//! CPU) would never deliver once the kernel enables one.

/// A write the reset makes, by register array and word index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DistributorWrite {
    /// GICD_CTLR.
    Control(u32),
    /// GICD_ICENABLERn: 1 bits disable.
    ClearEnable(usize, u32),
    /// GICD_ICPENDRn: 1 bits clear pending (SPIs and PPIs).
    ClearPending(usize, u32),
    /// GICD_ICACTIVERn: 1 bits deactivate.
    ClearActive(usize, u32),
    /// GICD_CPENDSGIRn: 1 bits clear an SGI's pending state from a source
    /// CPU.
    ClearSgiPending(usize, u32),
    /// GICD_IPRIORITYRn: four interrupts' priorities.
    Priority(usize, u32),
    /// GICD_ITARGETSRn: four SPIs' target CPUs (n ≥ 8; 0..8 are the
    /// banked, read-only SGI and PPI words).
    Targets(usize, u32),
}

/// Interrupts the distributor implements, from GICD_TYPER.ITLinesNumber:
/// 32 × (N + 1), at most 1020.
pub const fn interrupt_lines(typer: u32) -> u32 {
    let lines = 32 * ((typer & 0x1f) + 1);
    if lines > 1020 {
        1020
    } else {
        lines
    }
}

/// The reset, in order, for a distributor whose GICD_TYPER reads `typer`,
/// with `priority` for every interrupt and SPIs aimed at the CPU interface
/// mask `this_cpu` (what GICD_ITARGETSR0 reads for this CPU). Leaves the
/// distributor disabled: the driver enables it after.
pub fn distributor_reset(
    typer: u32,
    priority: u8,
    this_cpu: u8,
) -> impl Iterator<Item = DistributorWrite> {
    let lines = interrupt_lines(typer) as usize;
    // One bit per interrupt: a word per 32; one byte: a word per 4.
    let bit_words = lines.div_ceil(32);
    let byte_words = lines.div_ceil(4);
    let priorities = u32::from_ne_bytes([priority; 4]);
    let targets = u32::from_ne_bytes([this_cpu; 4]);
    core::iter::once(DistributorWrite::Control(0))
        .chain((0..bit_words).map(|n| DistributorWrite::ClearEnable(n, u32::MAX)))
        .chain((0..bit_words).map(|n| DistributorWrite::ClearPending(n, u32::MAX)))
        .chain((0..bit_words).map(|n| DistributorWrite::ClearActive(n, u32::MAX)))
        .chain((0..4).map(|n| DistributorWrite::ClearSgiPending(n, u32::MAX)))
        .chain((0..byte_words).map(move |n| DistributorWrite::Priority(n, priorities)))
        .chain((8..byte_words).map(move |n| DistributorWrite::Targets(n, targets)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use DistributorWrite::*;

    /// The Pi 4's GIC-400: ITLinesNumber 7, 256 interrupts.
    const GIC_400_TYPER: u32 = 0x0000_fc27;

    #[test]
    fn the_line_count_comes_from_typer() {
        assert_eq!(interrupt_lines(GIC_400_TYPER), 256);
        assert_eq!(interrupt_lines(0), 32);
        assert_eq!(interrupt_lines(0x1f), 1020);
    }

    #[test]
    fn every_interrupt_is_disabled_unpended_deactivated_and_aimed_here() {
        let writes: Vec<_> = distributor_reset(GIC_400_TYPER, 0xa0, 0x01).collect();
        assert_eq!(writes[0], Control(0), "the distributor goes off first");
        assert!(!writes[1..].iter().any(|w| matches!(w, Control(_))));
        let words = |pick: fn(&DistributorWrite) -> Option<(usize, u32)>| {
            writes.iter().filter_map(pick).collect::<Vec<_>>()
        };
        let all_of = |count: usize, value: u32| (0..count).map(|n| (n, value)).collect::<Vec<_>>();
        let cleared = all_of(8, u32::MAX);
        assert_eq!(
            words(|w| match *w {
                ClearEnable(n, v) => Some((n, v)),
                _ => None,
            }),
            cleared
        );
        assert_eq!(
            words(|w| match *w {
                ClearPending(n, v) => Some((n, v)),
                _ => None,
            }),
            cleared
        );
        assert_eq!(
            words(|w| match *w {
                ClearActive(n, v) => Some((n, v)),
                _ => None,
            }),
            cleared
        );
        assert_eq!(
            words(|w| match *w {
                ClearSgiPending(n, v) => Some((n, v)),
                _ => None,
            }),
            all_of(4, u32::MAX)
        );
        assert_eq!(
            words(|w| match *w {
                Priority(n, v) => Some((n, v)),
                _ => None,
            }),
            all_of(64, 0xa0a0_a0a0)
        );
        // SPIs 32..256 only: words 8..64.
        assert_eq!(
            words(|w| match *w {
                Targets(n, v) => Some((n, v)),
                _ => None,
            }),
            (8..64).map(|n| (n, 0x0101_0101)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_distributor_with_only_private_interrupts_has_no_targets() {
        let writes: Vec<_> = distributor_reset(0, 0xa0, 0x02).collect();
        assert!(!writes.iter().any(|w| matches!(w, Targets(..))));
        assert!(writes.contains(&ClearActive(0, u32::MAX)));
        assert!(!writes.contains(&ClearActive(1, u32::MAX)));
    }
}
