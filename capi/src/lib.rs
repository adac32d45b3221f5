//! The PERNIX C ABI, implemented by fzpack: build this crate and link `libpernix.so` or
//! `libpernix.a` instead of the C library, with the headers in `capi/include`.
//!
//! Every function follows the PERNIX documentation (`pernix_dispatcher_create`/`_destroy`,
//! `pernix_compress_block(s)_f32/_f64`, `pernix_decompress_block(s)_f32/_f64`, the scale helpers,
//! `pernix_status_string` and the constants) and validates its arguments in the order of the
//! specification (§5): null pointers, zero blocks, block size, scale, bit width. Enum arguments
//! are taken as plain `int`s, so an out-of-range value is a reported error rather than undefined
//! behaviour. Pointers to elements must be aligned for their type (as any C `float*`/`double*`
//! is); a misaligned pointer gives `PERNIX_STATUS_INVALID_ARGUMENT`. Nothing here panics; should
//! a bug ever panic, Rust aborts at the `extern "C"` boundary instead of unwinding into C.

pub mod szp;

use core::ffi::{c_char, c_int, c_void};
use fzpack_core::pernix::{
    self, Backend, BitWidth, BlockSize, Dispatcher, Error, PernixFloat, elements_per_block,
};
use std::alloc::{Layout, alloc, dealloc};

/// `pernix_status` values as returned through the C ABI.
pub type PernixStatus = c_int;

const OK: PernixStatus = 0;

fn status(r: Result<(), Error>) -> PernixStatus {
    match r {
        Ok(()) => OK,
        Err(e) => e.code(),
    }
}

/// The opaque `pernix_dispatcher` handle: a resolved [`Dispatcher`].
pub struct PernixDispatcher(Dispatcher);

/// Smallest valid bit width (1).
#[unsafe(no_mangle)]
pub extern "C" fn pernix_min_bit_width() -> u8 {
    BitWidth::MIN.get()
}

/// Largest valid bit width (24).
#[unsafe(no_mangle)]
pub extern "C" fn pernix_max_bit_width() -> u8 {
    BitWidth::MAX.get()
}

/// Whether `bit_width` is in 1..=24.
#[unsafe(no_mangle)]
pub extern "C" fn pernix_is_valid_bit_width(bit_width: u8) -> bool {
    BitWidth::is_valid(bit_width)
}

/// Whether `block_size` is 64, 128, 256, 512 or 1024.
#[unsafe(no_mangle)]
pub extern "C" fn pernix_is_valid_block_size(block_size: u32) -> bool {
    BlockSize::is_valid(block_size)
}

/// The interchange block size, 64 bytes.
#[unsafe(no_mangle)]
pub extern "C" fn pernix_compressed_block_size() -> u32 {
    pernix::compressed_block_size() as u32
}

/// Values per 64-byte block for `bit_width` (`512 / N`), 0 for an invalid width.
#[unsafe(no_mangle)]
pub extern "C" fn pernix_elements_per_block(bit_width: u8) -> u32 {
    BitWidth::new(bit_width).map_or(0, |b| elements_per_block(b, BlockSize::B64) as u32)
}

/// The enumerator name of `status` as a static NUL-terminated string, or
/// `"PERNIX_STATUS_UNKNOWN"`.
#[unsafe(no_mangle)]
pub extern "C" fn pernix_status_string(status: PernixStatus) -> *const c_char {
    let s: &'static core::ffi::CStr = match status {
        0 => c"PERNIX_STATUS_OK",
        -1 => c"PERNIX_STATUS_INVALID_ARGUMENT",
        -2 => c"PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH",
        -3 => c"PERNIX_STATUS_UNSUPPORTED_BACKEND",
        -4 => c"PERNIX_STATUS_UNSUPPORTED_BLOCK_SIZE",
        -5 => c"PERNIX_STATUS_UNSUPPORTED_IMPLEMENTATION",
        -6 => c"PERNIX_STATUS_OUT_OF_MEMORY",
        _ => c"PERNIX_STATUS_UNKNOWN",
    };
    debug_assert_eq!(s.to_str().ok(), Some(pernix::status_string(status)));
    s.as_ptr()
}

/// Writes `value` through `out` when it is non-null.
///
/// # Safety
/// `out` must be null or valid for writing one `T`.
unsafe fn put<T>(out: *mut T, value: Result<T, Error>) -> PernixStatus {
    if out.is_null() || !out.is_aligned() {
        return Error::InvalidArgument.code();
    }
    match value {
        Ok(v) => {
            // SAFETY: non-null and aligned (checked above); valid for a write per the caller.
            unsafe { out.write(v) };
            OK
        }
        Err(e) => e.code(),
    }
}

/// The helpers' bit-width rule: an invalid width is INVALID_ARGUMENT (spec §4), not −2.
fn helper_bits(bit_width: u8) -> Result<BitWidth, Error> {
    BitWidth::new(bit_width).map_err(|_| Error::InvalidArgument)
}

macro_rules! scale_helpers {
    ($t:ty, $scale:ident, $dscale:ident, $inverse:ident, $cscale:ident) => {
        /// Forward (decompression) scale `bmax / (2^(N−1) − 1)` into `*scale`.
        ///
        /// # Safety
        /// `scale` must be null or valid for writing one value.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $scale(bmax: $t, bit_width: u8, scale: *mut $t) -> PernixStatus {
            let v = helper_bits(bit_width).and_then(|b| pernix::scale_from_bmax(bmax, b));
            // SAFETY: forwarded caller contract.
            unsafe { put(scale, v) }
        }

        /// Alias of the forward scale helper under its documented name.
        ///
        /// # Safety
        /// As for the forward scale helper.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $dscale(bmax: $t, bit_width: u8, scale: *mut $t) -> PernixStatus {
            // SAFETY: forwarded caller contract.
            unsafe { $scale(bmax, bit_width, scale) }
        }

        /// `1 / scale` into `*inverse_scale`.
        ///
        /// # Safety
        /// `inverse_scale` must be null or valid for writing one value.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $inverse(scale: $t, inverse_scale: *mut $t) -> PernixStatus {
            // SAFETY: forwarded caller contract.
            unsafe { put(inverse_scale, pernix::inverse_scale(scale)) }
        }

        /// The inverse scale for compression from `bmax`.
        ///
        /// # Safety
        /// `inverse_scale` must be null or valid for writing one value.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $cscale(
            bmax: $t,
            bit_width: u8,
            inverse_scale: *mut $t,
        ) -> PernixStatus {
            let v =
                helper_bits(bit_width).and_then(|b| pernix::compression_scale_from_bmax(bmax, b));
            // SAFETY: forwarded caller contract.
            unsafe { put(inverse_scale, v) }
        }
    };
}

scale_helpers!(
    f32,
    pernix_scale_f32,
    pernix_decompression_scale_f32,
    pernix_inverse_scale_f32,
    pernix_compression_scale_f32
);
scale_helpers!(
    f64,
    pernix_scale_f64,
    pernix_decompression_scale_f64,
    pernix_inverse_scale_f64,
    pernix_compression_scale_f64
);

/// Creates a dispatcher for `backend` (a `pernix_backend` value) and stores it in `*dispatcher`.
///
/// Unknown values and backends of another architecture give −3, backends this build or CPU
/// cannot serve −5, a failed allocation −6 (`PERNIX_STATUS_OUT_OF_MEMORY`). On failure
/// `*dispatcher` is set to null.
///
/// # Safety
/// `dispatcher` must be null or valid for writing one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pernix_dispatcher_create(
    backend: c_int,
    dispatcher: *mut *mut PernixDispatcher,
) -> PernixStatus {
    if dispatcher.is_null() || !dispatcher.is_aligned() {
        return Error::InvalidArgument.code();
    }
    let made = Backend::from_code(backend)
        .and_then(Dispatcher::new)
        .and_then(|d| {
            let layout = Layout::new::<PernixDispatcher>();
            // SAFETY: the layout has non-zero size (PernixDispatcher holds a non-ZST Dispatcher).
            let p = unsafe { alloc(layout) }.cast::<PernixDispatcher>();
            if p.is_null() {
                return Err(Error::OutOfMemory);
            }
            // SAFETY: `p` is a fresh, non-null allocation of the right layout.
            unsafe { p.write(PernixDispatcher(d)) };
            Ok(p)
        });
    let (ptr, code) = match made {
        Ok(p) => (p, OK),
        Err(e) => (core::ptr::null_mut(), e.code()),
    };
    // SAFETY: non-null and aligned (checked above); valid for a write per the caller.
    unsafe { dispatcher.write(ptr) };
    code
}

/// Destroys a dispatcher from [`pernix_dispatcher_create`]; null is ignored.
///
/// # Safety
/// `dispatcher` must be null or a live handle from `pernix_dispatcher_create`, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pernix_dispatcher_destroy(dispatcher: *mut PernixDispatcher) {
    if dispatcher.is_null() {
        return;
    }
    // SAFETY: the caller passes a live handle from `pernix_dispatcher_create`, which allocated it with this layout; it is dropped and freed exactly once.
    unsafe {
        core::ptr::drop_in_place(dispatcher);
        dealloc(dispatcher.cast(), Layout::new::<PernixDispatcher>());
    }
}

/// The backend value (`pernix_backend`) a dispatcher resolved to, or −1 for null. An fzpack
/// extension: the documented API has no way to ask what `AUTO` chose.
///
/// # Safety
/// `dispatcher` must be null or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pernix_dispatcher_backend(dispatcher: *const PernixDispatcher) -> c_int {
    // SAFETY: null or a live handle per the caller.
    match unsafe { dispatcher.as_ref() } {
        Some(d) => d.0.backend().code(),
        None => -1,
    }
}

/// Validated view of a compress/decompress call's parameters, in the spec's order.
struct Call<'d> {
    dispatcher: &'d Dispatcher,
    bits: BitWidth,
    block_size: BlockSize,
    values: usize,
    bytes: usize,
}

/// # Safety
/// `dispatcher` must be null or a live handle.
unsafe fn validate<'d, T: PernixFloat>(
    dispatcher: *const PernixDispatcher,
    input: *const c_void,
    output: *const c_void,
    bit_width: u8,
    block_size: u32,
    scale: T,
    blocks: u32,
) -> Result<Call<'d>, Error> {
    // 1. null pointers (the dispatcher counts as one), 2. zero blocks, 3. block size,
    // 4. scale, 5. bit width.
    if dispatcher.is_null() || input.is_null() || output.is_null() || blocks == 0 {
        return Err(Error::InvalidArgument);
    }
    let block_size = BlockSize::new(block_size)?;
    if !scale.is_positive_finite() {
        return Err(Error::InvalidArgument);
    }
    let bits = BitWidth::new(bit_width)?;
    // SAFETY: non-null; a live handle per the caller.
    let dispatcher = unsafe { &(*dispatcher).0 };
    let blocks = blocks as usize;
    let values = elements_per_block(bits, block_size).checked_mul(blocks);
    let bytes = block_size.bytes().checked_mul(blocks);
    match (values, bytes) {
        (Some(values), Some(bytes)) => Ok(Call {
            dispatcher,
            bits,
            block_size,
            values,
            bytes,
        }),
        _ => Err(Error::InvalidArgument),
    }
}

/// # Safety
/// See the exported compress functions.
unsafe fn compress<T: PernixFloat>(
    dispatcher: *const PernixDispatcher,
    bit_width: u8,
    block_size: u32,
    input: *const c_void,
    inverse_scale: T,
    output: *mut c_void,
    blocks: u32,
) -> PernixStatus {
    // SAFETY: forwarded caller contract.
    let call = unsafe {
        validate(
            dispatcher,
            input,
            output,
            bit_width,
            block_size,
            inverse_scale,
            blocks,
        )
    };
    let call = match call {
        Ok(c) => c,
        Err(e) => return e.code(),
    };
    let input = input.cast::<T>();
    if !input.is_aligned() {
        return Error::InvalidArgument.code();
    }
    // SAFETY: the caller provides `values` readable elements at `input` and `bytes` writable bytes at `output` (the C ABI contract); non-null and aligned were checked. The regions must not overlap (one is read-only floats, the other the output block).
    let (input, output) = unsafe {
        (
            core::slice::from_raw_parts(input, call.values),
            core::slice::from_raw_parts_mut(output.cast::<u8>(), call.bytes),
        )
    };
    status(call.dispatcher.compress_blocks(
        call.bits,
        call.block_size,
        input,
        inverse_scale,
        output,
        blocks as usize,
    ))
}

/// # Safety
/// See the exported decompress functions.
#[allow(clippy::too_many_arguments)]
unsafe fn decompress<T: PernixFloat>(
    dispatcher: *const PernixDispatcher,
    bit_width: u8,
    block_size: u32,
    input: *const c_void,
    scale: T,
    output: *mut c_void,
    blocks: u32,
    sign_values: bool,
) -> PernixStatus {
    // SAFETY: forwarded caller contract.
    let call = unsafe {
        validate(
            dispatcher, input, output, bit_width, block_size, scale, blocks,
        )
    };
    let call = match call {
        Ok(c) => c,
        Err(e) => return e.code(),
    };
    let output = output.cast::<T>();
    if !output.is_aligned() {
        return Error::InvalidArgument.code();
    }
    // SAFETY: as in `compress`, with `bytes` readable bytes and `values` writable elements.
    let (input, output) = unsafe {
        (
            core::slice::from_raw_parts(input.cast::<u8>(), call.bytes),
            core::slice::from_raw_parts_mut(output, call.values),
        )
    };
    status(call.dispatcher.decompress_blocks(
        call.bits,
        call.block_size,
        input,
        scale,
        output,
        blocks as usize,
        sign_values,
    ))
}

macro_rules! codec_entry_points {
    ($t:ty, $cb:ident, $cbs:ident, $db:ident, $dbs:ident) => {
        /// Compresses one block: `block_size·8/bit_width` values at `input` into `block_size`
        /// bytes at `output`.
        ///
        /// # Safety
        /// `dispatcher` is null or a live handle; `input` is null or points to that many
        /// aligned readable values; `output` is null or points to `block_size` writable bytes;
        /// the two do not overlap.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $cb(
            dispatcher: *const PernixDispatcher,
            bit_width: u8,
            block_size: u32,
            input: *const c_void,
            inverse_scale: $t,
            output: *mut c_void,
        ) -> PernixStatus {
            // SAFETY: forwarded caller contract.
            unsafe {
                compress::<$t>(
                    dispatcher,
                    bit_width,
                    block_size,
                    input,
                    inverse_scale,
                    output,
                    1,
                )
            }
        }

        /// Compresses `blocks` consecutive blocks.
        ///
        /// # Safety
        /// As for the single-block function, with sizes multiplied by `blocks`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $cbs(
            dispatcher: *const PernixDispatcher,
            bit_width: u8,
            block_size: u32,
            input: *const c_void,
            inverse_scale: $t,
            output: *mut c_void,
            blocks: u32,
        ) -> PernixStatus {
            // SAFETY: forwarded caller contract.
            unsafe {
                compress::<$t>(
                    dispatcher,
                    bit_width,
                    block_size,
                    input,
                    inverse_scale,
                    output,
                    blocks,
                )
            }
        }

        /// Decompresses one block of `block_size` bytes into `block_size·8/bit_width` values.
        ///
        /// # Safety
        /// `dispatcher` is null or a live handle; `input` is null or points to `block_size`
        /// readable bytes; `output` is null or points to that many aligned writable values;
        /// the two do not overlap.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $db(
            dispatcher: *const PernixDispatcher,
            bit_width: u8,
            block_size: u32,
            input: *const c_void,
            scale: $t,
            output: *mut c_void,
            sign_values: bool,
        ) -> PernixStatus {
            // SAFETY: forwarded caller contract.
            unsafe {
                decompress::<$t>(
                    dispatcher,
                    bit_width,
                    block_size,
                    input,
                    scale,
                    output,
                    1,
                    sign_values,
                )
            }
        }

        /// Decompresses `blocks` consecutive blocks.
        ///
        /// # Safety
        /// As for the single-block function, with sizes multiplied by `blocks`.
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $dbs(
            dispatcher: *const PernixDispatcher,
            bit_width: u8,
            block_size: u32,
            input: *const c_void,
            scale: $t,
            output: *mut c_void,
            blocks: u32,
            sign_values: bool,
        ) -> PernixStatus {
            // SAFETY: forwarded caller contract.
            unsafe {
                decompress::<$t>(
                    dispatcher,
                    bit_width,
                    block_size,
                    input,
                    scale,
                    output,
                    blocks,
                    sign_values,
                )
            }
        }
    };
}

codec_entry_points!(
    f32,
    pernix_compress_block_f32,
    pernix_compress_blocks_f32,
    pernix_decompress_block_f32,
    pernix_decompress_blocks_f32
);
codec_entry_points!(
    f64,
    pernix_compress_block_f64,
    pernix_compress_blocks_f64,
    pernix_decompress_block_f64,
    pernix_decompress_blocks_f64
);
