/* The backend-enum generation from C11 source with our header (compiled with -Werror): every
 * backend value 0..8 on all eight block functions agrees with a dispatcher created for that
 * backend (same status; same bytes and values when it is OK), bad values give
 * UNSUPPORTED_BACKEND, and the dispatcher form is unchanged in the same translation unit.
 * Exit 0 = pass. */
#include <pernix/pernix.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                               \
        }                                                                             \
    } while (0)

enum { BS = 128, N = 11, BLOCKS = 3, ELEMS = BS * 8 / N };

static float in32[ELEMS * BLOCKS], outa32[ELEMS * BLOCKS], outb32[ELEMS * BLOCKS];
static double in64[ELEMS * BLOCKS], outa64[ELEMS * BLOCKS], outb64[ELEMS * BLOCKS];
static u8 blka[BS * BLOCKS], blkb[BS * BLOCKS];

static void compare_backend(pernix_backend be) {
    pernix_dispatcher* d = NULL;
    const pernix_status created = pernix_dispatcher_create(be, &d);
    pernix_status sa, sb;
    const float s32 = 2.0f / 1023.0f;
    const double s64 = 2.0 / 1023.0;
    /* compress f32, one and three blocks */
    sa = pernix_compress_block_f32(be, N, BS, in32, 1.0f / s32, blka);
    if (created != PERNIX_STATUS_OK) {
        CHECK(sa == created);
        CHECK(pernix_compress_blocks_f32(be, N, BS, in32, 1.0f / s32, blka, BLOCKS) == created);
        CHECK(pernix_decompress_block_f32(be, N, BS, blka, s32, outa32, true) == created);
        CHECK(pernix_decompress_blocks_f32(be, N, BS, blka, s32, outa32, BLOCKS, false) == created);
        CHECK(pernix_compress_block_f64(be, N, BS, in64, 1.0 / s64, blka) == created);
        CHECK(pernix_compress_blocks_f64(be, N, BS, in64, 1.0 / s64, blka, BLOCKS) == created);
        CHECK(pernix_decompress_block_f64(be, N, BS, blka, s64, outa64, true) == created);
        CHECK(pernix_decompress_blocks_f64(be, N, BS, blka, s64, outa64, BLOCKS, true) == created);
        printf("backend %d: %s on both forms\n", (int)be, pernix_status_string(created));
        return;
    }
    CHECK(sa == PERNIX_STATUS_OK);
    sa = pernix_compress_blocks_f32(be, N, BS, in32, 1.0f / s32, blka, BLOCKS);
    sb = pernix_compress_blocks_f32(d, N, BS, in32, 1.0f / s32, blkb, BLOCKS);
    CHECK(sa == PERNIX_STATUS_OK && sb == PERNIX_STATUS_OK && memcmp(blka, blkb, sizeof blka) == 0);
    sa = pernix_compress_block_f32(be, N, BS, in32, 1.0f / s32, blka);
    sb = pernix_compress_block_f32(d, N, BS, in32, 1.0f / s32, blkb);
    CHECK(sa == PERNIX_STATUS_OK && sb == PERNIX_STATUS_OK && memcmp(blka, blkb, BS) == 0);
    sa = pernix_decompress_blocks_f32(be, N, BS, blka, s32, outa32, BLOCKS, true);
    sb = pernix_decompress_blocks_f32(d, N, BS, blka, s32, outb32, BLOCKS, true);
    CHECK(sa == PERNIX_STATUS_OK && sb == PERNIX_STATUS_OK && memcmp(outa32, outb32, sizeof outa32) == 0);
    for (int i = 0; i < ELEMS; ++i) CHECK(fabsf(outa32[i] - in32[i]) <= 0.5f * s32 * 1.001f);
    sa = pernix_decompress_block_f32(be, N, BS, blka, s32, outa32, false);
    sb = pernix_decompress_block_f32(d, N, BS, blka, s32, outb32, false);
    CHECK(sa == PERNIX_STATUS_OK && sb == PERNIX_STATUS_OK && memcmp(outa32, outb32, ELEMS * sizeof(float)) == 0);
    sa = pernix_compress_blocks_f64(be, N, BS, in64, 1.0 / s64, blka, BLOCKS);
    sb = pernix_compress_blocks_f64(d, N, BS, in64, 1.0 / s64, blkb, BLOCKS);
    CHECK(sa == PERNIX_STATUS_OK && sb == PERNIX_STATUS_OK && memcmp(blka, blkb, sizeof blka) == 0);
    sa = pernix_compress_block_f64(be, N, BS, in64, 1.0 / s64, blka);
    sb = pernix_compress_block_f64(d, N, BS, in64, 1.0 / s64, blkb);
    CHECK(sa == PERNIX_STATUS_OK && sb == PERNIX_STATUS_OK && memcmp(blka, blkb, BS) == 0);
    sa = pernix_decompress_blocks_f64(be, N, BS, blka, s64, outa64, BLOCKS, true);
    sb = pernix_decompress_blocks_f64(d, N, BS, blka, s64, outb64, BLOCKS, true);
    CHECK(sa == PERNIX_STATUS_OK && sb == PERNIX_STATUS_OK && memcmp(outa64, outb64, sizeof outa64) == 0);
    for (int i = 0; i < ELEMS; ++i) CHECK(fabs(outa64[i] - in64[i]) <= 0.5 * s64 * 1.001);
    sa = pernix_decompress_block_f64(be, N, BS, blka, s64, outa64, true);
    sb = pernix_decompress_block_f64(d, N, BS, blka, s64, outb64, true);
    CHECK(sa == PERNIX_STATUS_OK && sb == PERNIX_STATUS_OK && memcmp(outa64, outb64, ELEMS * sizeof(double)) == 0);
    /* validation order of the enum form: buffers, blocks, block size, scale, backend, bit width */
    CHECK(pernix_compress_block_f32(be, 0, BS, in32, 1.0f, blka) == PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH);
    CHECK(pernix_compress_block_f32(be, N, 96, in32, 1.0f, blka) == PERNIX_STATUS_UNSUPPORTED_BLOCK_SIZE);
    CHECK(pernix_compress_block_f32(be, N, BS, NULL, 1.0f, blka) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix_decompress_block_f64(be, N, BS, blka, 0.0, NULL, true) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix_decompress_block_f64(be, N, BS, blka, -1.0, outa64, true) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix_compress_blocks_f32(be, N, BS, in32, 1.0f, blka, 0) == PERNIX_STATUS_INVALID_ARGUMENT);
    printf("backend %d: OK, enum form = dispatcher form on all eight functions (resolved to %d)\n", (int)be,
           pernix_dispatcher_backend(d));
    pernix_dispatcher_destroy(d);
}

int main(void) {
    for (int i = 0; i < ELEMS * BLOCKS; ++i) {
        in32[i] = (float)((i * 37) % 201 - 100) / 100.0f;
        in64[i] = (double)((i * 53) % 199 - 99) / 99.0;
    }
    for (int b = 0; b <= 8; ++b) compare_backend((pernix_backend)b);
    CHECK(pernix_compress_block_f32(PERNIX_BACKEND_FALLBACK_SCALAR, N, BS, in32, 100.0f, blka) == PERNIX_STATUS_OK);

    /* bad backend values, as enum constants, casts and plain ints */
    const int bad[] = {9, 10, 99, 255, 4095, 4096, 100000, -1, -3};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const pernix_backend be = (pernix_backend)bad[i];
        CHECK(pernix_compress_block_f32(be, N, BS, in32, 1.0f, blka) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
        CHECK(pernix_compress_blocks_f64(be, N, BS, in64, 1.0, blka, 2) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
        CHECK(pernix_decompress_block_f32(be, N, BS, blka, 1.0f, outa32, true) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
        CHECK(pernix_decompress_blocks_f64(be, N, BS, blka, 1.0, outa64, 2, false) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
        CHECK(pernix_decompress_blocks_f32(bad[i], N, BS, blka, 1.0f, outa32, 2, true) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
        /* an invalid bit width is checked after the backend, as upstream */
        CHECK(pernix_compress_block_f64(be, 0, BS, in64, 1.0, blka) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
    }
    /* a plain int and the literal 0 are backends too (0 = AUTO) */
    int two = 1;
    CHECK(pernix_compress_block_f32(two, N, BS, in32, 1.0f, blka) == PERNIX_STATUS_OK);
    CHECK(pernix_compress_block_f32(0, N, BS, in32, 1.0f, blka) == PERNIX_STATUS_OK);
#if defined(__x86_64__)
    CHECK(pernix_compress_block_f32(PERNIX_BACKEND_ARM64_NEON, N, BS, in32, 1.0f, blka) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
    CHECK(pernix_compress_block_f32(PERNIX_BACKEND_FALLBACK_SIMD, N, BS, in32, 1.0f, blka) == PERNIX_STATUS_UNSUPPORTED_IMPLEMENTATION);
#endif

    /* the plain symbols are still the dispatcher-form functions (address taken, called through) */
    pernix_status (*fp)(const pernix_dispatcher*, u8, u32, const void*, float, void*) = pernix_compress_block_f32;
    pernix_dispatcher* d = NULL;
    CHECK(pernix_dispatcher_create(PERNIX_BACKEND_FALLBACK, &d) == PERNIX_STATUS_OK);
    CHECK(fp(d, N, BS, in32, 1.0f, blka) == PERNIX_STATUS_OK);
    CHECK(fp((const pernix_dispatcher*)(uintptr_t)PERNIX_BACKEND_FALLBACK, N, BS, in32, 1.0f, blkb) == PERNIX_STATUS_OK);
    CHECK(memcmp(blka, blkb, BS) == 0);
    pernix_dispatcher_destroy(d);

    if (failures == 0) printf("c backend enum: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
