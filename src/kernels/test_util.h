// Test-only helpers: random weight rows of any type and their references.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/quant_types.h"
#include "kernels/quantize.h"

namespace mneme::kernels::testing {

inline std::vector<float> RandomFloats(int64_t n, uint32_t seed, float stddev = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, stddev);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// `rows` rows of n elements quantized to `type`, back to back.
inline std::vector<uint8_t> RandomRows(DType type, int64_t rows, int64_t n, uint32_t seed) {
  const size_t row_bytes = RowBytes(type, n);
  std::vector<uint8_t> out(row_bytes * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<float> x = RandomFloats(n, seed * 7919u + static_cast<uint32_t>(r));
    QuantizeRow(type, x.data(), out.data() + static_cast<size_t>(r) * row_bytes, n);
  }
  return out;
}

}  // namespace mneme::kernels::testing
