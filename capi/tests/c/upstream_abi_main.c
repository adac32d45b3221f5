/* Drives upstream_abi.c (compiled separately, against upstream's prototypes) and compares each
 * backend with a dispatcher made through our header. Exit 0 = pass. */
#include <pernix/pernix.h>

#include <stdio.h>

int upstream_round_trip(int backend_value);
int upstream_status(int backend_value, int bit_width, int block_size);

static int failures = 0;
#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                               \
        }                                                                             \
    } while (0)

int main(void) {
    int served = 0;
    for (int b = 0; b <= 8; ++b) {
        pernix_dispatcher* d = NULL;
        const pernix_status created = pernix_dispatcher_create((pernix_backend)b, &d);
        const int got = upstream_round_trip(b);
        printf("backend %d via upstream prototypes: %d (dispatcher create: %s)\n", b, got, pernix_status_string(created));
        CHECK(got == (int)created); /* 0 = round trip within half a step, else the same status */
        served += got == 0;
        pernix_dispatcher_destroy(d);
    }
    CHECK(served >= 2); /* AUTO and FALLBACK at least */
    CHECK(upstream_status(255, 8, 64) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
    CHECK(upstream_status(9, 8, 64) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
    CHECK(upstream_status(-1, 8, 64) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
    CHECK(upstream_status(PERNIX_BACKEND_FALLBACK, 0, 64) == PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH);
    CHECK(upstream_status(PERNIX_BACKEND_FALLBACK, 8, 96) == PERNIX_STATUS_UNSUPPORTED_BLOCK_SIZE);
    CHECK(upstream_status(PERNIX_BACKEND_AUTO, 8, 64) == PERNIX_STATUS_OK);
    CHECK(upstream_status(PERNIX_BACKEND_FALLBACK_SIMD, 8, 64) == PERNIX_STATUS_UNSUPPORTED_IMPLEMENTATION);
#if defined(__x86_64__)
    CHECK(upstream_status(PERNIX_BACKEND_ARM64_SVE, 8, 64) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
#endif
    if (failures == 0) printf("c upstream abi: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
