/*
 * fzpack SZp C API (in libpernix): error-bounded compression into the fzpack SZp archive
 * (docs/szp-archive.md). Every decoded value meets the bound (ABS: |x - x'| <= eb; NOA:
 * <= eb * (max - min)), or compression fails with a status naming the first bad element.
 * Archives are written in the block-head layout (the fzpack default, as the CLI, Python and
 * HDF5 write); the decoders read both block layouts.
 */
#ifndef FZPACK_SZP_H
#define FZPACK_SZP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    FZPACK_SZP_OK = 0,
    FZPACK_SZP_INVALID_ARGUMENT = -1,
    FZPACK_SZP_INVALID_BLOCK_SIZE = -2,
    FZPACK_SZP_INVALID_ERROR_BOUND = -3,
    FZPACK_SZP_NON_FINITE = -4,
    FZPACK_SZP_LEVEL_OVERFLOW = -5,
    FZPACK_SZP_ZERO_RANGE = -6,
    FZPACK_SZP_BOUND_BELOW_PRECISION = -7,
    FZPACK_SZP_OUTPUT_TOO_SMALL = -8,
    FZPACK_SZP_CORRUPT = -9,
    FZPACK_SZP_DTYPE_MISMATCH = -10,
    FZPACK_SZP_BOUND_VIOLATED = -11,
    FZPACK_SZP_RANGE_OVERFLOW = -12
};

enum { FZPACK_SZP_ABS = 0, FZPACK_SZP_NOA = 2 };
enum { FZPACK_SZP_F32 = 8, FZPACK_SZP_F64 = 9 };

size_t fzpack_szp_max_compressed_len(size_t n, unsigned int block_size, int dtype);
const char* fzpack_szp_status_string(int status);
int fzpack_szp_compress_f32(const float* input, size_t n, int mode, double error_bound, unsigned int block_size, void* output, size_t output_capacity, size_t* output_len, size_t* bad_index);
int fzpack_szp_compress_f64(const double* input, size_t n, int mode, double error_bound, unsigned int block_size, void* output, size_t output_capacity, size_t* output_len, size_t* bad_index);
int fzpack_szp_decompress_f32(const void* archive, size_t archive_len, float* output, size_t output_capacity, size_t* n_out);
int fzpack_szp_decompress_f64(const void* archive, size_t archive_len, double* output, size_t output_capacity, size_t* n_out);

#ifdef __cplusplus
}
#endif

#endif /* FZPACK_SZP_H */
