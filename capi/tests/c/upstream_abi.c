/* A translation unit written against upstream PERNIX's C prototypes (the backend-enum
 * generation), which does NOT include our header: it declares the eight block functions itself
 * with a pernix_backend first argument, exactly as upstream's pernix.h does. Linked with our
 * library it must round-trip on every available backend and report upstream's statuses: the
 * binary drop-in. Compiled separately from upstream_abi_main.c. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef enum pernix_status {
    PERNIX_STATUS_OK = 0,
    PERNIX_STATUS_INVALID_ARGUMENT = -1,
    PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH = -2,
    PERNIX_STATUS_UNSUPPORTED_BACKEND = -3,
    PERNIX_STATUS_UNSUPPORTED_BLOCK_SIZE = -4,
    PERNIX_STATUS_UNSUPPORTED_IMPLEMENTATION = -5
} pernix_status;
typedef enum pernix_backend {
    PERNIX_BACKEND_AUTO = 0,
    PERNIX_BACKEND_FALLBACK = 1,
    PERNIX_BACKEND_X86_AVX2 = 2,
    PERNIX_BACKEND_X86_BMI2 = 3,
    PERNIX_BACKEND_X86_AVX512_VBMI = 4,
    PERNIX_BACKEND_ARM64_NEON = 5,
    PERNIX_BACKEND_ARM64_SVE = 6,
    PERNIX_BACKEND_FALLBACK_STDPAR = 7,
    PERNIX_BACKEND_FALLBACK_SIMD = 8
} pernix_backend;

pernix_status pernix_compress_block_f32(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, float inverse_scale, void* output);
pernix_status pernix_compress_blocks_f32(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, float inverse_scale, void* output, u32 blocks);
pernix_status pernix_decompress_block_f32(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, float scale, void* output, bool sign_values);
pernix_status pernix_decompress_blocks_f32(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, float scale, void* output, u32 blocks, bool sign_values);
pernix_status pernix_compress_block_f64(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, double inverse_scale, void* output);
pernix_status pernix_compress_blocks_f64(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, double inverse_scale, void* output, u32 blocks);
pernix_status pernix_decompress_block_f64(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, double scale, void* output, bool sign_values);
pernix_status pernix_decompress_blocks_f64(pernix_backend backend, u8 bit_width, u32 block_size, const void* input, double scale, void* output, u32 blocks, bool sign_values);

/* Round trip on `backend` through all eight functions; returns the first non-OK status, or a
 * positive count of values off by more than half a step. */
int upstream_round_trip(int backend_value) {
    const pernix_backend b = (pernix_backend)backend_value;
    enum { N = 16, BS = 64, E = BS * 8 / N, K = 2 };
    float in32[E * K], out32[E * K];
    double in64[E * K], out64[E * K];
    u8 blk[BS * K];
    const float s32 = 1.0f / 32767.0f;
    const double s64 = 1.0 / 32767.0;
    pernix_status st;
    int bad = 0;
    for (int i = 0; i < E * K; ++i) {
        in32[i] = (float)(i - E) / (float)E;
        in64[i] = (double)(E - i) / (double)E;
    }
#define TRY(call)                           \
    do {                                    \
        st = (call);                        \
        if (st != PERNIX_STATUS_OK) return (int)st; \
    } while (0)
    TRY(pernix_compress_block_f32(b, N, BS, in32, 1.0f / s32, blk));
    TRY(pernix_decompress_block_f32(b, N, BS, blk, s32, out32, true));
    TRY(pernix_compress_blocks_f32(b, N, BS, in32, 1.0f / s32, blk, K));
    TRY(pernix_decompress_blocks_f32(b, N, BS, blk, s32, out32, K, true));
    for (int i = 0; i < E * K; ++i) bad += (out32[i] - in32[i] > 0.5001f * s32 || in32[i] - out32[i] > 0.5001f * s32);
    TRY(pernix_compress_block_f64(b, N, BS, in64, 1.0 / s64, blk));
    TRY(pernix_decompress_block_f64(b, N, BS, blk, s64, out64, true));
    TRY(pernix_compress_blocks_f64(b, N, BS, in64, 1.0 / s64, blk, K));
    TRY(pernix_decompress_blocks_f64(b, N, BS, blk, s64, out64, K, true));
    for (int i = 0; i < E * K; ++i) bad += (out64[i] - in64[i] > 0.5001 * s64 || in64[i] - out64[i] > 0.5001 * s64);
    return bad;
}

/* Upstream's validation statuses for a backend-enum caller. */
int upstream_status(int backend_value, int bit_width, int block_size) {
    float in[512];
    u8 blk[1024];
    memset(in, 0, sizeof in);
    return (int)pernix_compress_block_f32((pernix_backend)backend_value, (u8)bit_width, (u32)block_size, in, 1.0f, blk);
}
