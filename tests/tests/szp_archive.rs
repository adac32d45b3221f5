//! The SZp archive layer on its own: an `ArchiveWriter` fed batches (of one chunk, of several,
//! of everything; on every available kernel; splitting or not) assembles exactly the one-shot
//! archive from the offsets it reports; an open writer (count unknown up front) too, naming
//! global indices in its errors; an `ArchiveReader` decodes any whole-chunk batching to the
//! one-shot values, reports a corrupted chunk by its index under `Verify::Checksums`, skips
//! only the CRCs under `Verify::Skip`, and keeps every structural check.

use fzpack_core::szp::archive::{ArchiveReader, ArchiveWriter, Batch};
use fzpack_core::szp::engine::{self, Join, Serial};
use fzpack_core::szp::{Config, Error, HEADER_LEN, Kernel, Layout, Mode, Verify};

/// A `Join` that splits every range of 4 KiB or more (run serially): reaches the split paths of a
/// batch (chunk-aligned splits with their CRC slots, payload moves) in small inputs.
struct Eager;

impl Join for Eager {
    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        (a(), b())
    }
    fn split(&self, bytes: usize) -> bool {
        bytes >= 4096
    }
}

fn walk(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    let mut x = 0f32;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            x += ((s >> 40) as f32 / (1u64 << 24) as f32) - 0.5;
            x
        })
        .collect()
}

fn kernels() -> Vec<Kernel> {
    Kernel::ALL
        .iter()
        .copied()
        .filter(|k| k.is_available())
        .collect()
}

fn one_shot(x: &[f32], cfg: &Config) -> Vec<u8> {
    let (plan, m) = engine::plan_on(Kernel::Scalar, &Serial, x, cfg).unwrap();
    let mut out = vec![0u8; engine::worst_len(&plan, m)];
    let len = engine::compress_on(Kernel::Scalar, &Serial, x, cfg, &mut out).unwrap();
    out.truncate(len);
    out
}

/// Places a batch's parts into `archive` at the offsets the writer reports.
fn place(archive: &mut Vec<u8>, b: &Batch, payload_at: usize, parts: (&[u8], &[u8])) {
    let (widths, payload) = parts;
    let end = (payload_at + b.payload_pos + b.payload_len).max(b.widths_at + b.blocks);
    if archive.len() < end {
        archive.resize(end, 0);
    }
    archive[b.widths_at..b.widths_at + b.blocks].copy_from_slice(&widths[..b.blocks]);
    let p = payload_at + b.payload_pos;
    archive[p..p + b.payload_len].copy_from_slice(&payload[..b.payload_len]);
}

/// Writes `x` through an `ArchiveWriter` in batches of `chunks` checksum chunks on `kernel`,
/// assembling the archive from the reported offsets only.
fn batched<J: Join>(x: &[f32], cfg: &Config, kernel: Kernel, j: &J, chunks: usize) -> Vec<u8> {
    let (plan, m) = engine::plan_on(kernel, j, x, cfg).unwrap();
    let mut w = ArchiveWriter::begin(kernel, &plan, m);
    let per = w.batch_blocks(1) * chunks; // batch_blocks(1): one chunk
    assert_eq!(per % (1 << plan.chunk_shift()), 0);
    let bs = plan.block_size as usize;
    let (mut widths, mut payload, mut sums) = (
        vec![0u8; per],
        vec![0u8; w.batch_payload_len(per)],
        vec![0u8; w.batch_sums_len(per)],
    );
    let mut archive = vec![0u8; plan.payload_offset()];
    let mut table = vec![0u8; plan.sums_len()];
    let at = w.payload_at();
    let mut v0 = 0;
    while v0 < x.len() {
        let v1 = (v0 + per * bs).min(x.len());
        let b = w
            .batch(j, &x[v0..v1], &mut widths, &mut payload, &mut sums)
            .unwrap();
        assert_eq!(b.widths_at, HEADER_LEN + v0 / bs);
        place(&mut archive, &b, at, (&widths, &payload));
        table[b.sums_pos..b.sums_pos + b.sums_len].copy_from_slice(&sums[..b.sums_len]);
        v0 = v1;
    }
    let f = w.finish().unwrap();
    assert_eq!(f.payload_at, at);
    archive.resize(f.len, 0);
    archive[..HEADER_LEN].copy_from_slice(&f.header);
    archive[f.sums_at..].copy_from_slice(&table);
    archive
}

fn configs() -> Vec<Config> {
    let mut v = Vec::new();
    for layout in [Layout::Fzgm, Layout::Heads] {
        for bs in [128u32, 8, 100] {
            v.push(Config::abs(1e-3).with_block_size(bs).with_layout(layout));
            v.push(Config::noa(1e-4).with_block_size(bs).with_layout(layout));
        }
    }
    v
}

/// Batches of 1, 2 and 3 chunks (crossing head groups: a chunk of 128 blocks holds 4 groups
/// of 32; block size 100 makes the values of a chunk not a power of two) on every kernel,
/// with and without splits inside a batch, give the one-shot bytes; the sizes cross chunk
/// boundaries by one block and by one value.
#[test]
fn batches_assemble_the_one_shot_archive() {
    for cfg in configs() {
        let bs = cfg.block_size as usize;
        let chunk = bs << fzpack_core::szp::blocks::chunk_shift(cfg.block_size);
        for n in [0, 1, 2 * chunk + bs + 3, 3 * chunk, 3 * chunk - 1] {
            if cfg.mode == Mode::Noa && n == 1 {
                continue; // a range of 0 (ZeroRange)
            }
            let x = walk(n, n as u64 + 7);
            let want = one_shot(&x, &cfg);
            for k in kernels() {
                for chunks in [1, 2, 3] {
                    let got = batched(&x, &cfg, k, &Serial, chunks);
                    assert!(got == want, "{cfg:?} n {n} {k:?} chunks {chunks}");
                    let got = batched(&x, &cfg, k, &Eager, chunks);
                    assert!(got == want, "{cfg:?} n {n} {k:?} chunks {chunks} (split)");
                }
            }
        }
    }
}

/// A batch that is not whole chunks and not the archive's end is refused, as is a batch past
/// the count and `finish` before the last value.
#[test]
fn writer_refuses_batches_that_break_the_layout() {
    let cfg = Config::abs(1e-3);
    let x = walk(100_000, 3);
    let (plan, m) = engine::plan_on(Kernel::Scalar, &Serial, &x, &cfg).unwrap();
    let mut w = ArchiveWriter::begin(Kernel::Scalar, &plan, m);
    let per = w.batch_blocks(1);
    let (mut ws, mut ps, mut ss) = (
        vec![0u8; 2 * per],
        vec![0u8; w.batch_payload_len(2 * per)],
        vec![0u8; 64],
    );
    let vals = per * 128;
    assert_eq!(
        w.batch(&Serial, &x[..vals - 128], &mut ws, &mut ps, &mut ss),
        Err(Error::BlockLength { expected: vals })
    );
    assert!(w.finish().is_err());
    w.batch(&Serial, &x[..vals], &mut ws, &mut ps, &mut ss)
        .unwrap();
    assert_eq!(
        w.batch(&Serial, &x, &mut ws, &mut ps, &mut ss),
        Err(Error::StreamState)
    );
}

/// An open writer (the count known only at the end: ABS with `max_abs`) writes the one-shot
/// bytes, validates each batch and names global indices.
#[test]
fn open_writer_equals_one_shot_and_names_global_indices() {
    // The last with an f32 step: each batch's plan must find the archive's bound again.
    for (layout, f32_step) in [
        (Layout::Fzgm, false),
        (Layout::Heads, false),
        (Layout::Heads, true),
    ] {
        let cfg = Config::abs(1e-3).with_max_abs(200.0).with_layout(layout);
        let cfg = if f32_step { cfg.with_f32_step() } else { cfg };
        let x = walk(40_000, 11);
        let want = one_shot(&x, &cfg);
        let mut w = ArchiveWriter::open::<f32>(Kernel::best(), &cfg).unwrap();
        let per = w.batch_blocks(1);
        let bs = 128;
        let (mut ws, mut ps, mut ss) = (
            vec![0u8; per],
            vec![0u8; w.batch_payload_len(per)],
            vec![0u8; w.batch_sums_len(per)],
        );
        let (mut widths, mut payload, mut sums) = (Vec::new(), Vec::new(), Vec::new());
        for xs in x.chunks(per * bs) {
            let b = w.batch(&Eager, xs, &mut ws, &mut ps, &mut ss).unwrap();
            assert_eq!(b.payload_pos, payload.len());
            widths.extend_from_slice(&ws[..b.blocks]);
            payload.extend_from_slice(&ps[..b.payload_len]);
            sums.extend_from_slice(&ss[..b.sums_len]);
        }
        let f = w.finish().unwrap();
        let mut got = f.header.to_vec();
        got.extend_from_slice(&widths);
        assert_eq!(got.len(), f.payload_at);
        got.extend_from_slice(&payload);
        assert_eq!(got.len(), f.sums_at);
        got.extend_from_slice(&sums);
        assert!(got == want, "{layout:?}");

        // A bad value in the second batch is named by its global index.
        let mut w = ArchiveWriter::open::<f32>(Kernel::best(), &cfg).unwrap();
        let mut y = x.clone();
        y[per * bs + 5] = f32::NAN;
        y[per * bs + 9] = 1e6;
        let mut it = y.chunks(per * bs);
        w.batch(&Serial, it.next().unwrap(), &mut ws, &mut ps, &mut ss)
            .unwrap();
        assert_eq!(
            w.batch(&Serial, it.next().unwrap(), &mut ws, &mut ps, &mut ss),
            Err(Error::NonFinite {
                index: per * bs + 5
            })
        );
    }
    assert_eq!(
        ArchiveWriter::open::<f32>(Kernel::Scalar, &Config::noa(1e-3).with_max_abs(1.0)).err(),
        Some(Error::StreamingNeedsAbsAndMaxAbs)
    );
}

/// Decodes `archive` through an `ArchiveReader` in batches of `chunks` chunks.
fn read_batched<J: Join>(
    archive: &[u8],
    kernel: Kernel,
    j: &J,
    chunks: usize,
    verify: Verify,
) -> Result<Vec<f32>, Error> {
    let mut r = ArchiveReader::new(kernel, archive, verify)?;
    let per = r.batch_blocks(1) * chunks;
    let mut out = vec![0f32; r.view().n];
    let mut v0 = 0;
    while !r.is_done() {
        let k = r.batch_len(per);
        assert_eq!(r.batch(j, per, &mut out[v0..])?, k);
        v0 += k;
    }
    assert_eq!(v0, out.len());
    Ok(out)
}

#[test]
fn reader_batches_decode_the_one_shot_values() {
    for cfg in configs() {
        let bs = cfg.block_size as usize;
        let chunk = bs << fzpack_core::szp::blocks::chunk_shift(cfg.block_size);
        for n in [0, 1, 2 * chunk + bs + 3, 3 * chunk] {
            if cfg.mode == Mode::Noa && n == 1 {
                continue; // a range of 0 (ZeroRange)
            }
            let x = walk(n, n as u64 + 5);
            let a = one_shot(&x, &cfg);
            let mut want = vec![0f32; n];
            engine::decompress_on(Kernel::Scalar, &Serial, &a, &mut want).unwrap();
            for k in kernels() {
                for chunks in [1, 2, 5] {
                    for verify in [Verify::Checksums, Verify::Skip] {
                        let got = read_batched(&a, k, &Eager, chunks, verify).unwrap();
                        assert!(got == want, "{cfg:?} n {n} {k:?} {chunks} {verify:?}");
                    }
                }
            }
        }
    }
}

/// A flipped payload byte in chunk 1 of 3: `Checksums` names chunk 1 (after chunk 0 decoded
/// fine, whatever the batching), `Skip` decodes; a truncated archive and trailing bytes are
/// errors under both.
#[test]
fn reader_reports_the_corrupted_chunk_and_skip_keeps_structure_checks() {
    for layout in [Layout::Fzgm, Layout::Heads] {
        let cfg = Config::abs(1e-3).with_layout(layout);
        let x = walk(3 * 16384, 9);
        let a = one_shot(&x, &cfg);
        let r = ArchiveReader::new(Kernel::Scalar, &a, Verify::Checksums).unwrap();
        let v = *r.view();
        // The first payload byte of chunk 1 (chunk 0's body: its widths' blocks and trailers).
        let c0 = fzpack_core::szp::blocks::body_len(
            &v.widths[..128],
            128,
            16384,
            v.header.head_group(),
            v.payload,
        )
        .unwrap();
        let at = a.len() - v.sums.len() - v.payload.len() + c0 + 1;
        let mut bad = a.clone();
        bad[at] ^= 0x10;
        for k in kernels() {
            for chunks in [1, 2, 3] {
                assert_eq!(
                    read_batched(&bad, k, &Serial, chunks, Verify::Checksums),
                    Err(Error::ChecksumMismatch {
                        what: "blocks",
                        chunk: 1
                    }),
                    "{layout:?} {k:?} {chunks}"
                );
                assert!(read_batched(&bad, k, &Serial, chunks, Verify::Skip).is_ok());
                for broken in [&a[..a.len() - 1], &[&a[..], &[0u8][..]].concat()[..]] {
                    for verify in [Verify::Checksums, Verify::Skip] {
                        assert!(read_batched(broken, k, &Serial, chunks, verify).is_err());
                    }
                }
            }
        }
        // The one-shot decoder is the reader too.
        let mut out = vec![0f32; x.len()];
        assert_eq!(
            engine::decompress_verify_on(
                Kernel::Scalar,
                &Serial,
                &bad,
                &mut out,
                Verify::Checksums
            ),
            Err(Error::ChecksumMismatch {
                what: "blocks",
                chunk: 1
            })
        );
    }
}

/// A reader batch that is not whole chunks (and not the rest) is refused.
#[test]
fn reader_refuses_partial_chunks() {
    let a = one_shot(&walk(40_000, 2), &Config::abs(1e-3));
    let mut r = ArchiveReader::new(Kernel::Scalar, &a, Verify::Checksums).unwrap();
    let mut out = vec![0f32; 40_000];
    assert_eq!(
        r.batch(&Serial, 127, &mut out),
        Err(Error::BlockLength { expected: 16384 })
    );
    assert_eq!(r.batch(&Serial, 128, &mut out), Ok(16384));
}

/// The streaming encoder drives the writer a block at a time and seals each chunk as it
/// completes: over several chunks (and head groups, and a partial last group) its archive is
/// the one-shot archive, in a buffer of exactly `max_len` bytes and in a larger one.
#[test]
fn stream_encoder_seals_every_chunk_as_one_shot_does() {
    use fzpack_core::szp::StreamEncoder;
    for layout in [Layout::Fzgm, Layout::Heads] {
        for bs in [128u32, 100] {
            let cfg = Config::abs(1e-3)
                .with_max_abs(300.0)
                .with_block_size(bs)
                .with_layout(layout);
            let n = 3 * 16384 + 5 * bs as usize + 17;
            let x = walk(n, 21);
            let want = one_shot(&x, &cfg);
            let cap = StreamEncoder::<f32>::max_len(n, &cfg).unwrap();
            for extra in [0, 1000] {
                let mut buf = vec![0u8; cap + extra];
                let mut enc = StreamEncoder::<f32>::new(&mut buf, n, &cfg).unwrap();
                let mut v0 = 0;
                while enc.next_block_len() > 0 {
                    let k = enc.next_block_len();
                    enc.push_block(&x[v0..v0 + k]).unwrap();
                    v0 += k;
                }
                let len = enc.finish().unwrap();
                assert!(buf[..len] == want[..], "{layout:?} bs {bs} extra {extra}");
            }
        }
    }
}

/// The worst-case length (`StreamEncoder::max_len`, `engine::worst_len`) charges a short
/// block-head archive for its own blocks and head trailers, not for a whole head group, and
/// stays an upper bound: the widest data within `max_abs` (alternating extremes, a jump at
/// every head) fits a buffer of exactly that length, for every length up to a few groups.
#[test]
fn worst_len_is_tight_for_short_block_head_archives_and_still_an_upper_bound() {
    use fzpack_core::szp::StreamEncoder;
    let base = Config::abs(1e-3).with_max_abs(8.0);
    let heads = StreamEncoder::<f32>::max_len(1024, &base.with_layout(Layout::Heads)).unwrap();
    let stage = StreamEncoder::<f32>::max_len(1024, &base.with_layout(Layout::Fzgm)).unwrap();
    // 8 blocks: one trailer of 8 heads (a width byte and at most 8 bytes a head) on top.
    assert!(
        heads <= stage + 1 + 8 * 8,
        "heads {heads} against stage {stage}"
    );
    for layout in [Layout::Heads, Layout::Fzgm] {
        for bs in [8u32, 128] {
            let cfg = base.with_layout(layout).with_block_size(bs);
            for n in [1usize, 7, 8, 9, 100, 255, 256, 257, 300, 1000, 5000] {
                let x: Vec<f32> = (0..n)
                    .map(|i| if (i / 3) % 2 == 0 { 8.0 } else { -8.0 } * if i % 5 == 0 { 1.0 } else { 0.999 })
                    .collect();
                let cap = StreamEncoder::<f32>::max_len(n, &cfg).unwrap();
                assert_eq!(
                    cap,
                    engine::worst_len(&fzpack_core::szp::blocks::plan(&x, &cfg).unwrap(), 8.0)
                );
                let mut out = vec![0u8; cap];
                let len = fzpack_core::szp::compress(&x, &cfg, &mut out)
                    .unwrap_or_else(|e| panic!("{layout:?} bs {bs} n {n}: {e}"));
                assert!(len <= cap);
                let mut enc = StreamEncoder::<f32>::new(&mut out, n, &cfg).unwrap();
                for b in x.chunks(bs as usize) {
                    enc.push_block(b).unwrap();
                }
                assert_eq!(enc.finish().unwrap(), len, "{layout:?} bs {bs} n {n}");
            }
        }
    }
}
