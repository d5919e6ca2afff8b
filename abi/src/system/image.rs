//! The system image: what the host tool writes and the root task reads.
//!
//! A system image is one file, loaded beside the kernel (QEMU's
//! `-device loader`, the Pi firmware's `initramfs` line), so the kernel
//! is never relinked per system. It starts with a [`HEADER_BYTES`]-byte
//! header, then the postcard-encoded plan (`super::plan`), then the
//! files the plan names (task ELFs, rule files), each at a
//! page-aligned offset:
//!
//! | offset | bytes | what |
//! |---|---|---|
//! | 0 | 8 | [`IMAGE_MAGIC`] |
//! | 8 | 8 | total bytes of the image, header included (little-endian) |
//! | 16 | 8 | the plan's offset |
//! | 24 | 8 | the plan's bytes |
//! | 32 | 8 | [`checksum`] of every byte after the header |
//! | 40 | 24 | zero |
//!
//! The kernel checks the magic and the total size (so it knows which RAM
//! to keep from the pool) and hands the root a read-only copy; the root
//! checks the checksum and decodes the plan. Nothing in an image is
//! trusted beyond these checks: every offset is bounds-checked.

/// The first eight bytes of every system image ("PCLSYS" and a version).
pub const IMAGE_MAGIC: [u8; 8] = *b"PCLSYS01";
/// Bytes of the header.
pub const HEADER_BYTES: usize = 64;
/// The alignment of every file in the image (a page).
pub const FILE_ALIGN: usize = 4096;
/// The largest image the kernel takes (64 MiB).
pub const MAX_IMAGE_BYTES: u64 = 64 << 20;

/// The header's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageHeader {
    /// Bytes of the whole image, header included.
    pub total_bytes: u64,
    /// Where the plan starts.
    pub plan_offset: u64,
    /// How long the plan is.
    pub plan_bytes: u64,
    /// [`checksum`] of the bytes after the header.
    pub checksum: u64,
}

/// Why bytes are not a system image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageError {
    /// Fewer bytes than the header, or than the header says.
    Truncated,
    /// It does not start with [`IMAGE_MAGIC`].
    BadMagic,
    /// Bigger than [`MAX_IMAGE_BYTES`], or the plan lies outside it.
    BadSize,
    /// The checksum does not match: the image was damaged or cut.
    BadChecksum,
    /// The plan cannot be decoded, or names a file outside the image.
    BadPlan,
}

impl ImageError {
    /// A short description for console lines.
    pub const fn describe(self) -> &'static str {
        match self {
            ImageError::Truncated => "shorter than its header says",
            ImageError::BadMagic => "not a system image (bad magic)",
            ImageError::BadSize => "its sizes are out of range",
            ImageError::BadChecksum => "its checksum does not match (damaged or cut)",
            ImageError::BadPlan => "its plan cannot be read",
        }
    }
}

fn word(bytes: &[u8], offset: usize) -> u64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&bytes[offset..offset + 8]);
    u64::from_le_bytes(raw)
}

impl ImageHeader {
    /// Reads the header from the first [`HEADER_BYTES`] of `bytes`: the
    /// magic and the sizes (not the checksum, which needs the whole
    /// image: [`ImageHeader::check`]). This is all the kernel reads.
    pub fn parse(bytes: &[u8]) -> Result<ImageHeader, ImageError> {
        if bytes.len() < HEADER_BYTES {
            return Err(ImageError::Truncated);
        }
        if bytes[..8] != IMAGE_MAGIC {
            return Err(ImageError::BadMagic);
        }
        let header = ImageHeader {
            total_bytes: word(bytes, 8),
            plan_offset: word(bytes, 16),
            plan_bytes: word(bytes, 24),
            checksum: word(bytes, 32),
        };
        let plan_end = header.plan_offset.checked_add(header.plan_bytes);
        let sizes_fit = header.total_bytes >= HEADER_BYTES as u64
            && header.total_bytes <= MAX_IMAGE_BYTES
            && header.plan_offset >= HEADER_BYTES as u64
            && plan_end.is_some_and(|end| end <= header.total_bytes);
        if !sizes_fit {
            return Err(ImageError::BadSize);
        }
        Ok(header)
    }

    /// Checks that `image` is the whole image the header describes: as
    /// long as it says, with a matching checksum.
    pub fn check(&self, image: &[u8]) -> Result<(), ImageError> {
        if (image.len() as u64) < self.total_bytes {
            return Err(ImageError::Truncated);
        }
        let body = &image[HEADER_BYTES..self.total_bytes as usize];
        if checksum(body) != self.checksum {
            return Err(ImageError::BadChecksum);
        }
        Ok(())
    }

    /// The header as bytes.
    pub fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut out = [0u8; HEADER_BYTES];
        out[..8].copy_from_slice(&IMAGE_MAGIC);
        for (offset, value) in [
            (8, self.total_bytes),
            (16, self.plan_offset),
            (24, self.plan_bytes),
            (32, self.checksum),
        ] {
            out[offset..offset + 8].copy_from_slice(&value.to_le_bytes());
        }
        out
    }
}

/// FNV-1a, 64 bits: enough to catch a damaged or cut image (not an
/// attacker, who could write any plan anyway).
pub fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(body: &[u8]) -> std::vec::Vec<u8> {
        let header = ImageHeader {
            total_bytes: (HEADER_BYTES + body.len()) as u64,
            plan_offset: HEADER_BYTES as u64,
            plan_bytes: body.len() as u64,
            checksum: checksum(body),
        };
        let mut bytes = header.encode().to_vec();
        bytes.extend_from_slice(body);
        bytes
    }

    #[test]
    fn a_written_header_reads_back_and_checks() {
        let bytes = image(b"plan bytes");
        let header = ImageHeader::parse(&bytes).unwrap();
        assert_eq!(header.total_bytes, bytes.len() as u64);
        assert_eq!(header.encode().as_slice(), &bytes[..HEADER_BYTES]);
        assert_eq!(header.check(&bytes), Ok(()));
    }

    #[test]
    fn damage_is_found() {
        let mut bytes = image(b"plan bytes");
        assert_eq!(ImageHeader::parse(&bytes[..10]), Err(ImageError::Truncated));
        let header = ImageHeader::parse(&bytes).unwrap();
        assert_eq!(
            header.check(&bytes[..bytes.len() - 1]),
            Err(ImageError::Truncated)
        );
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert_eq!(header.check(&bytes), Err(ImageError::BadChecksum));
        bytes[0] = b'X';
        assert_eq!(ImageHeader::parse(&bytes), Err(ImageError::BadMagic));
    }

    #[test]
    fn sizes_out_of_range_are_refused() {
        let good = image(b"plan");
        for (offset, value) in [
            (8, MAX_IMAGE_BYTES + 1),
            (8, 10),
            (16, 8),
            (24, u64::MAX),
            (24, 1000),
        ] {
            let mut bytes = good.clone();
            bytes[offset..offset + 8].copy_from_slice(&value.to_le_bytes());
            assert_eq!(
                ImageHeader::parse(&bytes),
                Err(ImageError::BadSize),
                "word {offset} = {value}"
            );
        }
    }
}
