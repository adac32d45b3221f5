//! `fzpack decompress`: any fzpack archive (or standard input) back to raw little-endian
//! values, behind a `.npy` header when the output's name ends in `.npy` (`-o NAME.npy`, or the
//! default name of an archive of a `.npy`: `t.npy.szp` -> `t.decoded.npy`), shaped by
//! `--dims`, else by the shape the archive records, else 1-D. The archive is validated whole
//! first; `.pnx` and `.szp` are then decoded and written a batch at a time.

use std::path::{Path, PathBuf};

use fzpack::DType;
use fzpack::pernix::{self, Verify};
use fzpack_cli::container::{self, ArchiveKind};

use crate::codec::{Engines, PathKind, Wrap, verify_of};
use crate::data;
use crate::dispatch::{self, archive_head};
use crate::fail::{Fail, Kind, lib};
use crate::files::{Input, Output};
use crate::gpu::{self, GpuElem};
use crate::npy;
use crate::szpcli;
use crate::szpstream;
use crate::ui::{bar, name, report, spinner};

#[derive(clap::Args, Debug)]
pub struct DecompressArgs {
    /// The archive; `-` reads standard input.
    input: PathBuf,
    /// Output file [default: NAME.decoded.f32/.f64, or NAME.decoded.npy for NAME.npy.szp;
    /// standard output for input `-`]; `-` writes to standard output. A name ending in .npy
    /// gets a .npy file (little-endian, C order, the archive's shape).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Worker threads [default: all cores; at most 4 per core, 1024 in all].
    #[arg(long)]
    threads: Option<usize>,
    /// Overwrite an existing output.
    #[arg(long)]
    force: bool,
    /// Do not verify the .pnx / .szp v2 checksums (for data checksummed elsewhere; the
    /// structure is still checked).
    #[arg(long)]
    no_verify: bool,
    /// Shape of a .npy output, e.g. 2161,4320 (C order): its product must be the value count
    /// [default: the shape the archive records, else one dimension].
    #[arg(long)]
    dims: Option<String>,
    /// Decode on the GPU (device 0; SZp archives, checksums always verified). Needs a build
    /// with the `cuda` feature and a CUDA driver and device; never falls back to the CPU.
    #[arg(long)]
    gpu: bool,
}

pub fn run(a: DecompressArgs) -> Result<(), Fail> {
    let nm = name(&a.input);
    let verify = verify_of(a.no_verify);
    let eng = Engines::new(a.threads)?;
    let dims = match &a.dims {
        Some(s) => Some(data::parse_dims(s).map_err(|m| Fail::new(Kind::Usage, m))?),
        None => None,
    };
    let is_npy = |p: &Path| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    // The stem of the default output: `t.npy.szp` -> `t` (a `.npy` output), `t.f32.szp` -> `t`.
    let stem = a.input.with_extension("");
    let npy_in = a.output.is_none() && a.input.as_os_str() != "-" && is_npy(&stem);
    let npy_out = npy_in || a.output.as_deref().is_some_and(is_npy);
    if dims.is_some() && !npy_out {
        return Err(Fail::new(
            Kind::Usage,
            "--dims shapes a .npy output; give -o NAME.npy (a raw output is flat)",
        ));
    }
    let input = Input::open_checked(&a.input, archive_head(&nm))?;
    let bytes = input.bytes();
    let summary = container::check(bytes, verify).map_err(|e| lib(&nm, e))?;
    let dtype = summary.dtype;
    if a.gpu && summary.kind == ArchiveKind::Szp && szpcli::is_interp(bytes) {
        return Err(Fail::new(
            Kind::Usage,
            format!(
                "{nm}: --gpu: the GPU does not decode the interp layout (layout 2, the \
                 interpolation tiles); drop --gpu to decode it on the CPU"
            ),
        ));
    }
    let gpu = gpu::open(a.gpu)?;
    if gpu.is_some() && summary.kind != ArchiveKind::Szp {
        return Err(Fail::new(
            Kind::Usage,
            format!(
                "{nm}: --gpu decodes SZp archives (.szp); this is a {:?} archive",
                summary.kind
            ),
        ));
    }
    let header = if npy_out {
        let n = usize::try_from(summary.n)
            .map_err(|_| Fail::new(Kind::Input, format!("{nm}: too many values")))?;
        // --dims, else the shape the archive records, else one dimension.
        let shape = match dims {
            Some(d) => {
                super::compress::check_dims(&nm, &d, n, "archive")?;
                d
            }
            None => szpcli::stored_shape(&nm, bytes, summary.kind)?.unwrap_or_else(|| vec![n]),
        };
        npy::header_bytes(dtype, &shape)
    } else {
        Vec::new()
    };
    let out_path = a.output.clone().unwrap_or_else(|| {
        if a.input.as_os_str() == "-" {
            return PathBuf::from("-");
        }
        let stem = if npy_in || data::dtype_from_name(&stem).is_some() {
            stem.with_extension("")
        } else {
            stem.clone()
        };
        let mut s = stem.into_os_string();
        s.push(".decoded.");
        s.push(if npy_in { "npy" } else { dtype.name() });
        PathBuf::from(s)
    });
    let mut out = Output::create(&out_path, a.force, &[&input])?;
    out.write_all(&header)?;
    match (dtype, &gpu) {
        (DType::F32, Some(d)) => write_values(&mut out, &gpu_decode::<f32>(d, &nm, bytes)?)?,
        (DType::F64, Some(d)) => write_values(&mut out, &gpu_decode::<f64>(d, &nm, bytes)?)?,
        (DType::F32, None) => {
            decompress_t::<f32>(&nm, bytes, summary.kind, verify, &eng, &mut out)?
        }
        (DType::F64, None) => {
            decompress_t::<f64>(&nm, bytes, summary.kind, verify, &eng, &mut out)?
        }
    }
    let written = out.written() - header.len() as u64;
    let to_stdout = out.is_stdout();
    out.finish(a.force)?;
    let line = format!(
        "{} -> {}: {} {} values ({} bytes)",
        a.input.display(),
        out_path.display(),
        written / dtype.size() as u64,
        dtype,
        written
    );
    report(if to_stdout { Path::new("-") } else { &out_path }, &line);
    Ok(())
}

fn gpu_decode<T: GpuElem>(d: &gpu::Device, nm: &str, bytes: &[u8]) -> Result<Vec<T>, Fail> {
    let pb = spinner("decompressing on the GPU");
    let r = gpu::decompress::<T>(d, nm, bytes);
    pb.finish_and_clear();
    r
}

fn decompress_t<T: Wrap>(
    nm: &str,
    bytes: &[u8],
    kind: ArchiveKind,
    verify: Verify,
    eng: &Engines,
    out: &mut Output,
) -> Result<(), Fail> {
    match kind {
        ArchiveKind::Pernix => {
            // Streamed in batches of whole chunks; the decoder verifies each chunk once, right
            // after decoding it (from cache), before the batch is written.
            let d = pernix::Decoder::new()
                .dispatcher(eng.pernix(PathKind::Parallel))
                .verify(verify);
            let h = d.header(bytes).map_err(|e| lib(nm, e))?;
            let units = h.units().unwrap_or(0);
            let pb = bar(h.n * T::BYTES as u64, "decompressing");
            let mut buf: Vec<T> = Vec::new();
            for (u0, span, vals) in dispatch::pnx_batches::<T>(&h, units) {
                buf.resize(vals.len(), T::ZERO);
                d.units(&h, &bytes[span], u0, &mut buf)
                    .map_err(|e| lib(nm, e))?;
                write_values(out, &buf)?;
                pb.inc((vals.len() * T::BYTES) as u64);
            }
            pb.finish_and_clear();
            Ok(())
        }
        ArchiveKind::Szp if szpcli::is_interp(bytes) => {
            // The interpolation layout: tiles decoded in slabs on the pool by the facade (each
            // tile's CRC checked as it is decoded), then written at once.
            let pb = spinner("decompressing");
            let r = fzpack::szp::Decoder::new()
                .threads(&eng.par)
                .verify(verify)
                .to_vec::<T>(bytes);
            pb.finish_and_clear();
            write_values(out, &r.map_err(|e| lib(nm, e))?)
        }
        ArchiveKind::Szp => {
            // Decoded and verified a batch of chunks at a time (the one verification pass: `container::check` is structural only).
            let pb = bar(out_len::<T>(bytes), "decompressing");
            let r = szpstream::decompress(
                bytes,
                &eng.par,
                verify,
                out,
                szpstream::szp_fail(nm),
                |o, v: &[T]| {
                    pb.inc(size_of_val(v) as u64);
                    write_values(o, v)
                },
            );
            pb.finish_and_clear();
            r
        }
        ArchiveKind::Fzm => {
            let pb = spinner("decompressing");
            let d = dispatch::decompress(nm, bytes, PathKind::Parallel, eng);
            pb.finish_and_clear();
            let v = T::unwrap(d?).ok_or_else(|| Fail::new(Kind::Corrupt, "element type"))?;
            write_values(out, &v)
        }
    }
}

/// Values bytes of an SZp archive (for the progress bar).
fn out_len<T: Wrap>(bytes: &[u8]) -> u64 {
    fzpack::szp::header(bytes).map_or(0, |h| h.n.saturating_mul(T::BYTES as u64))
}

/// Writes values as little-endian bytes (in place on little-endian machines).
fn write_values<T: Wrap>(out: &mut Output, v: &[T]) -> Result<(), Fail> {
    match T::as_le_bytes(v) {
        Some(b) => out.write_all(b),
        None => out.write_all(&fzpack::values_to_le_bytes(v)),
    }
}
