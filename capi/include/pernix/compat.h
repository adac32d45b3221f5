/* fzpack's PERNIX C ABI: fixed-width integer typedefs shared by C and C++ callers. */
#ifndef PERNIX_COMPAT_H
#define PERNIX_COMPAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
using u8 = std::uint8_t;
using u32 = std::uint32_t;
using usize = std::size_t;
#else
typedef uint8_t u8;
typedef uint32_t u32;
typedef size_t usize;
#endif

#endif /* PERNIX_COMPAT_H */
