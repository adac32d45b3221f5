//! A small C API for SZp (`include/fzpack/szp.h`): compress/decompress with the fzpack archive,
//! a size query, and status codes, so C callers get both codecs from one library.

use core::ffi::{c_char, c_int, c_void};
use fzpack_core::szp::{self, Config, DType, Error, Mode, SzpFloat};

/// Status codes of the SZp C API.
pub mod status {
    use core::ffi::c_int;
    /// Success.
    pub const OK: c_int = 0;
    /// A null pointer or an unknown mode/type value.
    pub const INVALID_ARGUMENT: c_int = -1;
    /// Block size outside 1..=4096.
    pub const INVALID_BLOCK_SIZE: c_int = -2;
    /// Error bound not finite and positive (NOA: bound × range too).
    pub const INVALID_ERROR_BOUND: c_int = -3;
    /// A NaN or infinite value (index in `*bad_index`).
    pub const NON_FINITE: c_int = -4;
    /// A level of 2^62 or more (index in `*bad_index`).
    pub const LEVEL_OVERFLOW: c_int = -5;
    /// NOA on a constant field.
    pub const ZERO_RANGE: c_int = -6;
    /// Bound below the data's float precision.
    pub const BOUND_BELOW_PRECISION: c_int = -7;
    /// Output buffer too small (required size in `*out_len` / `*n_out`).
    pub const OUTPUT_TOO_SMALL: c_int = -8;
    /// Not a valid fzpack SZp archive (magic, version, truncation, corruption).
    pub const CORRUPT: c_int = -9;
    /// The archive holds the other element type.
    pub const DTYPE_MISMATCH: c_int = -10;
    /// Internal safety net: a reconstruction would have missed the bound (index in `*bad_index`).
    pub const BOUND_VIOLATED: c_int = -11;
    /// The data's magnitude with this bound could reconstruct to infinity (data at the type's
    /// maximum whose quantizer rounding could overflow).
    pub const RANGE_OVERFLOW: c_int = -12;
}

fn code(e: Error) -> (c_int, Option<usize>) {
    use status::*;
    match e {
        Error::InvalidBlockSize => (INVALID_BLOCK_SIZE, None),
        Error::InvalidErrorBound => (INVALID_ERROR_BOUND, None),
        Error::NonFinite { index } => (NON_FINITE, Some(index)),
        Error::LevelOverflow { index } => (LEVEL_OVERFLOW, Some(index)),
        Error::ValueOutOfRange { index } => (INVALID_ARGUMENT, Some(index)),
        Error::ZeroRange => (ZERO_RANGE, None),
        Error::BoundBelowPrecision => (BOUND_BELOW_PRECISION, None),
        Error::BoundViolated { index } => (BOUND_VIOLATED, Some(index)),
        Error::OutputTooSmall { needed } => (OUTPUT_TOO_SMALL, Some(needed)),
        Error::DTypeMismatch => (DTYPE_MISMATCH, None),
        Error::RangeOverflow => (RANGE_OVERFLOW, None),
        _ => (CORRUPT, None),
    }
}

/// Writes `v` through `p` when `p` is non-null.
///
/// # Safety
/// `p` must be null or valid for writing one `T`.
unsafe fn set<T>(p: *mut T, v: T) {
    if !p.is_null() && p.is_aligned() {
        // SAFETY: non-null and aligned; valid for a write per the caller.
        unsafe { p.write(v) };
    }
}

/// Largest archive size for `n` values (`dtype` 8 = f32, 9 = f64); 0 for invalid arguments.
#[unsafe(no_mangle)]
pub extern "C" fn fzpack_szp_max_compressed_len(n: usize, block_size: u32, dtype: c_int) -> usize {
    let Some(dt) = u8::try_from(dtype).ok().and_then(DType::from_code) else {
        return 0;
    };
    szp::max_compressed_len(n, block_size, dt).unwrap_or(0)
}

/// The name of an SZp status code, e.g. `"FZPACK_SZP_NON_FINITE"`.
#[unsafe(no_mangle)]
pub extern "C" fn fzpack_szp_status_string(status: c_int) -> *const c_char {
    let s: &'static core::ffi::CStr = match status {
        0 => c"FZPACK_SZP_OK",
        -1 => c"FZPACK_SZP_INVALID_ARGUMENT",
        -2 => c"FZPACK_SZP_INVALID_BLOCK_SIZE",
        -3 => c"FZPACK_SZP_INVALID_ERROR_BOUND",
        -4 => c"FZPACK_SZP_NON_FINITE",
        -5 => c"FZPACK_SZP_LEVEL_OVERFLOW",
        -6 => c"FZPACK_SZP_ZERO_RANGE",
        -7 => c"FZPACK_SZP_BOUND_BELOW_PRECISION",
        -8 => c"FZPACK_SZP_OUTPUT_TOO_SMALL",
        -9 => c"FZPACK_SZP_CORRUPT",
        -10 => c"FZPACK_SZP_DTYPE_MISMATCH",
        -11 => c"FZPACK_SZP_BOUND_VIOLATED",
        -12 => c"FZPACK_SZP_RANGE_OVERFLOW",
        _ => c"FZPACK_SZP_UNKNOWN",
    };
    s.as_ptr()
}

/// # Safety
/// See the exported compress functions.
#[allow(clippy::too_many_arguments)]
unsafe fn compress<T: SzpFloat>(
    input: *const T,
    n: usize,
    mode: c_int,
    error_bound: f64,
    block_size: u32,
    output: *mut c_void,
    output_capacity: usize,
    output_len: *mut usize,
    bad_index: *mut usize,
) -> c_int {
    let mode = match mode {
        0 => Mode::Abs,
        2 => Mode::Noa,
        _ => return status::INVALID_ARGUMENT,
    };
    if (input.is_null() && n > 0) || output.is_null() || !input.is_aligned() {
        return status::INVALID_ARGUMENT;
    }
    // The default layout (block heads), as every fzpack front end writes.
    let cfg = Config {
        mode,
        ..Config::abs(error_bound).with_block_size(block_size)
    };
    // SAFETY: the caller provides `n` readable values at `input` (checked non-null and aligned when n > 0) and `output_capacity` writable bytes at `output`, not overlapping.
    let (values, out) = unsafe {
        let values = if n == 0 {
            &[][..]
        } else {
            core::slice::from_raw_parts(input, n)
        };
        (
            values,
            core::slice::from_raw_parts_mut(output.cast::<u8>(), output_capacity),
        )
    };
    match szp::compress(values, &cfg, out) {
        Ok(len) => {
            // SAFETY: forwarded caller contract (null or valid).
            unsafe { set(output_len, len) };
            status::OK
        }
        Err(e) => {
            let (c, idx) = code(e);
            if let Some(i) = idx {
                // SAFETY: forwarded caller contract (null or valid).
                unsafe {
                    if c == status::OUTPUT_TOO_SMALL {
                        set(output_len, i)
                    } else {
                        set(bad_index, i)
                    }
                };
            }
            c
        }
    }
}

/// Decodes any fzpack SZp archive into `out`: the block layouts through core's block decoder,
/// the interpolation layout (layout code 2) through core's tile decoder with its scratch
/// allocated here (at most 2¹⁸ codes and 2¹⁵ + 1 levels: about 1.3 MiB), on the
/// calling thread, every tile's CRC checked. The value count is checked against `out` before
/// any scratch is allocated.
fn decode<T: SzpFloat>(a: &[u8], out: &mut [T]) -> Result<usize, Error> {
    if !szp::tiled::claims(a) {
        return szp::decompress(a, out);
    }
    let view = szp::tiled::parse(a, szp::Verify::Checksums)?;
    if view.header.dtype != T::DTYPE {
        return Err(Error::DTypeMismatch);
    }
    if out.len() < view.n {
        return Err(Error::OutputTooSmall { needed: view.n });
    }
    let lens = szp::tiled::scratch_lens(view.max_tile_len());
    let (mut codes, mut levels) = (vec![0i32; lens.codes], vec![0i64; lens.levels]);
    szp::tiled::decompress(a, out, &mut codes, &mut levels, szp::Verify::Checksums)
}

/// # Safety
/// See the exported decompress functions.
unsafe fn decompress<T: SzpFloat>(
    archive: *const c_void,
    archive_len: usize,
    output: *mut T,
    output_capacity: usize,
    n_out: *mut usize,
) -> c_int {
    if archive.is_null() || (output.is_null() && output_capacity > 0) || !output.is_aligned() {
        return status::INVALID_ARGUMENT;
    }
    // SAFETY: the caller provides `archive_len` readable bytes and `output_capacity` writable, aligned values, not overlapping.
    let (a, out) = unsafe {
        let out = if output_capacity == 0 {
            &mut [][..]
        } else {
            core::slice::from_raw_parts_mut(output, output_capacity)
        };
        (
            core::slice::from_raw_parts(archive.cast::<u8>(), archive_len),
            out,
        )
    };
    match decode(a, out) {
        Ok(n) => {
            // SAFETY: forwarded caller contract.
            unsafe { set(n_out, n) };
            status::OK
        }
        Err(e) => {
            let (c, idx) = code(e);
            if let (status::OUTPUT_TOO_SMALL, Some(i)) = (c, idx) {
                // SAFETY: forwarded caller contract.
                unsafe { set(n_out, i) };
            }
            c
        }
    }
}

macro_rules! szp_entry_points {
    ($t:ty, $c:ident, $d:ident) => {
        /// Compresses `n` values with `mode` (0 ABS, 2 NOA), `error_bound` and `block_size`
        /// (128 is the usual choice) into `output`; the archive length goes to `*output_len`.
        /// Missing values (NaN, ±inf) are stored exactly (format version 3); every finite value
        /// meets the bound. On LEVEL_OVERFLOW the first bad index goes to `*bad_index`; on
        /// OUTPUT_TOO_SMALL the required capacity goes to `*output_len`
        /// (`fzpack_szp_max_compressed_len` covers inputs without missing values; their runs
        /// add at most `8 + size + 20` bytes per missing value).
        ///
        /// # Safety
        /// `input` points to `n` aligned values (may be null if `n == 0`); `output` to
        /// `output_capacity` writable bytes; `output_len`/`bad_index` are null or writable.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $c(
            input: *const $t,
            n: usize,
            mode: c_int,
            error_bound: f64,
            block_size: u32,
            output: *mut c_void,
            output_capacity: usize,
            output_len: *mut usize,
            bad_index: *mut usize,
        ) -> c_int {
            // SAFETY: forwarded caller contract.
            unsafe {
                compress::<$t>(
                    input,
                    n,
                    mode,
                    error_bound,
                    block_size,
                    output,
                    output_capacity,
                    output_len,
                    bad_index,
                )
            }
        }

        /// Decompresses an archive into `output` (capacity in values); the value count goes to
        /// `*n_out` (on OUTPUT_TOO_SMALL: the count needed). Every layout is read: the block
        /// layouts and the interpolation layout (written by the fzpack facade, CLI and Python
        /// bindings), whose tile scratch (at most about 1.3 MiB) is allocated for the call.
        ///
        /// # Safety
        /// `archive` points to `archive_len` bytes; `output` to `output_capacity` aligned
        /// writable values; `n_out` is null or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $d(
            archive: *const c_void,
            archive_len: usize,
            output: *mut $t,
            output_capacity: usize,
            n_out: *mut usize,
        ) -> c_int {
            // SAFETY: forwarded caller contract.
            unsafe { decompress::<$t>(archive, archive_len, output, output_capacity, n_out) }
        }
    };
}

szp_entry_points!(f32, fzpack_szp_compress_f32, fzpack_szp_decompress_f32);
szp_entry_points!(f64, fzpack_szp_compress_f64, fzpack_szp_decompress_f64);
