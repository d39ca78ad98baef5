// Per-type sizes and the activation type each weight type pairs with.
#include "kernels/quant_types.h"

#include "util/check.h"

namespace mneme::kernels {

std::optional<DTypeInfo> GetDTypeInfo(DType type) {
  switch (type) {
    case DType::kF32: return DTypeInfo{"f32", 1, 4, DType::kF32};
    case DType::kF16: return DTypeInfo{"f16", 1, 2, DType::kF16};
    case DType::kBF16: return DTypeInfo{"bf16", 1, 2, DType::kBF16};
    case DType::kQ4_0: return DTypeInfo{"q4_0", kQK4_0, sizeof(BlockQ4_0), DType::kQ8_0};
    case DType::kQ8_0: return DTypeInfo{"q8_0", kQK8_0, sizeof(BlockQ8_0), DType::kQ8_0};
    case DType::kQ4_K: return DTypeInfo{"q4_K", kQK_K, sizeof(BlockQ4K), DType::kQ8_K};
    case DType::kQ5_K: return DTypeInfo{"q5_K", kQK_K, sizeof(BlockQ5K), DType::kQ8_K};
    case DType::kQ6_K: return DTypeInfo{"q6_K", kQK_K, sizeof(BlockQ6K), DType::kQ8_K};
    case DType::kQ8_K: return DTypeInfo{"q8_K", kQK_K, sizeof(BlockQ8K), DType::kQ8_K};
  }
  return std::nullopt;
}

std::optional<DType> DTypeFromGgml(uint32_t ggml_type) {
  const DType t = static_cast<DType>(ggml_type);
  if (GetDTypeInfo(t).has_value()) return t;
  return std::nullopt;
}

size_t RowBytes(DType type, int64_t n) {
  const std::optional<DTypeInfo> info = GetDTypeInfo(type);
  CHECK(info.has_value());
  CHECK(n % info->block_size == 0) << "n=" << n << " not a multiple of " << info->block_size;
  return static_cast<size_t>(n / info->block_size) * static_cast<size_t>(info->block_bytes);
}

}  // namespace mneme::kernels
