// Causal multi-head attention (GQA) of one sequence over a paged KV cache.
//
// The KV cache of one layer is a pool of fixed-size blocks; a sequence owns a
// block table (block indices in position order), so token position p lives
// in block table[p / block_size], slot p % block_size. The kernels only read
// and write through a KvLayerView; which blocks exist and who owns them is
// kv/'s business. Within a block the layout is head-major, so that one KV
// head's keys of one block are a contiguous [block_size, head_dim] matrix:
//
//   k + block * block_stride ─▶ ┌ kv head 0: slot 0 [head_dim] ┐
//                               │            slot 1 [head_dim] │ block_size rows
//                               │            ...               ┘
//                               ├ kv head 1: slot 0 ...
//                               └ ... n_kv_heads
//   i.e. K of one block: [n_kv_heads, block_size, head_dim] of `type`; V the
//   same at v + block * block_stride. block_stride >= n_kv_heads * block_size
//   * head_dim * sizeof(type) (a pool may interleave K and V of a block, or
//   keep separate K and V arrays: both are just base pointers and a stride).
//
// Numerics follow llama.cpp's CPU attention without flash attention (the
// graph node-llama-cpp runs): for F16 K, q is rounded to F16 and scores are
// F16 x F16 products summed in f32 (ggml_vec_dot_f16); s = dot * scale; softmax
// as ops.h SoftmaxPadded (max, ggml's vector exp on every score as over
// llama.cpp's padded KV rows, double sum, multiply by (float)(1/sum));
// for F16 V the probabilities are rounded to F16 before P·V (ggml converts
// the KQ row to V's vec-dot type), products summed in f32. F32 K/V: no
// roundings. Only f32 summation orders differ from llama.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/quant_types.h"

namespace mneme::kernels {

struct KvLayerView {
  DType type = DType::kF16;  // kF16 or kF32
  int block_size = 16;       // tokens per block
  int n_kv_heads = 0;
  int head_dim = 0;
  uint8_t* k = nullptr;     // K of block 0 of this layer
  uint8_t* v = nullptr;     // V of block 0 of this layer
  size_t block_stride = 0;  // bytes from block b to block b+1 (K and V alike)

  size_t ElementSize() const { return type == DType::kF16 ? 2 : 4; }
  // Bytes of one kv head's [block_size, head_dim] tile.
  size_t HeadTileBytes() const {
    return static_cast<size_t>(block_size) * static_cast<size_t>(head_dim) * ElementSize();
  }
  uint8_t* KTile(int32_t block, int kv_head) const {
    return k + static_cast<size_t>(block) * block_stride + kv_head * HeadTileBytes();
  }
  uint8_t* VTile(int32_t block, int kv_head) const {
    return v + static_cast<size_t>(block) * block_stride + kv_head * HeadTileBytes();
  }
};

// Writes one token's K and V rows ([n_kv_heads, head_dim] f32 each) at
// position `pos` of the sequence with this block table, converting to the
// view's type (F16: round to nearest-even, F32ToF16Row).
void StoreKv(const KvLayerView& kv, const int32_t* block_table, int32_t pos, const float* k_row,
             const float* v_row);

struct AttentionArgs {
  const float* q = nullptr;              // [n_rows, n_heads, head_dim], already roped
  float* out = nullptr;                  // [n_rows, n_heads, head_dim]
  int n_rows = 0;                        // query rows: a prefill chunk, or 1 for decode
  int n_heads = 0;                       // multiple of kv.n_kv_heads (GQA: head h reads h / group)
  int32_t pos0 = 0;                      // absolute position of row 0; row r attends to 0..pos0+r
  const int32_t* block_table = nullptr;  // covers positions 0..pos0+n_rows-1
  KvLayerView kv;
  float scale = 0;  // usually 1/sqrt(head_dim)
};

// Per-thread scratch (scores, F16 q / probabilities, tile pointers); grows on
// demand and is reused across calls, so a thread allocates only when the
// context grows.
struct AttentionScratch {
  std::vector<float> scores;
  std::vector<uint16_t> q16;
  std::vector<const uint8_t*> tiles;
};

// Computes out for query heads [head_begin, head_end) of every row; K/V of
// all attended positions must already be stored. Threads may run disjoint
// head ranges of the same call concurrently (each with its own scratch).
// A (row, head) output depends only on its q, its position and the KV: the
// same bits whether the row is a decode step or part of any prefill chunk,
// and whatever the head range.
void Attention(Isa isa, const AttentionArgs& args, int head_begin, int head_end,
               AttentionScratch* scratch);

// Attention with the process-wide ActiveIsa().
inline void Attention(const AttentionArgs& args, int head_begin, int head_end,
                      AttentionScratch* scratch) {
  Attention(ActiveIsa(), args, head_begin, head_end, scratch);
}

// Reference: plain loops, dot products and softmax in double, with the same
// F16 roundings as Attention (q to F16 for F16 K, probabilities to F16 for
// F16 V, the latter from the double probabilities).
void AttentionReference(const AttentionArgs& args, int head_begin, int head_end);

}  // namespace mneme::kernels
