// Gemm driver: activation rounding, packing, blocking and edge tiles.
#include "kernels/gemm.h"

#include <algorithm>
#include <cstring>

#include "kernels/dot.h"
#include "kernels/fp16.h"
#include "kernels/gemm_impl.h"
#include "kernels/quantize.h"
#include "util/check.h"

namespace mneme::kernels {
namespace {

// k-slice length: a [kKc][NR] W panel is 32 KiB for NR = 32 (fits L1D); the
// packed A slice for m = 512 is 512 KiB (fits L2). A multiple of 256, so
// slices start on block boundaries of every type.
constexpr int64_t kKc = 256;

// Dequantizes columns [k0, k0 + kc) of W rows [j0, j0 + nr) (rows past n are
// zero) and packs them as [kc][nr].
void PackW(const GemmArgs& args, int64_t j0, int nr, int64_t k0, int64_t kc, bool use512,
           GemmScratch* s) {
  const DTypeInfo info = *GetDTypeInfo(args.w_type);
  const size_t col_offset = static_cast<size_t>(k0 / info.block_size) * info.block_bytes;
  s->w_rows.resize(static_cast<size_t>(nr) * kc);
  for (int r = 0; r < nr; ++r) {
    float* dst = s->w_rows.data() + static_cast<size_t>(r) * kc;
    if (j0 + r >= args.n) {
      std::fill(dst, dst + kc, 0.f);
      continue;
    }
    const auto* row =
        static_cast<const uint8_t*>(args.w) + static_cast<size_t>(j0 + r) * args.w_row_bytes;
    DequantizeRow(args.w_type, row + col_offset, dst, kc);
  }
  s->w_pack.resize(static_cast<size_t>(nr) * kc);
  if (use512) {
    avx512::PackTransposed(s->w_rows.data(), kc, nr, nr, kc, s->w_pack.data());
  } else {
    PackTransposedScalar(s->w_rows.data(), kc, nr, nr, kc, s->w_pack.data());
  }
}

// Asks for the next W panel's bytes while the current one is multiplied:
// reading 32 rows' short slices from L3/DRAM is otherwise latency-bound.
void PrefetchW(const GemmArgs& args, int64_t j_begin, int64_t j_end, int64_t k0, int64_t kc) {
  const DTypeInfo info = *GetDTypeInfo(args.w_type);
  const size_t offset = static_cast<size_t>(k0 / info.block_size) * info.block_bytes;
  const size_t bytes = static_cast<size_t>(kc / info.block_size) * info.block_bytes;
  for (int64_t j = j_begin; j < j_end; ++j) {
    const char* row =
        static_cast<const char*>(args.w) + static_cast<size_t>(j) * args.w_row_bytes + offset;
    for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(row + b, 0, 2);
  }
}

// Packs columns [k0, k0 + kc) of all m rows of `a` into panels [kc][mr].
void PackA(const float* a, int64_t lda, int64_t m, int mr, int64_t k0, int64_t kc, bool use512,
           PackRound round, GemmScratch* s) {
  const int64_t panels = (m + mr - 1) / mr;
  s->a_pack.resize(static_cast<size_t>(panels * mr * kc));
  for (int64_t pi = 0; pi < panels; ++pi) {
    const int nrows = static_cast<int>(std::min<int64_t>(mr, m - pi * mr));
    if (use512) {
      avx512::PackTransposed(a + pi * mr * lda + k0, lda, nrows, mr, kc,
                             s->a_pack.data() + pi * mr * kc, round);
      continue;
    }
    PackTransposedScalar(a + pi * mr * lda + k0, lda, nrows, mr, kc,
                         s->a_pack.data() + pi * mr * kc);
  }
}

void GemmScalar(const GemmArgs& args, const float* a, int64_t lda, int64_t n_begin, int64_t n_end) {
  std::vector<float> w_row(static_cast<size_t>(args.k));
  for (int64_t j = n_begin; j < n_end; ++j) {
    DequantizeRow(args.w_type, static_cast<const uint8_t*>(args.w) + j * args.w_row_bytes,
                  w_row.data(), args.k);
    for (int64_t i = 0; i < args.m; ++i) {
      float sum = 0.f;
      for (int64_t p = 0; p < args.k; ++p) sum += a[i * lda + p] * w_row[p];
      args.c[i * args.ldc + j] = sum;
    }
  }
}

}  // namespace

void RoundActivationsForDot(DType w_type, const float* x, float* out, int64_t k,
                            std::vector<uint8_t>* quant_buf) {
  const DType act = GetDTypeInfo(w_type)->vec_dot_type;
  if (act == DType::kF32) {
    std::memcpy(out, x, static_cast<size_t>(k) * sizeof(float));
    return;
  }
  quant_buf->resize(RowBytes(act, k));
  ConvertActivations(act, x, quant_buf->data(), k);
  DequantizeRow(act, quant_buf->data(), out, k);
}

void Gemm(Isa isa, const GemmArgs& args, int64_t n_begin, int64_t n_end, GemmScratch* s) {
  CHECK(0 <= n_begin && n_begin <= n_end && n_end <= args.n);
  CHECK(args.k % GetDTypeInfo(args.w_type)->block_size == 0);
  if (n_begin == n_end || args.m == 0) return;

  if (isa == Isa::kAvx512 && (args.w_type == DType::kQ8_0 || args.w_type == DType::kQ4_0)) {
    return avx512::GemmQ8(args, n_begin, n_end, s);
  }
  if (isa == Isa::kAvx512 &&
      (args.w_type == DType::kQ4_K || args.w_type == DType::kQ5_K || args.w_type == DType::kQ6_K)) {
    return avx512::GemmQK(args, n_begin, n_end, s);
  }

  // Activations as the weight type's dot product sees them: F16/BF16
  // rounding is fused into AVX-512 packing, everything else is done up front.
  const bool use512 = isa == Isa::kAvx512;
  const DType act_type = GetDTypeInfo(args.w_type)->vec_dot_type;
  PackRound round = PackRound::kNone;
  if (use512 && act_type == DType::kF16) round = PackRound::kF16;
  if (use512 && act_type == DType::kBF16) round = PackRound::kBf16;
  const float* a = args.a;
  int64_t lda = args.lda;
  if (act_type != DType::kF32 && round == PackRound::kNone) {
    s->a_conv.resize(static_cast<size_t>(args.m * args.k));
    for (int64_t i = 0; i < args.m; ++i) {
      RoundActivationsForDot(args.w_type, args.a + i * args.lda, s->a_conv.data() + i * args.k,
                             args.k, &s->a_quant);
    }
    a = s->a_conv.data();
    lda = args.k;
  }
  if (isa == Isa::kScalar) return GemmScalar(args, a, lda, n_begin, n_end);

  const int mr = use512 ? avx512::kGemmMr : avx2::kGemmMr;
  const int nr = use512 ? avx512::kGemmNr : avx2::kGemmNr;
  const MicroKernelFn kernel = use512 ? avx512::GemmMicroKernel : avx2::GemmMicroKernel;
  float edge[avx512::kGemmMr * avx512::kGemmNr];

  for (int64_t k0 = 0; k0 < args.k; k0 += kKc) {
    const int64_t kc = std::min(kKc, args.k - k0);
    const bool accumulate = k0 > 0;
    PackA(a, lda, args.m, mr, k0, kc, use512, round, s);
    for (int64_t j0 = n_begin; j0 < n_end; j0 += nr) {
      PackW(args, j0, nr, k0, kc, use512, s);
      PrefetchW(args, j0 + nr, std::min<int64_t>(j0 + 2 * nr, n_end), k0, kc);
      const int64_t cols = std::min<int64_t>(nr, n_end - j0);
      for (int64_t i0 = 0; i0 < args.m; i0 += mr) {
        const int64_t rows = std::min<int64_t>(mr, args.m - i0);
        const float* ap = s->a_pack.data() + (i0 / mr) * mr * kc;
        float* c = args.c + i0 * args.ldc + j0;
        if (rows == mr && cols == nr) {
          kernel(kc, ap, s->w_pack.data(), c, args.ldc, accumulate);
          continue;
        }
        kernel(kc, ap, s->w_pack.data(), edge, nr, false);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t q = 0; q < cols; ++q) {
            c[r * args.ldc + q] = (accumulate ? c[r * args.ldc + q] : 0.f) + edge[r * nr + q];
          }
        }
      }
    }
  }
}

void GemmReference(const GemmArgs& args) {
  std::vector<float> a_row(static_cast<size_t>(args.k)), w_row(static_cast<size_t>(args.k));
  std::vector<uint8_t> buf;
  std::vector<float> a_all(static_cast<size_t>(args.m * args.k));
  for (int64_t i = 0; i < args.m; ++i) {
    RoundActivationsForDot(args.w_type, args.a + i * args.lda, a_all.data() + i * args.k, args.k,
                           &buf);
  }
  for (int64_t j = 0; j < args.n; ++j) {
    DequantizeRow(args.w_type, static_cast<const uint8_t*>(args.w) + j * args.w_row_bytes,
                  w_row.data(), args.k);
    for (int64_t i = 0; i < args.m; ++i) {
      double sum = 0.0;
      for (int64_t p = 0; p < args.k; ++p)
        sum += static_cast<double>(a_all[i * args.k + p]) * w_row[p];
      args.c[i * args.ldc + j] = static_cast<float>(sum);
    }
  }
}

}  // namespace mneme::kernels
