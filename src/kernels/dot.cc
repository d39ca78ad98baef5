// VecDot dispatch: (isa, weight type) -> kernel.
#include "kernels/dot.h"

#include "kernels/dot_impl.h"
#include "kernels/quantize.h"
#include "util/check.h"

namespace mneme::kernels {

void ConvertActivations(DType vec_dot_type, const float* x, void* dst, int64_t n) {
  if (vec_dot_type == DType::kQ8_0 && ActiveIsa() == Isa::kAvx512) {
    return QuantizeRowQ8_0Avx512(x, static_cast<BlockQ8_0*>(dst), n);  // bit-identical, faster
  }
  if (vec_dot_type == DType::kQ8_K && ActiveIsa() == Isa::kAvx512) {
    return QuantizeRowQ8KAvx512(x, static_cast<BlockQ8K*>(dst), n);
  }
  QuantizeRow(vec_dot_type, x, dst, n);
}

float VecDot(Isa isa, DType w_type, int64_t n, const void* w, const void* a) {
  DCHECK(n % GetDTypeInfo(w_type)->block_size == 0);
  const auto* wf = static_cast<const float*>(w);
  const auto* af = static_cast<const float*>(a);
  const auto* wh = static_cast<const uint16_t*>(w);
  const auto* ah = static_cast<const uint16_t*>(a);
  const auto* a8 = static_cast<const BlockQ8_0*>(a);
  const auto* ak = static_cast<const BlockQ8K*>(a);
  switch (isa) {
    case Isa::kAvx512:
      switch (w_type) {
        case DType::kF32: return avx512::DotF32(n, wf, af);
        case DType::kF16: return avx512::DotF16(n, wh, ah);
        case DType::kBF16: return avx512::DotBf16(n, wh, ah);
        case DType::kQ8_0: return avx512::DotQ8_0(n, static_cast<const BlockQ8_0*>(w), a8);
        case DType::kQ4_0: return avx512::DotQ4_0(n, static_cast<const BlockQ4_0*>(w), a8);
        case DType::kQ4_K: return avx512::DotQ4K(n, static_cast<const BlockQ4K*>(w), ak);
        case DType::kQ5_K: return avx512::DotQ5K(n, static_cast<const BlockQ5K*>(w), ak);
        case DType::kQ6_K: return avx512::DotQ6K(n, static_cast<const BlockQ6K*>(w), ak);
        default: break;
      }
      [[fallthrough]];
    case Isa::kAvx2:
      switch (w_type) {
        case DType::kF32: return avx2::DotF32(n, wf, af);
        case DType::kF16: return avx2::DotF16(n, wh, ah);
        case DType::kBF16: return avx2::DotBf16(n, wh, ah);
        case DType::kQ8_0: return avx2::DotQ8_0(n, static_cast<const BlockQ8_0*>(w), a8);
        case DType::kQ4_0: return avx2::DotQ4_0(n, static_cast<const BlockQ4_0*>(w), a8);
        case DType::kQ4_K: return avx2::DotQ4K(n, static_cast<const BlockQ4K*>(w), ak);
        case DType::kQ5_K: return avx2::DotQ5K(n, static_cast<const BlockQ5K*>(w), ak);
        case DType::kQ6_K: return avx2::DotQ6K(n, static_cast<const BlockQ6K*>(w), ak);
        default: break;
      }
      break;
    case Isa::kScalar:
      switch (w_type) {
        case DType::kF32: return scalar::DotF32(n, wf, af);
        case DType::kF16: return scalar::DotF16(n, wh, ah);
        case DType::kBF16: return scalar::DotBf16(n, wh, ah);
        case DType::kQ8_0: return scalar::DotQ8_0(n, static_cast<const BlockQ8_0*>(w), a8);
        case DType::kQ4_0: return scalar::DotQ4_0(n, static_cast<const BlockQ4_0*>(w), a8);
        case DType::kQ4_K: return scalar::DotQ4K(n, static_cast<const BlockQ4K*>(w), ak);
        case DType::kQ5_K: return scalar::DotQ5K(n, static_cast<const BlockQ5K*>(w), ak);
        case DType::kQ6_K: return scalar::DotQ6K(n, static_cast<const BlockQ6K*>(w), ak);
        default: break;
      }
      break;
  }
  CHECK(false) << "no dot kernel for weight type " << static_cast<uint32_t>(w_type);
  return 0.f;
}

void MatVec(Isa isa, DType w_type, int64_t n, const void* w, size_t row_bytes, const void* a,
            float* out, int64_t row_begin, int64_t row_end) {
  const auto* base = static_cast<const uint8_t*>(w);
  for (int64_t r = row_begin; r < row_end; ++r) {
    out[r] = VecDot(isa, w_type, n, base + static_cast<size_t>(r) * row_bytes, a);
  }
}

}  // namespace mneme::kernels
