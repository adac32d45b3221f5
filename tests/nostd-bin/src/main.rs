//! Links fzpack-core into a program without std and runs a PERNIX round trip.
//! Exit code 0 = the round trip was exact to half a quantization step.
#![no_std]
#![no_main]

use fzpack_core::pernix::{
    Backend, BitWidth, BlockSize, Dispatcher, compression_scale_from_bmax, scale_from_bmax,
};

// The host's C library provides the start-up code, `memcpy` and `memset`; no Rust std.
#[link(name = "c")]
unsafe extern "C" {}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}

fn round_trip() -> Result<bool, fzpack_core::pernix::Error> {
    let bits = BitWidth::new(12)?;
    let mut input = [0f32; 42];
    for (i, x) in input.iter_mut().enumerate() {
        *x = i as f32 * 0.1 - 2.0;
    }
    let scale = scale_from_bmax(2.1f32, bits)?;
    let inv = compression_scale_from_bmax(2.1f32, bits)?;
    let d = Dispatcher::new(Backend::Auto)?;
    let mut block = [0u8; 64];
    d.compress_block(bits, BlockSize::B64, &input, inv, &mut block)?;
    let mut out = [0f32; 42];
    d.decompress_block(bits, BlockSize::B64, &block, scale, &mut out, true)?;
    Ok(input
        .iter()
        .zip(&out)
        .all(|(a, b)| (a - b).abs() <= scale * 0.5001))
}

/// The C runtime's entry point (the host's crt calls `main`).
#[unsafe(no_mangle)]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    match round_trip() {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => 10 - e.code(),
    }
}
