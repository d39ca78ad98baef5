// Attention driver over a paged KV cache (attention.h), its scalar inner
// loops, and the double-precision reference the SIMD levels are tested
// against. The per-ISA inner loops (scores of one block tile, P·V of one
// block tile) are in attention_avx512.cc / attention_avx2.cc.
//
// Shape of one call: for each kv head, the (query row, query head) items that
// read it are taken in groups of up to 8 (the heads of a GQA group, rows of a
// prefill chunk); scores over the group's positions are computed tile by tile
// into scratch rows (items share each K load), each item is softmaxed over
// its own causal length (ops.h SoftmaxPadded), optionally rounded to F16, and
// P·V is accumulated tile by tile into the output rows (sharing each V load).
// K/V tiles of a block are contiguous [block_size, head_dim] matrices, so
// both loops stream memory.
#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/attention_impl.h"
#include "kernels/fp16.h"
#include "kernels/ops.h"
#include "util/check.h"

namespace mneme::kernels {
namespace {

void KDots(Isa isa, DType type, const TileList& k, int rows, const void* const* q,
           float* const* out) {
  switch (isa) {
    case Isa::kAvx512: return avx512::KDots(type, k, rows, q, out);
    case Isa::kAvx2: return avx2::KDots(type, k, rows, q, out);
    case Isa::kScalar: break;
  }
  scalar::KDots(type, k, rows, q, out);
}

void PvAccum(Isa isa, DType type, const TileList& v, int rows, const float* const* prob,
             float* const* acc) {
  switch (isa) {
    case Isa::kAvx512: return avx512::PvAccum(type, v, rows, prob, acc);
    case Isa::kAvx2: return avx2::PvAccum(type, v, rows, prob, acc);
    case Isa::kScalar: break;
  }
  scalar::PvAccum(type, v, rows, prob, acc);
}

constexpr int kRowGroup = 8;  // (row, head) items per pass over the K / V tiles

void CheckArgs(const AttentionArgs& a, int head_begin, int head_end) {
  CHECK(a.kv.type == DType::kF16 || a.kv.type == DType::kF32);
  CHECK(a.kv.n_kv_heads > 0 && a.n_heads % a.kv.n_kv_heads == 0);
  CHECK(a.kv.block_size > 0 && a.kv.head_dim > 0 && a.n_rows >= 0 && a.pos0 >= 0);
  CHECK(0 <= head_begin && head_begin <= head_end && head_end <= a.n_heads);
}

float KvValue(const KvLayerView& kv, const uint8_t* tile, int slot, int d) {
  const size_t i = static_cast<size_t>(slot) * kv.head_dim + d;
  if (kv.type == DType::kF16) return F16ToF32(reinterpret_cast<const uint16_t*>(tile)[i]);
  return reinterpret_cast<const float*>(tile)[i];
}

}  // namespace

namespace scalar {

namespace {

void KDotsRow(DType type, const TileList& k, const void* q, float* out) {
  const int hd = k.head_dim;
  for (int p = 0; p < k.n_pos; ++p) {
    const size_t row = static_cast<size_t>(p % k.block_size) * hd;
    const uint8_t* tile = k.tiles[p / k.block_size];
    float sum = 0.f;
    if (type == DType::kF16) {
      const uint16_t* kr = reinterpret_cast<const uint16_t*>(tile) + row;
      const uint16_t* qr = static_cast<const uint16_t*>(q);
      for (int d = 0; d < hd; ++d) sum += F16ToF32(kr[d]) * F16ToF32(qr[d]);
    } else {
      const float* kr = reinterpret_cast<const float*>(tile) + row;
      const float* qr = static_cast<const float*>(q);
      for (int d = 0; d < hd; ++d) sum += kr[d] * qr[d];
    }
    out[p] = sum;
  }
}

void PvAccumRow(DType type, const TileList& v, const float* prob, float* acc) {
  const int hd = v.head_dim;
  for (int p = 0; p < v.n_pos; ++p) {
    const size_t row = static_cast<size_t>(p % v.block_size) * hd;
    const uint8_t* tile = v.tiles[p / v.block_size];
    if (type == DType::kF16) {
      const uint16_t* vr = reinterpret_cast<const uint16_t*>(tile) + row;
      for (int d = 0; d < hd; ++d) acc[d] += prob[p] * F16ToF32(vr[d]);
    } else {
      const float* vr = reinterpret_cast<const float*>(tile) + row;
      for (int d = 0; d < hd; ++d) acc[d] += prob[p] * vr[d];
    }
  }
}

}  // namespace

void KDots(DType type, const TileList& k, int rows, const void* const* q, float* const* out) {
  for (int r = 0; r < rows; ++r) KDotsRow(type, k, q[r], out[r]);
}

void PvAccum(DType type, const TileList& v, int rows, const float* const* prob, float* const* acc) {
  for (int r = 0; r < rows; ++r) PvAccumRow(type, v, prob[r], acc[r]);
}

}  // namespace scalar

void StoreKv(const KvLayerView& kv, const int32_t* block_table, int32_t pos, const float* k_row,
             const float* v_row) {
  const int32_t block = block_table[pos / kv.block_size];
  const size_t slot_off = static_cast<size_t>(pos % kv.block_size) * kv.head_dim * kv.ElementSize();
  for (int h = 0; h < kv.n_kv_heads; ++h) {
    uint8_t* kd = kv.KTile(block, h) + slot_off;
    uint8_t* vd = kv.VTile(block, h) + slot_off;
    const float* ks = k_row + static_cast<size_t>(h) * kv.head_dim;
    const float* vs = v_row + static_cast<size_t>(h) * kv.head_dim;
    if (kv.type == DType::kF16) {
      F32ToF16Row(ks, reinterpret_cast<uint16_t*>(kd), kv.head_dim);
      F32ToF16Row(vs, reinterpret_cast<uint16_t*>(vd), kv.head_dim);
    } else {
      std::memcpy(kd, ks, kv.head_dim * sizeof(float));
      std::memcpy(vd, vs, kv.head_dim * sizeof(float));
    }
  }
}

void Attention(Isa isa, const AttentionArgs& a, int head_begin, int head_end,
               AttentionScratch* scratch) {
  CheckArgs(a, head_begin, head_end);
  const KvLayerView& kv = a.kv;
  const int hd = kv.head_dim, bs = kv.block_size;
  const int group = a.n_heads / kv.n_kv_heads;
  const bool f16 = kv.type == DType::kF16;
  const size_t max_ctx = static_cast<size_t>(a.pos0) + a.n_rows;
  const size_t n_blocks = (max_ctx + bs - 1) / bs;
  // scores: kRowGroup rows of max_ctx; q16: kRowGroup F16 q rows, then one
  // F16 probability row.
  scratch->scores.resize(kRowGroup * max_ctx);
  scratch->q16.resize(kRowGroup * static_cast<size_t>(hd) + max_ctx);
  scratch->tiles.resize(2 * n_blocks);
  const uint8_t** k_tiles = scratch->tiles.data();
  const uint8_t** v_tiles = k_tiles + n_blocks;
  uint16_t* p16 = scratch->q16.data() + kRowGroup * static_cast<size_t>(hd);
  const void* q_rows[kRowGroup];
  float* s_rows[kRowGroup];
  float* out_rows[kRowGroup];
  if (head_begin == head_end) return;
  for (int kvh = head_begin / group; kvh <= (head_end - 1) / group; ++kvh) {
    for (size_t b = 0; b < n_blocks; ++b) {
      k_tiles[b] = kv.KTile(a.block_table[b], kvh);
      v_tiles[b] = kv.VTile(a.block_table[b], kvh);
    }
    // Items (row r, head h) of this kv head, row-major, in groups that share
    // each K / V tile load: the query heads of a GQA group and consecutive
    // rows of a prefill chunk. The group's last item sees the most positions
    // (n_max); earlier rows ignore the extra scores and give them
    // probability 0 (exact zeros added to P·V).
    const int h_lo = std::max(head_begin, kvh * group);
    const int heads = std::min(head_end, (kvh + 1) * group) - h_lo;
    const int n_items = a.n_rows * heads;
    for (int i0 = 0; i0 < n_items; i0 += kRowGroup) {
      const int g = std::min(kRowGroup, n_items - i0);
      const int n_max = a.pos0 + (i0 + g - 1) / heads + 1;
      for (int i = 0; i < g; ++i) {
        const int r = (i0 + i) / heads, h = h_lo + (i0 + i) % heads;
        const size_t row_off = (static_cast<size_t>(r) * a.n_heads + h) * hd;
        q_rows[i] = a.q + row_off;
        if (f16) {  // ggml's mul_mat converts q to K's vec-dot type (F16)
          uint16_t* q16 = scratch->q16.data() + static_cast<size_t>(i) * hd;
          F32ToF16Row(a.q + row_off, q16, hd);
          q_rows[i] = q16;
        }
        s_rows[i] = scratch->scores.data() + static_cast<size_t>(i) * max_ctx;
        out_rows[i] = a.out + row_off;
      }
      KDots(isa, kv.type, TileList{k_tiles, bs, n_max, hd}, g, q_rows, s_rows);
      for (int i = 0; i < g; ++i) {
        const int n_ctx = a.pos0 + (i0 + i) / heads + 1;
        float* s = s_rows[i];
        SoftmaxPadded(isa, s, n_ctx, a.scale);
        if (f16) {  // the KQ row is converted to F16 for the P·V product
          F32ToF16Row(s, p16, n_ctx);
          F16ToF32Row(p16, s, n_ctx);
        }
        std::fill(s + n_ctx, s + n_max, 0.f);
        std::fill(out_rows[i], out_rows[i] + hd, 0.f);
      }
      PvAccum(isa, kv.type, TileList{v_tiles, bs, n_max, hd}, g, s_rows, out_rows);
    }
  }
}

void AttentionReference(const AttentionArgs& a, int head_begin, int head_end) {
  CheckArgs(a, head_begin, head_end);
  const KvLayerView& kv = a.kv;
  const int hd = kv.head_dim, bs = kv.block_size;
  const int group = a.n_heads / kv.n_kv_heads;
  const bool f16 = kv.type == DType::kF16;
  std::vector<double> s, qd(hd), acc(hd);
  for (int r = 0; r < a.n_rows; ++r) {
    const int n_ctx = a.pos0 + r + 1;
    s.assign(n_ctx, 0.0);
    for (int h = head_begin; h < head_end; ++h) {
      const size_t row_off = (static_cast<size_t>(r) * a.n_heads + h) * hd;
      const int kvh = h / group;
      for (int d = 0; d < hd; ++d) {
        const float x = a.q[row_off + d];
        qd[d] = f16 ? F16ToF32(F32ToF16(x)) : x;
      }
      double max = -INFINITY;
      for (int p = 0; p < n_ctx; ++p) {
        const uint8_t* tile = kv.KTile(a.block_table[p / bs], kvh);
        double dot = 0;
        for (int d = 0; d < hd; ++d) dot += qd[d] * KvValue(kv, tile, p % bs, d);
        s[p] = dot * a.scale;
        max = std::max(max, s[p]);
      }
      double sum = 0;
      for (int p = 0; p < n_ctx; ++p) sum += (s[p] = std::exp(s[p] - max));
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int p = 0; p < n_ctx; ++p) {
        double prob = s[p] / sum;
        if (f16) prob = F16ToF32(F32ToF16(static_cast<float>(prob)));
        const uint8_t* tile = kv.VTile(a.block_table[p / bs], kvh);
        for (int d = 0; d < hd; ++d) acc[d] += prob * KvValue(kv, tile, p % bs, d);
      }
      for (int d = 0; d < hd; ++d) a.out[row_off + d] = static_cast<float>(acc[d]);
    }
  }
}

}  // namespace mneme::kernels
