/*
 * PERNIX C ABI, implemented by fzpack (libpernix.so / libpernix.a from the fzpack-capi crate).
 *
 * Block format, quantization and status codes are those of the C/C++ library pc2/pernix: a
 * block of block_size bytes (64 = interchange format; 128, 256, 512, 1024 also valid) holds
 * block_size*8/bit_width values of bit_width bits (1..24), packed LSB-first; unused tail bits
 * are zero. Compression takes the inverse scale, decompression the forward scale.
 *
 * Argument checks, in this order: null pointers (dispatcher, input, output) and blocks == 0
 * -> INVALID_ARGUMENT; block size -> UNSUPPORTED_BLOCK_SIZE; scale not finite or <= 0 ->
 * INVALID_ARGUMENT; bit width -> UNSUPPORTED_BIT_WIDTH. Buffer lengths cannot be checked:
 * compression reads elements*blocks values and writes block_size*blocks bytes; decompression
 * the reverse. Element pointers must be aligned for float/double.
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

#endif /* PERNIX_PERNIX_H */
