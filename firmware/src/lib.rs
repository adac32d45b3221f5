//! The core entry points of both codecs as a C-callable static library for microcontrollers.
//! `scripts/firmware.sh` links it with `--gc-sections` and fails if any panic symbol survives.
//!
//! It calls exactly the public API the README shows: `szp::compress`/`decompress` resolve to
//! the scalar path at compile time on these targets, so no SIMD fallback (nor its block
//! buffers on the stack) is linked.
#![no_std]

use core::slice;
use fzpack_core::pernix::{Backend, BitWidth, BlockSize, Dispatcher};
use fzpack_core::szp::{self, Config, StreamEncoder};

/// Any reachable panic would reference this undefined symbol and show up in `nm`.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe extern "C" {
        fn fzpack_panic_reached() -> !;
    }
    // SAFETY: never defined: its presence in a linked image is the failure the check detects.
    unsafe { fzpack_panic_reached() }
}

fn code<T>(r: Result<T, fzpack_core::pernix::Error>) -> i32 {
    match r {
        Ok(_) => 0,
        Err(e) => e.code(),
    }
}

/// PERNIX: compress `blocks` 64-byte blocks of f32.
///
/// # Safety
/// `input` holds `n` floats, `output` `out_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fw_pernix_compress(
    bits: u8,
    input: *const f32,
    n: usize,
    inv: f32,
    output: *mut u8,
    out_len: usize,
    blocks: usize,
) -> i32 {
    // SAFETY: caller contract.
    let (i, o) = unsafe {
        (
            slice::from_raw_parts(input, n),
            slice::from_raw_parts_mut(output, out_len),
        )
    };
    let r = BitWidth::new(bits).and_then(|b| {
        Dispatcher::new(Backend::Auto)?.compress_blocks(b, BlockSize::B64, i, inv, o, blocks)
    });
    code(r)
}

/// PERNIX: decompress `blocks` 64-byte blocks into f32.
///
/// # Safety
/// `input` holds `in_len` bytes, `output` `n` floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fw_pernix_decompress(
    bits: u8,
    input: *const u8,
    in_len: usize,
    scale: f32,
    output: *mut f32,
    n: usize,
    blocks: usize,
) -> i32 {
    // SAFETY: caller contract.
    let (i, o) = unsafe {
        (
            slice::from_raw_parts(input, in_len),
            slice::from_raw_parts_mut(output, n),
        )
    };
    let r = BitWidth::new(bits).and_then(|b| {
        Dispatcher::new(Backend::Auto)?.decompress_blocks(
            b,
            BlockSize::B64,
            i,
            scale,
            o,
            blocks,
            true,
        )
    });
    code(r)
}

/// SZp one-shot encode (ABS bound); returns the archive length or -1.
///
/// # Safety
/// `input` holds `n` floats, `output` `out_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fw_szp_encode(
    input: *const f32,
    n: usize,
    eb: f64,
    output: *mut u8,
    out_len: usize,
) -> isize {
    // SAFETY: caller contract.
    let (i, o) = unsafe {
        (
            slice::from_raw_parts(input, n),
            slice::from_raw_parts_mut(output, out_len),
        )
    };
    szp::compress(i, &Config::abs(eb), o).map_or(-1, |l| l as isize)
}

/// SZp streaming encode of `n` values pushed in 128-value blocks; returns the length or -1.
///
/// # Safety
/// `input` holds `n` floats, `output` `out_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fw_szp_stream_encode(
    input: *const f32,
    n: usize,
    eb: f64,
    max_abs: f64,
    output: *mut u8,
    out_len: usize,
) -> isize {
    // SAFETY: caller contract.
    let (i, o) = unsafe {
        (
            slice::from_raw_parts(input, n),
            slice::from_raw_parts_mut(output, out_len),
        )
    };
    let cfg = Config::abs(eb).with_max_abs(max_abs);
    let Ok(mut enc) = StreamEncoder::<f32>::new(o, n, &cfg) else {
        return -1;
    };
    for block in i.chunks(128) {
        if enc.push_block(block).is_err() {
            return -1;
        }
    }
    enc.finish().map_or(-1, |l| l as isize)
}

/// SZp decode; returns the number of values or -1.
///
/// # Safety
/// `input` holds `in_len` bytes, `output` `n` floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fw_szp_decode(
    input: *const u8,
    in_len: usize,
    output: *mut f32,
    n: usize,
) -> isize {
    // SAFETY: caller contract.
    let (i, o) = unsafe {
        (
            slice::from_raw_parts(input, in_len),
            slice::from_raw_parts_mut(output, n),
        )
    };
    szp::decompress(i, o).map_or(-1, |l| l as isize)
}
