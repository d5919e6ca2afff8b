//! Flattened device trees: the boot loader's description of the board,
//! read before anything else at boot.

use arch::device_tree::{parse, remove_nops, total_size};

/// Reads `data` as a device tree blob, the way the kernel does at boot.
///
/// Checks: `total_size`, `remove_nops` (with a buffer as large as the
/// blob and with one half as large) and `parse` never panic; a NOP-free
/// copy fits its buffer, states its own length as its total size and is a
/// fixed point (removing NOPs again gives the same bytes); an accepted board
/// lists its RAM in ascending order, every `no-map` range is a reserved
/// one, the pieces of RAM the kernel maps around them lie inside RAM and
/// clear of them, and the values the kernel logs at boot (total RAM, the
/// boot options) can be computed.
pub fn device_tree(data: &[u8]) {
    let _ = total_size(data);
    let mut out = vec![0u8; data.len()];
    if let Ok(len) = remove_nops(data, &mut out) {
        check_compact_copy(&out, len);
    }
    let mut half = vec![0u8; data.len() / 2];
    if let Ok(len) = remove_nops(data, &mut half) {
        assert!(len <= half.len());
    }
    let mut scratch = vec![0u8; data.len()];
    if let Ok(info) = parse(data, &mut scratch) {
        assert!(info.from_device_tree);
        assert!(
            info.ram.windows(2).all(|w| w[0].start <= w[1].start),
            "RAM not in ascending order: {:?}",
            info.ram
        );
        assert!(info.no_map.iter().all(|r| info.reserved.contains(r)));
        for ram in &info.ram {
            for piece in ram.without(&info.no_map) {
                assert!(piece.start >= ram.start && piece.end() <= ram.end());
                assert!(
                    info.no_map.iter().all(|hole| hole.size == 0
                        || piece.end() <= hole.start
                        || hole.end() <= piece.start),
                    "{piece:?} overlaps a no-map range: {:?}",
                    info.no_map
                );
            }
        }
        // What `microkernel/src/main.rs` prints in its boot banner.
        let _ = info.ram_bytes();
        let _ = info.boot_option("portcullis.mode");
    }
}

fn check_compact_copy(out: &[u8], len: usize) {
    assert!(
        len <= out.len(),
        "remove_nops wrote {len} bytes into {}",
        out.len()
    );
    let copy = &out[..len];
    assert_eq!(
        total_size(copy),
        Some(len),
        "the copy's header states another size"
    );
    let mut again = vec![0u8; len];
    assert_eq!(
        remove_nops(copy, &mut again),
        Ok(len),
        "the copy is refused"
    );
    assert_eq!(&again[..], copy, "removing NOPs twice changed the tree");
}
