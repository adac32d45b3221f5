//! SZp in the CLI: the three paths, the archive's bound and description.

use fzpack::szp::{self, Config, Mode};

use crate::codec::{ArchiveKind, Decoded, Engines, ModeArg, PathKind, Wrap, bpv_row, ratio_row};
use crate::fail::{Fail, lib};

pub fn available() -> bool {
    true
}

pub fn detect(bytes: &[u8]) -> Option<ArchiveKind> {
    if bytes.starts_with(&szp::MAGIC) {
        Some(ArchiveKind::Szp)
    } else {
        None
    }
}

fn config(mode: ModeArg, eb: f64, block: u32) -> Config {
    let c = match mode {
        ModeArg::Abs => Config::abs(eb),
        ModeArg::Noa => Config::noa(eb),
    };
    c.with_block_size(block)
}

#[allow(clippy::too_many_arguments)]
pub fn compress<T: Wrap>(
    name: &str,
    values: &[T],
    mode: ModeArg,
    eb: f64,
    block: u32,
    path: PathKind,
    eng: &Engines,
    fzm: bool,
) -> Result<Vec<u8>, Fail> {
    let cfg = config(mode, eb, block);
    if fzm {
        return Err(Fail::new(
            crate::fail::Kind::Usage,
            "--format fzm is not available yet (the core has no FZM writer in this build)",
        ));
    }
    let r = match path {
        PathKind::Scalar => {
            let cap = szp::max_compressed_len(values.len(), block, T::TYPE.into())
                .ok_or_else(|| Fail::new(crate::fail::Kind::Usage, "input too large"))?;
            let mut out = vec![0u8; cap];
            szp::scalar::compress(values, &cfg, &mut out)
                .map(|n| {
                    out.truncate(n);
                    out
                })
                .map_err(fzpack::Error::from)
        }
        PathKind::Simd => szp::compress_serial_vec(values, &cfg),
        PathKind::Parallel => szp::compress_par(values, &cfg, &eng.par),
    };
    r.map_err(|e| lib(name, e))
}

pub fn decompress(
    name: &str,
    bytes: &[u8],
    _k: ArchiveKind,
    path: PathKind,
    eng: &Engines,
) -> Result<Decoded, Fail> {
    let h = szp::header(bytes).map_err(|e| lib(name, e.into()))?;
    match h.dtype {
        szp::DType::F32 => decode::<f32>(name, bytes, path, eng).map(Decoded::F32),
        szp::DType::F64 => decode::<f64>(name, bytes, path, eng).map(Decoded::F64),
    }
}

fn decode<T: Wrap>(
    name: &str,
    bytes: &[u8],
    path: PathKind,
    eng: &Engines,
) -> Result<Vec<T>, Fail> {
    let r = match path {
        PathKind::Scalar => szp::blocks::parse(bytes)
            .map_err(fzpack::Error::from)
            .and_then(|v| {
                let mut out = vec![T::ZERO; v.n];
                szp::scalar::decompress(bytes, &mut out)?;
                Ok(out)
            }),
        PathKind::Simd => szp::decompress_serial_vec(bytes),
        PathKind::Parallel => szp::decompress_par(bytes, &eng.par),
    };
    r.map_err(|e| lib(name, e))
}

pub fn bound(name: &str, bytes: &[u8], _k: ArchiveKind) -> Result<f64, Fail> {
    let h = szp::header(bytes).map_err(|e| lib(name, e.into()))?;
    Ok(if h.strict {
        h.bound()
    } else {
        // stage-compatible archives: the bound plus half an ulp of the f32 result (spec §1.8)
        h.bound() * (1.0 + f32::EPSILON as f64)
    })
}

pub fn describe(name: &str, bytes: &[u8], _k: ArchiveKind) -> Result<Vec<(String, String)>, Fail> {
    let v = szp::blocks::parse(bytes).map_err(|e| lib(name, e.into()))?;
    let h = v.header;
    let dtype: fzpack::DType = h.dtype.into();
    let mode = match h.mode {
        Mode::Abs => format!("ABS {:.6e}", h.requested),
        Mode::Noa => format!(
            "NOA {:.6e} of the value range {:.6e}",
            h.requested, h.value_base
        ),
    };
    let mut hist = [0usize; 65];
    for &w in v.widths {
        hist[w as usize] += 1;
    }
    let zero = hist[0];
    let wmax = (0..65).rev().find(|&w| hist[w] > 0).unwrap_or(0);
    Ok(vec![
        (
            "format".into(),
            format!("fzpack SZp archive v{}", szp::FORMAT_VERSION),
        ),
        ("dtype".into(), dtype.to_string()),
        ("values".into(), h.n.to_string()),
        ("block size".into(), format!("{} values", h.block_size)),
        ("blocks".into(), v.widths.len().to_string()),
        ("error bound".into(), mode),
        ("absolute bound".into(), format!("{:.6e}", h.bound())),
        ("quantizer bound".into(), format!("{:.6e}", h.quant_eb)),
        (
            "strict".into(),
            if h.strict {
                "yes (every value checked against the bound)"
            } else {
                "no (stage-compatible)"
            }
            .into(),
        ),
        (
            "block widths".into(),
            format!("max {wmax} bits, {zero} constant (0-bit) blocks"),
        ),
        ("archive size".into(), format!("{} bytes", bytes.len())),
        ratio_row(h.n as f64 * dtype.size() as f64, bytes.len()),
        bpv_row(h.n, bytes.len()),
    ])
}
