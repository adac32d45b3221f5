//! SZp in the CLI: the three paths, the archive's bound and description.

use fzpack::szp::{self, Config};
use fzpack_cli::container::ArchiveKind;

use crate::codec::{Engines, LayoutArg, ModeArg, PathKind, Values, Wrap};
use crate::fail::{Fail, Kind, lib};

pub fn config(mode: ModeArg, eb: f64, block: u32, layout: LayoutArg) -> Config {
    let c = match mode {
        ModeArg::Abs => Config::abs(eb),
        ModeArg::Noa => Config::noa(eb),
    };
    c.with_block_size(block).with_layout(layout.layout())
}

#[allow(clippy::too_many_arguments)]
pub fn compress<T: Wrap>(
    name: &str,
    values: &[T],
    mode: ModeArg,
    eb: f64,
    block: u32,
    layout: LayoutArg,
    path: PathKind,
    eng: &Engines,
    fzm: bool,
) -> Result<Vec<u8>, Fail> {
    encode(
        name,
        values,
        &config(mode, eb, block, layout),
        path,
        eng,
        fzm,
    )
}

/// The archive of `values` under `cfg` on `path` (`fzm`: the `.fzm` container).
pub fn encode<T: Wrap>(
    name: &str,
    values: &[T],
    cfg: &Config,
    path: PathKind,
    eng: &Engines,
    fzm: bool,
) -> Result<Vec<u8>, Fail> {
    let cfg = *cfg;
    if fzm {
        // FZGPUModules .fzm: the core's single-stage writer (one thread, scalar kernels).
        let cap = szp::fzm::max_fzm_len(values.len(), cfg.block_size, T::TYPE)
            .ok_or_else(|| Fail::new(Kind::Usage, "input too large"))?;
        let mut out = vec![0u8; cap];
        let len = szp::fzm::write(values, &cfg, &mut out).map_err(|e| lib(name, e.into()))?;
        out.truncate(len);
        return Ok(out);
    }
    let enc = szp::Encoder::new(&cfg);
    let r = match path {
        PathKind::Scalar => enc.kernel(szp::Kernel::Scalar).serial(),
        PathKind::Simd => enc.serial(),
        PathKind::Parallel => enc.threads(&eng.par),
    }
    .to_vec(values);
    r.map_err(|e| lib(name, e))
}

pub fn decompress(
    name: &str,
    bytes: &[u8],
    k: ArchiveKind,
    path: PathKind,
    eng: &Engines,
) -> Result<Values, Fail> {
    if k == ArchiveKind::Fzm {
        let h = szp::fzm::header(bytes).map_err(|e| lib(name, e.into()))?;
        return match h.dtype {
            szp::DType::F32 => read_fzm::<f32>(name, bytes, h.n).map(Values::F32),
            szp::DType::F64 => read_fzm::<f64>(name, bytes, h.n).map(Values::F64),
        };
    }
    let h = szp::header(bytes).map_err(|e| lib(name, e.into()))?;
    match h.dtype {
        szp::DType::F32 => decode::<f32>(name, bytes, path, eng).map(Values::F32),
        szp::DType::F64 => decode::<f64>(name, bytes, path, eng).map(Values::F64),
    }
}

fn read_fzm<T: Wrap>(name: &str, bytes: &[u8], n: u64) -> Result<Vec<T>, Fail> {
    // n is bounded by the archive: the core checks one width byte per block is present
    // before decoding, but this allocation happens first, so bound it the same way here.
    let cfg = szp::fzm::config(bytes).map_err(|e| lib(name, e.into()))?;
    let max = (bytes.len() as u64).saturating_mul(u64::from(cfg.block_size));
    if n > max {
        return Err(lib(name, szp::Error::Truncated.into()));
    }
    let mut out = vec![T::ZERO; n as usize];
    szp::fzm::read(bytes, &mut out).map_err(|e| lib(name, e.into()))?;
    Ok(out)
}

fn decode<T: Wrap>(
    name: &str,
    bytes: &[u8],
    path: PathKind,
    eng: &Engines,
) -> Result<Vec<T>, Fail> {
    let dec = szp::Decoder::new();
    let r = match path {
        PathKind::Scalar => dec.kernel(szp::Kernel::Scalar).serial(),
        PathKind::Simd => dec.serial(),
        PathKind::Parallel => dec.threads(&eng.par),
    }
    .to_vec(bytes);
    r.map_err(|e| lib(name, e))
}

pub fn bound(name: &str, bytes: &[u8], k: ArchiveKind) -> Result<f64, Fail> {
    if k == ArchiveKind::Fzm {
        // FZM records only the quantizer bound: FZGPUModules' guarantee is that bound plus
        // half an ulp of the f32 result (spec §1.8).
        // Half an ulp of the largest decoded magnitude covers every element.
        let c = szp::fzm::config(bytes).map_err(|e| lib(name, e.into()))?;
        let (max, half_ulp) = match c.dtype {
            szp::DType::F32 => {
                let v: Vec<f32> = read_fzm(name, bytes, c.n)?;
                (
                    v.iter().fold(0f64, |m, x| m.max(x.abs() as f64)),
                    2f64.powi(-24),
                )
            }
            szp::DType::F64 => {
                let v: Vec<f64> = read_fzm(name, bytes, c.n)?;
                (v.iter().fold(0f64, |m, x| m.max(x.abs())), 2f64.powi(-53))
            }
        };
        return Ok(c.error_bound + max * half_ulp);
    }
    let h = szp::header(bytes).map_err(|e| lib(name, e.into()))?;
    Ok(if h.strict {
        h.bound()
    } else {
        // stage-compatible archives: the bound plus half an ulp of the f32 result (spec §1.8)
        h.bound() * (1.0 + f32::EPSILON as f64)
    })
}

/// Whether `bytes` is an SZp archive of the interpolation layout (layout 2), which the
/// block-range paths (`szpstream`) cannot read: the facade's decoder takes it whole.
pub fn is_interp(bytes: &[u8]) -> bool {
    szp::tiled::claims(bytes)
}

/// The most dimensions an SZp archive records.
pub const MAX_RANK: usize = szp::MAX_RANK;

/// `cfg` with the array's shape (C order, slowest first) recorded, for the archive's shape
/// field; `None` (no `--dims`, not a `.npy`) and a 0-d `.npy` (no dimensions) leave the
/// archive without one.
pub fn with_shape(name: &str, cfg: Config, shape: Option<&[usize]>) -> Result<Config, Fail> {
    let Some(dims) = shape.filter(|d| !d.is_empty()) else {
        return Ok(cfg);
    };
    check_rank(name, dims)?;
    let d: Vec<u64> = dims.iter().map(|&x| x as u64).collect();
    let s = szp::Shape::new(&d).map_err(|e| lib(name, e.into()))?;
    Ok(cfg.with_shape(s))
}

/// A shape of more than [`MAX_RANK`] dimensions is refused before anything is written.
pub fn check_rank(name: &str, dims: &[usize]) -> Result<(), Fail> {
    if dims.len() > MAX_RANK {
        return Err(Fail::new(
            Kind::Input,
            format!(
                "{name}: shape {} has {} dimensions; an SZp archive records at most {MAX_RANK} \
                 (reshape it, e.g. merge the slowest dimensions)",
                crate::npy::shape_str(dims),
                dims.len()
            ),
        ));
    }
    Ok(())
}

/// The shape an SZp archive records (`None` for an archive without one, or another kind).
pub fn stored_shape(name: &str, bytes: &[u8], k: ArchiveKind) -> Result<Option<Vec<usize>>, Fail> {
    if k != ArchiveKind::Szp {
        return Ok(None);
    }
    let shape = szp::shape(bytes).map_err(|e| lib(name, e.into()))?;
    if shape.is_none() {
        return Ok(None);
    }
    shape
        .dims()
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<Vec<usize>>>()
        .map(Some)
        .ok_or_else(|| {
            Fail::new(
                Kind::Input,
                format!("{name}: shape too large for this machine"),
            )
        })
}

/// `info`'s rows for an SZp archive's shape and missing values (none for other kinds).
pub fn info_rows(bytes: &[u8]) -> Vec<(String, String)> {
    let (Ok(h), Ok(shape)) = (szp::header(bytes), szp::shape(bytes)) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    if !shape.is_none() {
        let dims: Vec<String> = shape.dims().iter().map(|d| d.to_string()).collect();
        rows.push((
            "shape".to_string(),
            format!("{} (C order, last index fastest)", dims.join("x")),
        ));
    }
    rows.push((
        "missing values".to_string(),
        if h.missing {
            format!("yes: {} (NaN or ±inf), stored exactly", h.missing_count)
        } else {
            "none".to_string()
        },
    ));
    rows
}
