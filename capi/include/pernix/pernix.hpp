// PERNIX C++ API (header-only, C++20), a thin wrapper over fzpack's PERNIX C ABI.
//
// Both generations of the API: pernix::Dispatcher (a move-only handle, backend resolved once at
// create) and the free functions over std::span of upstream PERNIX: compress_block,
// compress_blocks, decompress_block, decompress_blocks for float and double, each as
// (Backend, bit_width, block_size, ...), (bit_width, block_size, ...) = Backend::Auto and
// (bit_width, ...) = Backend::Auto with 64-byte blocks; sign_values defaults to true. The free
// functions resolve the backend per call through the library's cached per-backend dispatcher
// (no allocation, no lock). Span sizes are checked first (spec §5): bit width, block size,
// blocks == 0, then input/output span sizes.
#ifndef PERNIX_PERNIX_HPP
#define PERNIX_PERNIX_HPP

#include <pernix/pernix.h>

#include <cstddef>
#include <span>
#include <utility>

namespace pernix {

using Status = pernix_status;

enum class Backend : int {
    Auto = PERNIX_BACKEND_AUTO,
    Fallback = PERNIX_BACKEND_FALLBACK,
    FallbackScalar = PERNIX_BACKEND_FALLBACK_SCALAR,
    X86Avx2 = PERNIX_BACKEND_X86_AVX2,
    X86Bmi2 = PERNIX_BACKEND_X86_BMI2,
    X86Avx512Vbmi = PERNIX_BACKEND_X86_AVX512_VBMI,
    Arm64Neon = PERNIX_BACKEND_ARM64_NEON,
    Arm64Sve = PERNIX_BACKEND_ARM64_SVE,
    FallbackStdpar = PERNIX_BACKEND_FALLBACK_STDPAR,
    FallbackSimd = PERNIX_BACKEND_FALLBACK_SIMD,
};

constexpr u8 min_bit_width() noexcept { return 1; }
constexpr u8 max_bit_width() noexcept { return 24; }
constexpr bool is_valid_bit_width(u8 bit_width) noexcept { return bit_width >= 1 && bit_width <= 24; }
constexpr bool is_valid_block_size(u32 block_size) noexcept {
    return block_size == 64 || block_size == 128 || block_size == 256 || block_size == 512 || block_size == 1024;
}
constexpr u32 compressed_block_size() noexcept { return 64; }
/// Values per 64-byte block (0 for an invalid bit width).
constexpr usize elements_per_block(u8 bit_width) noexcept {
    return is_valid_bit_width(bit_width) ? usize{512} / bit_width : 0;
}
/// Values per block of `block_size` bytes (0 if either is invalid).
constexpr usize elements_per_block(u8 bit_width, u32 block_size) noexcept {
    return is_valid_bit_width(bit_width) && is_valid_block_size(block_size) ? usize{block_size} * 8 / bit_width : 0;
}

inline const char* status_string(Status status) noexcept { return pernix_status_string(status); }

inline Status scale_from_bmax(float bmax, u8 bit_width, float& scale) noexcept { return pernix_scale_f32(bmax, bit_width, &scale); }
inline Status scale_from_bmax(double bmax, u8 bit_width, double& scale) noexcept { return pernix_scale_f64(bmax, bit_width, &scale); }
inline Status decompression_scale_from_bmax(float bmax, u8 bit_width, float& scale) noexcept { return pernix_decompression_scale_f32(bmax, bit_width, &scale); }
inline Status decompression_scale_from_bmax(double bmax, u8 bit_width, double& scale) noexcept { return pernix_decompression_scale_f64(bmax, bit_width, &scale); }
inline Status inverse_scale(float scale, float& inverse) noexcept { return pernix_inverse_scale_f32(scale, &inverse); }
inline Status inverse_scale(double scale, double& inverse) noexcept { return pernix_inverse_scale_f64(scale, &inverse); }
inline Status compression_scale_from_bmax(float bmax, u8 bit_width, float& inverse) noexcept { return pernix_compression_scale_f32(bmax, bit_width, &inverse); }
inline Status compression_scale_from_bmax(double bmax, u8 bit_width, double& inverse) noexcept { return pernix_compression_scale_f64(bmax, bit_width, &inverse); }

namespace detail {
// The span wrappers' checks (spec §5): bit width, block size, blocks, then span sizes.
constexpr Status check_spans(u8 bit_width, u32 block_size, u32 blocks, usize values, usize bytes) noexcept {
    if (!is_valid_bit_width(bit_width)) return PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH;
    if (!is_valid_block_size(block_size)) return PERNIX_STATUS_UNSUPPORTED_BLOCK_SIZE;
    if (blocks == 0) return PERNIX_STATUS_INVALID_ARGUMENT;
    if (values / blocks < elements_per_block(bit_width, block_size) || bytes / blocks < block_size) return PERNIX_STATUS_INVALID_ARGUMENT;
    return PERNIX_STATUS_OK;
}
constexpr pernix_backend c_backend(Backend backend) noexcept { return static_cast<pernix_backend>(backend); }
}  // namespace detail

// Free functions: (Backend, bit_width, block_size, ...).
inline Status compress_blocks(Backend backend, u8 bit_width, u32 block_size, std::span<const float> input, float inverse_scale, std::span<u8> output, u32 blocks) noexcept {
    const Status s = detail::check_spans(bit_width, block_size, blocks, input.size(), output.size());
    return s != PERNIX_STATUS_OK ? s : pernix_compress_blocks_f32_by_backend(detail::c_backend(backend), bit_width, block_size, input.data(), inverse_scale, output.data(), blocks);
}
inline Status compress_blocks(Backend backend, u8 bit_width, u32 block_size, std::span<const double> input, double inverse_scale, std::span<u8> output, u32 blocks) noexcept {
    const Status s = detail::check_spans(bit_width, block_size, blocks, input.size(), output.size());
    return s != PERNIX_STATUS_OK ? s : pernix_compress_blocks_f64_by_backend(detail::c_backend(backend), bit_width, block_size, input.data(), inverse_scale, output.data(), blocks);
}
inline Status decompress_blocks(Backend backend, u8 bit_width, u32 block_size, std::span<const u8> input, float scale, std::span<float> output, u32 blocks, bool sign_values = true) noexcept {
    const Status s = detail::check_spans(bit_width, block_size, blocks, output.size(), input.size());
    return s != PERNIX_STATUS_OK ? s : pernix_decompress_blocks_f32_by_backend(detail::c_backend(backend), bit_width, block_size, input.data(), scale, output.data(), blocks, sign_values);
}
inline Status decompress_blocks(Backend backend, u8 bit_width, u32 block_size, std::span<const u8> input, double scale, std::span<double> output, u32 blocks, bool sign_values = true) noexcept {
    const Status s = detail::check_spans(bit_width, block_size, blocks, output.size(), input.size());
    return s != PERNIX_STATUS_OK ? s : pernix_decompress_blocks_f64_by_backend(detail::c_backend(backend), bit_width, block_size, input.data(), scale, output.data(), blocks, sign_values);
}
inline Status compress_block(Backend backend, u8 bit_width, u32 block_size, std::span<const float> input, float inverse_scale, std::span<u8> output) noexcept {
    return compress_blocks(backend, bit_width, block_size, input, inverse_scale, output, 1);
}
inline Status compress_block(Backend backend, u8 bit_width, u32 block_size, std::span<const double> input, double inverse_scale, std::span<u8> output) noexcept {
    return compress_blocks(backend, bit_width, block_size, input, inverse_scale, output, 1);
}
inline Status decompress_block(Backend backend, u8 bit_width, u32 block_size, std::span<const u8> input, float scale, std::span<float> output, bool sign_values = true) noexcept {
    return decompress_blocks(backend, bit_width, block_size, input, scale, output, 1, sign_values);
}
inline Status decompress_block(Backend backend, u8 bit_width, u32 block_size, std::span<const u8> input, double scale, std::span<double> output, bool sign_values = true) noexcept {
    return decompress_blocks(backend, bit_width, block_size, input, scale, output, 1, sign_values);
}

// (bit_width, block_size, ...): Backend::Auto.
inline Status compress_block(u8 bit_width, u32 block_size, std::span<const float> input, float inverse_scale, std::span<u8> output) noexcept {
    return compress_block(Backend::Auto, bit_width, block_size, input, inverse_scale, output);
}
inline Status compress_block(u8 bit_width, u32 block_size, std::span<const double> input, double inverse_scale, std::span<u8> output) noexcept {
    return compress_block(Backend::Auto, bit_width, block_size, input, inverse_scale, output);
}
inline Status compress_blocks(u8 bit_width, u32 block_size, std::span<const float> input, float inverse_scale, std::span<u8> output, u32 blocks) noexcept {
    return compress_blocks(Backend::Auto, bit_width, block_size, input, inverse_scale, output, blocks);
}
inline Status compress_blocks(u8 bit_width, u32 block_size, std::span<const double> input, double inverse_scale, std::span<u8> output, u32 blocks) noexcept {
    return compress_blocks(Backend::Auto, bit_width, block_size, input, inverse_scale, output, blocks);
}
inline Status decompress_block(u8 bit_width, u32 block_size, std::span<const u8> input, float scale, std::span<float> output, bool sign_values = true) noexcept {
    return decompress_block(Backend::Auto, bit_width, block_size, input, scale, output, sign_values);
}
inline Status decompress_block(u8 bit_width, u32 block_size, std::span<const u8> input, double scale, std::span<double> output, bool sign_values = true) noexcept {
    return decompress_block(Backend::Auto, bit_width, block_size, input, scale, output, sign_values);
}
inline Status decompress_blocks(u8 bit_width, u32 block_size, std::span<const u8> input, float scale, std::span<float> output, u32 blocks, bool sign_values = true) noexcept {
    return decompress_blocks(Backend::Auto, bit_width, block_size, input, scale, output, blocks, sign_values);
}
inline Status decompress_blocks(u8 bit_width, u32 block_size, std::span<const u8> input, double scale, std::span<double> output, u32 blocks, bool sign_values = true) noexcept {
    return decompress_blocks(Backend::Auto, bit_width, block_size, input, scale, output, blocks, sign_values);
}

// (bit_width, ...): Backend::Auto with 64-byte blocks.
inline Status compress_block(u8 bit_width, std::span<const float> input, float inverse_scale, std::span<u8> output) noexcept {
    return compress_block(Backend::Auto, bit_width, 64, input, inverse_scale, output);
}
inline Status compress_block(u8 bit_width, std::span<const double> input, double inverse_scale, std::span<u8> output) noexcept {
    return compress_block(Backend::Auto, bit_width, 64, input, inverse_scale, output);
}
inline Status compress_blocks(u8 bit_width, std::span<const float> input, float inverse_scale, std::span<u8> output, u32 blocks) noexcept {
    return compress_blocks(Backend::Auto, bit_width, 64, input, inverse_scale, output, blocks);
}
inline Status compress_blocks(u8 bit_width, std::span<const double> input, double inverse_scale, std::span<u8> output, u32 blocks) noexcept {
    return compress_blocks(Backend::Auto, bit_width, 64, input, inverse_scale, output, blocks);
}
inline Status decompress_block(u8 bit_width, std::span<const u8> input, float scale, std::span<float> output, bool sign_values = true) noexcept {
    return decompress_block(Backend::Auto, bit_width, 64, input, scale, output, sign_values);
}
inline Status decompress_block(u8 bit_width, std::span<const u8> input, double scale, std::span<double> output, bool sign_values = true) noexcept {
    return decompress_block(Backend::Auto, bit_width, 64, input, scale, output, sign_values);
}
inline Status decompress_blocks(u8 bit_width, std::span<const u8> input, float scale, std::span<float> output, u32 blocks, bool sign_values = true) noexcept {
    return decompress_blocks(Backend::Auto, bit_width, 64, input, scale, output, blocks, sign_values);
}
inline Status decompress_blocks(u8 bit_width, std::span<const u8> input, double scale, std::span<double> output, u32 blocks, bool sign_values = true) noexcept {
    return decompress_blocks(Backend::Auto, bit_width, 64, input, scale, output, blocks, sign_values);
}

/// A move-only owner of a `pernix_dispatcher` handle; the backend is resolved once in `create`.
class Dispatcher {
public:
    Dispatcher() noexcept = default;
    Dispatcher(const Dispatcher&) = delete;
    Dispatcher& operator=(const Dispatcher&) = delete;
    Dispatcher(Dispatcher&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
    Dispatcher& operator=(Dispatcher&& other) noexcept {
        if (this != &other) {
            pernix_dispatcher_destroy(handle_);
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }
    ~Dispatcher() { pernix_dispatcher_destroy(handle_); }

    /// Creates a dispatcher for `backend` into `out` (replacing what `out` held).
    static Status create(Backend backend, Dispatcher& out) noexcept {
        pernix_dispatcher* handle = nullptr;
        const Status status = pernix_dispatcher_create(static_cast<pernix_backend>(backend), &handle);
        if (status == PERNIX_STATUS_OK) {
            out = Dispatcher(handle);
        }
        return status;
    }

    bool valid() const noexcept { return handle_ != nullptr; }
    const pernix_dispatcher* handle() const noexcept { return handle_; }

    Status compress_block(u8 bit_width, u32 block_size, std::span<const float> input, float inverse_scale, std::span<u8> output) const noexcept {
        return compress_blocks(bit_width, block_size, input, inverse_scale, output, 1);
    }
    Status compress_block(u8 bit_width, u32 block_size, std::span<const double> input, double inverse_scale, std::span<u8> output) const noexcept {
        return compress_blocks(bit_width, block_size, input, inverse_scale, output, 1);
    }
    Status compress_blocks(u8 bit_width, u32 block_size, std::span<const float> input, float inverse_scale, std::span<u8> output, u32 blocks) const noexcept {
        const Status s = check(bit_width, block_size, blocks, input.size(), output.size());
        return s != PERNIX_STATUS_OK ? s : pernix_compress_blocks_f32(handle_, bit_width, block_size, input.data(), inverse_scale, output.data(), blocks);
    }
    Status compress_blocks(u8 bit_width, u32 block_size, std::span<const double> input, double inverse_scale, std::span<u8> output, u32 blocks) const noexcept {
        const Status s = check(bit_width, block_size, blocks, input.size(), output.size());
        return s != PERNIX_STATUS_OK ? s : pernix_compress_blocks_f64(handle_, bit_width, block_size, input.data(), inverse_scale, output.data(), blocks);
    }
    Status decompress_block(u8 bit_width, u32 block_size, std::span<const u8> input, float scale, std::span<float> output, bool sign_values = true) const noexcept {
        return decompress_blocks(bit_width, block_size, input, scale, output, 1, sign_values);
    }
    Status decompress_block(u8 bit_width, u32 block_size, std::span<const u8> input, double scale, std::span<double> output, bool sign_values = true) const noexcept {
        return decompress_blocks(bit_width, block_size, input, scale, output, 1, sign_values);
    }
    Status decompress_blocks(u8 bit_width, u32 block_size, std::span<const u8> input, float scale, std::span<float> output, u32 blocks, bool sign_values = true) const noexcept {
        const Status s = check(bit_width, block_size, blocks, output.size(), input.size());
        return s != PERNIX_STATUS_OK ? s : pernix_decompress_blocks_f32(handle_, bit_width, block_size, input.data(), scale, output.data(), blocks, sign_values);
    }
    Status decompress_blocks(u8 bit_width, u32 block_size, std::span<const u8> input, double scale, std::span<double> output, u32 blocks, bool sign_values = true) const noexcept {
        const Status s = check(bit_width, block_size, blocks, output.size(), input.size());
        return s != PERNIX_STATUS_OK ? s : pernix_decompress_blocks_f64(handle_, bit_width, block_size, input.data(), scale, output.data(), blocks, sign_values);
    }

private:
    explicit Dispatcher(pernix_dispatcher* handle) noexcept : handle_(handle) {}

    static Status check(u8 bit_width, u32 block_size, u32 blocks, usize values, usize bytes) noexcept {
        return detail::check_spans(bit_width, block_size, blocks, values, bytes);
    }

    pernix_dispatcher* handle_ = nullptr;
};

}  // namespace pernix

#endif  // PERNIX_PERNIX_HPP
