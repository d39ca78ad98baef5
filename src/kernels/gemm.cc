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

// Up to this many A elements (m * k), Gemm loops over W panels outermost.
constexpr int64_t kPanelOuterMaxA = 16 * 4096;

// Dequantizes columns [k0, k0 + kc) of W rows [j0, j0 + nr) (rows past n are
// zero) and packs them as [kc][nr].
void PackW(const GemmArgs& args, int64_t j0, int nr, int64_t k0, int64_t kc, bool use512,
           GemmScratch* s) {
  if (args.w_packed != nullptr) {  // [j0 / 32][k][32]: the slice is contiguous
    const size_t elt = GetDTypeInfo(args.w_type)->block_bytes;
    const auto* src = static_cast<const uint8_t*>(args.w_packed) +
                      ((j0 / kGemmPanel) * args.k + k0) * kGemmPanel * elt;
    s->w_pack.resize(static_cast<size_t>(nr) * kc);
    avx512::ConvertPacked(args.w_type, src, kc * kGemmPanel, s->w_pack.data());
    return;
  }
  const int nrows = static_cast<int>(std::clamp<int64_t>(args.n - j0, 0, nr));
  const auto* first = static_cast<const uint8_t*>(args.w) + static_cast<size_t>(j0) * args.w_row_bytes;
  s->w_pack.resize(static_cast<size_t>(nr) * kc);
  const DType t = args.w_type;
  if (use512 && (t == DType::kF32 || t == DType::kF16 || t == DType::kBF16)) {
    // Converted while transposing: no intermediate f32 rows (decode packs
    // every weight once per token).
    avx512::PackTransposedW(t, first, args.w_row_bytes, nrows, nr, k0, kc, s->w_pack.data());
    return;
  }
  const DTypeInfo info = *GetDTypeInfo(t);
  const size_t col_offset = static_cast<size_t>(k0 / info.block_size) * info.block_bytes;
  s->w_rows.resize(static_cast<size_t>(nr) * kc);
  for (int r = 0; r < nrows; ++r) {
    DequantizeRow(t, first + static_cast<size_t>(r) * args.w_row_bytes + col_offset,
                  s->w_rows.data() + static_cast<size_t>(r) * kc, kc);
  }
  if (use512) {
    avx512::PackTransposed(s->w_rows.data(), kc, nrows, nr, kc, s->w_pack.data());
  } else {
    PackTransposedScalar(s->w_rows.data(), kc, nrows, nr, kc, s->w_pack.data());
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

// Packs columns [k0, k0 + kc) of all m rows of `a` into panels [kc][mr] at
// `out` (panels * mr * kc floats).
void PackA(const float* a, int64_t lda, int64_t m, int mr, int64_t k0, int64_t kc, bool use512,
           PackRound round, float* out) {
  const int64_t panels = (m + mr - 1) / mr;
  for (int64_t pi = 0; pi < panels; ++pi) {
    const int nrows = static_cast<int>(std::min<int64_t>(mr, m - pi * mr));
    if (use512) {
      avx512::PackTransposed(a + pi * mr * lda + k0, lda, nrows, mr, kc, out + pi * mr * kc, round);
      continue;
    }
    PackTransposedScalar(a + pi * mr * lda + k0, lda, nrows, mr, kc, out + pi * mr * kc);
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
  if (args.w_packed != nullptr) {
    CHECK(GemmPrepackable(isa, args.w_type) && n_begin % kGemmPanel == 0);
  }

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
  const auto kernel_for = [use512](int rows) {
    return use512 ? avx512::GemmMicroKernel(rows) : avx2::GemmMicroKernel(rows);
  };
  float edge[avx512::kGemmMr * avx512::kGemmNr];
  const int64_t panels = (args.m + mr - 1) / mr;

  // C[:, j0:+nr] (+)= A[:, k0:+kc] W[j0:+nr, k0:+kc]^T, A packed at `a_pack`.
  const auto tile = [&](int64_t j0, int64_t k0, int64_t kc, const float* a_pack) {
    const bool accumulate = k0 > 0;
    PackW(args, j0, nr, k0, kc, use512, s);
    const int64_t cols = std::min<int64_t>(nr, n_end - j0);
    for (int64_t i0 = 0; i0 < args.m; i0 += mr) {
      // A partial panel runs the kernel for its row count only: same
      // per-element FMA order, so a row's bits never depend on m.
      const int rows = static_cast<int>(std::min<int64_t>(mr, args.m - i0));
      const MicroKernelFn kernel = kernel_for(rows);
      const float* ap = a_pack + (i0 / mr) * mr * kc;
      float* c = args.c + i0 * args.ldc + j0;
      if (cols == nr) {
        kernel(kc, ap, s->w_pack.data(), c, args.ldc, accumulate);
        continue;
      }
      // (acc + c in the kernel equals c + acc here: one rounded add.)
      kernel(kc, ap, s->w_pack.data(), edge, nr, false);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t q = 0; q < cols; ++q) {
          float& out = c[r * args.ldc + q];
          out = accumulate ? out + edge[r * nr + q] : edge[r * nr + q];
        }
      }
    }
  };

  if (args.m * args.k <= kPanelOuterMaxA) {
    // Few rows (decode): A is packed once for all k-slices, and each W panel
    // is read in full before the next (long sequential streams per row).
    // Every element still sums slice by slice in k order: the same bits.
    s->a_pack.resize(static_cast<size_t>(panels * mr * args.k));
    for (int64_t k0 = 0; k0 < args.k; k0 += kKc) {
      const int64_t kc = std::min(kKc, args.k - k0);
      PackA(a, lda, args.m, mr, k0, kc, use512, round, s->a_pack.data() + panels * mr * k0);
    }
    int64_t j0 = n_begin;
    if (args.w_packed != nullptr && args.m <= avx512::kPackedMaxRows) {
      // Groups of full prepacked panels straight from memory.
      const size_t elt = GetDTypeInfo(args.w_type)->block_bytes;
      const size_t panel_bytes = static_cast<size_t>(args.k * kGemmPanel) * elt;
      const avx512::PackedKernelFn kernel =
          avx512::GemmPackedKernel(args.w_type, static_cast<int>(args.m));
      for (; j0 + avx512::kPackedGroup * nr <= n_end; j0 += avx512::kPackedGroup * nr) {
        const auto* w = static_cast<const uint8_t*>(args.w_packed) + (j0 / kGemmPanel) * panel_bytes;
        for (int64_t k0 = 0; k0 < args.k; k0 += kKc) {
          const int64_t kc = std::min(kKc, args.k - k0);
          kernel(kc, s->a_pack.data() + panels * mr * k0, w + k0 * kGemmPanel * elt, panel_bytes,
                 args.c + j0, args.ldc, k0 > 0);
        }
      }
    }
    for (; j0 < n_end; j0 += nr) {
      for (int64_t k0 = 0; k0 < args.k; k0 += kKc) {
        const int64_t kc = std::min(kKc, args.k - k0);
        if (args.w_packed == nullptr && k0 + kKc >= args.k) {
          PrefetchW(args, j0 + nr, std::min<int64_t>(j0 + 2 * nr, n_end), 0, args.k);
        }
        tile(j0, k0, kc, s->a_pack.data() + panels * mr * k0);
      }
    }
    return;
  }
  s->a_pack.resize(static_cast<size_t>(panels * mr * kKc));
  for (int64_t k0 = 0; k0 < args.k; k0 += kKc) {
    const int64_t kc = std::min(kKc, args.k - k0);
    PackA(a, lda, args.m, mr, k0, kc, use512, round, s->a_pack.data());
    for (int64_t j0 = n_begin; j0 < n_end; j0 += nr) {
      if (args.w_packed == nullptr) {
        PrefetchW(args, j0 + nr, std::min<int64_t>(j0 + 2 * nr, n_end), k0, kc);
      }
      tile(j0, k0, kc, s->a_pack.data());
    }
  }
}

GemmArgs avx512::PanelCopy(const GemmArgs& args, int64_t j0, GemmScratch* s) {
  const int64_t rows = std::min<int64_t>(avx512::kGemmNr, args.n - j0);
  const size_t bytes = static_cast<size_t>(rows) * args.w_row_bytes;
  s->w_copy.resize(bytes);
  const auto* src = static_cast<const uint8_t*>(args.w) + j0 * args.w_row_bytes;
  std::memcpy(s->w_copy.data(), src, bytes);  // (prefetching the next panel too was slower)
  GemmArgs panel = args;
  panel.w = s->w_copy.data();
  panel.n = rows;
  return panel;
}

bool GemmPrepackable(Isa isa, DType type) {
  static_assert(kGemmPanel == avx512::kGemmNr);
  return isa == Isa::kAvx512 && (type == DType::kF32 || type == DType::kF16 ||
                                 type == DType::kBF16 || type == DType::kQ8_0 ||
                                 type == DType::kQ4_K);
}

size_t GemmPackedBytes(DType type, int64_t n, int64_t k) {
  const int64_t panels = (n + kGemmPanel - 1) / kGemmPanel;
  if (type == DType::kQ8_0) {
    return static_cast<size_t>(panels * (k / kQK8_0)) * avx512::kQ8PanelBytesPerBlock;
  }
  if (type == DType::kQ4_K) {
    return static_cast<size_t>(panels * (k / kQK_K)) * avx512::kQ4KPanelBytesPerSuperBlock;
  }
  return static_cast<size_t>(panels * k * kGemmPanel) * GetDTypeInfo(type)->block_bytes;
}

void PackWeightsForGemm(DType type, const void* w, size_t w_row_bytes, int64_t n, int64_t k,
                        void* out) {
  CHECK(type == DType::kF32 || type == DType::kF16 || type == DType::kBF16 ||
        type == DType::kQ8_0 || type == DType::kQ4_K);
  if (type == DType::kQ8_0 || type == DType::kQ4_K) {
    GemmArgs args;
    args.n = n;
    args.k = k;
    args.w_type = type;
    args.w = w;
    args.w_row_bytes = w_row_bytes;
    if (type == DType::kQ4_K) return avx512::PackQ4KPanels(args, static_cast<uint8_t*>(out));
    return avx512::PackQ8Panels(args, static_cast<uint8_t*>(out));
  }
  const size_t elt = GetDTypeInfo(type)->block_bytes;
  const int64_t panels = (n + kGemmPanel - 1) / kGemmPanel;
  auto* dst = static_cast<uint8_t*>(out);
  if (n % kGemmPanel != 0) {  // the last panel's columns past n
    std::memset(dst + static_cast<size_t>((panels - 1) * k * kGemmPanel) * elt, 0,
                static_cast<size_t>(k * kGemmPanel) * elt);
  }
  constexpr int64_t kStep = 64;  // columns of k per pass: a [64][32] tile stays in L1
  const auto pack = [&]<typename T>(T) {
    for (int64_t pi = 0; pi < panels; ++pi) {
      const int64_t cols = std::min<int64_t>(kGemmPanel, n - pi * kGemmPanel);
      T* panel = reinterpret_cast<T*>(dst) + pi * k * kGemmPanel;
      for (int64_t p0 = 0; p0 < k; p0 += kStep) {
        const int64_t p1 = std::min(k, p0 + kStep);
        for (int64_t c = 0; c < cols; ++c) {
          const T* row = reinterpret_cast<const T*>(static_cast<const uint8_t*>(w) +
                                                    static_cast<size_t>(pi * kGemmPanel + c) *
                                                        w_row_bytes);
          for (int64_t p = p0; p < p1; ++p) panel[p * kGemmPanel + c] = row[p];
        }
      }
    }
  };
  if (elt == 4) {
    pack(uint32_t{});
  } else {
    pack(uint16_t{});
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
