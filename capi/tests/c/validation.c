/* Every validation status of fzpack's PERNIX C ABI (spec §5), plus the helpers. Exit 0 = pass. */
#include <pernix/pernix.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                        \
        }                                                                      \
    } while (0)
#define STATUS(expr, want) CHECK((expr) == (want))

int main(void) {
    float in32[512 * 3], out32[512 * 3];
    double in64[512], out64[512];
    u8 block[1024 * 3];
    float s = 0.0f, inv = 0.0f;
    double sd = 0.0, invd = 0.0;
    pernix_dispatcher* d = NULL;
    for (int i = 0; i < 512 * 3; ++i) in32[i] = (float)((i % 97) - 48) / 48.0f;
    for (int i = 0; i < 512; ++i) in64[i] = (double)((i % 89) - 44) / 44.0;

    /* constants */
    CHECK(pernix_min_bit_width() == 1 && pernix_max_bit_width() == 24);
    CHECK(pernix_is_valid_bit_width(1) && pernix_is_valid_bit_width(24));
    CHECK(!pernix_is_valid_bit_width(0) && !pernix_is_valid_bit_width(25));
    CHECK(pernix_is_valid_block_size(64) && pernix_is_valid_block_size(1024));
    CHECK(!pernix_is_valid_block_size(96) && !pernix_is_valid_block_size(32));
    CHECK(pernix_compressed_block_size() == 64);
    CHECK(pernix_elements_per_block(16) == 32 && pernix_elements_per_block(7) == 73);
    CHECK(pernix_elements_per_block(0) == 0 && pernix_elements_per_block(25) == 0);
    CHECK(strcmp(pernix_status_string(PERNIX_STATUS_OK), "PERNIX_STATUS_OK") == 0);
    CHECK(strcmp(pernix_status_string(PERNIX_STATUS_OUT_OF_MEMORY), "PERNIX_STATUS_OUT_OF_MEMORY") == 0);
    CHECK(strcmp(pernix_status_string((pernix_status)42), "PERNIX_STATUS_UNKNOWN") == 0);

    /* helpers */
    STATUS(pernix_scale_f32(127.0f, 8, &s), PERNIX_STATUS_OK);
    CHECK(s == 1.0f);
    STATUS(pernix_decompression_scale_f64(127.0, 8, &sd), PERNIX_STATUS_OK);
    CHECK(sd == 1.0);
    STATUS(pernix_compression_scale_f32(127.0f, 8, &inv), PERNIX_STATUS_OK);
    CHECK(inv == 1.0f);
    STATUS(pernix_scale_f32(0.0f, 8, &s), PERNIX_STATUS_OK);
    CHECK(s == 1.1920929e-07f);
    STATUS(pernix_scale_f32(1.0f, 8, NULL), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_scale_f32(-1.0f, 8, &s), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_scale_f32(INFINITY, 8, &s), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_scale_f64(NAN, 8, &sd), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_scale_f32(1.0f, 0, &s), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_scale_f32(1.0f, 25, &s), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_inverse_scale_f32(0.0f, &inv), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_inverse_scale_f64(-1.0, &invd), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_inverse_scale_f64(2.0, NULL), PERNIX_STATUS_INVALID_ARGUMENT);
    /* an inverse that overflows is not a valid scale: INVALID_ARGUMENT, output untouched */
    inv = 7.0f;
    STATUS(pernix_inverse_scale_f32(1e-45f, &inv), PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(inv == 7.0f);
    invd = 7.0;
    STATUS(pernix_inverse_scale_f64(4.9e-324, &invd), PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(invd == 7.0);
    STATUS(pernix_inverse_scale_f32(1e-38f, &inv), PERNIX_STATUS_OK); /* 1e38: finite */
    CHECK(inv > 9.9e37f && !isinf(inv));

    /* dispatcher creation */
    STATUS(pernix_dispatcher_create(PERNIX_BACKEND_FALLBACK, NULL), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_dispatcher_create((pernix_backend)99, &d), PERNIX_STATUS_UNSUPPORTED_BACKEND);
    CHECK(d == NULL);
    STATUS(pernix_dispatcher_create((pernix_backend)-1, &d), PERNIX_STATUS_UNSUPPORTED_BACKEND);
#if defined(__x86_64__)
    STATUS(pernix_dispatcher_create(PERNIX_BACKEND_ARM64_NEON, &d), PERNIX_STATUS_UNSUPPORTED_BACKEND);
    STATUS(pernix_dispatcher_create(PERNIX_BACKEND_ARM64_SVE, &d), PERNIX_STATUS_UNSUPPORTED_BACKEND);
#endif
    STATUS(pernix_dispatcher_create(PERNIX_BACKEND_FALLBACK_SIMD, &d), PERNIX_STATUS_UNSUPPORTED_IMPLEMENTATION);
    CHECK(pernix_dispatcher_backend(NULL) == -1);
    pernix_dispatcher_destroy(NULL); /* must be a no-op */
    STATUS(pernix_dispatcher_create(PERNIX_BACKEND_AUTO, &d), PERNIX_STATUS_OK);
    CHECK(d != NULL && pernix_dispatcher_backend(d) > 0);
    pernix_dispatcher_destroy(d);
    STATUS(pernix_dispatcher_create(PERNIX_BACKEND_FALLBACK, &d), PERNIX_STATUS_OK);
    CHECK(pernix_dispatcher_backend(d) == PERNIX_BACKEND_FALLBACK);

    /* compress/decompress validation, in order */
    STATUS(pernix_compress_block_f32(d, 8, 64, NULL, 1.0f, block), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_compress_block_f32(d, 8, 64, in32, 1.0f, NULL), PERNIX_STATUS_INVALID_ARGUMENT);
    /* NULL is PERNIX_BACKEND_AUTO (0) now that the same symbols serve the backend-enum ABI */
    STATUS(pernix_compress_block_f32(NULL, 8, 64, in32, 1.0f, block), PERNIX_STATUS_OK);
    STATUS(pernix_compress_blocks_f32(d, 8, 64, in32, 1.0f, block, 0), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_compress_blocks_f32(d, 0, 96, in32, 0.0f, block, 0), PERNIX_STATUS_INVALID_ARGUMENT); /* blocks first */
    STATUS(pernix_compress_block_f32(d, 8, 96, in32, 1.0f, block), PERNIX_STATUS_UNSUPPORTED_BLOCK_SIZE);
    STATUS(pernix_compress_block_f32(d, 0, 96, in32, 0.0f, block), PERNIX_STATUS_UNSUPPORTED_BLOCK_SIZE); /* BS before scale, N */
    STATUS(pernix_compress_block_f32(d, 8, 64, in32, 0.0f, block), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_compress_block_f32(d, 8, 64, in32, NAN, block), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_compress_block_f32(d, 8, 64, in32, -1.0f, block), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_compress_block_f32(d, 8, 64, in32, INFINITY, block), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_compress_block_f32(d, 0, 64, in32, NAN, block), PERNIX_STATUS_INVALID_ARGUMENT); /* scale before N */
    STATUS(pernix_compress_block_f32(d, 0, 64, in32, 1.0f, block), PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH);
    STATUS(pernix_compress_block_f32(d, 25, 64, in32, 1.0f, block), PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH);
    STATUS(pernix_decompress_block_f32(d, 25, 64, block, 1.0f, out32, true), PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH);
    STATUS(pernix_decompress_block_f64(d, 8, 32, block, 1.0, out64, true), PERNIX_STATUS_UNSUPPORTED_BLOCK_SIZE);
    STATUS(pernix_decompress_blocks_f64(d, 8, 64, block, 1.0, out64, 0, true), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_decompress_block_f64(d, 8, 64, block, 0.0, out64, true), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_decompress_block_f64(d, 8, 64, NULL, 1.0, out64, true), PERNIX_STATUS_INVALID_ARGUMENT);
    STATUS(pernix_compress_block_f32(d, 8, 64, (const char*)in32 + 1, 1.0f, block), PERNIX_STATUS_INVALID_ARGUMENT); /* misaligned */

    /* round trips, f32 3 blocks and f64 */
    STATUS(pernix_scale_f32(1.0f, 12, &s), PERNIX_STATUS_OK);
    STATUS(pernix_inverse_scale_f32(s, &inv), PERNIX_STATUS_OK);
    STATUS(pernix_compress_blocks_f32(d, 12, 64, in32, inv, block, 3), PERNIX_STATUS_OK);
    STATUS(pernix_decompress_blocks_f32(d, 12, 64, block, s, out32, 3, true), PERNIX_STATUS_OK);
    for (int i = 0; i < 42 * 3; ++i) CHECK(fabsf(out32[i] - in32[i]) <= 0.5f * s * 1.0001f);
    STATUS(pernix_compression_scale_f64(1.0, 20, &invd), PERNIX_STATUS_OK);
    STATUS(pernix_scale_f64(1.0, 20, &sd), PERNIX_STATUS_OK);
    STATUS(pernix_compress_block_f64(d, 20, 1024, in64, invd, block), PERNIX_STATUS_OK);
    STATUS(pernix_decompress_block_f64(d, 20, 1024, block, sd, out64, true), PERNIX_STATUS_OK);
    for (int i = 0; i < 409; ++i) CHECK(fabs(out64[i] - in64[i]) <= 0.5 * sd * 1.0001);
    /* unsigned interpretation of 0xFF bytes: 2^N - 1; signed: -1; N = 1 never sign-extends */
    memset(block, 0xFF, 64);
    STATUS(pernix_decompress_block_f32(d, 8, 64, block, 1.0f, out32, false), PERNIX_STATUS_OK);
    CHECK(out32[0] == 255.0f);
    STATUS(pernix_decompress_block_f32(d, 8, 64, block, 1.0f, out32, true), PERNIX_STATUS_OK);
    CHECK(out32[0] == -1.0f);
    STATUS(pernix_decompress_block_f32(d, 1, 64, block, 1.0f, out32, true), PERNIX_STATUS_OK);
    CHECK(out32[0] == 1.0f);
    pernix_dispatcher_destroy(d);

    if (failures == 0) printf("c validation: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
