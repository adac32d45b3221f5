//! Per-bit-width shuffle tables, computed at compile time.
//!
//! Index `n` (1..=24) of each table belongs to bit width `n`; index 0 is unused. Value `i` of a
//! group occupies stream bits `[i·N, i·N+N)` (LSB first, see the specification §1).
// The tables are built by `const fn`s at compile time: an index out of range there is a
// compile error, not a run-time panic.
#![allow(clippy::indexing_slicing)]

use crate::arch::generic::pernix::by_width;

/// Tables of the AVX-512 kernels (16 values, i.e. two 8-value groups of `2N` bytes, per step).
#[derive(Clone, Copy)]
pub(crate) struct Z512 {
    /// `vpermb` indices: qword `j` gathers the 8 bytes starting at byte `⌊2jN/8⌋`.
    pub dec_idx: [u8; 64],
    /// `vpmultishiftqb` controls: dword `2j+d` of qword `j` gets its value's field with the
    /// field's top bit at bit 31 (so a shift right by `32−N` extracts it).
    pub dec_ctrl: [u8; 64],
    /// Compression: left shift of qword `j` (holding values `2j`, `2j+1`) by `2jN mod 8`.
    pub cmp_shift: [u64; 8],
    /// Compression: `vpermb` indices of the `p`-th qword contributing to each output byte
    /// (for p = 0, bytes past `2N` select a byte that is always zero).
    pub cmp_idx: [[u8; 64]; 4],
    /// Compression: which output bytes have a `p`-th contributor.
    pub cmp_mask: [u64; 4],
    /// Compression: how many contributors an output byte can have (1..=4).
    pub cmp_perms: usize,
}

const fn z512(n: usize) -> Z512 {
    let mut t = Z512 {
        dec_idx: [0; 64],
        dec_ctrl: [0; 64],
        cmp_shift: [0; 8],
        cmp_idx: [[0; 64]; 4],
        cmp_mask: [0; 4],
        cmp_perms: 1,
    };
    if n == 0 {
        return t;
    }
    let mut j = 0;
    while j < 8 {
        let base = 2 * j * n / 8;
        let off = 2 * j * n % 8;
        let mut b = 0;
        while b < 8 {
            t.dec_idx[8 * j + b] = (base + b) as u8;
            let d = b / 4;
            let k = b % 4;
            // Source bit of output bit 8k of dword d: field start + 8k − (32 − N), mod 64.
            let src = (off + d * n + 8 * k + n + 64 - 32) % 64;
            t.dec_ctrl[8 * j + b] = src as u8;
            b += 1;
        }
        t.cmp_shift[j] = off as u64;
        j += 1;
    }
    // Output byte d of the 2N-byte chunk: every qword j whose shifted bits reach into it.
    // Bytes past 2N read byte 7 of qword 7, which is zero (a qword holds 2N + 7 <= 55 bits).
    let mut d = 2 * n;
    while d < 64 {
        t.cmp_idx[0][d] = 63;
        d += 1;
    }
    let mut d = 0;
    let mut max = 1;
    while d < 2 * n {
        let mut count = 0;
        let mut j = 0;
        while j < 8 {
            let base = 2 * j * n / 8;
            let off = 2 * j * n % 8;
            if d >= base && d - base < 8 && 8 * (d - base) < off + 2 * n {
                t.cmp_idx[count][d] = (8 * j + d - base) as u8;
                t.cmp_mask[count] |= 1 << d;
                count += 1;
            }
            j += 1;
        }
        if count > max {
            max = count;
        }
        d += 1;
    }
    t.cmp_perms = max;
    t
}

/// The AVX-512 tables for every bit width.
pub(crate) static Z512_TABLES: [Z512; 25] = by_width!(z512);

/// `vpermb`/`vpermt2b` indices that gather the low `k` bytes of each of 16 lanes of `stride`
/// bytes into the first `16·k` bytes; the other bytes select `fill`.
const fn byte_gather(k: usize, stride: usize, fill: u8) -> [u8; 64] {
    let mut t = [fill; 64];
    let mut d = 0;
    while d < 16 * k {
        t[d] = (stride * (d / k) + d % k) as u8;
        d += 1;
    }
    t
}

/// `vpermb` indices that gather the low `k` bytes of each of 16 dwords (index `k − 1`): the
/// packing of byte-multiple widths N = 8, 16, 24. Bytes past the 16·k packed ones read byte 3
/// of code 0, which is zero (codes are masked to N <= 24 bits), so a partial step can also
/// write the block's zero padding.
pub(crate) static BYTE_GATHER: [[u8; 64]; 3] = [
    byte_gather(1, 4, 3),
    byte_gather(2, 4, 3),
    byte_gather(3, 4, 3),
];

/// `vpermt2b` indices that gather the low `k` bytes of each of 16 qwords held in two
/// registers (index `k − 1`): the f64 packing of N = 8, 16, 24.
pub(crate) static BYTE_GATHER64: [[u8; 64]; 3] = [
    byte_gather(1, 8, 0),
    byte_gather(2, 8, 0),
    byte_gather(3, 8, 0),
];

/// Tables of the AVX2 kernels (one 8-value group of N bytes per step; the low 128-bit lane holds
/// values 0..4 loaded from byte 0, the high lane values 4..8 loaded from byte `⌊4N/8⌋`).
#[derive(Clone, Copy)]
pub(crate) struct Y256 {
    /// `vpshufb` indices: dword `i` of each lane gets the 4 bytes holding its field.
    pub dec_shuf: [u8; 32],
    /// `vpsllvd` counts that move each field's top bit to bit 31.
    pub dec_shl: [u32; 8],
    /// Byte offset of the high lane's load, `⌊4N/8⌋`.
    pub hi_offset: usize,
}

const fn y256(n: usize) -> Y256 {
    let mut t = Y256 {
        dec_shuf: [0; 32],
        dec_shl: [0; 8],
        hi_offset: 4 * n / 8,
    };
    if n == 0 {
        return t;
    }
    let mut i = 0;
    while i < 8 {
        let lane = i / 4;
        let bit = i * n - 8 * t.hi_offset * lane;
        let (byte, off) = (bit / 8, bit % 8);
        let mut k = 0;
        while k < 4 {
            t.dec_shuf[16 * lane + 4 * (i % 4) + k] = (byte + k) as u8;
            k += 1;
        }
        t.dec_shl[i] = (32 - n - off) as u32;
        i += 1;
    }
    t
}

/// The AVX2 tables for every bit width.
pub(crate) static Y256_TABLES: [Y256; 25] = by_width!(y256);

const fn dec24(signed: bool) -> [u8; 64] {
    let mut t = [0u8; 64];
    let mut l = 0;
    while l < 16 {
        let mut b = 0;
        while b < 4 {
            // Signed: the field in bytes 1..4 (an arithmetic shift by 8 extends it); unsigned:
            // the field in bytes 0..3 (byte 3 is zeroed by the permute's mask).
            let src = if signed {
                3 * l + if b == 0 { 0 } else { b - 1 }
            } else {
                3 * l + b % 3
            };
            t[4 * l + b] = src as u8;
            b += 1;
        }
        l += 1;
    }
    t
}

/// N = 24 decompression: `vpermb` indices placing each 3-byte field in its dword, for signed
/// (`[1]`) and unsigned (`[0]`) values.
pub(crate) static DEC24: [[u8; 64]; 2] = [dec24(false), dec24(true)];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_contributors_cover_every_bit_once() {
        for (n, t) in Z512_TABLES.iter().enumerate().skip(1) {
            assert!(t.cmp_perms <= 4, "N={n}");
            // Each output byte's first contributor exists.
            assert_eq!(t.cmp_mask[0], (1u64 << (2 * n)) - 1, "N={n}");
            if (2 * n) % 8 == 0 {
                assert_eq!(t.cmp_perms, 1, "N={n}");
            }
        }
        assert!(Z512_TABLES[8].dec_idx.iter().all(|&b| b < 64));
        assert!(Y256_TABLES[24].dec_shuf.iter().all(|&b| b < 16));
    }
}
