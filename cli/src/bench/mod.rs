//! `fzpack bench`: ratio, quality and speed per codec, setting and path.
//!
//! By default the codec is timed on warm, reused buffers (SZp compresses into a slice of the
//! format's worst case allocated once, `szp::Encoder::into_slice`; decodes use
//! `szp::Decoder::into_vec` and PERNIX the `*_stream_into` variants; one output buffer per
//! path reused by every repetition, as lzbench and pcodec's bench do); `--e2e` times the
//! allocating API a user of `szp::compress` sees. A warm single-thread `memcpy` of the same size (M) is measured
//! in the same run and every row carries its ratio to it. `--isa` narrows the detected CPU
//! features, so the `simd` and `parallel` rows run the kernels a CPU with only that ISA would
//! get; with several, each path's kernels take turns call by call (so do the verified and
//! unverified decodes), so their ratios come from the same moments of the run.

mod args;
mod plot;
mod report;
mod run;
mod timing;

pub use args::BenchArgs;
pub use run::run;
