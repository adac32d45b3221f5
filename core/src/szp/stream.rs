//! Block-at-a-time SZp encoding into a caller buffer, for firmware that cannot hold the whole
//! signal: feed each block as its samples arrive, then `finish`.
//!
//! The number of values is fixed up front (the width bytes precede the payload, so their space
//! is reserved), the bound must be ABS and `max_abs` must be given (the encoder cannot look
//! ahead for the data's magnitude). The archive equals what [`super::compress`] writes for the
//! same data and config.

use core::marker::PhantomData;

use super::archive::{ArchiveWriter, fixed_plan};
use super::engine;
use super::missing::StreamRuns;
use super::{Config, Error, Kernel, SzpFloat};
use crate::bits::HEAD_GROUP_MAX;

/// A streaming SZp encoder writing into a borrowed buffer. No allocation.
///
/// # Requirements
///
/// * An absolute bound with a known magnitude: [`Config::abs`] and [`Config::with_max_abs`]
///   (e.g. the ADC's full scale). Otherwise [`StreamEncoder::new`] returns
///   [`Error::StreamingNeedsAbsAndMaxAbs`]: the encoder cannot look ahead for the data's
///   range. A sample with `|x| > max_abs` is [`Error::ValueOutOfRange`].
/// * The number of values `n`, fixed when the encoder starts.
/// * Blocks of exactly [`StreamEncoder::next_block_len`] values (`block_size`, the last one
///   the remainder), pushed in order; then [`StreamEncoder::finish`].
/// * An output buffer of [`StreamEncoder::max_len`] bytes for `n` and the config: the archive
///   never needs more, whatever the samples (within `max_abs`) — as long as none is missing.
///   Missing values (NaN, ±inf) are stored exactly, as one-shot compression stores them
///   (format version 3): each run of equal bit patterns adds at most `20 + size_of::<T>()`
///   bytes (usually 2 to 6), and 8 bytes close the runs; a buffer that cannot hold them is
///   [`Error::OutputTooSmall`] naming the length. It is far below the
///   data-independent [`super::max_compressed_len`], as the levels are bounded by
///   `max_abs / (2·bound)`. The chunk CRCs are parked in the last [`super::Plan::sums_len`]
///   bytes of the buffer as their chunks complete (computed from the bytes just written), so
///   the payload may use all but those.
///
/// The archive equals what [`super::compress`] writes for the same samples and config.
///
/// # Example
///
/// ```
/// use fzpack_core::szp::{self, Config, Layout, StreamEncoder};
///
/// const N: usize = 1024;
/// // A 16-bit ADC at 1/4096 V per count, full scale 8 V; keep every sample within 1 mV.
/// let cfg = Config::abs(1e-3).with_max_abs(8.0).with_layout(Layout::Fzgm);
/// let cap = StreamEncoder::<f32>::max_len(N, &cfg)?;
/// assert!(cap < szp::max_compressed_len(N, cfg.block_size, szp::DType::F32).unwrap() / 4);
/// let mut archive = [0u8; 4096];
/// let mut enc = StreamEncoder::<f32>::new(&mut archive[..cap], N, &cfg)?;
/// let mut t = 0usize;
/// let mut block = [0f32; 128];
/// while enc.next_block_len() > 0 {
///     let len = enc.next_block_len();
///     for x in &mut block[..len] {
///         // The next sample from the sensor.
///         *x = (((t * 37) % 4096) as f32 - 2048.0) / 4096.0;
///         t += 1;
///     }
///     enc.push_block(&block[..len])?;
/// }
/// let len = enc.finish()?;
/// let mut back = [0f32; N];
/// assert_eq!(szp::decompress(&archive[..len], &mut back)?, N);
/// # Ok::<(), szp::Error>(())
/// ```
pub struct StreamEncoder<'a, T: SzpFloat> {
    out: &'a mut [u8],
    /// The archive layer's writer, one block at a time into `out`.
    writer: ArchiveWriter,
    /// The block-head layout: the heads of the current group's blocks so far.
    heads: [i64; HEAD_GROUP_MAX],
    /// Missing values (NaN, ±inf): the run being extended and the records written so far.
    runs: StreamRuns,
    _t: PhantomData<T>,
}

impl<'a, T: SzpFloat> StreamEncoder<'a, T> {
    /// The largest archive of `n` values with `cfg` (ABS and `max_abs`, as for
    /// [`StreamEncoder::new`]): an output buffer this long always suffices. Every level is at
    /// most `L = max_abs/(2·eb') + 2` in magnitude, so every width at most `bits(4L)`.
    pub fn max_len(n: usize, cfg: &Config) -> Result<usize, Error> {
        let (plan, max_abs) = fixed_plan::<T>(n, cfg)?;
        Ok(engine::worst_len(&plan, max_abs))
    }

    /// Starts an archive of `n` values in `out` (see the requirements above).
    pub fn new(out: &'a mut [u8], n: usize, cfg: &Config) -> Result<Self, Error> {
        let (plan, max_abs) = fixed_plan::<T>(n, cfg)?;
        let need = plan.payload_offset() + plan.sums_len();
        if out.len() < need {
            return Err(Error::OutputTooSmall { needed: need });
        }
        Ok(StreamEncoder {
            out,
            writer: ArchiveWriter::begin(Kernel::Scalar, &plan, max_abs),
            heads: [0; HEAD_GROUP_MAX],
            runs: StreamRuns::default(),
            _t: PhantomData,
        })
    }

    /// The length the next block must have (`block_size`, or the remainder for the last one);
    /// 0 once every block is in.
    pub fn next_block_len(&self) -> usize {
        self.writer.next_block_len()
    }

    /// Encodes the next block.
    pub fn push_block(&mut self, block: &[T]) -> Result<(), Error> {
        self.writer
            .push_block(block, &mut self.heads, &mut self.runs, self.out)
    }

    /// Writes the header (the chunk CRCs were written as their chunks completed, at the end
    /// of `out`: they move behind the payload) and returns the archive length; every block
    /// must have been pushed.
    pub fn finish(mut self) -> Result<usize, Error> {
        self.writer.close_stream(self.out, &mut self.runs)
    }
}

#[cfg(test)]
mod tests {
    use super::super::blocks::MISSING_VALUES;
    use super::super::{DType, Layout, max_compressed_len};
    use super::*;

    #[test]
    fn max_len_holds_for_the_worst_samples_and_is_smaller() {
        let mut buf = [0u8; 40_000];
        let layouts: &[Layout] = if cfg!(feature = "layout-heads") {
            &[Layout::Fzgm, Layout::Heads]
        } else {
            &[Layout::Fzgm]
        };
        for &layout in layouts {
            for (bs, eb, max_abs) in [(128, 1e-3, 8.0), (7, 0.05, 100.0), (1, 1e-6, 1.0)] {
                let cfg = Config::abs(eb)
                    .with_max_abs(max_abs)
                    .with_block_size(bs)
                    .with_layout(layout);
                let n = 1000;
                let cap = StreamEncoder::<f32>::max_len(n, &cfg).unwrap();
                assert!(cap < max_compressed_len(n, bs, DType::F32).unwrap());
                // Full-scale swings: the largest deltas (and heads) the bound allows.
                let x: [f32; 1000] = core::array::from_fn(|i| {
                    let m = max_abs as f32;
                    if (i / 3) % 2 == 0 { m } else { -m }
                });
                let mut enc = StreamEncoder::<f32>::new(&mut buf[..cap], n, &cfg).unwrap();
                for b in x.chunks(bs as usize) {
                    enc.push_block(b).unwrap();
                }
                let len = enc.finish().unwrap();
                assert!(len <= cap, "{layout:?} bs {bs}: {len} > {cap}");
                // Tight for such data in the stage layout (the block-head bound counts whole
                // head groups of 32 blocks).
                if layout == Layout::Fzgm {
                    assert!(cap - len <= cap / 8, "bs {bs}: {len} vs {cap}");
                }
            }
        }
    }

    /// A streamed sample that is missing (without the feature `missing-and-shape`) or above
    /// `max_abs` is named by its index wherever it sits in its block, and a clean stream
    /// decodes within the bound: with missing values off, through the path where the block
    /// encoder's largest magnitude stands in for the validation pass.
    #[test]
    fn stream_validation_names_the_first_bad_sample() {
        let (n, bs) = (600usize, 128usize);
        let cfg = Config::abs(1e-3)
            .with_max_abs(10.0)
            .with_block_size(bs as u32);
        let clean: [f32; 600] = core::array::from_fn(|i| 9.0 * ((i as f32) * 0.05).sin());
        let mut buf = [0u8; 8192];
        let run = |x: &[f32], buf: &mut [u8]| -> Result<usize, Error> {
            let mut enc = StreamEncoder::<f32>::new(buf, n, &cfg)?;
            for b in x.chunks(bs) {
                enc.push_block(b)?;
            }
            enc.finish()
        };
        let len = run(&clean, &mut buf).unwrap();
        let mut back = [0f32; 600];
        crate::szp::decompress(&buf[..len], &mut back).unwrap();
        for (a, b) in clean.iter().zip(&back) {
            assert!((a - b).abs() <= 1e-3, "{a} vs {b}");
        }
        // Fewer positions under Miri (each is a whole stream; safe code, no unsafe on this path).
        let ats: &[usize] = if cfg!(miri) {
            &[1, 128]
        } else {
            &[0, 1, 127, 128, 300, 599]
        };
        for &at in ats {
            let too_big = [10.000_001f32, -10.5, f32::MAX];
            for (bad, want) in too_big
                .iter()
                .map(|&v| (v, Error::ValueOutOfRange { index: at }))
                .chain(
                    [f32::NAN, f32::INFINITY, f32::NEG_INFINITY]
                        .iter()
                        .filter(|_| !MISSING_VALUES)
                        .map(|&v| (v, Error::NonFinite { index: at })),
                )
            {
                let mut x = clean;
                x[at] = bad;
                // A second bad sample later in the same block: the first is named.
                if at + 5 < n && (at + 5) / bs == at / bs {
                    x[at + 5] = f32::NAN;
                }
                assert_eq!(run(&x, &mut buf), Err(want), "{bad} at {at}");
            }
        }
        // At the limit itself, either sign: accepted.
        let mut x = clean;
        x[5] = 10.0;
        x[6] = -10.0;
        assert!(run(&x, &mut buf).is_ok());
    }

    /// A stream writes the one-shot encoder's bytes at every range of levels: below the f32
    /// quantizer's fixed-point limit (levels of about 65024) and past it (blocks quantized
    /// again with the checked quantizer). Without missing values
    /// (as firmware builds the core; `scripts/firmware.sh` runs this with the block-head
    /// layout too) the core's tests take the stream's fused one-pass path on every target.
    #[test]
    fn stream_writes_the_one_shot_bytes_at_every_level_range() {
        let (n, bs) = (700usize, 64usize);
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let x: [f32; 700] = core::array::from_fn(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let r = (s % 2001) as f32 / 1000.0 - 1.0;
            // Block by block: small, mid-range and full-scale swings.
            let a = [0.01f32, 3.0, 1000.0][(i / bs) % 3];
            a * (i as f32 * 0.11).sin() + a * 0.01 * r
        });
        let mut one = [0u8; 8192];
        let mut streamed = [0u8; 8192];
        // Levels up to about 5e2, 5e5 and 5e6 (finer bounds are below f32's precision at
        // these magnitudes).
        let layouts: &[Layout] = if cfg!(feature = "layout-heads") {
            &[Layout::Fzgm, Layout::Heads]
        } else {
            &[Layout::Fzgm]
        };
        // Under Miri the bound past the limit alone (safe code; the native run covers all).
        let ebs: &[f64] = if cfg!(miri) {
            &[1e-3]
        } else {
            &[1.0, 1e-3, 1e-4]
        };
        for (&eb, &layout) in ebs.iter().flat_map(|e| layouts.iter().map(move |l| (e, l))) {
            let cfg = Config::abs(eb)
                .with_max_abs(1100.0)
                .with_block_size(bs as u32)
                .with_layout(layout);
            let want = crate::szp::compress(&x, &cfg, &mut one).unwrap();
            let mut enc = StreamEncoder::<f32>::new(&mut streamed, n, &cfg).unwrap();
            for b in x.chunks(bs) {
                enc.push_block(b).unwrap();
            }
            let len = enc.finish().unwrap();
            assert_eq!(streamed[..len], one[..want], "eb {eb:e} {layout:?}");
        }
    }

    #[test]
    fn new_requires_abs_and_max_abs() {
        let mut buf = [0u8; 256];
        for cfg in [Config::abs(1e-3), Config::noa(1e-3).with_max_abs(1.0)] {
            assert_eq!(
                StreamEncoder::<f32>::new(&mut buf, 10, &cfg).err(),
                Some(Error::StreamingNeedsAbsAndMaxAbs)
            );
            assert_eq!(
                StreamEncoder::<f32>::max_len(10, &cfg),
                Err(Error::StreamingNeedsAbsAndMaxAbs)
            );
        }
    }

    /// Without the feature `layout-heads`, the block-head layout is a clear error on every
    /// side: configs asking for it, and archives written in it.
    #[cfg(not(feature = "layout-heads"))]
    #[test]
    fn the_block_head_layout_is_an_error_without_its_feature() {
        use super::super::{HEADER_LEN_V1, LAYOUT_HEADS};
        let heads = Config::abs(1e-3)
            .with_max_abs(8.0)
            .with_layout(Layout::Heads);
        let err = Err(Error::UnsupportedLayout {
            layout: LAYOUT_HEADS,
        });
        let mut buf = [0u8; 4096];
        let x = [0.5f32; 300];
        assert_eq!(StreamEncoder::<f32>::max_len(300, &heads), err);
        assert_eq!(crate::szp::compress(&x, &heads, &mut buf), err);
        assert_eq!(crate::szp::scalar::compress(&x, &heads, &mut buf), err);
        // A stage-layout archive relabelled as block-head (header CRC fixed up).
        let len = crate::szp::compress(&x, &Config::abs(1e-3), &mut buf).unwrap();
        buf[6] = LAYOUT_HEADS;
        let crc = crate::crc::hash(&buf[..HEADER_LEN_V1]);
        buf[HEADER_LEN_V1..HEADER_LEN_V1 + 4].copy_from_slice(&crc.to_le_bytes());
        let mut back = [0f32; 300];
        assert_eq!(crate::szp::decompress(&buf[..len], &mut back), err);
        assert_eq!(Layout::from_code(LAYOUT_HEADS), None);
    }
}
