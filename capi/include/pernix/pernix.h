/*
 * PERNIX C ABI, implemented by fzpack (libpernix.so / libpernix.a from the fzpack-capi crate).
 *
 * Block format, quantization and status codes are those of the C/C++ library pc2/pernix: a
 * block of block_size bytes (64 = interchange format; 128, 256, 512, 1024 also valid) holds
 * block_size*8/bit_width values of bit_width bits (1..24), packed LSB-first; unused tail bits
 * are zero. Compression takes the inverse scale, decompression the forward scale.
 *
 * Two generations of the block entry points, one library. The eight block functions
 * (pernix_compress_block_f32 ... pernix_decompress_blocks_f64) take as first argument either
 *   - a dispatcher handle from pernix_dispatcher_create (the dispatcher generation), or
 *   - a pernix_backend value (the backend-enum generation of upstream PERNIX).
 * Binary callers: the symbol takes a pointer-sized first argument. The library looks the value
 * up among its dispatcher handles by address (it never reads through a pointer that is not one
 * of its handles); a value that is no handle and fits in 32 bits is read as a backend: 0..8
 * select that backend through a dispatcher resolved once per backend and cached (no allocation
 * or lock per call), other values give UNSUPPORTED_BACKEND; a wider value that is no handle
 * gives INVALID_ARGUMENT; a valid backend this build or CPU cannot serve gives
 * UNSUPPORTED_IMPLEMENTATION (or UNSUPPORTED_BACKEND for another architecture), as upstream. So an object compiled against upstream's header, which passes the enum in the
 * first argument register, links and runs unchanged (this relies on the x86-64 and AArch64
 * convention that a 32-bit argument arrives zero-extended, which gcc and clang follow).
 * NULL is therefore PERNIX_BACKEND_AUTO (0), not an error.
 * C source (C11 or later): each of the eight names is also a macro that dispatches on the type
 * of its first argument with _Generic: a pernix_dispatcher pointer (const or not, or void*)
 * calls the function itself, anything else (pernix_backend, an integer) calls a static inline
 * pernix_..._by_backend wrapper that passes the value as above. Both forms therefore compile
 * without warnings; taking the function's address (&pernix_compress_block_f32, or the name
 * without a call) gives the plain symbol. Define PERNIX_NO_GENERIC to get the plain prototypes
 * only; before C11 only the plain prototypes exist (pass backends through the _by_backend
 * wrappers there). C++: pernix_..._by_backend and overloads of the eight names taking
 * pernix_backend are declared instead.
 *
 * Dispatcher handles carry a canary and live in library-owned slabs that are never returned to
 * malloc: using a destroyed handle in any block function returns INVALID_ARGUMENT
 * (pernix_dispatcher_backend returns -1), and destroying it again, or destroying a pointer that
 * is no handle, does nothing. Destroyed handles are reused by later pernix_dispatcher_create
 * calls. A pointer that never was a handle is never read either: it gives INVALID_ARGUMENT (or
 * UNSUPPORTED_BACKEND when its value fits in 32 bits, as it is then taken for a backend value).
 * What cannot be detected: a stale handle after a later create has reused it (it then names
 * the new dispatcher, which works), and a handle destroyed by one thread while another uses it
 * (a data race, undefined).
 *
 * Argument checks, in this order: null input/output and blocks == 0 -> INVALID_ARGUMENT; block
 * size -> UNSUPPORTED_BLOCK_SIZE; scale not finite or <= 0 -> INVALID_ARGUMENT; backend
 * (unknown -> UNSUPPORTED_BACKEND, unavailable -> UNSUPPORTED_IMPLEMENTATION, destroyed handle ->
 * INVALID_ARGUMENT); bit width -> UNSUPPORTED_BIT_WIDTH. Buffer lengths cannot be checked:
 * compression reads elements*blocks values and writes block_size*blocks bytes; decompression
 * the reverse. Element pointers must be aligned for float/double.
 *
 * Scale helpers return INVALID_ARGUMENT for a scale (or inverse scale) that is not finite and
 * positive, including an inverse that overflows (pernix_inverse_scale_f32(1e-45f, ...)).
 */
#ifndef PERNIX_PERNIX_H
#define PERNIX_PERNIX_H

#include <pernix/compat.h>

#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifndef PERNIX_API
#define PERNIX_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pernix_status {
    PERNIX_STATUS_OK = 0,
    PERNIX_STATUS_INVALID_ARGUMENT = -1,
    PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH = -2,
    PERNIX_STATUS_UNSUPPORTED_BACKEND = -3,
    PERNIX_STATUS_UNSUPPORTED_BLOCK_SIZE = -4,
    PERNIX_STATUS_UNSUPPORTED_IMPLEMENTATION = -5,
    PERNIX_STATUS_OUT_OF_MEMORY = -6
} pernix_status;

typedef enum pernix_backend {
    PERNIX_BACKEND_AUTO = 0,
    PERNIX_BACKEND_FALLBACK = 1,
    PERNIX_BACKEND_FALLBACK_SCALAR = 1,
    PERNIX_BACKEND_X86_AVX2 = 2,
    PERNIX_BACKEND_X86_BMI2 = 3,
    PERNIX_BACKEND_X86_AVX512_VBMI = 4,
    PERNIX_BACKEND_ARM64_NEON = 5,
    PERNIX_BACKEND_ARM64_SVE = 6,
    PERNIX_BACKEND_FALLBACK_STDPAR = 7,
    PERNIX_BACKEND_FALLBACK_SIMD = 8
} pernix_backend;

/* Opaque dispatcher: the backend is resolved once, at creation (AUTO picks the fastest). */
typedef struct pernix_dispatcher pernix_dispatcher;

PERNIX_API u8 pernix_min_bit_width(void);
PERNIX_API u8 pernix_max_bit_width(void);
PERNIX_API bool pernix_is_valid_bit_width(u8 bit_width);
PERNIX_API bool pernix_is_valid_block_size(u32 block_size);
PERNIX_API u32 pernix_compressed_block_size(void);
PERNIX_API u32 pernix_elements_per_block(u8 bit_width);
PERNIX_API const char* pernix_status_string(pernix_status status);

PERNIX_API pernix_status pernix_scale_f32(float bmax, u8 bit_width, float* scale);
PERNIX_API pernix_status pernix_scale_f64(double bmax, u8 bit_width, double* scale);
PERNIX_API pernix_status pernix_decompression_scale_f32(float bmax, u8 bit_width, float* scale);
PERNIX_API pernix_status pernix_decompression_scale_f64(double bmax, u8 bit_width, double* scale);
PERNIX_API pernix_status pernix_inverse_scale_f32(float scale, float* inverse_scale);
PERNIX_API pernix_status pernix_inverse_scale_f64(double scale, double* inverse_scale);
PERNIX_API pernix_status pernix_compression_scale_f32(float bmax, u8 bit_width, float* inverse_scale);
PERNIX_API pernix_status pernix_compression_scale_f64(double bmax, u8 bit_width, double* inverse_scale);

PERNIX_API pernix_status pernix_dispatcher_create(pernix_backend backend, pernix_dispatcher** dispatcher);
PERNIX_API void pernix_dispatcher_destroy(pernix_dispatcher* dispatcher);
/* fzpack extension: the backend a dispatcher resolved to (-1 for NULL). */
PERNIX_API int pernix_dispatcher_backend(const pernix_dispatcher* dispatcher);

PERNIX_API pernix_status pernix_compress_block_f32(const pernix_dispatcher* dispatcher, u8 bit_width, u32 block_size, const void* input, float inverse_scale, void* output);
PERNIX_API pernix_status pernix_compress_blocks_f32(const pernix_dispatcher* dispatcher, u8 bit_width, u32 block_size, const void* input, float inverse_scale, void* output, u32 blocks);
PERNIX_API pernix_status pernix_decompress_block_f32(const pernix_dispatcher* dispatcher, u8 bit_width, u32 block_size, const void* input, float scale, void* output, bool sign_values);
PERNIX_API pernix_status pernix_decompress_blocks_f32(const pernix_dispatcher* dispatcher, u8 bit_width, u32 block_size, const void* input, float scale, void* output, u32 blocks, bool sign_values);
PERNIX_API pernix_status pernix_compress_block_f64(const pernix_dispatcher* dispatcher, u8 bit_width, u32 block_size, const void* input, double inverse_scale, void* output);
PERNIX_API pernix_status pernix_compress_blocks_f64(const pernix_dispatcher* dispatcher, u8 bit_width, u32 block_size, const void* input, double inverse_scale, void* output, u32 blocks);
PERNIX_API pernix_status pernix_decompress_block_f64(const pernix_dispatcher* dispatcher, u8 bit_width, u32 block_size, const void* input, double scale, void* output, bool sign_values);
PERNIX_API pernix_status pernix_decompress_blocks_f64(const pernix_dispatcher* dispatcher, u8 bit_width, u32 block_size, const void* input, double scale, void* output, u32 blocks, bool sign_values);

#ifdef __cplusplus
}
#endif

/* The backend-enum generation: a backend value as the first-argument "pointer" (see the top). */
#ifdef __cplusplus
#define PERNIX_BACKEND_HANDLE_(b) \
    reinterpret_cast<const pernix_dispatcher*>(static_cast<uintptr_t>(static_cast<unsigned>(b)))
#define PERNIX_INLINE_ inline
#else
#define PERNIX_BACKEND_HANDLE_(b) \
    ((const pernix_dispatcher*)(uintptr_t)(unsigned)(b))
#define PERNIX_INLINE_ static inline
#endif

PERNIX_INLINE_ pernix_status pernix_compress_block_f32_by_backend(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, float inverse_scale, void* output) {
    return (pernix_compress_block_f32)(PERNIX_BACKEND_HANDLE_(backend), bit_width, block_size, input, inverse_scale, output);
}
PERNIX_INLINE_ pernix_status pernix_compress_blocks_f32_by_backend(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, float inverse_scale, void* output, u32 blocks) {
    return (pernix_compress_blocks_f32)(PERNIX_BACKEND_HANDLE_(backend), bit_width, block_size, input, inverse_scale, output, blocks);
}
PERNIX_INLINE_ pernix_status pernix_decompress_block_f32_by_backend(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, float scale, void* output, bool sign_values) {
    return (pernix_decompress_block_f32)(PERNIX_BACKEND_HANDLE_(backend), bit_width, block_size, input, scale, output, sign_values);
}
PERNIX_INLINE_ pernix_status pernix_decompress_blocks_f32_by_backend(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, float scale, void* output, u32 blocks, bool sign_values) {
    return (pernix_decompress_blocks_f32)(PERNIX_BACKEND_HANDLE_(backend), bit_width, block_size, input, scale, output, blocks, sign_values);
}
PERNIX_INLINE_ pernix_status pernix_compress_block_f64_by_backend(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, double inverse_scale, void* output) {
    return (pernix_compress_block_f64)(PERNIX_BACKEND_HANDLE_(backend), bit_width, block_size, input, inverse_scale, output);
}
PERNIX_INLINE_ pernix_status pernix_compress_blocks_f64_by_backend(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, double inverse_scale, void* output, u32 blocks) {
    return (pernix_compress_blocks_f64)(PERNIX_BACKEND_HANDLE_(backend), bit_width, block_size, input, inverse_scale, output, blocks);
}
PERNIX_INLINE_ pernix_status pernix_decompress_block_f64_by_backend(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, double scale, void* output, bool sign_values) {
    return (pernix_decompress_block_f64)(PERNIX_BACKEND_HANDLE_(backend), bit_width, block_size, input, scale, output, sign_values);
}
PERNIX_INLINE_ pernix_status pernix_decompress_blocks_f64_by_backend(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, double scale, void* output, u32 blocks, bool sign_values) {
    return (pernix_decompress_blocks_f64)(PERNIX_BACKEND_HANDLE_(backend), bit_width, block_size, input, scale, output, blocks, sign_values);
}

#ifdef __cplusplus
/* C++: overloads of the eight names for a pernix_backend first argument. */
inline pernix_status pernix_compress_block_f32(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, float inverse_scale, void* output) {
    return pernix_compress_block_f32_by_backend(backend, bit_width, block_size, input, inverse_scale, output);
}
inline pernix_status pernix_compress_blocks_f32(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, float inverse_scale, void* output, u32 blocks) {
    return pernix_compress_blocks_f32_by_backend(backend, bit_width, block_size, input, inverse_scale, output, blocks);
}
inline pernix_status pernix_decompress_block_f32(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, float scale, void* output, bool sign_values) {
    return pernix_decompress_block_f32_by_backend(backend, bit_width, block_size, input, scale, output, sign_values);
}
inline pernix_status pernix_decompress_blocks_f32(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, float scale, void* output, u32 blocks, bool sign_values) {
    return pernix_decompress_blocks_f32_by_backend(backend, bit_width, block_size, input, scale, output, blocks, sign_values);
}
inline pernix_status pernix_compress_block_f64(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, double inverse_scale, void* output) {
    return pernix_compress_block_f64_by_backend(backend, bit_width, block_size, input, inverse_scale, output);
}
inline pernix_status pernix_compress_blocks_f64(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, double inverse_scale, void* output, u32 blocks) {
    return pernix_compress_blocks_f64_by_backend(backend, bit_width, block_size, input, inverse_scale, output, blocks);
}
inline pernix_status pernix_decompress_block_f64(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, double scale, void* output, bool sign_values) {
    return pernix_decompress_block_f64_by_backend(backend, bit_width, block_size, input, scale, output, sign_values);
}
inline pernix_status pernix_decompress_blocks_f64(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, double scale, void* output, u32 blocks, bool sign_values) {
    return pernix_decompress_blocks_f64_by_backend(backend, bit_width, block_size, input, scale, output, blocks, sign_values);
}
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(PERNIX_NO_GENERIC)
/* C11: the eight names dispatch on their first argument's type (see the top of this file). */
#define PERNIX_GENERIC_(name, first) \
    _Generic((first), pernix_dispatcher*: name, const pernix_dispatcher*: name, void*: name, const void*: name, default: name##_by_backend)
#define pernix_compress_block_f32(first, ...) PERNIX_GENERIC_(pernix_compress_block_f32, first)((first), __VA_ARGS__)
#define pernix_compress_blocks_f32(first, ...) PERNIX_GENERIC_(pernix_compress_blocks_f32, first)((first), __VA_ARGS__)
#define pernix_decompress_block_f32(first, ...) PERNIX_GENERIC_(pernix_decompress_block_f32, first)((first), __VA_ARGS__)
#define pernix_decompress_blocks_f32(first, ...) PERNIX_GENERIC_(pernix_decompress_blocks_f32, first)((first), __VA_ARGS__)
#define pernix_compress_block_f64(first, ...) PERNIX_GENERIC_(pernix_compress_block_f64, first)((first), __VA_ARGS__)
#define pernix_compress_blocks_f64(first, ...) PERNIX_GENERIC_(pernix_compress_blocks_f64, first)((first), __VA_ARGS__)
#define pernix_decompress_block_f64(first, ...) PERNIX_GENERIC_(pernix_decompress_block_f64, first)((first), __VA_ARGS__)
#define pernix_decompress_blocks_f64(first, ...) PERNIX_GENERIC_(pernix_decompress_blocks_f64, first)((first), __VA_ARGS__)
#endif

#endif /* PERNIX_PERNIX_H */
