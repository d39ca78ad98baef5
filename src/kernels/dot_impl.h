// Internal: the per-ISA dot kernels behind VecDot (dot.cc dispatches).
// Same contract as VecDot; `n` is a multiple of the type's block size.
#pragma once

#include <cstdint>

namespace mneme::kernels {

#define MNEME_DECLARE_DOTS                                          \
  float DotF32(int64_t n, const float* w, const float* a);          \
  float DotF16(int64_t n, const uint16_t* w, const uint16_t* a);    \
  float DotBf16(int64_t n, const uint16_t* w, const uint16_t* a);   \
  float DotQ8_0(int64_t n, const BlockQ8_0* w, const BlockQ8_0* a); \
  float DotQ4_0(int64_t n, const BlockQ4_0* w, const BlockQ8_0* a); \
  float DotQ4K(int64_t n, const BlockQ4K* w, const BlockQ8K* a);    \
  float DotQ5K(int64_t n, const BlockQ5K* w, const BlockQ8K* a);    \
  float DotQ6K(int64_t n, const BlockQ6K* w, const BlockQ8K* a);

struct BlockQ4_0;
struct BlockQ8_0;
struct BlockQ4K;
struct BlockQ5K;
struct BlockQ6K;
struct BlockQ8K;

namespace scalar {
MNEME_DECLARE_DOTS
}
namespace avx2 {
MNEME_DECLARE_DOTS
}
namespace avx512 {
float DotF32(int64_t n, const float* w, const float* a);
float DotF16(int64_t n, const uint16_t* w, const uint16_t* a);
float DotBf16(int64_t n, const uint16_t* w, const uint16_t* a);
float DotQ8_0(int64_t n, const BlockQ8_0* w, const BlockQ8_0* a);
float DotQ4_0(int64_t n, const BlockQ4_0* w, const BlockQ8_0* a);
float DotQ4K(int64_t n, const BlockQ4K* w, const BlockQ8K* a);
float DotQ5K(int64_t n, const BlockQ5K* w, const BlockQ8K* a);
float DotQ6K(int64_t n, const BlockQ6K* w, const BlockQ8K* a);
}  // namespace avx512

#undef MNEME_DECLARE_DOTS

}  // namespace mneme::kernels
