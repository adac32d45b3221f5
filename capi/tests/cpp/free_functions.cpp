// The pernix:: free functions over std::span (upstream's C++ API) beside pernix::Dispatcher:
// every backend value through the three overload families, float and double, agrees with a
// Dispatcher for the same backend; span sizes are checked; the compat.h short types exist.
// Compiled with -std=c++20 -Wall -Wextra -Werror. Exit 0 = pass.
#include <pernix/pernix.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

static_assert(std::is_same_v<f32, float> && std::is_same_v<f64, double> && std::is_same_v<i32, std::int32_t>);
static_assert(std::is_same_v<decltype(pernix::compress_block(pernix::Backend::Auto, u8{8}, u32{64}, std::span<const float>{},
                                                             1.0f, std::span<u8>{})),
                             pernix::Status>);

static int failures = 0;
#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                                    \
        }                                                                                  \
    } while (0)

template <typename T>
static void backend_agrees(pernix::Backend backend) {
    constexpr u8 n = 13;
    constexpr u32 bs = 256;
    constexpr u32 blocks = 2;
    constexpr usize e = pernix::elements_per_block(n, bs);
    std::vector<T> in(e * blocks), a(e * blocks), b(e * blocks);
    for (usize i = 0; i < in.size(); ++i) in[i] = static_cast<T>(std::sin(static_cast<double>(i) * 0.37));
    std::vector<u8> ca(bs * blocks, 0xAA), cb(bs * blocks, 0x55);
    T scale{};
    T inverse{};
    CHECK(pernix::scale_from_bmax(T(1), n, scale) == PERNIX_STATUS_OK);
    CHECK(pernix::inverse_scale(scale, inverse) == PERNIX_STATUS_OK);

    pernix::Dispatcher d;
    const pernix::Status created = pernix::Dispatcher::create(backend, d);
    const pernix::Status got = pernix::compress_blocks(backend, n, bs, std::span<const T>(in), inverse, std::span<u8>(ca), blocks);
    CHECK(got == created);
    if (created != PERNIX_STATUS_OK) {
        CHECK(pernix::decompress_block(backend, n, bs, std::span<const u8>(ca), scale, std::span<T>(a)) == created);
        std::printf("backend %d (%s): %s\n", static_cast<int>(backend), sizeof(T) == 4 ? "float" : "double",
                    pernix::status_string(created));
        return;
    }
    CHECK(d.compress_blocks(n, bs, std::span<const T>(in), inverse, std::span<u8>(cb), blocks) == PERNIX_STATUS_OK);
    CHECK(ca == cb);
    CHECK(pernix::compress_block(backend, n, bs, std::span<const T>(in), inverse, std::span<u8>(ca)) == PERNIX_STATUS_OK);
    CHECK(std::memcmp(ca.data(), cb.data(), bs) == 0);
    CHECK(pernix::decompress_blocks(backend, n, bs, std::span<const u8>(cb), scale, std::span<T>(a), blocks) == PERNIX_STATUS_OK);
    CHECK(d.decompress_blocks(n, bs, std::span<const u8>(cb), scale, std::span<T>(b), blocks) == PERNIX_STATUS_OK);
    CHECK(a == b);
    for (usize i = 0; i < in.size(); ++i) CHECK(std::abs(a[i] - in[i]) <= scale * T(0.5001));
    CHECK(pernix::decompress_block(backend, n, bs, std::span<const u8>(cb), scale, std::span<T>(a), false) == PERNIX_STATUS_OK);
    CHECK(d.decompress_block(n, bs, std::span<const u8>(cb), scale, std::span<T>(b), false) == PERNIX_STATUS_OK);
    CHECK(a == b);
    std::printf("backend %d (%s): OK, free functions = Dispatcher\n", static_cast<int>(backend), sizeof(T) == 4 ? "float" : "double");
}

template <typename T>
static void auto_overloads() {
    // (N, BS, ...) and (N, ...) are Backend::Auto (and BS = 64): same bytes as an Auto dispatcher.
    constexpr u8 n = 9;
    std::array<T, 512 / 9 * 3> in{};
    for (usize i = 0; i < in.size(); ++i) in[i] = static_cast<T>(static_cast<double>(i % 19) - 9.0);
    std::array<u8, 64 * 3> x{}, y{}, z{};
    std::array<T, in.size()> out{}, out2{};
    pernix::Dispatcher d;
    CHECK(pernix::Dispatcher::create(pernix::Backend::Auto, d) == PERNIX_STATUS_OK);
    CHECK(d.compress_blocks(n, 64, in, T(16), z, 3) == PERNIX_STATUS_OK);
    CHECK(pernix::compress_blocks(n, 64, in, T(16), x, 3) == PERNIX_STATUS_OK);
    CHECK(pernix::compress_blocks(n, in, T(16), y, 3) == PERNIX_STATUS_OK);
    CHECK(x == z && y == z);
    CHECK(pernix::compress_block(n, 64, in, T(16), x) == PERNIX_STATUS_OK);
    CHECK(pernix::compress_block(n, in, T(16), y) == PERNIX_STATUS_OK);
    CHECK(std::memcmp(x.data(), z.data(), 64) == 0 && std::memcmp(y.data(), z.data(), 64) == 0);
    CHECK(pernix::decompress_blocks(n, 64, z, T(1) / 16, out, 3) == PERNIX_STATUS_OK);
    CHECK(pernix::decompress_blocks(n, z, T(1) / 16, out2, 3, true) == PERNIX_STATUS_OK);
    CHECK(out == out2);
    for (usize i = 0; i < in.size(); ++i) CHECK(out[i] == in[i]);
    CHECK(pernix::decompress_block(n, 64, z, T(1) / 16, out) == PERNIX_STATUS_OK);
    CHECK(pernix::decompress_block(n, z, T(1) / 16, out2, false) == PERNIX_STATUS_OK);
    // span checks: bit width, block size, blocks, then sizes (before the backend)
    CHECK(pernix::compress_blocks(n, 64, std::span<const T>(in).first(10), T(16), x, 3) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix::decompress_blocks(n, 64, std::span<const u8>(z).first(100), T(1), out, 3) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix::compress_block(0, 64, in, T(16), x) == PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH);
    CHECK(pernix::compress_block(n, 96, in, T(16), x) == PERNIX_STATUS_UNSUPPORTED_BLOCK_SIZE);
    CHECK(pernix::compress_blocks(n, 64, in, T(16), x, 0) == PERNIX_STATUS_INVALID_ARGUMENT);
    CHECK(pernix::compress_block(static_cast<pernix::Backend>(255), n, 64, in, T(16), x) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
    CHECK(pernix::decompress_block(static_cast<pernix::Backend>(9), n, 64, z, T(1), out) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
    CHECK(pernix::compress_block(static_cast<pernix::Backend>(-1), 0, 64, in, T(16), x) == PERNIX_STATUS_UNSUPPORTED_BIT_WIDTH);
}

int main() {
    for (int b = 0; b <= 8; ++b) {
        backend_agrees<float>(static_cast<pernix::Backend>(b));
        backend_agrees<double>(static_cast<pernix::Backend>(b));
    }
    auto_overloads<float>();
    auto_overloads<double>();
    // the C names with a pernix_backend first argument are C++ overloads
    std::array<float, 32> in{};
    std::array<u8, 64> out{};
    CHECK(pernix_compress_block_f32(PERNIX_BACKEND_FALLBACK, 16, 64, in.data(), 1.0f, out.data()) == PERNIX_STATUS_OK);
    CHECK(pernix_compress_block_f32(static_cast<pernix_backend>(77), 16, 64, in.data(), 1.0f, out.data()) == PERNIX_STATUS_UNSUPPORTED_BACKEND);
    if (failures == 0) std::printf("c++ free functions: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
