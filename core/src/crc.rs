//! CRC-32 (zlib/IEEE: reflected polynomial 0xEDB88320, init and final xor 0xFFFFFFFF), the
//! checksum of SZp archive format 2 and of `.fzm` containers.
//!
//! On x86_64 and aarch64 this is `crc32fast` (carry-less-multiply kernel where the build or, with
//! `std`, the CPU has it; else slicing-by-16). On every other target it is a byte-at-a-time
//! loop over a 256-entry (1 KiB) table, and with feature `small` a nibble-at-a-time loop over a
//! 16-entry (64-byte) table: crc32fast's slicing-by-16 table is 16 KiB of `.rodata` and its
//! indexing keeps a bounds-check panic path, both unwelcome on a microcontroller (the firmware
//! proof links no panic handler). On Cortex-M4F the byte table takes the CRC from about 10 to
//! about 5 instructions per SZp value (`target/firmware.sizes.md`, `firmware/profile.sh`) for
//! 960 more bytes of `.rodata`. All give the same values (tested below).

#[cfg(not(any(
    feature = "small",
    not(any(target_arch = "x86_64", target_arch = "aarch64"))
)))]
mod imp {
    /// A running CRC-32.
    #[derive(Clone)]
    pub(crate) struct Crc32(crc32fast::Hasher);

    impl Crc32 {
        /// A CRC continued from a finished value `crc` (`0` starts a fresh one).
        #[inline]
        pub(crate) fn new_with_initial(crc: u32) -> Self {
            Crc32(crc32fast::Hasher::new_with_initial(crc))
        }
        /// Adds `data`.
        #[inline]
        pub(crate) fn update(&mut self, data: &[u8]) {
            self.0.update(data);
        }
        /// The CRC of everything added.
        #[inline]
        pub(crate) fn finalize(self) -> u32 {
            self.0.finalize()
        }
    }
}

#[cfg(any(
    feature = "small",
    not(any(target_arch = "x86_64", target_arch = "aarch64"))
))]
mod imp {
    /// A running CRC-32 from a table, no panic path (the index is masked to the table and
    /// read with `get`): a byte per step from a 256-entry (1 KiB) table, or with feature
    /// `small` a nibble per step from a 16-entry (64-byte) table (twice the steps).
    #[derive(Clone)]
    pub(crate) struct Crc32(u32);

    /// Bits per table step.
    const BITS: u32 = if cfg!(feature = "small") { 4 } else { 8 };

    impl Crc32 {
        /// A CRC continued from a finished value `crc` (`0` starts a fresh one).
        #[inline]
        pub(crate) fn new_with_initial(crc: u32) -> Self {
            Crc32(!crc)
        }
        /// Adds `data`.
        pub(crate) fn update(&mut self, data: &[u8]) {
            self.0 = if BITS == 8 {
                super::table::update::<8>(self.0, data, &super::table::BYTE)
            } else {
                super::table::update::<4>(self.0, data, &super::table::NIBBLE)
            };
        }
        /// The CRC of everything added.
        #[inline]
        pub(crate) fn finalize(self) -> u32 {
            !self.0
        }
    }
}

/// The table-driven CRC of the targets without crc32fast (compiled everywhere, so that the
/// host tests check both tables against the bitwise form).
#[cfg_attr(
    not(any(
        feature = "small",
        not(any(target_arch = "x86_64", target_arch = "aarch64"))
    )),
    allow(dead_code)
)]
mod table {
    /// The table of `BITS`-bit steps: entry `i` is the register after shifting `i` through
    /// `BITS` bitwise steps.
    // Evaluated only in the statics' initializers: an index out of range fails the build.
    #[allow(clippy::indexing_slicing)]
    const fn make<const N: usize>(bits: u32) -> [u32; N] {
        let mut t = [0u32; N];
        let mut i = 0;
        while i < N {
            let mut c = i as u32;
            let mut k = 0;
            while k < bits {
                c = (c >> 1) ^ (0xEDB8_8320 & (c & 1).wrapping_neg());
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    }

    /// A nibble per step (64 bytes).
    pub(super) static NIBBLE: [u32; 16] = make::<16>(4);
    /// A byte per step (1 KiB).
    pub(super) static BYTE: [u32; 256] = make::<256>(8);

    /// The register `c` (inverted CRC) after `data`, `BITS` bits per step from `t`
    /// (`2^BITS` entries).
    #[inline(always)]
    pub(super) fn update<const BITS: u32>(mut c: u32, data: &[u8], t: &[u32]) -> u32 {
        let m = (1u32 << BITS) - 1;
        let step = |c: u32| (c >> BITS) ^ t.get((c & m) as usize).copied().unwrap_or(0);
        // Four bytes at a time: the register takes a little-endian word, then `32/BITS` steps
        // (the same steps as byte by byte, without a load per byte).
        // Unrolled by hand (the firmware's opt-level "s" keeps a counted loop otherwise).
        let four = |c: u32| step(step(step(step(c))));
        let (words, rest) = data.as_chunks::<4>();
        for w in words {
            c ^= u32::from_le_bytes(*w);
            c = if BITS == 4 { four(four(c)) } else { four(c) };
        }
        for &b in rest {
            c ^= u32::from(b);
            for _ in 0..8 / BITS {
                c = step(c);
            }
        }
        c
    }
}

pub(crate) use imp::Crc32;

impl Crc32 {
    /// A fresh CRC.
    #[inline]
    pub(crate) fn new() -> Self {
        Crc32::new_with_initial(0)
    }
}

/// The CRC-32 of `data`.
#[inline]
pub(crate) fn hash(data: &[u8]) -> u32 {
    let mut h = Crc32::new();
    h.update(data);
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bitwise form, always compiled here, against whichever form this build uses.
    fn bitwise(crc: u32, data: &[u8]) -> u32 {
        let mut c = !crc;
        for &b in data {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = (c >> 1) ^ (0xEDB8_8320 & (c & 1).wrapping_neg());
            }
        }
        !c
    }

    #[test]
    fn check_values_and_continuation() {
        // The CRC-32 check value and the empty input.
        assert_eq!(hash(b"123456789"), 0xCBF4_3926);
        assert_eq!(hash(b""), 0);
        let mut data = [0u8; 1031];
        let mut s = 0x1234_5678u32;
        for b in data.iter_mut() {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            *b = (s >> 24) as u8;
        }
        for cut in [0usize, 1, 7, 16, 500, 1031] {
            let (a, b) = data.split_at(cut);
            let mut h = Crc32::new_with_initial(hash(a));
            h.update(b);
            assert_eq!(h.finalize(), hash(&data), "cut {cut}");
            assert_eq!(bitwise(bitwise(0, a), b), hash(&data), "cut {cut}");
            // Both tables of the targets without crc32fast, whichever this build uses.
            for c in [!0u32, !hash(a)] {
                let want = !bitwise(!c, b);
                assert_eq!(table::update::<8>(c, b, &table::BYTE), want, "cut {cut}");
                assert_eq!(table::update::<4>(c, b, &table::NIBBLE), want, "cut {cut}");
            }
        }
    }
}
