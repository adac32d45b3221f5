//! `fzpack-hdf5`: an HDF5 dynamically loaded filter plugin (`H5PLget_plugin_type`,
//! `H5PLget_plugin_info`, an `H5Z_class2_t`) for fzpack's SZp and PERNIX codecs.
//!
//! Put `libfzpack_hdf5.so` in a directory named by `HDF5_PLUGIN_PATH` and any HDF5 >= 1.10
//! program (h5dump, h5py, netCDF-4 ...) reads and writes datasets with filter id
//! [`FILTER_ID`]. The filter applies to chunked datasets of little-endian `float32`/`float64`
//! in any rank.
//!
//! # `cd_values` (layout version 1)
//!
//! | index | set by | meaning |
//! |---|---|---|
//! | 0 | user | layout version, `1` |
//! | 1 | user | codec: `0` = SZp, `1` = PERNIX |
//! | 2 | user | SZp: bound mode, `0` = ABS, `2` = NOA (value-range relative, per chunk), plus the layout × 256 (below); PERNIX: bits 1..=24 |
//! | 3 | user | SZp: values per block 1..=4096 (128 typical); PERNIX: bytes per block 64/128/256/512/1024 |
//! | 4 | user | SZp: the bound as an IEEE-754 `f64`, low 32 bits; PERNIX: 0 |
//! | 5 | user | SZp: the bound, high 32 bits; PERNIX: 0 |
//! | 6 | `set_local` | element type: `1` = f32, `2` = f64 (users pass 6 values, or 0 here) |
//! | 7 | `set_local` | values per chunk (the product of the chunk dimensions) |
//!
//! | 8 | `set_local` | interpolation layout only: the chunk's rank `r` (1..=8) |
//! | 9 .. 9+r | `set_local` | interpolation layout only: the chunk's dimensions, slowest first |
//!
//! `set_local` validates the user's values (so `create_dataset` fails on a bad bound, not the
//! first write), records the dataset's element type and chunk size and stores 8 values in the
//! file (9 + rank with the interpolation layout). A reader rejects any other layout version.
//!
//! ## The SZp layout (`cd_values[2]` bits 8..15)
//!
//! `0` (what every file before this option holds): chunks in the block-head layout. `2`
//! ([`SZP_LAYOUT_INTERP`]): chunks in the interpolation layout (`--layout interp` of the CLI),
//! each predicted over the chunk's own dimensions, which `set_local` records after the 8
//! values (a chunk of more than 8 dimensions has its slowest ones merged); several times
//! smaller on smooth fields, slower. So `cd_values[2] = 2 | 2 << 8` is NOA in the
//! interpolation layout. Every other code is refused. Files written without it read as
//! before; a plugin build older than this option refuses a dataset written with it by its
//! mode (`SZp mode 512`), instead of reading chunks it cannot decode. Readers need no option:
//! each chunk's archive header names its layout.
//!
//! # Missing values and a chunk the codec cannot encode
//!
//! NaN and infinities (missing values: land in an ocean field, fill values) are stored
//! exactly inside the SZp archive, every finite value within the bound, so such chunks are
//! compressed like any other; a chunk of nothing but missing values costs about a byte per block
//! (2.2 KiB for a 512 x 512 float32 chunk, 1 MiB raw).
//! PERNIX cannot hold them (its encoder refuses a non-finite value): a PERNIX chunk with one
//! is a chunk the codec cannot encode, below.
//!
//! A chunk whose values the SZp bound cannot be met on (a bound below the float precision),
//! or a PERNIX chunk with a missing value, makes the encoder fail. The filter keeps the flag the caller gave: h5py adds every
//! `compression=` filter as *optional*, and HDF5 then stores that one chunk unfiltered (its
//! filter-mask bit set), so the values are kept exactly — the bound trivially holds — and
//! every reader, with or without the plugin, gets them back. A caller who sets the filter
//! *mandatory* (`H5Pset_filter(..., H5Z_FLAG_MANDATORY, ...)`) gets a failed write instead.
//! (An earlier version forced mandatory; the HDF5 2.0 bundled in h5py 3.16 then crashed in
//! `H5D__flush_all_cb` when the file was closed after such a failure, since the chunk cache
//! runs the filter only at flush.)
//!
//! # Chunk format
//!
//! A filtered chunk is the codec's own self-describing container — the fzpack SZp archive
//! (`docs/szp-archive.md`) or the PERNIX `.pnx` stream (`docs/pernix-stream.md`) — followed by
//! the CRC-32 (zlib/IEEE, little-endian) of those bytes. The trailer predates the SZp archive's
//! own checksums (format 2) and stays: it is checked before anything is parsed, and it covers
//! chunks written by the first plugin build, whose SZp archives (format 1) had none, so any
//! flipped bit fails the read instead of returning wrong values.
//! Decoding checks the CRC, the archive (every field, exact length), its element type against
//! `cd_values[6]` and its value count against `cd_values[7]`; any mismatch makes the filter
//! return 0, so HDF5 fails the read ("filter returned failure during read").
//!
//! # Filter id
//!
//! [`FILTER_ID`] = 62025 lies in 32768..=65535, the range The HDF Group reserves for filters
//! that are not registered with it (256..=511 are for testing). To get an official id, ask The
//! HDF Group's helpdesk (contact, short description, license links) as described on its
//! "Registered Filter Plugins" page; then change [`FILTER_ID`] (and `fzpack.hdf5.FILTER_ID`),
//! and keep a second plugin build with the old id to read files already written.
//!
//! # Linking
//!
//! The plugin does not link libhdf5. The six HDF5 functions `set_local` needs are looked up
//! when first needed: in the global symbol scope (a program linked with libhdf5, such as
//! h5dump), else in the first loaded shared object that exports them (h5py's wheel loads its
//! bundled libhdf5 privately). So one `.so` serves HDF5 1.10 (Debian bookworm) and the 1.14
//! bundled by h5py. A process with two different libhdf5 copies loaded is not supported.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use fzpack::pernix::{BitWidth, BlockSize};
use fzpack::szp::{Config, Layout, Mode};
use fzpack::{DType, Element};

/// The filter id (unregistered range 32768..=65535; see the crate docs).
pub const FILTER_ID: c_int = 62025;
/// The `cd_values` layout version this plugin writes and reads.
pub const CD_VERSION: c_uint = 1;
/// Number of `cd_values` a user passes.
pub const CD_USER: usize = 6;
/// Number of `cd_values` stored after `set_local`.
pub const CD_FULL: usize = 8;
/// `cd_values[1]` for SZp.
pub const CODEC_SZP: c_uint = 0;
/// `cd_values[1]` for PERNIX.
pub const CODEC_PERNIX: c_uint = 1;
/// The SZp layout code (`cd_values[2] >> 8`) of the interpolation layout.
pub const SZP_LAYOUT_INTERP: c_uint = 2;
/// The most chunk dimensions recorded for the interpolation layout (the SZp archive's limit).
pub const MAX_CHUNK_RANK: usize = fzpack::szp::MAX_RANK;

type Hid = i64;
type Herr = c_int;
type Htri = c_int;

const H5Z_CLASS_T_VERS: c_int = 1;
const H5Z_FLAG_REVERSE: c_uint = 0x0100;
const H5PL_TYPE_FILTER: c_int = 0;
const H5T_FLOAT: c_int = 1;
const H5T_ORDER_LE: c_int = 0;
const H5P_DEFAULT_ERR_STACK: Hid = 0; // H5E_DEFAULT

type CanApply = unsafe extern "C" fn(Hid, Hid, Hid) -> Htri;
type SetLocal = unsafe extern "C" fn(Hid, Hid, Hid) -> Herr;
type FilterFn = unsafe extern "C" fn(
    c_uint,
    usize,
    *const c_uint,
    usize,
    *mut usize,
    *mut *mut c_void,
) -> usize;

/// HDF5's `H5Z_class2_t` (stable since 1.8.11).
#[repr(C)]
pub struct H5ZClass2 {
    version: c_int,
    id: c_int,
    encoder_present: c_uint,
    decoder_present: c_uint,
    name: *const c_char,
    can_apply: Option<CanApply>,
    set_local: Option<SetLocal>,
    filter: Option<FilterFn>,
}

/// The class record HDF5 reads through [`H5PLget_plugin_info`].
struct Class(H5ZClass2);
// SAFETY: the record is immutable and its pointers (a static C string, functions) are valid
// from any thread.
unsafe impl Sync for Class {}

static CLASS: Class = Class(H5ZClass2 {
    version: H5Z_CLASS_T_VERS,
    id: FILTER_ID,
    encoder_present: 1,
    decoder_present: 1,
    name: c"fzpack: SZp error-bounded / PERNIX lossy compression (fzpack.hdf5)".as_ptr(),
    can_apply: None,
    set_local: Some(set_local),
    filter: Some(filter),
});

/// Plugin entry point: this library is a filter plugin.
#[unsafe(no_mangle)]
pub extern "C" fn H5PLget_plugin_type() -> c_int {
    H5PL_TYPE_FILTER
}

/// Plugin entry point: the filter's `H5Z_class2_t`.
#[unsafe(no_mangle)]
pub extern "C" fn H5PLget_plugin_info() -> *const c_void {
    (&raw const CLASS.0).cast()
}

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

/// The user part of `cd_values`, validated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Params {
    /// SZp with this configuration.
    Szp(Config),
    /// PERNIX with these bits and block size.
    Pernix(BitWidth, BlockSize),
}

/// Parses and validates `cd[..6]`; the message says what is wrong.
pub fn parse_params(cd: &[c_uint]) -> Result<Params, String> {
    if cd.len() < CD_USER {
        return Err(format!(
            "fzpack filter: {} cd_values, {CD_USER} needed (version, codec, mode/bits, block size, bound lo, bound hi)",
            cd.len()
        ));
    }
    if cd[0] != CD_VERSION {
        return Err(format!(
            "fzpack filter: cd_values layout version {} (this plugin reads {CD_VERSION})",
            cd[0]
        ));
    }
    match cd[1] {
        CODEC_SZP => {
            let eb = f64::from_bits(u64::from(cd[4]) | (u64::from(cd[5]) << 32));
            if !(eb.is_finite() && eb > 0.0) {
                return Err(format!(
                    "fzpack filter: SZp: the error bound must be finite and > 0, got {eb}"
                ));
            }
            let layout = match cd[2] >> 8 {
                0 => Layout::Heads,
                SZP_LAYOUT_INTERP => Layout::Interp,
                l => {
                    return Err(format!(
                        "fzpack filter: SZp layout {l} (cd_values[2] / 256: 0 = block heads, \
                         2 = interpolation)"
                    ));
                }
            };
            let cfg = match Mode::from_code((cd[2] & 0xff) as u8) {
                Some(Mode::Abs) => Config::abs(eb),
                Some(Mode::Noa) => Config::noa(eb),
                _ => {
                    return Err(format!(
                        "fzpack filter: SZp mode {} (0 = ABS, 2 = NOA)",
                        cd[2] & 0xff
                    ));
                }
            };
            if cd[3] == 0 || cd[3] > fzpack::szp::MAX_BLOCK_SIZE {
                return Err(format!(
                    "fzpack filter: SZp block size {} (1..=4096)",
                    cd[3]
                ));
            }
            // Chunks use the block-head layout (the better ratio of the two block layouts at
            // the same speed) unless the interpolation layout is asked for; the layout is in
            // each chunk's archive header, so readers need nothing from here.
            Ok(Params::Szp(cfg.with_block_size(cd[3]).with_layout(layout)))
        }
        CODEC_PERNIX => {
            let bits = u8::try_from(cd[2])
                .ok()
                .and_then(|b| BitWidth::new(b).ok())
                .ok_or_else(|| format!("fzpack filter: PERNIX bits {} (1..=24)", cd[2]))?;
            let bs = BlockSize::new(cd[3]).map_err(|e| format!("fzpack filter: PERNIX: {e}"))?;
            Ok(Params::Pernix(bits, bs))
        }
        c => Err(format!("fzpack filter: codec {c} (0 = SZp, 1 = PERNIX)")),
    }
}

/// The element type recorded by `set_local` (`cd[6]`).
fn parse_dtype(cd: &[c_uint]) -> Result<DType, String> {
    match cd.get(6) {
        Some(1) => Ok(DType::F32),
        Some(2) => Ok(DType::F64),
        _ => Err(
            "fzpack filter: element type not recorded (cd_values[6]); set_local did not run".into(),
        ),
    }
}

fn dtype_code(d: DType) -> c_uint {
    match d {
        DType::F32 => 1,
        DType::F64 => 2,
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding and decoding of one chunk (pure Rust, tested without HDF5)
// ---------------------------------------------------------------------------------------------

fn values<T: Element>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(T::BYTES).map(T::read_le).collect()
}

fn encode_typed<T: Element>(p: Params, bytes: &[u8]) -> Result<Vec<u8>, String> {
    // The chunk buffer is bytes from HDF5; read it as values (one copy, alignment-safe).
    let v: Vec<T> = values(bytes);
    let mut out = match p {
        Params::Szp(cfg) => fzpack::szp::compress(&v, &cfg),
        Params::Pernix(bits, bs) => fzpack::pernix::compress(&v, bits, bs),
    }
    .map_err(|e| format!("fzpack filter: {e}"))?;
    let crc = fzpack::szp::fzm::crc32(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(out)
}

/// Compresses one chunk (`bytes`, little-endian values of `dtype`) into the chunk format.
pub fn encode_chunk(p: Params, dtype: DType, bytes: &[u8]) -> Result<Vec<u8>, String> {
    if !bytes.len().is_multiple_of(dtype.size()) {
        return Err(format!(
            "fzpack filter: chunk of {} bytes is not a whole number of {dtype} values",
            bytes.len()
        ));
    }
    match dtype {
        DType::F32 => encode_typed::<f32>(p, bytes),
        DType::F64 => encode_typed::<f64>(p, bytes),
    }
}

fn decode_typed<T: Element>(p: Params, archive: &[u8]) -> Result<Vec<u8>, String> {
    let v: Vec<T> = match p {
        Params::Szp(_) => fzpack::szp::decompress(archive),
        Params::Pernix(..) => fzpack::pernix::decompress(archive),
    }
    .map_err(|e| format!("fzpack filter: {e}"))?;
    Ok(fzpack::values_to_le_bytes(&v))
}

/// Decodes one chunk: CRC, archive, element type and (if `expect_n` is given) value count.
pub fn decode_chunk(
    p: Params,
    dtype: DType,
    expect_n: Option<usize>,
    chunk: &[u8],
) -> Result<Vec<u8>, String> {
    let Some(split) = chunk.len().checked_sub(4) else {
        return Err("fzpack filter: chunk shorter than its CRC".into());
    };
    let (archive, sum) = chunk.split_at(split);
    let mut s = [0u8; 4];
    s.copy_from_slice(sum);
    if fzpack::szp::fzm::crc32(archive) != u32::from_le_bytes(s) {
        return Err("fzpack filter: chunk CRC-32 mismatch (corrupt chunk)".into());
    }
    let (stored, n) = match p {
        Params::Szp(_) => {
            let h = fzpack::szp::header(archive).map_err(|e| format!("fzpack filter: SZp: {e}"))?;
            (h.dtype, h.n)
        }
        Params::Pernix(..) => {
            let h = fzpack::pernix::stream_header(archive)
                .map_err(|e| format!("fzpack filter: {e}"))?;
            (h.dtype, h.n)
        }
    };
    if stored != dtype {
        return Err(format!(
            "fzpack filter: chunk holds {stored}, the dataset is {dtype}"
        ));
    }
    if let Some(e) = expect_n
        && n != e as u64
    {
        return Err(format!(
            "fzpack filter: chunk holds {n} values, the dataset's chunk has {e}"
        ));
    }
    match dtype {
        DType::F32 => decode_typed::<f32>(p, archive),
        DType::F64 => decode_typed::<f64>(p, archive),
    }
}

/// The chunk dimensions `set_local` records for the interpolation layout (`cd[8]` = rank,
/// then the dimensions), merged to at most [`MAX_CHUNK_RANK`] (the slowest ones multiplied).
pub fn chunk_cd(dims: &[u64]) -> Result<Vec<c_uint>, String> {
    let too_large = || "fzpack filter: chunk too large".to_string();
    let mut d: Vec<u64> = dims.to_vec();
    while d.len() > MAX_CHUNK_RANK {
        let merged = d[0].checked_mul(d[1]).ok_or_else(too_large)?;
        d.splice(0..2, [merged]);
    }
    let mut cd = vec![d.len() as c_uint];
    for x in d {
        cd.push(c_uint::try_from(x).map_err(|_| too_large())?);
    }
    Ok(cd)
}

/// `p` with the chunk's shape from `cd[8..]` when it is the interpolation layout (without
/// them, a file written by hand, the chunk is one dimension).
fn with_chunk_shape(p: Params, cd: &[c_uint]) -> Result<Params, String> {
    let Params::Szp(cfg) = p else {
        return Ok(p);
    };
    if cfg.layout != Layout::Interp {
        return Ok(p);
    }
    let Some(&rank) = cd.get(CD_FULL) else {
        return Ok(p);
    };
    let dims: Vec<u64> = cd
        .get(CD_FULL + 1..CD_FULL + 1 + rank as usize)
        .filter(|_| (1..=MAX_CHUNK_RANK).contains(&(rank as usize)))
        .ok_or_else(|| format!("fzpack filter: chunk rank {rank} in cd_values[8] (1..=8)"))?
        .iter()
        .map(|&d| u64::from(d))
        .collect();
    let shape = fzpack::szp::Shape::new(&dims)
        .map_err(|e| format!("fzpack filter: chunk dimensions {dims:?}: {e}"))?;
    Ok(Params::Szp(cfg.with_shape(shape)))
}

/// One filter call on `cd` and the chunk bytes: the new chunk bytes or the error message.
pub fn run_filter(flags: c_uint, cd: &[c_uint], chunk: &[u8]) -> Result<Vec<u8>, String> {
    let p = with_chunk_shape(parse_params(cd)?, cd)?;
    let dtype = parse_dtype(cd)?;
    if flags & H5Z_FLAG_REVERSE != 0 {
        let expect = cd.get(7).copied().filter(|&n| n > 0).map(|n| n as usize);
        decode_chunk(p, dtype, expect, chunk)
    } else {
        encode_chunk(p, dtype, chunk)
    }
}

// ---------------------------------------------------------------------------------------------
// The HDF5 callbacks
// ---------------------------------------------------------------------------------------------

/// `H5Z_func_t`: compresses (or with `H5Z_FLAG_REVERSE` decompresses) `*buf`.
///
/// # Safety
///
/// HDF5 calls it with `cd_values` pointing at `cd_nelmts` values, `*buf` a `malloc`ed buffer
/// of `*buf_size` bytes whose first `nbytes` are the input, as the filter protocol says.
unsafe extern "C" fn filter(
    flags: c_uint,
    cd_nelmts: usize,
    cd_values: *const c_uint,
    nbytes: usize,
    buf_size: *mut usize,
    buf: *mut *mut c_void,
) -> usize {
    if buf.is_null() || buf_size.is_null() {
        return 0;
    }
    let cd: &[c_uint] = if cd_nelmts == 0 || cd_values.is_null() {
        &[]
    } else {
        // SAFETY: HDF5 passes `cd_nelmts` readable values at `cd_values` (checked non-null).
        unsafe { std::slice::from_raw_parts(cd_values, cd_nelmts) }
    };
    // SAFETY: `buf` is non-null and points at HDF5's buffer pointer.
    let inp = unsafe { *buf };
    let chunk: &[u8] = if nbytes == 0 || inp.is_null() {
        &[]
    } else {
        // SAFETY: HDF5's buffer holds at least `nbytes` initialized input bytes.
        unsafe { std::slice::from_raw_parts(inp.cast::<u8>(), nbytes) }
    };
    let r = catch_unwind(AssertUnwindSafe(|| run_filter(flags, cd, chunk)))
        .unwrap_or_else(|_| Err("fzpack filter: internal error".into()));
    let out = match r {
        Ok(v) => v,
        Err(msg) => {
            report(&msg);
            return 0;
        }
    };
    let len = out.len().max(1);
    // HDF5 frees chunk buffers with free() (H5MM is malloc-based unless the library is
    // built with its memory checker, which distribution builds are not).
    // SAFETY: plain malloc of `len` >= 1 bytes; the result is checked for null below.
    let new = unsafe { libc::malloc(len) };
    if new.is_null() {
        report("fzpack filter: out of memory");
        return 0;
    }
    // `new` has room for `len >= out.len()` bytes and does not overlap `out`; the filter
    // protocol hands over `*buf` (= `inp`), which HDF5 malloc'ed: freed once, replaced by ours.
    // SAFETY: both pointers are valid as stated above and `inp` is not used after the free.
    unsafe {
        std::ptr::copy_nonoverlapping(out.as_ptr(), new.cast::<u8>(), out.len());
        libc::free(inp);
        *buf = new;
        *buf_size = len;
    }
    out.len()
}

/// `H5Z_set_local_func_t`: validates the parameters, records element type and chunk size.
///
/// # Safety
///
/// Called by HDF5 with valid property-list, datatype and dataspace ids.
unsafe extern "C" fn set_local(dcpl: Hid, type_id: Hid, _space: Hid) -> Herr {
    let r = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: HDF5 passes valid ids; the API table holds functions of the loaded libhdf5.
        unsafe { set_local_impl(dcpl, type_id) }
    }))
    .unwrap_or_else(|_| Err("fzpack filter: internal error".into()));
    match r {
        Ok(()) => 0,
        Err(msg) => {
            report(&msg);
            -1
        }
    }
}

/// # Safety
///
/// `dcpl` and `type_id` must be valid HDF5 ids of the libhdf5 that [`api`] resolved.
unsafe fn set_local_impl(dcpl: Hid, type_id: Hid) -> Result<(), String> {
    let api = api().ok_or("fzpack filter: HDF5 functions not found in this process")?;
    // SAFETY: valid datatype id (caller), functions of the running libhdf5.
    let (class, size, order) = unsafe {
        (
            (api.tget_class)(type_id),
            (api.tget_size)(type_id),
            (api.tget_order)(type_id),
        )
    };
    let dtype = match (class, size) {
        (H5T_FLOAT, 4) => DType::F32,
        (H5T_FLOAT, 8) => DType::F64,
        _ => {
            return Err(format!(
                "fzpack filter: datasets of float32 or float64 only (HDF5 class {class}, size {size})"
            ));
        }
    };
    if order != H5T_ORDER_LE {
        return Err("fzpack filter: little-endian float datasets only".into());
    }
    let mut flags: c_uint = 0;
    let mut cd = [0 as c_uint; 16];
    let mut n = cd.len();
    // SAFETY: `cd` has room for `n` values; name buffer length 0 with a null pointer is allowed.
    let st = unsafe {
        (api.pget_filter_by_id2)(
            dcpl,
            FILTER_ID,
            &mut flags,
            &mut n,
            cd.as_mut_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if st < 0 {
        return Err("fzpack filter: cannot read the filter's cd_values".into());
    }
    let n = n.min(cd.len());
    let p = parse_params(&cd[..n])?;
    let mut dims = [0u64; 32];
    // SAFETY: `dims` holds 32 entries, the HDF5 maximum rank.
    let rank = unsafe { (api.pget_chunk)(dcpl, dims.len() as c_int, dims.as_mut_ptr()) };
    if rank <= 0 {
        return Err("fzpack filter: the dataset must be chunked".into());
    }
    let elems = dims[..rank as usize]
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .and_then(|e| c_uint::try_from(e).ok())
        .ok_or("fzpack filter: chunk too large")?;
    cd[6] = dtype_code(dtype);
    cd[7] = elems;
    let mut full = cd[..CD_FULL].to_vec();
    if matches!(p, Params::Szp(c) if c.layout == Layout::Interp) {
        full.extend(chunk_cd(&dims[..rank as usize])?);
    }
    // SAFETY: `full` holds `full.len()` initialized values.
    let st = unsafe { (api.pmodify_filter)(dcpl, FILTER_ID, flags, full.len(), full.as_ptr()) };
    if st < 0 {
        return Err("fzpack filter: cannot store the filter's cd_values".into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The HDF5 functions, resolved at run time
// ---------------------------------------------------------------------------------------------

struct Api {
    tget_class: unsafe extern "C" fn(Hid) -> c_int,
    tget_size: unsafe extern "C" fn(Hid) -> usize,
    tget_order: unsafe extern "C" fn(Hid) -> c_int,
    #[allow(clippy::type_complexity)]
    pget_filter_by_id2: unsafe extern "C" fn(
        Hid,
        c_int,
        *mut c_uint,
        *mut usize,
        *mut c_uint,
        usize,
        *mut c_char,
        *mut c_uint,
    ) -> Herr,
    pmodify_filter: unsafe extern "C" fn(Hid, c_int, c_uint, usize, *const c_uint) -> Herr,
    pget_chunk: unsafe extern "C" fn(Hid, c_int, *mut u64) -> c_int,
    /// `H5Epush2` and the ids of HDF5's error class and of the "pipeline / filter failed"
    /// messages, when found (errors are then pushed on HDF5's stack).
    epush: Option<(EPush2, Hid, Hid, Hid)>,
}

type EPush2 = unsafe extern "C" fn(
    Hid,
    *const c_char,
    *const c_char,
    c_uint,
    Hid,
    Hid,
    Hid,
    *const c_char,
    ...
) -> Herr;

/// Where the symbols come from: the global scope or one library's handle.
#[derive(Clone, Copy)]
struct Source(*mut c_void);

impl Source {
    /// # Safety
    ///
    /// `self.0` is `RTLD_DEFAULT` or a live `dlopen` handle.
    unsafe fn sym(self, name: &CStr) -> Option<*mut c_void> {
        // SAFETY: valid handle (caller) and a NUL-terminated name.
        let p = unsafe { libc::dlsym(self.0, name.as_ptr()) };
        (!p.is_null()).then_some(p)
    }
}

const PROBE: &CStr = c"H5Pmodify_filter";

/// `dl_iterate_phdr` callback: the first loaded object exporting [`PROBE`].
unsafe extern "C" fn find_hdf5(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: glibc passes a valid `dl_phdr_info`; `data` is the `*mut c_void` slot below.
    unsafe {
        let name = (*info).dlpi_name;
        if name.is_null() || *name == 0 {
            return 0;
        }
        let h = libc::dlopen(name, libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        if h.is_null() {
            return 0;
        }
        if !libc::dlsym(h, PROBE.as_ptr()).is_null() {
            *data.cast::<*mut c_void>() = h; // kept open: the handle backs the Api table
            return 1;
        }
        libc::dlclose(h);
        0
    }
}

fn locate() -> Option<Source> {
    let global = Source(libc::RTLD_DEFAULT);
    // SAFETY: RTLD_DEFAULT is a valid pseudo-handle.
    if unsafe { global.sym(PROBE) }.is_some() {
        return Some(global);
    }
    let mut h: *mut c_void = std::ptr::null_mut();
    // SAFETY: the callback only writes a handle through `data`, which points at `h`.
    unsafe { libc::dl_iterate_phdr(Some(find_hdf5), (&raw mut h).cast()) };
    (!h.is_null()).then_some(Source(h))
}

/// # Safety
///
/// `p` must be the address of a function of type `F` (same size as a pointer).
unsafe fn as_fn<F: Copy>(p: *mut c_void) -> F {
    // SAFETY: the caller names the symbol's true type; function pointers are pointer-sized.
    unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) }
}

fn resolve() -> Option<Api> {
    let s = locate()?;
    // HDF5 1.10-1.14 public API, hid_t = int64_t; data symbols are read as hid_t.
    // SAFETY: each symbol is looked up by its HDF5 name and cast to that function's C signature.
    unsafe {
        let epush = match (
            s.sym(c"H5Epush2"),
            s.sym(c"H5E_ERR_CLS_g"),
            s.sym(c"H5E_PLINE_g"),
            s.sym(c"H5E_CANTFILTER_g"),
        ) {
            (Some(f), Some(c), Some(maj), Some(min)) => Some((
                as_fn::<EPush2>(f),
                *c.cast::<Hid>(),
                *maj.cast::<Hid>(),
                *min.cast::<Hid>(),
            )),
            _ => None,
        };
        Some(Api {
            tget_class: as_fn(s.sym(c"H5Tget_class")?),
            tget_size: as_fn(s.sym(c"H5Tget_size")?),
            tget_order: as_fn(s.sym(c"H5Tget_order")?),
            pget_filter_by_id2: as_fn(s.sym(c"H5Pget_filter_by_id2")?),
            pmodify_filter: as_fn(s.sym(c"H5Pmodify_filter")?),
            pget_chunk: as_fn(s.sym(c"H5Pget_chunk")?),
            epush,
        })
    }
}

fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(resolve).as_ref()
}

/// Pushes `msg` on HDF5's error stack (so h5py and h5dump show it), else prints it to stderr.
fn report(msg: &str) {
    let c = std::ffi::CString::new(msg.replace('\0', " ")).unwrap_or_default();
    if let Some(&Api {
        epush: Some((push, cls, maj, min)),
        ..
    }) = api()
    {
        // H5Epush2 of the running libhdf5 with its own class/message ids.
        // SAFETY: the format "%s" gets exactly one NUL-terminated string argument.
        unsafe {
            push(
                H5P_DEFAULT_ERR_STACK,
                c"fzpack-hdf5".as_ptr(),
                c"filter".as_ptr(),
                line!(),
                cls,
                maj,
                min,
                c"%s".as_ptr(),
                c.as_ptr(),
            );
        }
    } else {
        eprintln!("{msg}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cd_szp(eb: f64, mode: c_uint, bs: c_uint, dtype: c_uint, n: c_uint) -> [c_uint; 8] {
        let b = eb.to_bits();
        [
            1,
            CODEC_SZP,
            mode,
            bs,
            b as c_uint,
            (b >> 32) as c_uint,
            dtype,
            n,
        ]
    }

    fn field(n: usize) -> Vec<f32> {
        (0..n).map(|i| (i as f32 * 0.01).sin() * 40.0).collect()
    }

    /// `cd_values[2] = mode | 2 << 8` writes every chunk in the interpolation layout over the
    /// chunk dimensions `set_local` appends; the chunk decodes within the bound (missing values
    /// exactly), and is smaller than the block-head chunk of the same smooth field. The plain
    /// mode codes still mean the block-head layout, and other layout codes are refused.
    #[test]
    fn interp_layout_chunks_carry_the_chunk_shape() -> Result<(), String> {
        let (r, c) = (60usize, 90usize);
        let mut v: Vec<f32> = (0..r * c)
            .map(|k| ((k / c) as f32 * 0.05).sin() * ((k % c) as f32 * 0.04).cos() * 30.0)
            .collect();
        v[123] = f32::NAN;
        let bytes = fzpack::values_to_le_bytes(&v);
        let mut cd = cd_szp(1e-3, 2 | SZP_LAYOUT_INTERP << 8, 128, 1, (r * c) as c_uint).to_vec();
        cd.extend(chunk_cd(&[r as u64, c as u64])?);
        assert_eq!(&cd[8..], &[2, r as c_uint, c as c_uint]);
        let enc = run_filter(0, &cd, &bytes)?;
        let archive = &enc[..enc.len() - 4];
        assert_eq!(archive[6], fzpack::szp::LAYOUT_INTERP, "layout byte");
        let shape = fzpack::szp::shape(archive).map_err(|e| e.to_string())?;
        assert_eq!(shape.dims(), &[r as u64, c as u64]);
        let dec = run_filter(H5Z_FLAG_REVERSE, &cd, &enc)?;
        let back: Vec<f32> = values(&dec);
        let bound = fzpack::szp::header(archive)
            .map_err(|e| e.to_string())?
            .bound();
        for (a, b) in v.iter().zip(&back) {
            if a.is_finite() {
                assert!(((a - b) as f64).abs() <= bound, "{a} vs {b}");
            } else {
                assert_eq!(a.to_bits(), b.to_bits());
            }
        }
        // a reader needs no option: the chunk decodes under the plain cd_values too
        let plain = cd_szp(1e-3, 2, 128, 1, (r * c) as c_uint);
        assert_eq!(run_filter(H5Z_FLAG_REVERSE, &plain, &enc)?, dec);
        let heads = run_filter(0, &plain, &bytes)?;
        assert_eq!(heads[6], fzpack::szp::LAYOUT_HEADS);
        assert!(
            enc.len() * 2 < heads.len(),
            "{} vs {}",
            enc.len(),
            heads.len()
        );
        // without the recorded dimensions the chunk is one dimension
        let flat = run_filter(0, &cd[..8], &bytes)?;
        let s = fzpack::szp::shape(&flat[..flat.len() - 4]).map_err(|e| e.to_string())?;
        assert_eq!(s.dims(), &[(r * c) as u64]);
        // an unknown layout code, a bad rank
        let mut bad = cd.clone();
        bad[2] = 2 | 1 << 8;
        let refused = |cd: &[c_uint], what: &str| {
            let r = run_filter(0, cd, &bytes);
            assert!(r.as_ref().is_err_and(|e| e.contains(what)), "{cd:?}: {r:?}");
        };
        refused(&bad, "layout 1");
        let mut bad = cd.clone();
        bad[8] = 9;
        refused(&bad, "rank");
        // more than 8 chunk dimensions: the slowest merged
        assert_eq!(
            chunk_cd(&[2, 3, 1, 1, 1, 1, 1, 1, 5, 7])?,
            [8, 6, 1, 1, 1, 1, 1, 5, 7]
        );
        Ok(())
    }

    #[test]
    fn szp_round_trip_meets_bound() -> Result<(), String> {
        let v = field(10_000);
        let cd = cd_szp(1e-3, 0, 128, 1, 10_000);
        let enc = run_filter(0, &cd, &fzpack::values_to_le_bytes(&v))?;
        let dec = run_filter(H5Z_FLAG_REVERSE, &cd, &enc)?;
        let back: Vec<f32> = values(&dec);
        assert_eq!(back.len(), v.len());
        assert!(
            v.iter()
                .zip(&back)
                .all(|(a, b)| (a - b).abs() as f64 <= 1e-3)
        );
        Ok(())
    }

    #[test]
    fn pernix_round_trip() -> Result<(), String> {
        let v: Vec<f64> = field(1000).iter().map(|&x| f64::from(x)).collect();
        let cd = [1, CODEC_PERNIX, 16, 64, 0, 0, 2, 1000];
        let enc = run_filter(0, &cd, &fzpack::values_to_le_bytes(&v))?;
        let dec = run_filter(H5Z_FLAG_REVERSE, &cd, &enc)?;
        let back: Vec<f64> = values(&dec);
        assert!(
            v.iter()
                .zip(&back)
                .all(|(a, b)| (a - b).abs() <= 40.0 / 32767.0)
        );
        Ok(())
    }

    #[test]
    fn corruption_and_bad_parameters_fail() -> Result<(), String> {
        let v = field(5000);
        let cd = cd_szp(1e-2, 2, 64, 1, 5000);
        let enc = run_filter(0, &cd, &fzpack::values_to_le_bytes(&v))?;
        for i in [0, 10, enc.len() / 2, enc.len() - 1] {
            let mut bad = enc.clone();
            bad[i] ^= 0x10;
            assert!(
                run_filter(H5Z_FLAG_REVERSE, &cd, &bad).is_err(),
                "flip at {i}"
            );
        }
        assert!(run_filter(H5Z_FLAG_REVERSE, &cd, &enc[..enc.len() - 1]).is_err());
        assert!(run_filter(H5Z_FLAG_REVERSE, &cd, &[]).is_err());
        let wrong_n = cd_szp(1e-2, 2, 64, 1, 4999);
        assert!(run_filter(H5Z_FLAG_REVERSE, &wrong_n, &enc).is_err());
        let wrong_t = cd_szp(1e-2, 2, 64, 2, 5000);
        assert!(run_filter(H5Z_FLAG_REVERSE, &wrong_t, &enc).is_err());
        assert!(parse_params(&cd_szp(0.0, 0, 128, 1, 1)).is_err());
        assert!(parse_params(&cd_szp(f64::NAN, 0, 128, 1, 1)).is_err());
        assert!(parse_params(&cd_szp(1.0, 1, 128, 1, 1)).is_err());
        assert!(parse_params(&cd_szp(1.0, 0, 0, 1, 1)).is_err());
        assert!(parse_params(&[2, 0, 0, 128, 0, 0]).is_err());
        assert!(parse_params(&[1, 0, 0]).is_err());
        assert!(parse_params(&[1, 1, 25, 64, 0, 0]).is_err());
        assert!(parse_params(&[1, 1, 8, 100, 0, 0]).is_err());
        assert!(parse_params(&[1, 7, 8, 64, 0, 0]).is_err());
        Ok(())
    }

    #[test]
    fn missing_values_are_compressed_exactly() -> Result<(), String> {
        let mut v = field(5000);
        v[3] = f32::NAN;
        v[4] = f32::from_bits(0xffc0_0001); // a negative NaN with a payload
        v[5] = f32::INFINITY;
        v[6] = f32::NEG_INFINITY;
        for x in &mut v[1024..2048] {
            *x = f32::NAN; // whole blocks of missing values
        }
        for mode in [0, 2] {
            let cd = cd_szp(1e-3, mode, 128, 1, 5000);
            let raw = fzpack::values_to_le_bytes(&v);
            let enc = run_filter(0, &cd, &raw)?;
            assert!(
                enc.len() < raw.len() / 2,
                "mode {mode}: {} bytes",
                enc.len()
            );
            let back: Vec<f32> = values(&run_filter(H5Z_FLAG_REVERSE, &cd, &enc)?);
            assert_eq!(back.len(), v.len());
            let bound = if mode == 0 { 1e-3 } else { 1e-3 * 80.0 };
            for (i, (a, b)) in v.iter().zip(&back).enumerate() {
                if a.is_finite() {
                    assert!(
                        f64::from((a - b).abs()) <= bound,
                        "mode {mode} at {i}: {a} {b}"
                    );
                } else {
                    assert_eq!(a.to_bits(), b.to_bits(), "mode {mode} at {i}");
                }
            }
        }
        // A chunk of nothing but missing values costs about nothing.
        let cd = cd_szp(1e-3, 0, 128, 1, 5000);
        let enc = run_filter(0, &cd, &fzpack::values_to_le_bytes(&[f32::NAN; 5000]))?;
        assert!(enc.len() < 200, "{} bytes", enc.len());
        Ok(())
    }

    #[test]
    fn filter_entry_point_replaces_the_buffer() {
        let v = field(300);
        let bytes = fzpack::values_to_le_bytes(&v);
        let cd = cd_szp(1e-3, 0, 128, 1, 300);
        // SAFETY: a malloc'ed buffer handed to the filter exactly as HDF5 would.
        unsafe {
            let mut buf = libc::malloc(bytes.len());
            assert!(!buf.is_null());
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), bytes.len());
            let mut size = bytes.len();
            let n = filter(0, 8, cd.as_ptr(), bytes.len(), &mut size, &mut buf);
            assert!(n > 0 && n <= size);
            let m = filter(H5Z_FLAG_REVERSE, 8, cd.as_ptr(), n, &mut size, &mut buf);
            assert_eq!(m, bytes.len());
            // Corrupt: the filter fails and leaves the buffer to HDF5.
            *buf.cast::<u8>() ^= 1;
            let before = buf;
            assert_eq!(
                filter(H5Z_FLAG_REVERSE, 8, cd.as_ptr(), m, &mut size, &mut buf),
                0
            );
            assert_eq!(before, buf);
            libc::free(buf);
        }
        assert_eq!(H5PLget_plugin_type(), H5PL_TYPE_FILTER);
        assert!(!H5PLget_plugin_info().is_null());
    }
}
