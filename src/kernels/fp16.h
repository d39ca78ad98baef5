// Half-precision conversions: IEEE binary16 (F16) and bfloat16 (BF16).
//
// GGUF stores F16/BF16 weights and the scales of every quantized block as
// 16-bit floats, so these sit under every kernel. The scalar functions are
// exact: F16 -> F32 and BF16 -> F32 are lossless (F16 NaNs come back quiet);
// F32 -> F16 rounds to
// nearest-even with subnormals, overflow to inf and quiet NaNs exactly as the
// F16C instruction VCVTPS2PH does (the test checks bit equality against it).
// F32 -> BF16 rounds to nearest-even and quiets NaNs like ggml's
// GGML_FP32_TO_BF16 (subnormals kept, not flushed).
// The *Row functions convert n elements and use F16C / AVX-512 when present.
#pragma once

#include <cstdint>
#include <cstring>

namespace mneme::kernels {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

inline float F16ToF32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    const float v = static_cast<float>(mant) * 0x1p-24f;
    return BitsToFloat(FloatBits(v) | sign);
  }
  if (exp == 31) {  // inf, or NaN (quieted, payload kept, as VCVTPH2PS does)
    return BitsToFloat(sign | 0x7f800000u | (mant << 13) | (mant != 0 ? 0x400000u : 0u));
  }
  return BitsToFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t F32ToF16(float f) {
  uint32_t x = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) {  // NaN: keep the top payload bits, set the quiet bit
    return static_cast<uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
  }
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (x < 0x38800000u) {
    // Result is a half subnormal (or zero): adding 0.5f aligns the value so
    // that the FPU's own round-to-nearest-even lands on units of 2^-24.
    const float aligned = BitsToFloat(x) + 0.5f;
    return static_cast<uint16_t>(sign | (FloatBits(aligned) - 0x3f000000u));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to
  // nearest-even; a carry into the exponent is the correct rounding.
  const uint32_t odd = (x >> 13) & 1u;
  x += 0xc8000fffu + odd;  // (15 - 127) << 23, plus 0xfff + odd for rounding (mod 2^32)
  return static_cast<uint16_t>(sign | (x >> 13));
}

inline float Bf16ToF32(uint16_t h) {
  return BitsToFloat(static_cast<uint32_t>(h) << 16);
}

inline uint16_t F32ToBf16(float f) {
  const uint32_t u = FloatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 64u);  // quiet NaN
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// Row conversions of n elements (any n >= 0). They pick F16C / AVX-512 code
// when the active ISA allows; results equal the scalar functions bit for bit.
void F16ToF32Row(const uint16_t* src, float* dst, int64_t n);
void F32ToF16Row(const float* src, uint16_t* dst, int64_t n);
void Bf16ToF32Row(const uint16_t* src, float* dst, int64_t n);
void F32ToBf16Row(const float* src, uint16_t* dst, int64_t n);

// Scalar-only versions (the references the tests compare against).
void F16ToF32RowScalar(const uint16_t* src, float* dst, int64_t n);
void F32ToF16RowScalar(const float* src, uint16_t* dst, int64_t n);

}  // namespace mneme::kernels
