/* SZp through the C API: round trips within the bound, and each error status. Exit 0 = pass. */
#include <fzpack/szp.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); ++failures; } } while (0)

int main(void) {
    enum { N = 10000 };
    static float x[N], y[N];
    static double xd[N], yd[N];
    size_t cap = fzpack_szp_max_compressed_len(N, 128, FZPACK_SZP_F32);
    unsigned char* a = malloc(cap);
    size_t len = 0, n = 0, bad = 0;
    double lo = 1e30, hi = -1e30;
    for (int i = 0; i < N; ++i) {
        x[i] = 280.0f + 15.0f * sinf(i * 0.003f) + 0.1f * cosf(i * 1.7f);
        xd[i] = x[i];
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    CHECK(cap > 0 && fzpack_szp_max_compressed_len(N, 0, FZPACK_SZP_F32) == 0);
    CHECK(fzpack_szp_compress_f32(x, N, FZPACK_SZP_NOA, 1e-4, 128, a, cap, &len, &bad) == FZPACK_SZP_OK);
    CHECK(len < N * sizeof(float));
    CHECK(fzpack_szp_decompress_f32(a, len, y, N, &n) == FZPACK_SZP_OK && n == N);
    for (int i = 0; i < N; ++i) CHECK(fabs((double)x[i] - (double)y[i]) <= 1e-4 * (hi - lo));
    CHECK(fzpack_szp_decompress_f64(a, len, yd, N, &n) == FZPACK_SZP_DTYPE_MISMATCH);
    CHECK(fzpack_szp_decompress_f32(a, len, y, N - 1, &n) == FZPACK_SZP_OUTPUT_TOO_SMALL && n == N);
    CHECK(fzpack_szp_decompress_f32(a, len - 1, y, N, &n) == FZPACK_SZP_CORRUPT);
    CHECK(fzpack_szp_compress_f64(xd, N, FZPACK_SZP_ABS, 1e-9, 64, a, cap, &len, &bad) == FZPACK_SZP_OK);
    CHECK(fzpack_szp_decompress_f64(a, len, yd, N, &n) == FZPACK_SZP_OK);
    for (int i = 0; i < N; ++i) CHECK(fabs(xd[i] - yd[i]) <= 1e-9);
    /* errors */
    /* missing values (NaN, inf) are stored exactly, finite values within the bound */
    x[123] = NAN;
    x[124] = -INFINITY;
    CHECK(fzpack_szp_compress_f32(x, N, FZPACK_SZP_ABS, 1e-3, 128, a, cap, &len, &bad) == FZPACK_SZP_OK);
    CHECK(fzpack_szp_decompress_f32(a, len, y, N, &n) == FZPACK_SZP_OK && n == N);
    CHECK(isnan(y[123]) && isinf(y[124]) && y[124] < 0);
    for (int i = 0; i < N; ++i) CHECK(i == 123 || i == 124 || fabs((double)x[i] - (double)y[i]) <= 1e-3);
    x[123] = 1.0f;
    x[124] = 1.0f;
    CHECK(fzpack_szp_compress_f32(x, N, FZPACK_SZP_ABS, 0.0, 128, a, cap, &len, &bad) == FZPACK_SZP_INVALID_ERROR_BOUND);
    CHECK(fzpack_szp_compress_f32(x, N, FZPACK_SZP_ABS, 1e-3, 5000, a, cap, &len, &bad) == FZPACK_SZP_INVALID_BLOCK_SIZE);
    CHECK(fzpack_szp_compress_f32(x, N, 1, 1e-3, 128, a, cap, &len, &bad) == FZPACK_SZP_INVALID_ARGUMENT);
    CHECK(fzpack_szp_compress_f32(x, N, FZPACK_SZP_ABS, 1e-3, 128, a, 100, &len, &bad) == FZPACK_SZP_OUTPUT_TOO_SMALL && len > 100 && len <= cap);
    CHECK(fzpack_szp_compress_f32(NULL, N, FZPACK_SZP_ABS, 1e-3, 128, a, cap, &len, &bad) == FZPACK_SZP_INVALID_ARGUMENT);
    float flat[16];
    for (int i = 0; i < 16; ++i) flat[i] = 2.5f;
    CHECK(fzpack_szp_compress_f32(flat, 16, FZPACK_SZP_NOA, 1e-3, 128, a, cap, &len, &bad) == FZPACK_SZP_ZERO_RANGE);
    CHECK(fzpack_szp_compress_f32(x, N, FZPACK_SZP_ABS, 1e-12, 128, a, cap, &len, &bad) == FZPACK_SZP_BOUND_BELOW_PRECISION);
    /* data at the type's maximum whose reconstruction could round to infinity */
    for (int i = 0; i < N; ++i) xd[i] = (double)x[i];
    xd[5] = 1.7976931348623157e308;
    CHECK(fzpack_szp_compress_f64(xd, N, FZPACK_SZP_ABS, 1e307, 128, a, cap, &len, &bad) == FZPACK_SZP_RANGE_OVERFLOW);
    CHECK(strcmp(fzpack_szp_status_string(FZPACK_SZP_RANGE_OVERFLOW), "FZPACK_SZP_RANGE_OVERFLOW") == 0);
    memset(a, 0, 64);
    CHECK(fzpack_szp_decompress_f32(a, 64, y, N, &n) == FZPACK_SZP_CORRUPT);
    CHECK(strcmp(fzpack_szp_status_string(FZPACK_SZP_ZERO_RANGE), "FZPACK_SZP_ZERO_RANGE") == 0);
    free(a);
    if (failures == 0) printf("c szp: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
