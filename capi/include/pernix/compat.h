/*
 * fzpack's PERNIX C ABI: the short fixed-width typedefs shared by C and C++ callers (u8, u32,
 * usize, i32, f32, f64), as upstream PERNIX's compat.h provides them. They live at global scope
 * in C++ too, because code written against upstream uses them unqualified; a caller with its own
 * global f32/f64/i32 of a different type can define PERNIX_NO_SHORT_FLOAT_TYPEDEFS first.
 */
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
#ifndef PERNIX_NO_SHORT_FLOAT_TYPEDEFS
using i32 = std::int32_t;
using f32 = float;
using f64 = double;
#endif
#else
typedef uint8_t u8;
typedef uint32_t u32;
typedef size_t usize;
#ifndef PERNIX_NO_SHORT_FLOAT_TYPEDEFS
typedef int32_t i32;
typedef float f32;
typedef double f64;
#endif
#endif

#endif /* PERNIX_COMPAT_H */
