// Weight/activation element types and the ggml block layouts, bit-exact.
//
// GGUF tensors are stored in ggml's block formats; these structs mirror
// ggml-common.h byte for byte (checked by static_assert) so a tensor's bytes
// can be read in place from the mmap. The enum values are ggml's type ids, so
// callers holding a GGUF type id can convert with DTypeFromGgml() without this
// library knowing anything about GGUF.
//
// All 16-bit scales are stored as raw IEEE binary16 bits (see fp16.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace mneme::kernels {

enum class DType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ8_0 = 8,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,  // activation-only: the partner of K-quant dot products
  kBF16 = 30,
};

inline constexpr int kQK4_0 = 32;       // elements per Q4_0 block
inline constexpr int kQK8_0 = 32;       // elements per Q8_0 block
inline constexpr int kQK_K = 256;       // elements per K-quant super-block
inline constexpr int kKScaleSize = 12;  // bytes of packed 6-bit scales+mins

// Q4_0: x = d * (q - 8), q in [0, 15]. qs[j] holds element j in its low
// nibble and element j + 16 in its high nibble.
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK4_0 / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// Q8_0: x = d * q, q in [-127, 127] (activations) / [-128, 127] (weights).
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK8_0];
};
static_assert(sizeof(BlockQ8_0) == 34);

// Q4_K: 8 sub-blocks of 32; x = d * sc[j] * q - dmin * m[j], q in [0, 15],
// sc/m 6-bit, packed in `scales` (GetScaleMinK4). Each 64-element chunk c
// uses qs[32c .. 32c+31]: low nibbles are sub-block 2c, high nibbles 2c + 1.
struct BlockQ4K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4K) == 144);

// Q5_K: as Q4_K with a fifth bit: element e has high bit (qh[e % 32] >> (e / 32)) & 1.
struct BlockQ5K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5K) == 176);

// Q6_K: 16 sub-blocks of 16; x = d * scales[e / 16] * (q - 32), q in [0, 63].
// Low 4 bits in ql, high 2 bits in qh (layout in quantize.cc).
struct BlockQ6K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6K) == 210);

// Q8_K: activations for K-quant dots. x = d * q; bsums[j] = sum of qs[16j..16j+15].
struct BlockQ8K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};
static_assert(sizeof(BlockQ8K) == 292);

// The 6-bit scale and min of sub-block j (0..7) from a K-quant `scales` array.
inline void GetScaleMinK4(int j, const uint8_t* q, uint8_t* scale, uint8_t* min) {
  if (j < 4) {
    *scale = q[j] & 63;
    *min = q[j + 4] & 63;
  } else {
    *scale = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *min = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

struct DTypeInfo {
  const char* name;
  int block_size;      // elements per block (1 for plain floats)
  int block_bytes;     // bytes per block
  DType vec_dot_type;  // what activations are converted to for dot products
};

// Info for a supported type; nullopt for ids this library does not handle.
std::optional<DTypeInfo> GetDTypeInfo(DType type);
std::optional<DType> DTypeFromGgml(uint32_t ggml_type);

// Bytes of a row of n elements; n must be a multiple of the block size.
size_t RowBytes(DType type, int64_t n);

}  // namespace mneme::kernels
