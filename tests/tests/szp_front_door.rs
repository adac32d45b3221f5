//! The SZp front door of the facade (`fzpack::szp::{Encoder, Decoder, compress, decompress}`):
//! every sink, kernel and thread choice writes the core scalar reference's bytes and decodes
//! to its bits; `verify` decides whether a corrupted archive is refused; the `Vec` sinks reuse
//! the caller's allocation; and the default layout is the block-head layout everywhere.

use std::sync::Arc;

use fzpack::par::Parallel;
use fzpack::szp::{self, Config, Decoder, Encoder, Kernel, Layout, Verify};
use fzpack_core::szp as core_szp;

/// A 2-thread pool splitting down to 4 KiB, so that the test inputs run in parallel.
fn two_threads() -> Parallel {
    let pool = fzpack::par::rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    Parallel::with_pool(Arc::new(pool)).min_chunk_bytes(4096)
}

fn walk(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed | 1;
    let mut w = 0.0;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            w += ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.2;
            w + (i as f64 * 0.01).sin() * 30.0
        })
        .collect()
}

/// The core's scalar reference archive of `x` (one thread, the scalar kernel, a slice).
fn reference<T: fzpack::Element>(x: &[T], cfg: &Config) -> Vec<u8> {
    let cap = core_szp::max_compressed_len(x.len(), cfg.block_size, T::TYPE).unwrap();
    let mut out = vec![0u8; cap];
    let len = core_szp::compress_with(Kernel::Scalar, x, cfg, &mut out).unwrap();
    out.truncate(len);
    out
}

fn reference_values<T: fzpack::Element>(archive: &[u8], n: usize) -> Vec<T> {
    let mut out = vec![T::ZERO; n];
    let got =
        core_szp::decompress_with(Kernel::Scalar, archive, &mut out, Verify::Checksums).unwrap();
    assert_eq!(got, n);
    out
}

fn bits<T: fzpack::Element>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

/// Every encoder sink on `enc` and every decoder sink on `dec` against the reference.
fn check_sinks<T: fzpack::Element>(x: &[T], cfg: &Config, enc: &Encoder, dec: &Decoder) {
    let want = reference(x, cfg);
    let what = format!("{cfg:?} {enc:?}");
    assert_eq!(enc.to_vec(x).unwrap(), want, "to_vec {what}");
    let mut v = vec![0xEEu8; 3];
    assert_eq!(enc.into_vec(x, &mut v).unwrap(), want.len(), "{what}");
    assert_eq!(v, want, "into_vec {what}");
    let mut slice = vec![0xEEu8; want.len() + 16];
    assert_eq!(enc.into_slice(x, &mut slice).unwrap(), want.len(), "{what}");
    assert_eq!(slice[..want.len()], want[..], "into_slice {what}");
    let mut sink = Vec::new();
    assert_eq!(enc.write_to(x, &mut sink).unwrap(), want.len() as u64);
    assert_eq!(sink, want, "write_to {what}");

    let values = bits(&reference_values::<T>(&want, x.len()));
    assert_eq!(bits(&dec.to_vec::<T>(&want).unwrap()), values, "{dec:?}");
    let mut back = vec![T::ZERO; 7];
    assert_eq!(dec.into_vec(&want, &mut back).unwrap(), x.len());
    assert_eq!(bits(&back), values, "into_vec {dec:?}");
    let mut back = vec![T::ZERO; x.len() + 3];
    assert_eq!(dec.into_slice(&want, &mut back).unwrap(), x.len());
    assert_eq!(bits(&back[..x.len()]), values, "into_slice {dec:?}");
}

#[test]
fn every_sink_kernel_and_thread_choice_writes_the_scalar_reference() {
    let par = two_threads();
    let x64 = walk(60_000, 7);
    let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
    for cfg in [
        Config::abs(1e-3),
        Config::noa(1e-4).with_block_size(64),
        Config::abs(1e-2).stage_compatible(),
    ] {
        for kernel in Kernel::ALL.into_iter().filter(|k| k.is_available()) {
            let encoders = [
                Encoder::new(&cfg).kernel(kernel),
                Encoder::new(&cfg).kernel(kernel).serial(),
                Encoder::new(&cfg).kernel(kernel).threads(&par),
            ];
            let decoders = [
                Decoder::new().kernel(kernel),
                Decoder::new().kernel(kernel).serial(),
                Decoder::new().kernel(kernel).threads(&par),
            ];
            for (enc, dec) in encoders.iter().zip(&decoders) {
                check_sinks(&x32, &cfg, enc, dec);
                check_sinks(&x64, &cfg, enc, dec);
            }
        }
        // The shorthands are the defaults.
        assert_eq!(szp::compress(&x32, &cfg).unwrap(), reference(&x32, &cfg));
        let back: Vec<f64> = szp::decompress(&reference(&x64, &cfg)).unwrap();
        assert_eq!(
            bits(&back),
            bits(&reference_values::<f64>(&reference(&x64, &cfg), x64.len()))
        );
    }
}

#[test]
fn threads_and_serial_write_the_same_bytes_on_a_pool_that_splits() {
    let x: Vec<f32> = walk(200_000, 3).iter().map(|&v| v as f32).collect();
    let cfg = Config::abs(1e-3);
    let par = two_threads();
    let serial = Encoder::new(&cfg).serial().to_vec(&x).unwrap();
    // The pool splits this input (two 4 KiB minimum chunks fit many times): the parallel
    // path runs, and writes the serial bytes.
    assert!(par.threads() == 2 && size_of_val(&x[..]) >= 2 * par.min_chunk());
    assert_eq!(Encoder::new(&cfg).threads(&par).to_vec(&x).unwrap(), serial);
    let a: Vec<f32> = Decoder::new().threads(&par).to_vec(&serial).unwrap();
    let b: Vec<f32> = Decoder::new().serial().to_vec(&serial).unwrap();
    assert_eq!(bits(&a), bits(&b));
}

#[test]
fn verify_skip_decodes_a_corrupted_archive_and_checksums_refuse_it() {
    let x: Vec<f32> = walk(50_000, 11).iter().map(|&v| v as f32).collect();
    let cfg = Config::abs(1e-3).with_layout(Layout::Fzgm);
    let good = szp::compress(&x, &cfg).unwrap();
    // A flipped payload bit past the width bytes: the structure stays valid, one value moves.
    let mut bad = good.clone();
    let at = bad.len() - 4 * 8 - 100;
    bad[at] ^= 0x10;
    let par = two_threads();
    for dec in [
        Decoder::new(),
        Decoder::new().serial(),
        Decoder::new().threads(&par),
    ] {
        let e = dec.to_vec::<f32>(&bad).unwrap_err();
        assert!(
            matches!(e, fzpack::Error::Szp(szp::Error::ChecksumMismatch { .. })),
            "{e:?}"
        );
        let mut v = vec![1f32; 10];
        assert!(dec.into_vec(&bad, &mut v).is_err());
        assert!(v.is_empty(), "into_vec empties its Vec on error");
        let mut s = vec![0f32; x.len()];
        assert!(dec.into_slice(&bad, &mut s).is_err());

        let skip = dec.clone().verify(Verify::Skip);
        let back: Vec<f32> = skip.to_vec(&bad).unwrap();
        assert_eq!(back.len(), x.len());
        let clean: Vec<f32> = skip.to_vec(&good).unwrap();
        assert_ne!(bits(&back), bits(&clean), "the flipped bit changes a value");
        assert_eq!(skip.into_slice(&bad, &mut s).unwrap(), x.len());
        assert_eq!(bits(&s), bits(&back));
    }
}

#[test]
fn into_vec_replaces_the_contents_and_reuses_the_allocation() {
    let cfg = Config::abs(1e-3);
    let enc = Encoder::new(&cfg).serial();
    let big: Vec<f32> = walk(100_000, 5).iter().map(|&v| v as f32).collect();
    let small = &big[..1000];
    let mut out = Vec::new();
    enc.into_vec(&big, &mut out).unwrap();
    let (ptr, cap) = (out.as_ptr(), out.capacity());
    let len = enc.into_vec(small, &mut out).unwrap();
    assert_eq!(
        (out.as_ptr(), out.capacity()),
        (ptr, cap),
        "no new allocation"
    );
    assert_eq!(len, out.len());
    assert_eq!(out, enc.to_vec(small).unwrap(), "the old contents are gone");
    // An error empties the Vec (no stale archive) and keeps the allocation.
    assert!(
        enc.into_vec(&[f32::MAX, -f32::MAX, 1e-3], &mut out)
            .is_err()
    );
    assert!(out.is_empty());
    assert_eq!((out.as_ptr(), out.capacity()), (ptr, cap));

    let dec = Decoder::new().serial();
    let big_archive = enc.to_vec(&big).unwrap();
    let small_archive = enc.to_vec(small).unwrap();
    let mut back: Vec<f32> = Vec::new();
    dec.into_vec(&big_archive, &mut back).unwrap();
    let (ptr, cap) = (back.as_ptr(), back.capacity());
    assert_eq!(
        dec.into_vec(&small_archive, &mut back).unwrap(),
        small.len()
    );
    assert_eq!((back.as_ptr(), back.capacity()), (ptr, cap));
    assert_eq!(back.len(), small.len());
    // The element type is checked against the archive before anything is decoded; the Vec
    // is emptied as on every error.
    let mut wrong: Vec<f64> = vec![1.0; 4];
    let e = dec.into_vec(&small_archive, &mut wrong).unwrap_err();
    assert!(matches!(e, fzpack::Error::DTypeMismatch { .. }), "{e:?}");
    assert!(wrong.is_empty());
}

#[test]
fn too_small_slices_and_unavailable_kernels_are_errors() {
    let x: Vec<f32> = walk(5000, 9).iter().map(|&v| v as f32).collect();
    let cfg = Config::abs(1e-3);
    let want = reference(&x, &cfg);
    let mut short = vec![0xA5u8; want.len() + 8];
    let e = Encoder::new(&cfg)
        .into_slice(&x, &mut short[..want.len() - 1])
        .unwrap_err();
    assert!(
        matches!(e, fzpack::Error::Szp(szp::Error::OutputTooSmall { .. })),
        "{e:?}"
    );
    assert!(short[want.len() - 1..].iter().all(|&b| b == 0xA5));
    let mut back = vec![0f32; x.len() - 1];
    let e = Decoder::new().into_slice(&want, &mut back).unwrap_err();
    assert!(
        matches!(e, fzpack::Error::Szp(szp::Error::OutputTooSmall { .. })),
        "{e:?}"
    );
    for k in Kernel::ALL.into_iter().filter(|k| !k.is_available()) {
        let e = Encoder::new(&cfg).kernel(k).to_vec(&x).unwrap_err();
        assert!(matches!(e, fzpack::Error::Szp(szp::Error::UnsupportedPath)));
        let e = Decoder::new().kernel(k).to_vec::<f32>(&want).unwrap_err();
        assert!(matches!(e, fzpack::Error::Szp(szp::Error::UnsupportedPath)));
    }
}

#[test]
fn the_default_layout_is_the_block_head_layout() {
    for cfg in [Config::abs(1e-3), Config::noa(1e-3)] {
        assert_eq!(cfg.layout, Layout::Heads);
    }
    assert_eq!(Layout::default(), Layout::Heads);
    assert_eq!(Layout::DEFAULT, Layout::Heads);
    let x: Vec<f32> = walk(10_000, 13).iter().map(|&v| v as f32).collect();
    let a = szp::compress(&x, &Config::abs(1e-3)).unwrap();
    assert_eq!(a[6], szp::LAYOUT_HEADS, "header byte 6: the layout");
    assert_eq!(szp::header(&a).unwrap().layout, szp::LAYOUT_HEADS);
    // The core's slice API writes the same default.
    let mut out = vec![0u8; a.len() + 64];
    let n = core_szp::compress(&x, &Config::abs(1e-3), &mut out).unwrap();
    assert_eq!(out[..n], a[..]);
    // The stage layout is asked for: by layout, or with the stage's quantizer.
    let stage = szp::compress(&x, &Config::abs(1e-3).with_layout(Layout::Fzgm)).unwrap();
    assert_eq!(stage[6], szp::LAYOUT_FZGM);
    let compatible = Config::abs(1e-3).stage_compatible();
    assert_eq!(
        (compatible.layout, compatible.strict),
        (Layout::Fzgm, false)
    );
    let c = szp::compress(&x, &compatible).unwrap();
    assert_eq!(c[6], szp::LAYOUT_FZGM);
    // The block-head layout is the smaller one on this walk.
    assert!(a.len() < stage.len(), "{} vs {}", a.len(), stage.len());
}

/// One `DType` and one `Verify` across the facade (a second copy would not type-check here).
#[test]
fn the_facade_names_one_dtype_and_one_verify() {
    let d: fzpack::DType = fzpack::types::DType::F32;
    let s: szp::DType = d;
    assert_eq!(s, fzpack_core::types::DType::F32);
    let v: fzpack::Verify = szp::Verify::Skip;
    let w: fzpack::pernix::Verify = v;
    assert_eq!(w, fzpack_core::types::Verify::Skip);
}
