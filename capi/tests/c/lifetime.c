/* Dispatcher handle lifetime: a destroyed handle is reported (INVALID_ARGUMENT), destroying it
 * again is a no-op, and a later create may reuse it. Exit 0 = pass. Before the canary, the first
 * use after destroy read freed memory and the second destroy aborted in glibc's free(). */
#include <pernix/pernix.h>

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

int main(void) {
    float in32[64 * 8], out32[64 * 8];
    double in64[64 * 8], out64[64 * 8];
    u8 block[64 * 8];
    pernix_dispatcher* d = NULL;
    pernix_dispatcher* many[64];
    for (int i = 0; i < 64 * 8; ++i) {
        in32[i] = (float)(i % 13) - 6.0f;
        in64[i] = (double)(i % 11) - 5.0;
    }
    memset(block, 0, sizeof block);

    CHECK(pernix_dispatcher_create(PERNIX_BACKEND_FALLBACK, &d) == PERNIX_STATUS_OK);
    CHECK(pernix_compress_block_f32(d, 8, 64, in32, 1.0f, block) == PERNIX_STATUS_OK);
    pernix_dispatcher_destroy(d);

    /* every entry point reports the destroyed handle */
    CHECK(pernix_compress_block_f32(d, 8, 64, in32, 1.0f, block) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix_compress_blocks_f32(d, 8, 64, in32, 1.0f, block, 2) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix_decompress_block_f32(d, 8, 64, block, 1.0f, out32, true) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix_decompress_blocks_f32(d, 8, 64, block, 1.0f, out32, 2, true) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix_compress_block_f64(d, 8, 64, in64, 1.0, block) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix_compress_blocks_f64(d, 8, 64, in64, 1.0, block, 2) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix_decompress_block_f64(d, 8, 64, block, 1.0, out64, true) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix_decompress_blocks_f64(d, 8, 64, block, 1.0, out64, 2, true) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix_dispatcher_backend(d) == -1);
    /* destroying twice (and thrice) is a no-op, not a double free */
    pernix_dispatcher_destroy(d);
    pernix_dispatcher_destroy(d);

    /* a later create reuses the parked handle: it is live again and works */
    pernix_dispatcher* e = NULL;
    CHECK(pernix_dispatcher_create(PERNIX_BACKEND_FALLBACK, &e) == PERNIX_STATUS_OK);
    CHECK(e == d);
    CHECK(pernix_compress_block_f32(e, 8, 64, in32, 1.0f, block) == PERNIX_STATUS_OK);
    CHECK(pernix_dispatcher_backend(e) == PERNIX_BACKEND_FALLBACK);
    pernix_dispatcher_destroy(e);

    /* many handles: each destroyed one is reported, the live ones keep working */
    for (int i = 0; i < 64; ++i) {
        CHECK(pernix_dispatcher_create(PERNIX_BACKEND_AUTO, &many[i]) == PERNIX_STATUS_OK);
    }
    for (int i = 0; i < 64; i += 2) pernix_dispatcher_destroy(many[i]);
    for (int i = 0; i < 64; ++i) {
        const pernix_status want = (i % 2 == 0) ? PERNIX_STATUS_INVALID_ARGUMENT : PERNIX_STATUS_OK;
        CHECK(pernix_compress_block_f32(many[i], 12, 64, in32, 1.0f, block) == want);
        CHECK(pernix_decompress_block_f64(many[i], 12, 64, block, 1.0, out64, true) == want);
    }
    for (int i = 0; i < 64; ++i) pernix_dispatcher_destroy(many[i]); /* half of them twice */

    if (failures == 0) printf("c lifetime: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
