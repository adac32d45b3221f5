//! CRC-32 (zlib/IEEE: reflected polynomial 0xEDB88320, init and final xor 0xFFFFFFFF), the
//! checksum of SZp archive format 2 and of `.fzm` containers.
//!
//! On x86_64 and aarch64 this is `crc32fast` (carry-less-multiply kernel where the build or, with
//! `std`, the CPU has it; else slicing-by-16). On every other target, and with feature `small`,
//! it is a nibble-at-a-time loop over a 64-byte table: crc32fast's slicing-by-16 table is 16 KiB
//! of `.rodata` and its indexing keeps a bounds-check panic path, both unwelcome on a
//! microcontroller (the firmware proof links no panic handler). Both give the same values (tested below).

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
    /// A running CRC-32, four bits per step from a 16-entry (64-byte) table: a quarter of
    /// the bitwise loop's steps for 64 bytes of `.rodata`, no panic path (the index is masked
    /// to 0..16 and read with `get`).
    #[derive(Clone)]
    pub(crate) struct Crc32(u32);

    /// `NIBBLE[i]`: the CRC register after shifting nibble `i` through four bitwise steps.
    const NIBBLE: [u32; 16] = {
        let mut t = [0u32; 16];
        let mut i = 0;
        while i < 16 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 4 {
                c = (c >> 1) ^ (0xEDB8_8320 & (c & 1).wrapping_neg());
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };

    #[inline(always)]
    fn step(c: u32) -> u32 {
        (c >> 4) ^ NIBBLE.get((c & 15) as usize).copied().unwrap_or(0)
    }

    impl Crc32 {
        /// A CRC continued from a finished value `crc` (`0` starts a fresh one).
        #[inline]
        pub(crate) fn new_with_initial(crc: u32) -> Self {
            Crc32(!crc)
        }
        /// Adds `data`.
        pub(crate) fn update(&mut self, data: &[u8]) {
            let mut c = self.0;
            // Four bytes at a time: the register takes a little-endian word, then eight
            // nibble steps (the same steps as byte by byte, without a load per byte).
            let (words, rest) = data.as_chunks::<4>();
            for w in words {
                c ^= u32::from_le_bytes(*w);
                c = step(step(step(step(step(step(step(step(c))))))));
            }
            for &b in rest {
                c = step(step(c ^ u32::from(b)));
            }
            self.0 = c;
        }
        /// The CRC of everything added.
        #[inline]
        pub(crate) fn finalize(self) -> u32 {
            !self.0
        }
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
        }
    }
}
