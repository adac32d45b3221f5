//! The PERNIX C ABI, implemented by fzpack: build this crate and link `libpernix.so` or
//! `libpernix.a` instead of the C library, with the headers in `capi/include`.
//!
//! Both generations of the block entry points are served by the same eight symbols: the first
//! argument is a dispatcher handle or, when it is no handle and fits in 32 bits, a
//! `pernix_backend` value as upstream PERNIX passes it, resolved through one cached immutable
//! dispatcher per backend (see [`resolve`]). Handles carry a canary and live in slabs that are
//! never freed, so a destroyed handle is reported instead of read after free.
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

use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, c_void};
use fzpack_core::pernix::{
    self, Backend, BitWidth, BlockSize, Dispatcher, Error, PernixFloat, elements_per_block,
};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// `pernix_status` values as returned through the C ABI.
pub type PernixStatus = c_int;

const OK: PernixStatus = 0;

fn status(r: Result<(), Error>) -> PernixStatus {
    match r {
        Ok(()) => OK,
        Err(e) => e.code(),
    }
}

/// The opaque `pernix_dispatcher` handle: a resolved [`Dispatcher`] behind a canary.
///
/// Handles live in slabs that are never freed ([`SLABS`]); `magic` is [`LIVE`] from
/// `pernix_dispatcher_create` until `pernix_dispatcher_destroy`, which sets it to [`DEAD`] and
/// parks the handle for reuse by a later create. So every entry point can tell a live handle,
/// a destroyed one and a pointer that never was a handle apart without reading freed or foreign
/// memory: a pointer is first looked up by address in the slabs.
pub struct PernixDispatcher {
    magic: AtomicU64,
    /// Written only by `pernix_dispatcher_create` while `magic` is DEAD (no caller may use the
    /// handle then), read only after `magic` was seen LIVE.
    dispatcher: UnsafeCell<Dispatcher>,
}

/// The canary of a live handle ("PNXLIVE1").
const LIVE: u64 = 0x504e_584c_4956_4531;
/// The canary of a destroyed, parked handle ("PNXDEAD1").
const DEAD: u64 = 0x504e_5844_4541_4431;

/// Handles in slab `k` (slab `k` holds `FIRST_SLAB << k` handles).
const FIRST_SLAB: usize = 64;
/// Slabs, allocated on demand and never freed; a null entry ends the list.
static SLABS: [AtomicPtr<PernixDispatcher>; 32] =
    [const { AtomicPtr::new(core::ptr::null_mut()) }; 32];

/// The create/destroy bookkeeping, under one lock (never taken by the block entry points).
struct Registry {
    /// Handles handed out so far (slab slots used, in slab order).
    used: usize,
    /// Destroyed handles, reused before new slots.
    parked: Vec<usize>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    used: 0,
    parked: Vec::new(),
});

/// The handle at slot `index`, allocating its slab when needed (registry lock held).
fn slot(index: usize) -> Result<*mut PernixDispatcher, Error> {
    let (mut k, mut first) = (0usize, 0usize);
    while index >= first + (FIRST_SLAB << k) {
        first += FIRST_SLAB << k;
        k += 1;
    }
    let cell = SLABS.get(k).ok_or(Error::OutOfMemory)?;
    let mut base = cell.load(Ordering::Acquire);
    if base.is_null() {
        let len = FIRST_SLAB << k;
        let fallback = Dispatcher::new(Backend::Fallback)?;
        let mut slab = Vec::new();
        slab.try_reserve_exact(len)
            .map_err(|_| Error::OutOfMemory)?;
        slab.extend((0..len).map(|_| PernixDispatcher {
            magic: AtomicU64::new(DEAD),
            dispatcher: UnsafeCell::new(fallback),
        }));
        base = Box::leak(slab.into_boxed_slice()).as_mut_ptr();
        cell.store(base, Ordering::Release);
    }
    // SAFETY: `index - first < FIRST_SLAB << k`, the slab's length.
    Ok(unsafe { base.add(index - first) })
}

/// The handle `p` points to, if it points to one (live or destroyed): found by address among
/// the slabs, so nothing is read through a pointer that is not a handle.
fn lookup<'d>(p: *const PernixDispatcher) -> Option<&'d PernixDispatcher> {
    let addr = p as usize;
    let size = core::mem::size_of::<PernixDispatcher>();
    for (k, cell) in SLABS.iter().enumerate() {
        let base = cell.load(Ordering::Acquire);
        if base.is_null() {
            return None;
        }
        let offset = addr.wrapping_sub(base as usize);
        if offset < (FIRST_SLAB << k) * size && offset.is_multiple_of(size) {
            // SAFETY: `p` is the address of an element of a live (never freed) slab.
            return Some(unsafe { &*p });
        }
    }
    None
}

/// One immutable dispatcher per backend value, resolved on first use and cached: the
/// backend-enum entry points resolve through it per call with one atomic load (no lock, no
/// allocation after the first call for a backend).
static BY_BACKEND: [OnceLock<Result<Dispatcher, Error>>; Backend::ALL.len()] =
    [const { OnceLock::new() }; Backend::ALL.len()];

/// The dispatcher behind a block entry point's first argument.
///
/// A handle (found by [`lookup`]) is used when live and is INVALID_ARGUMENT when destroyed.
/// Anything else that fits in 32 bits is a `pernix_backend` value, the calling convention of
/// the backend-enum generation of the ABI (the enum arrives zero-extended in the pointer's
/// register): 0..=8 resolve through [`BY_BACKEND`], other values are UNSUPPORTED_BACKEND. A
/// wider value that is no handle is INVALID_ARGUMENT.
fn resolve<'d>(dispatcher: *const PernixDispatcher) -> Result<&'d Dispatcher, Error> {
    if let Some(handle) = lookup(dispatcher) {
        return if handle.magic.load(Ordering::Acquire) == LIVE {
            // SAFETY: LIVE was loaded with Acquire after create's Release store, so the write of the dispatcher happened before; it is not written again until a destroy and a later create (a caller using the handle meanwhile is the documented undefined case).
            Ok(unsafe { &*handle.dispatcher.get() })
        } else {
            Err(Error::InvalidArgument)
        };
    }
    let code = u32::try_from(dispatcher as usize).map_err(|_| Error::InvalidArgument)?;
    let code = i32::try_from(code).map_err(|_| Error::UnsupportedBackend)?;
    let backend = Backend::from_code(code)?;
    BY_BACKEND
        .get(backend.code() as usize)
        .ok_or(Error::UnsupportedBackend)?
        .get_or_init(|| Dispatcher::new(backend))
        .as_ref()
        .map_err(|e| *e)
}

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

/// An inverse scale must itself be a valid scale (finite and positive): `1 / 1e-45` is +inf
/// in f32, which no compress call accepts, so the helper reports INVALID_ARGUMENT instead of
/// handing back a value the next call rejects.
fn finite_inverse<T: PernixFloat>(inverse: Result<T, Error>) -> Result<T, Error> {
    inverse.and_then(|v| {
        if v.is_positive_finite() {
            Ok(v)
        } else {
            Err(Error::InvalidArgument)
        }
    })
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

        /// `1 / scale` into `*inverse_scale`; INVALID_ARGUMENT when `scale` or its inverse is
        /// not finite and positive.
        ///
        /// # Safety
        /// `inverse_scale` must be null or valid for writing one value.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $inverse(scale: $t, inverse_scale: *mut $t) -> PernixStatus {
            // SAFETY: forwarded caller contract.
            unsafe { put(inverse_scale, finite_inverse(pernix::inverse_scale(scale))) }
        }

        /// The inverse scale for compression from `bmax` (INVALID_ARGUMENT when it would not be
        /// finite).
        ///
        /// # Safety
        /// `inverse_scale` must be null or valid for writing one value.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $cscale(
            bmax: $t,
            bit_width: u8,
            inverse_scale: *mut $t,
        ) -> PernixStatus {
            let v = finite_inverse(
                helper_bits(bit_width).and_then(|b| pernix::compression_scale_from_bmax(bmax, b)),
            );
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

/// A live handle for `d`: a parked one when there is one, else the next slab slot.
fn new_handle(d: Dispatcher) -> Result<*mut PernixDispatcher, Error> {
    let mut reg = REGISTRY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let p = match reg.parked.pop() {
        Some(index) => slot(index)?,
        None => {
            let p = slot(reg.used)?;
            reg.used += 1;
            p
        }
    };
    // SAFETY: `p` is a slab element that no caller holds as live (fresh, or parked after destroy): nothing else writes it, and readers see DEAD until the store below.
    unsafe {
        (*p).dispatcher.get().write(d);
        (*p).magic.store(LIVE, Ordering::Release);
    }
    Ok(p)
}

/// The slot index of handle `p` (registry lock held).
fn index_of(p: *const PernixDispatcher) -> Option<usize> {
    let size = core::mem::size_of::<PernixDispatcher>();
    let mut first = 0;
    for (k, cell) in SLABS.iter().enumerate() {
        let base = cell.load(Ordering::Acquire);
        if base.is_null() {
            return None;
        }
        let offset = (p as usize).wrapping_sub(base as usize);
        if offset < (FIRST_SLAB << k) * size {
            return Some(first + offset / size);
        }
        first += FIRST_SLAB << k;
    }
    None
}

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
        .and_then(new_handle);
    let (ptr, code) = match made {
        Ok(p) => (p, OK),
        Err(e) => (core::ptr::null_mut(), e.code()),
    };
    // SAFETY: non-null and aligned (checked above); valid for a write per the caller.
    unsafe { dispatcher.write(ptr) };
    code
}

/// Destroys a dispatcher from [`pernix_dispatcher_create`]. Null, a handle that was already
/// destroyed (until a later create reuses it) and a pointer that is no handle are ignored.
///
/// # Safety
/// None beyond the C ABI: the pointer is looked up by address, never read unless it is a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pernix_dispatcher_destroy(dispatcher: *mut PernixDispatcher) {
    let Some(handle) = lookup(dispatcher) else {
        return;
    };
    let mut reg = REGISTRY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let was_live = handle
        .magic
        .compare_exchange(LIVE, DEAD, Ordering::AcqRel, Ordering::Acquire)
        .is_ok();
    if let (true, Some(index)) = (was_live, index_of(dispatcher)) {
        reg.parked.push(index);
    }
}

/// The backend value (`pernix_backend`) a dispatcher resolved to, or −1 for null or a destroyed
/// handle. An fzpack extension: the documented API has no way to ask what `AUTO` chose.
///
/// # Safety
/// `dispatcher` must be null or a pointer from `pernix_dispatcher_create` (live or destroyed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pernix_dispatcher_backend(dispatcher: *const PernixDispatcher) -> c_int {
    match lookup(dispatcher).map(|_| resolve(dispatcher)) {
        Some(Ok(d)) => d.backend().code(),
        _ => -1,
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
/// `dispatcher` is a backend value or a pointer from `pernix_dispatcher_create` (see
/// [`resolve`]).
unsafe fn validate<'d, T: PernixFloat>(
    dispatcher: *const PernixDispatcher,
    input: *const c_void,
    output: *const c_void,
    bit_width: u8,
    block_size: u32,
    scale: T,
    blocks: u32,
) -> Result<Call<'d>, Error> {
    // 1. null buffers, 2. zero blocks, 3. block size, 4. scale, 5. backend (a destroyed handle
    // is INVALID_ARGUMENT here), 6. bit width: the order of the specification (§5).
    if input.is_null() || output.is_null() || blocks == 0 {
        return Err(Error::InvalidArgument);
    }
    let block_size = BlockSize::new(block_size)?;
    if !scale.is_positive_finite() {
        return Err(Error::InvalidArgument);
    }
    let dispatcher = resolve(dispatcher)?;
    let bits = BitWidth::new(bit_width)?;
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
        /// `dispatcher` is any value (a handle, a backend value, null = AUTO: see
        /// [`resolve`]); `input` is null or points to that many
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
        /// `dispatcher` is any value (a handle, a backend value, null = AUTO: see
        /// [`resolve`]); `input` is null or points to `block_size`
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

#[cfg(test)]
mod tests {
    use super::*;

    fn compress_one(d: *const PernixDispatcher) -> PernixStatus {
        let input = [0.5f32; 32];
        let mut out = [0u8; 64];
        // SAFETY: 32 readable floats and 64 writable bytes, as N = 16, BS = 64 needs.
        unsafe {
            pernix_compress_block_f32(
                d,
                16,
                64,
                input.as_ptr().cast(),
                1.0,
                out.as_mut_ptr().cast(),
            )
        }
    }

    #[test]
    fn destroyed_and_foreign_handles_are_reported_not_read() {
        let mut d = core::ptr::null_mut();
        // SAFETY: `d` is a valid out-pointer.
        assert_eq!(unsafe { pernix_dispatcher_create(1, &mut d) }, OK);
        assert_eq!(compress_one(d), OK);
        // SAFETY: `d` came from create; destroying it twice is what is being tested.
        unsafe {
            pernix_dispatcher_destroy(d);
            pernix_dispatcher_destroy(d);
        }
        assert_eq!(compress_one(d), Error::InvalidArgument.code());
        // SAFETY: as above.
        assert_eq!(unsafe { pernix_dispatcher_backend(d) }, -1);
        // a pointer into a slab that is not a handle's start is no handle
        let inside = d.cast::<u8>().wrapping_add(1).cast::<PernixDispatcher>();
        assert!(lookup(inside).is_none());
        // a foreign pointer is never read: destroy ignores it, a block call rejects it
        let local = 0u64;
        let foreign = (&raw const local).cast::<PernixDispatcher>();
        // SAFETY: destroy looks the pointer up by address and ignores what is no handle.
        unsafe { pernix_dispatcher_destroy(foreign.cast_mut()) };
        if foreign as usize > u32::MAX as usize {
            assert_eq!(compress_one(foreign), Error::InvalidArgument.code());
        }
        // a later create reuses the parked handle
        let mut e = core::ptr::null_mut();
        // SAFETY: `e` is a valid out-pointer.
        assert_eq!(unsafe { pernix_dispatcher_create(0, &mut e) }, OK);
        assert_eq!(compress_one(e), OK);
        // SAFETY: `e` came from create.
        unsafe { pernix_dispatcher_destroy(e) };
    }

    #[test]
    fn backend_values_in_the_dispatcher_slot() {
        for code in 0..=8usize {
            let want = Backend::from_code(code as i32)
                .and_then(Dispatcher::new)
                .map_or_else(|e| e.code(), |_| OK);
            assert_eq!(
                compress_one(code as *const PernixDispatcher),
                want,
                "backend {code}"
            );
        }
        for bad in [9usize, 255, 4095, 0xFFFF_FFFF] {
            let got = compress_one(bad as *const PernixDispatcher);
            assert_eq!(got, Error::UnsupportedBackend.code(), "value {bad}");
        }
    }

    #[test]
    fn inverse_scales_that_overflow_are_invalid() {
        let mut inv = 7.0f32;
        // SAFETY: `inv` is a valid out-pointer.
        let st = unsafe { pernix_inverse_scale_f32(1e-45, &mut inv) };
        assert_eq!(st, Error::InvalidArgument.code());
        assert_eq!(inv, 7.0);
        let mut invd = 7.0f64;
        // SAFETY: `invd` is a valid out-pointer.
        let st = unsafe { pernix_inverse_scale_f64(5e-324, &mut invd) };
        assert_eq!(st, Error::InvalidArgument.code());
        // SAFETY: as above.
        assert_eq!(unsafe { pernix_inverse_scale_f32(0.5, &mut inv) }, OK);
        assert_eq!(inv, 2.0);
    }
}
