//! The C ABI's Rust side called directly from Rust, as a C caller would call it (raw pointers,
//! lengths, out-parameters): small cases that `scripts/miri.sh` runs under Miri, so the raw
//! pointer handling of `extern "C"` functions (slices built from pointers, out-parameter writes,
//! handle allocation and release, alignment checks) is checked for undefined behaviour. The C
//! programs in `capi/tests/c_abi.rs` test the same functions through a real C compiler natively.

use core::ffi::{CStr, c_void};
use core::ptr::{null, null_mut};

use fzpack_core::pernix::{Backend, Error};
use pernix::szp::{self as fs, status};
use pernix::*;

const INVALID: i32 = Error::InvalidArgument.code();

fn create(backend: Backend) -> *mut PernixDispatcher {
    let mut d: *mut PernixDispatcher = null_mut();
    // SAFETY: `d` is a valid place for one pointer.
    let rc = unsafe { pernix_dispatcher_create(backend.code(), &mut d) };
    assert_eq!(rc, 0, "create {}", backend.name());
    assert!(!d.is_null());
    d
}

#[test]
fn dispatchers_are_created_queried_and_destroyed() {
    for b in [Backend::Auto, Backend::Fallback] {
        let d = create(b);
        // SAFETY: `d` is live.
        let code = unsafe { pernix_dispatcher_backend(d) };
        if cfg!(miri) {
            // Under Miri detection reports no SIMD features: Auto is the scalar fallback.
            assert_eq!(code, Backend::Fallback.code());
        }
        assert_ne!(
            code,
            Backend::Auto.code(),
            "a handle reports what Auto resolved to"
        );
        // SAFETY: `d` is live and not used again.
        unsafe { pernix_dispatcher_destroy(d) };
    }
    // SAFETY: null is documented as ignored / reported.
    unsafe {
        pernix_dispatcher_destroy(null_mut());
        assert_eq!(pernix_dispatcher_backend(null()), -1);
        assert_eq!(
            pernix_dispatcher_create(Backend::Fallback.code(), null_mut()),
            INVALID
        );
    }
    // An unknown backend value: an error, and the handle is set to null.
    let mut d: *mut PernixDispatcher = core::ptr::NonNull::dangling().as_ptr();
    // SAFETY: `d` is a valid place for one pointer.
    let rc = unsafe { pernix_dispatcher_create(9999, &mut d) };
    assert_ne!(rc, 0);
    assert!(d.is_null());
}

#[test]
fn constants_and_status_strings() {
    assert_eq!(pernix_min_bit_width(), 1);
    assert_eq!(pernix_max_bit_width(), 24);
    assert!(pernix_is_valid_bit_width(8) && !pernix_is_valid_bit_width(0));
    assert!(pernix_is_valid_block_size(64) && !pernix_is_valid_block_size(65));
    assert_eq!(pernix_compressed_block_size(), 64);
    assert_eq!(pernix_elements_per_block(8), 64);
    assert_eq!(pernix_elements_per_block(0), 0);
    for code in [0, -1, -2, -3, -4, -5, -6, 7, i32::MIN] {
        // SAFETY: the functions return pointers to static NUL-terminated strings.
        let s = unsafe { CStr::from_ptr(pernix_status_string(code)) };
        assert!(s.to_str().unwrap().starts_with("PERNIX_STATUS_"));
        // SAFETY: as above.
        let s = unsafe { CStr::from_ptr(fs::fzpack_szp_status_string(code)) };
        assert!(s.to_str().unwrap().starts_with("FZPACK_SZP_"));
    }
}

#[test]
fn scale_helpers_write_only_through_valid_pointers() {
    let mut s32 = 0f32;
    let mut s64 = 0f64;
    // SAFETY: the out-pointers are valid or null.
    unsafe {
        assert_eq!(pernix_scale_f32(127.0, 8, &mut s32), 0);
        assert_eq!(s32, 1.0);
        assert_eq!(pernix_decompression_scale_f64(127.0, 8, &mut s64), 0);
        assert_eq!(s64, 1.0);
        assert_eq!(pernix_inverse_scale_f32(4.0, &mut s32), 0);
        assert_eq!(s32, 0.25);
        assert_eq!(pernix_inverse_scale_f64(0.5, &mut s64), 0);
        assert_eq!(s64, 2.0);
        assert_eq!(pernix_compression_scale_f32(127.0, 8, &mut s32), 0);
        assert_eq!(pernix_compression_scale_f64(127.0, 8, &mut s64), 0);
        assert_eq!(pernix_scale_f32(127.0, 8, null_mut()), INVALID);
        assert_eq!(pernix_inverse_scale_f64(0.0, &mut s64), INVALID);
        assert_eq!(pernix_scale_f64(1.0, 0, &mut s64), INVALID);
        // A misaligned out-pointer is refused, not written.
        let mut raw = [0u64; 2];
        let odd = raw.as_mut_ptr().cast::<u8>().wrapping_add(1).cast::<f64>();
        assert_eq!(pernix_inverse_scale_f64(2.0, odd), INVALID);
        assert_eq!(raw, [0, 0]);
    }
}

#[test]
fn pernix_blocks_round_trip_through_raw_pointers() {
    let d = create(Backend::Auto);
    for bits in [3u8, 7, 16, 24] {
        let bs = 64u32;
        let blocks = 2u32;
        let epb = pernix_elements_per_block(bits) as usize; // per 64-byte block
        let n = epb * blocks as usize;
        let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
        let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        let mut inv = 0f32;
        let mut inv64 = 0f64;
        // SAFETY: out-pointers valid.
        unsafe {
            assert_eq!(pernix_compression_scale_f32(1.0, bits, &mut inv), 0);
            assert_eq!(pernix_compression_scale_f64(1.0, bits, &mut inv64), 0);
        }
        let mut z = vec![0xA5u8; (bs * blocks) as usize + 8];
        let mut z64 = vec![0u8; (bs * blocks) as usize];
        let mut back = vec![0f32; n + 1];
        let mut back64 = vec![0f64; n];
        // Every pointer covers the sizes the C ABI reads or writes for these arguments.
        // SAFETY: n values and bs·blocks bytes behind each pointer, and nothing overlaps.
        unsafe {
            let rc = pernix_compress_blocks_f32(
                d,
                bits,
                bs,
                x.as_ptr().cast(),
                inv,
                z.as_mut_ptr().cast(),
                blocks,
            );
            assert_eq!(rc, 0);
            assert!(z[(bs * blocks) as usize..].iter().all(|&b| b == 0xA5));
            let rc = pernix_compress_block_f32(
                d,
                bits,
                bs,
                x.as_ptr().cast(),
                inv,
                z.as_mut_ptr().cast(),
            );
            assert_eq!(rc, 0);
            let rc = pernix_compress_blocks_f64(
                d,
                bits,
                bs,
                x64.as_ptr().cast(),
                inv64,
                z64.as_mut_ptr().cast(),
                blocks,
            );
            assert_eq!(rc, 0);
            let rc = pernix_decompress_blocks_f32(
                d,
                bits,
                bs,
                z.as_ptr().cast(),
                1.0 / inv,
                back.as_mut_ptr().cast(),
                blocks,
                true,
            );
            assert_eq!(rc, 0);
            assert_eq!(back[n], 0.0, "wrote past the values");
            let rc = pernix_decompress_block_f64(
                d,
                bits,
                bs,
                z64.as_ptr().cast(),
                1.0 / inv64,
                back64.as_mut_ptr().cast(),
                false,
            );
            assert_eq!(rc, 0);
            let rc = pernix_decompress_blocks_f64(
                d,
                bits,
                bs,
                z64.as_ptr().cast(),
                1.0 / inv64,
                back64.as_mut_ptr().cast(),
                blocks,
                true,
            );
            assert_eq!(rc, 0);
            let rc = pernix_decompress_block_f32(
                d,
                bits,
                bs,
                z.as_ptr().cast(),
                1.0 / inv,
                back.as_mut_ptr().cast(),
                true,
            );
            assert_eq!(rc, 0);
        }
        let tol = 1.1 / ((1u32 << (bits - 1)) as f32 - 1.0).max(1.0);
        if bits > 1 {
            for (a, b) in x.iter().zip(&back) {
                assert!((a - b).abs() <= tol, "bits {bits}: {a} vs {b}");
            }
        }
    }
    // Rejected arguments: checked before any slice is formed from the pointers.
    let x = [0f32; 64];
    let mut z = [0u8; 64];
    // The calls are refused before touching anything.
    // SAFETY: every non-null pointer is valid for what the call would touch.
    unsafe {
        let ok_in = x.as_ptr().cast::<c_void>();
        let out = z.as_mut_ptr().cast::<c_void>();
        // A null dispatcher is upstream's `PERNIX_BACKEND_AUTO` (0) in the backend-enum form:
        // it compresses like an Auto dispatcher.
        assert_eq!(pernix_compress_block_f32(null(), 8, 64, ok_in, 1.0, out), 0);
        assert_eq!(
            pernix_compress_block_f32(d, 8, 64, null(), 1.0, out),
            INVALID
        );
        assert_eq!(
            pernix_compress_block_f32(d, 8, 64, ok_in, 1.0, null_mut()),
            INVALID
        );
        assert_eq!(
            pernix_compress_blocks_f32(d, 8, 64, ok_in, 1.0, out, 0),
            INVALID
        );
        assert_ne!(pernix_compress_block_f32(d, 8, 63, ok_in, 1.0, out), 0);
        assert_eq!(
            pernix_compress_block_f32(d, 8, 64, ok_in, f32::NAN, out),
            INVALID
        );
        assert_ne!(pernix_compress_block_f32(d, 0, 64, ok_in, 1.0, out), 0);
        // A misaligned value pointer.
        let odd = x.as_ptr().cast::<u8>().wrapping_add(1).cast::<c_void>();
        assert_eq!(pernix_compress_block_f32(d, 8, 64, odd, 1.0, out), INVALID);
        let mut back = [0f64; 65];
        let odd_out = back
            .as_mut_ptr()
            .cast::<u8>()
            .wrapping_add(4)
            .cast::<c_void>();
        assert_eq!(
            pernix_decompress_block_f64(d, 8, 64, z.as_ptr().cast(), 1.0, odd_out, true),
            INVALID
        );
        pernix_dispatcher_destroy(d);
    }
}

#[test]
fn szp_c_api_round_trips_and_reports_through_out_parameters() {
    let x: Vec<f32> = (0..100).map(|i| (i as f32 * 0.1).cos() * 5.0).collect();
    let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let cap = fs::fzpack_szp_max_compressed_len(x.len(), 16, 8);
    assert!(cap > 0);
    assert_eq!(fs::fzpack_szp_max_compressed_len(10, 16, 77), 0);
    let mut a = vec![0u8; cap];
    let (mut len, mut bad) = (0usize, usize::MAX);
    // SAFETY: every pointer covers what it describes; out-parameters are valid places.
    unsafe {
        let rc = fs::fzpack_szp_compress_f32(
            x.as_ptr(),
            x.len(),
            0,
            1e-3,
            16,
            a.as_mut_ptr().cast(),
            a.len(),
            &mut len,
            &mut bad,
        );
        assert_eq!(rc, status::OK);
        assert!(len > 0 && len <= cap);
        let mut out = vec![0f32; 100];
        let mut n = 0usize;
        let rc = fs::fzpack_szp_decompress_f32(
            a.as_ptr().cast(),
            len,
            out.as_mut_ptr(),
            out.len(),
            &mut n,
        );
        assert_eq!(rc, status::OK);
        assert_eq!(n, 100);
        for (p, q) in x.iter().zip(&out) {
            assert!((p - q).abs() <= 1e-3);
        }
        // Too small an output: the count needed comes back, nothing is written past it.
        let mut small = vec![0f32; 11];
        let rc =
            fs::fzpack_szp_decompress_f32(a.as_ptr().cast(), len, small.as_mut_ptr(), 10, &mut n);
        assert_eq!(rc, status::OUTPUT_TOO_SMALL);
        assert_eq!(n, 100);
        assert_eq!(small[10], 0.0);
        // Truncated archives: errors, never reads past `archive_len`.
        for cut in [0, 1, 10, len / 2, len - 1] {
            let piece = a[..cut].to_vec();
            let rc = fs::fzpack_szp_decompress_f32(
                piece.as_ptr().cast(),
                piece.len(),
                out.as_mut_ptr(),
                out.len(),
                null_mut(),
            );
            assert_ne!(rc, status::OK, "cut {cut}");
        }
        // The wrong element type.
        let mut o64 = vec![0f64; 100];
        let rc = fs::fzpack_szp_decompress_f64(
            a.as_ptr().cast(),
            len,
            o64.as_mut_ptr(),
            o64.len(),
            null_mut(),
        );
        assert_eq!(rc, status::DTYPE_MISMATCH);
        // f64, NOA; a NaN reports its index; a small output reports the capacity needed.
        let cap64 = fs::fzpack_szp_max_compressed_len(100, 16, 9);
        let mut b = vec![0u8; cap64];
        let rc = fs::fzpack_szp_compress_f64(
            x64.as_ptr(),
            100,
            2,
            1e-4,
            16,
            b.as_mut_ptr().cast(),
            b.len(),
            &mut len,
            null_mut(),
        );
        assert_eq!(rc, status::OK);
        let rc =
            fs::fzpack_szp_decompress_f64(b.as_ptr().cast(), len, o64.as_mut_ptr(), 100, &mut n);
        assert_eq!((rc, n), (status::OK, 100));
        let mut y = x64.clone();
        y[42] = f64::NAN;
        let rc = fs::fzpack_szp_compress_f64(
            y.as_ptr(),
            100,
            0,
            1e-4,
            16,
            b.as_mut_ptr().cast(),
            b.len(),
            &mut len,
            &mut bad,
        );
        // A missing value is stored exactly (format 3), not refused.
        assert_eq!(rc, status::OK);
        let rc =
            fs::fzpack_szp_decompress_f64(b.as_ptr().cast(), len, o64.as_mut_ptr(), 100, &mut n);
        assert_eq!((rc, n), (status::OK, 100));
        assert!(o64[42].is_nan() && (o64[41] - y[41]).abs() <= 1e-4);
        let mut tiny = [0u8; 8];
        let rc = fs::fzpack_szp_compress_f64(
            x64.as_ptr(),
            100,
            0,
            1e-4,
            16,
            tiny.as_mut_ptr().cast(),
            tiny.len(),
            &mut len,
            null_mut(),
        );
        assert_eq!(rc, status::OUTPUT_TOO_SMALL);
        assert!(len > 8);
        // Empty input with a null pointer, null output and bad modes.
        let rc = fs::fzpack_szp_compress_f32(
            null(),
            0,
            0,
            1e-3,
            16,
            a.as_mut_ptr().cast(),
            a.len(),
            &mut len,
            null_mut(),
        );
        assert_eq!(rc, status::OK);
        let rc = fs::fzpack_szp_decompress_f32(a.as_ptr().cast(), len, null_mut(), 0, &mut n);
        assert_eq!((rc, n), (status::OK, 0));
        let rc = fs::fzpack_szp_compress_f32(
            x.as_ptr(),
            100,
            1,
            1e-3,
            16,
            a.as_mut_ptr().cast(),
            a.len(),
            null_mut(),
            null_mut(),
        );
        assert_eq!(rc, status::INVALID_ARGUMENT);
        let rc = fs::fzpack_szp_compress_f32(
            x.as_ptr(),
            100,
            0,
            1e-3,
            16,
            null_mut(),
            0,
            null_mut(),
            null_mut(),
        );
        assert_eq!(rc, status::INVALID_ARGUMENT);
        let odd = x.as_ptr().cast::<u8>().wrapping_add(2).cast::<f32>();
        let rc = fs::fzpack_szp_compress_f32(
            odd,
            10,
            0,
            1e-3,
            16,
            a.as_mut_ptr().cast(),
            a.len(),
            null_mut(),
            null_mut(),
        );
        assert_eq!(rc, status::INVALID_ARGUMENT);
    }
}

/// An interpolation-layout archive of `x` shaped `dims`, as the `fzpack` facade (and so the
/// CLI and Python) writes it.
fn interp_archive<T: fzpack::Element>(x: &[T], dims: &[u64]) -> Vec<u8> {
    use fzpack::szp::{Config, Layout, Shape};
    let cfg = Config::abs(1e-3)
        .with_layout(Layout::Interp)
        .with_shape(Shape::new(dims).unwrap());
    // serial: the facade on this thread only (no pool: this test also runs under Miri)
    fzpack::szp::Encoder::new(&cfg).serial().to_vec(x).unwrap()
}

/// The C decode entry points read the interpolation layout (layout code 2): the values within
/// the bound and missing values bit for bit, in both element types; too small an output
/// reports the count; the wrong type, a flipped tile byte (its CRC) and truncations are
/// errors, never a read past `archive_len`.
#[test]
fn szp_c_api_decodes_the_interpolation_layout() {
    // smaller under Miri (which also runs this file): the same paths, a tenth of the values
    let (rows, cols) = if cfg!(miri) {
        (16, 21)
    } else {
        (48usize, 70usize)
    };
    let mut x: Vec<f32> = (0..rows * cols)
        .map(|k| ((k / cols) as f32 * 0.11).sin() * ((k % cols) as f32 * 0.07).cos() * 9.0)
        .collect();
    x[100] = f32::NAN;
    let a = interp_archive(&x, &[rows as u64, cols as u64]);
    assert_eq!(a[6], fzpack_core::szp::LAYOUT_INTERP);
    let n = x.len();
    // SAFETY: every pointer covers what it describes; out-parameters are valid places.
    unsafe {
        let mut out = vec![0f32; n];
        let mut got = 0usize;
        let rc = fs::fzpack_szp_decompress_f32(
            a.as_ptr().cast(),
            a.len(),
            out.as_mut_ptr(),
            n,
            &mut got,
        );
        assert_eq!(rc, status::OK);
        assert_eq!(got, n);
        for (i, (p, q)) in x.iter().zip(&out).enumerate() {
            if p.is_finite() {
                assert!((p - q).abs() <= 1e-3, "{i}: {p} vs {q}");
            } else {
                assert_eq!(p.to_bits(), q.to_bits(), "{i}");
            }
        }
        let mut small = vec![0f32; 11];
        let rc = fs::fzpack_szp_decompress_f32(
            a.as_ptr().cast(),
            a.len(),
            small.as_mut_ptr(),
            10,
            &mut got,
        );
        assert_eq!(rc, status::OUTPUT_TOO_SMALL);
        assert_eq!(got, n);
        assert_eq!(small[10], 0.0);
        let mut o64 = vec![0f64; n];
        let rc = fs::fzpack_szp_decompress_f64(
            a.as_ptr().cast(),
            a.len(),
            o64.as_mut_ptr(),
            n,
            null_mut(),
        );
        assert_eq!(rc, status::DTYPE_MISMATCH);
        let mut bad = a.clone();
        let at = a.len() / 2;
        bad[at] ^= 0x10;
        let rc = fs::fzpack_szp_decompress_f32(
            bad.as_ptr().cast(),
            bad.len(),
            out.as_mut_ptr(),
            n,
            null_mut(),
        );
        assert_eq!(rc, status::CORRUPT);
        for cut in [7, 60, a.len() / 2, a.len() - 1] {
            let piece = a[..cut].to_vec();
            let rc = fs::fzpack_szp_decompress_f32(
                piece.as_ptr().cast(),
                piece.len(),
                out.as_mut_ptr(),
                n,
                null_mut(),
            );
            assert_ne!(rc, status::OK, "cut {cut}");
        }
        // f64
        let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        let b = interp_archive(&x64, &[rows as u64, cols as u64]);
        let rc = fs::fzpack_szp_decompress_f64(
            b.as_ptr().cast(),
            b.len(),
            o64.as_mut_ptr(),
            n,
            &mut got,
        );
        assert_eq!(rc, status::OK);
        assert_eq!(got, n);
        for (p, q) in x64.iter().zip(&o64) {
            assert!(!p.is_finite() || (p - q).abs() <= 1e-3);
        }
    }
}
