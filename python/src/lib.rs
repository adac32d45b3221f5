//! `fzpack._fzpack`: the Rust half of the Python package `fzpack`.
//!
//! Thin bindings over the public facade of the `fzpack` crate (`fzpack::szp`,
//! `fzpack::pernix`, `fzpack::szp::fzm`). The Python half (`fzpack/__init__.py`) normalizes
//! its inputs first (C-contiguous, native byte order, a float dtype, archives as 1-D `uint8`
//! arrays), so every function here reads numpy memory in place (zero-copy), runs with the GIL
//! released, and returns either `bytes` or a 1-D array that takes over the decoded `Vec`
//! (no copy). Every failure is a `fzpack.Error` (a `ValueError`) carrying the message of the
//! Rust error: nothing here panics on user data.

use fzpack::pernix::{BitWidth, BlockSize};
use fzpack::szp::{Config, Layout, Mode, Shape, fzm};
use fzpack::{DType, Element};
use numpy::{
    IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArrayDyn,
    PyUntypedArrayMethods,
};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

create_exception!(
    fzpack,
    Error,
    PyValueError,
    "Any fzpack failure: bad argument, non-finite input, a bound the data cannot meet, or a \
     corrupt archive. The message is the Rust core's."
);

fn err(e: impl std::fmt::Display) -> PyErr {
    Error::new_err(e.to_string())
}

/// A read-only, C-contiguous float array of either element type.
enum Floats<'py> {
    F32(PyReadonlyArrayDyn<'py, f32>),
    F64(PyReadonlyArrayDyn<'py, f64>),
}

impl<'py> Floats<'py> {
    fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = obj.extract::<PyReadonlyArrayDyn<'py, f32>>() {
            return Ok(Floats::F32(a));
        }
        if let Ok(a) = obj.extract::<PyReadonlyArrayDyn<'py, f64>>() {
            return Ok(Floats::F64(a));
        }
        Err(err(
            "expected a numpy array of float32 or float64 in native byte order",
        ))
    }
}

impl Floats<'_> {
    /// The array's dimensions as the archive records them: a 0-d array is one value (one
    /// dimension of 1); more dimensions than an archive holds is an error that says what to do.
    fn shape(&self) -> PyResult<Shape> {
        let dims: Vec<u64> = match self {
            Floats::F32(a) => a.shape().iter().map(|&d| d as u64).collect(),
            Floats::F64(a) => a.shape().iter().map(|&d| d as u64).collect(),
        };
        let dims = if dims.is_empty() { vec![1] } else { dims };
        Shape::new(&dims).map_err(|e| {
            err(format!(
                "invalid argument: an array of {} dimensions {dims:?}: {}; an archive records \
                 1 to 8 dimensions (compress arr.reshape(-1) and reshape the result)",
                dims.len(),
                fzpack::Error::from(e)
            ))
        })
    }
}

/// The contiguous slice of `a` (the Python wrapper made it contiguous; this re-checks).
fn slice<'a, T: numpy::Element>(a: &'a PyReadonlyArrayDyn<'_, T>) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|_| err("the array must be C-contiguous"))
}

fn bytes_of<'a>(buf: &'a PyReadonlyArray1<'_, u8>) -> PyResult<&'a [u8]> {
    buf.as_slice()
        .map_err(|_| err("the archive buffer must be contiguous"))
}

/// The SZp layouts Python accepts, by the names `szp_compress(..., layout=NAME)`, the codecs'
/// configurations and `szp_header(buf)["layout"]` use (the CLI's `--layout` names), exported
/// as `fzpack.SZP_LAYOUTS` in this order. `"heads"` (the block-head layout) is the default;
/// `"fzgm"` is the FZGPUModules stage layout; `"interp"` predicts across the array's
/// dimensions for ratio (smaller archives, slower).
const LAYOUTS: [(&str, Layout); 3] = [
    ("heads", Layout::Heads),
    ("fzgm", Layout::Fzgm),
    ("interp", Layout::Interp),
];

fn layout_names() -> String {
    LAYOUTS
        .iter()
        .map(|(n, _)| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The layout of a name (case-insensitive; the same rule and list of names as
/// `fzpack.check_layout`).
fn parse_layout(name: &str) -> PyResult<Layout> {
    let lower = name.to_ascii_lowercase();
    LAYOUTS
        .iter()
        .find(|(n, _)| *n == lower)
        .map(|&(_, l)| l)
        .ok_or_else(|| {
            err(format!(
                "invalid argument: layout must be one of {} (fzpack.SZP_LAYOUTS, \
                 case-insensitive), got {name:?}",
                layout_names()
            ))
        })
}

/// The name of a header's layout code (`"unknown"` for a code this build does not read).
fn layout_name(code: u8) -> &'static str {
    LAYOUTS
        .iter()
        .find(|(_, l)| Layout::from_code(code) == Some(*l))
        .map_or("unknown", |(n, _)| n)
}

fn szp_config(eb: f64, mode: &str, block_size: u32, layout: Layout) -> PyResult<Config> {
    let cfg = match mode.to_ascii_lowercase().as_str() {
        "abs" => Config::abs(eb),
        "noa" => Config::noa(eb),
        // The same rule and message as `fzpack.check_mode` (every Python entry point).
        _ => {
            return Err(err(format!(
                "invalid argument: mode must be \"abs\" or \"noa\" (case-insensitive; \"noa\" \
                 is relative to the value range), got {mode:?}"
            )));
        }
    };
    // The interpolation layout has no blocks and ignores the block size; it is still checked,
    // so one argument means the same in every layout.
    if !(1..=fzpack::szp::MAX_BLOCK_SIZE).contains(&block_size) {
        return Err(err(fzpack::Error::from(
            fzpack::szp::Error::InvalidBlockSize,
        )));
    }
    Ok(cfg.with_block_size(block_size).with_layout(layout))
}

/// Runs `f` with the GIL released and turns its error into `fzpack.Error`.
fn detached<T: Send, E: std::fmt::Display + Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, E> + Send,
) -> PyResult<T> {
    py.detach(f).map_err(err)
}

fn to_bytes<'py>(py: Python<'py>, v: Vec<u8>) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &v)
}

/// szp_compress(arr, eb, mode="abs", block_size=128, layout="heads", f32_step=False) -> bytes
#[pyfunction]
#[pyo3(signature = (arr, eb, mode = "abs", block_size = 128, layout = "heads", f32_step = false))]
fn szp_compress<'py>(
    py: Python<'py>,
    arr: &Bound<'py, PyAny>,
    eb: f64,
    mode: &str,
    block_size: u32,
    layout: &str,
    f32_step: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let floats = Floats::extract(arr)?;
    let layout = parse_layout(layout)?;
    if f32_step && layout == Layout::Interp {
        return Err(err(
            "invalid argument: f32_step is for the block layouts (\"heads\", \"fzgm\"), not \"interp\"",
        ));
    }
    let cfg = szp_config(eb, mode, block_size, layout)?.with_shape(floats.shape()?);
    let cfg = if f32_step { cfg.with_f32_step() } else { cfg };
    let out = match floats {
        Floats::F32(a) => {
            let s = slice(&a)?;
            detached(py, || fzpack::szp::compress(s, &cfg))?
        }
        Floats::F64(a) => {
            let s = slice(&a)?;
            detached(py, || fzpack::szp::compress(s, &cfg))?
        }
    };
    Ok(to_bytes(py, out))
}

fn decoded<'py, T: Element + numpy::Element>(
    py: Python<'py>,
    f: impl FnOnce() -> fzpack::Result<Vec<T>> + Send,
) -> PyResult<Bound<'py, PyAny>> {
    let v = detached(py, f)?;
    Ok(v.into_pyarray(py).into_any())
}

/// `v` as an array of the archive's shape (a view of the decoded vector, no copy); flat when
/// the archive records none (archives written before the shape field).
fn shaped<'py, T: Element + numpy::Element>(
    py: Python<'py>,
    v: Vec<T>,
    dims: &[u64],
) -> PyResult<Bound<'py, PyAny>> {
    let a = v.into_pyarray(py);
    if dims.is_empty() {
        return Ok(a.into_any());
    }
    let dims = dims
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|_| err("SZp: corrupt archive: a dimension does not fit in memory"))?;
    Ok(a.reshape(dims)?.into_any())
}

/// szp_decompress(buf) -> numpy.ndarray (the shape the archive records; 1-D without one)
#[pyfunction]
fn szp_decompress<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
) -> PyResult<Bound<'py, PyAny>> {
    let b = bytes_of(&buf)?;
    let h = fzpack::szp::header(b).map_err(|e| err(fzpack::Error::from(e)))?;
    let shape = fzpack::szp::shape(b).map_err(|e| err(fzpack::Error::from(e)))?;
    match h.dtype {
        DType::F32 => shaped(
            py,
            detached(py, || fzpack::szp::decompress::<f32>(b))?,
            shape.dims(),
        ),
        DType::F64 => shaped(
            py,
            detached(py, || fzpack::szp::decompress::<f64>(b))?,
            shape.dims(),
        ),
    }
}

/// szp_header(buf) -> dict (the archive header: version, dtype, n, shape, missing, mode,
/// block_size, bounds, strict, layout)
#[pyfunction]
fn szp_header<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let b = bytes_of(&buf)?;
    let h = fzpack::szp::header(b).map_err(|e| err(fzpack::Error::from(e)))?;
    let shape = fzpack::szp::shape(b).map_err(|e| err(fzpack::Error::from(e)))?;
    header_dict(py, &h, &shape)
}

fn header_dict<'py>(
    py: Python<'py>,
    h: &fzpack::szp::Header,
    shape: &fzpack::szp::Shape,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let d = pyo3::types::PyDict::new(py);
    // numpy's names, so `numpy.dtype(h["dtype"])` works.
    d.set_item(
        "dtype",
        match h.dtype {
            DType::F32 => "float32",
            DType::F64 => "float64",
        },
    )?;
    d.set_item("version", h.version)?;
    d.set_item("n", h.n)?;
    d.set_item(
        "mode",
        match h.mode {
            Mode::Abs => "abs",
            Mode::Noa => "noa",
        },
    )?;
    d.set_item("block_size", h.block_size)?;
    d.set_item("bound", h.bound())?;
    d.set_item("requested", h.requested)?;
    d.set_item("quant_eb", h.quant_eb)?;
    d.set_item("value_base", h.value_base)?;
    d.set_item("strict", h.strict)?;
    // The array's dimensions (empty for archives written before the shape field) and whether
    // it holds missing values (NaN, infinities), stored exactly.
    d.set_item("shape", shape.dims().to_vec())?;
    d.set_item("missing", h.missing)?;
    d.set_item("missing_count", h.missing_count)?;
    d.set_item("layout", layout_name(h.layout))?;
    Ok(d)
}

/// pernix_compress(arr, bits, block_size=64) -> bytes
#[pyfunction]
#[pyo3(signature = (arr, bits, block_size = 64))]
fn pernix_compress<'py>(
    py: Python<'py>,
    arr: &Bound<'py, PyAny>,
    bits: u32,
    block_size: u32,
) -> PyResult<Bound<'py, PyBytes>> {
    let bits = u8::try_from(bits)
        .ok()
        .and_then(|b| BitWidth::new(b).ok())
        .ok_or_else(|| err(format!("invalid argument: bits must be 1..=24, got {bits}")))?;
    let bs = BlockSize::new(block_size).map_err(|e| err(fzpack::Error::from(e)))?;
    let out = match Floats::extract(arr)? {
        Floats::F32(a) => {
            let s = slice(&a)?;
            detached(py, || fzpack::pernix::compress(s, bits, bs))?
        }
        Floats::F64(a) => {
            let s = slice(&a)?;
            detached(py, || fzpack::pernix::compress(s, bits, bs))?
        }
    };
    Ok(to_bytes(py, out))
}

/// pernix_decompress(buf) -> numpy.ndarray
#[pyfunction]
fn pernix_decompress<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
) -> PyResult<Bound<'py, PyAny>> {
    let b = bytes_of(&buf)?;
    let h = fzpack::pernix::stream_header(b).map_err(err)?;
    match h.dtype {
        DType::F32 => decoded::<f32>(py, || fzpack::pernix::decompress(b)),
        DType::F64 => decoded::<f64>(py, || fzpack::pernix::decompress(b)),
    }
}

/// pernix_block_bounds(buf) -> ndarray[float64]: the guaranteed bound of every block.
#[pyfunction]
fn pernix_block_bounds<'py>(
    py: Python<'py>,
    buf: PyReadonlyArray1<'py, u8>,
) -> PyResult<(Bound<'py, PyArray1<f64>>, usize)> {
    let b = bytes_of(&buf)?;
    let h = fzpack::pernix::Decoder::new()
        .verify(fzpack::pernix::Verify::Skip)
        .header(b)
        .map_err(err)?;
    // the caller's array of bounds, from the scales one at a time
    let bounds: Vec<f64> = h
        .scales(b)
        .map(|s| fzpack::pernix::block_error_bound_of(h.dtype, s, h.bits))
        .collect();
    Ok((bounds.into_pyarray(py), h.elements_per_block()))
}

fn fzm_write<T: Element>(input: &[T], cfg: &Config) -> fzpack::Result<Vec<u8>> {
    let cap = fzm::max_fzm_len(input.len(), cfg.block_size, T::TYPE)
        .ok_or(fzpack::Error::Szp(fzpack::szp::Error::InvalidBlockSize))?;
    let mut out = vec![0u8; cap];
    let len = fzm::write(input, cfg, &mut out)?;
    out.truncate(len);
    Ok(out)
}

fn fzm_read<T: Element>(archive: &[u8], n: usize) -> fzpack::Result<Vec<T>> {
    let mut out = vec![T::ZERO; n];
    let got = fzm::read(archive, &mut out)?;
    out.truncate(got);
    Ok(out)
}

/// write_fzm(arr, eb, mode="abs", block_size=128, stage_compatible=False) -> bytes
#[pyfunction]
#[pyo3(signature = (arr, eb, mode = "abs", block_size = 128, stage_compatible = false))]
fn write_fzm<'py>(
    py: Python<'py>,
    arr: &Bound<'py, PyAny>,
    eb: f64,
    mode: &str,
    block_size: u32,
    stage_compatible: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    // `.fzm` holds the stage layout whatever the config says.
    let mut cfg = szp_config(eb, mode, block_size, Layout::Heads)?;
    if stage_compatible {
        cfg = cfg.stage_compatible();
    }
    let out = match Floats::extract(arr)? {
        Floats::F32(a) => {
            let s = slice(&a)?;
            detached(py, || fzm_write(s, &cfg))?
        }
        Floats::F64(a) => {
            let s = slice(&a)?;
            detached(py, || fzm_write(s, &cfg))?
        }
    };
    Ok(to_bytes(py, out))
}

/// read_fzm(buf) -> numpy.ndarray
#[pyfunction]
fn read_fzm<'py>(py: Python<'py>, buf: PyReadonlyArray1<'py, u8>) -> PyResult<Bound<'py, PyAny>> {
    let b = bytes_of(&buf)?;
    let c = fzm::config(b).map_err(|e| err(fzpack::Error::from(e)))?;
    // The exact-length rule of the CLI: the core's reader ignores bytes after the body, whose
    // length the header records (offset 16, u64) after the fixed 592-byte header.
    let recorded = b
        .get(16..24)
        .and_then(|s| <[u8; 8]>::try_from(s).ok())
        .map(u64::from_le_bytes)
        .and_then(|l| l.checked_add(fzm::FZM_HEADER_LEN as u64));
    if let Some(want) = recorded
        && b.len() as u64 > want
    {
        return Err(err(format!(
            "corrupt archive: .fzm: {} bytes after the end of the archive ({want} bytes)",
            b.len() as u64 - want
        )));
    }
    // The header's count is checked against the archive before allocating: one width byte per
    // block must be present, so at most `block_size` values are allocated per archive byte.
    let blocks = c.n.div_ceil(u64::from(c.block_size.max(1)));
    if blocks > b.len() as u64 {
        return Err(err(fzpack::Error::from(fzpack::szp::Error::Truncated)));
    }
    let n = usize::try_from(c.n).map_err(|_| err("SZp: corrupt archive: element count"))?;
    match c.dtype {
        DType::F32 => decoded::<f32>(py, || fzm_read(b, n)),
        DType::F64 => decoded::<f64>(py, || fzm_read(b, n)),
    }
}

/// The native half of `fzpack`; use the `fzpack` package, not this module.
#[pymodule]
fn _fzpack(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<Error>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let names: Vec<&str> = LAYOUTS.iter().map(|(n, _)| *n).collect();
    m.add("SZP_LAYOUTS", pyo3::types::PyTuple::new(m.py(), names)?)?;
    m.add_function(wrap_pyfunction!(szp_compress, m)?)?;
    m.add_function(wrap_pyfunction!(szp_decompress, m)?)?;
    m.add_function(wrap_pyfunction!(szp_header, m)?)?;
    m.add_function(wrap_pyfunction!(pernix_compress, m)?)?;
    m.add_function(wrap_pyfunction!(pernix_decompress, m)?)?;
    m.add_function(wrap_pyfunction!(pernix_block_bounds, m)?)?;
    m.add_function(wrap_pyfunction!(write_fzm, m)?)?;
    m.add_function(wrap_pyfunction!(read_fzm, m)?)?;
    Ok(())
}
