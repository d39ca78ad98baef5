// Synthetic models: seeded random Llama-family GGUF files for tests and
// benchmarks (`mneme make-model`), so no large model file is ever committed.
//
// A synthetic model is a complete GGUF that llama.cpp loads and runs: the
// tokenizer metadata (every `tokenizer.*` key) is copied from a vocabulary
// GGUF, the hyperparameter keys are the ones llama.cpp reads for the
// architecture, and the tensors have llama.cpp's names and shapes
// (ggml order, ne[0] contiguous; dim = embedding size, hd = head size):
//
//   token_embd.weight        [dim, vocab]      matrix type
//   output_norm.weight       [dim]             F32
//   output.weight            [dim, vocab]      matrix type (absent if tied)
//   blk.N.attn_norm.weight   [dim]             F32
//   blk.N.attn_q.weight      [dim, heads*hd]   matrix type
//   blk.N.attn_k.weight      [dim, kv*hd]      matrix type
//   blk.N.attn_v.weight      [dim, kv*hd]      matrix type
//   blk.N.attn_output.weight [heads*hd, dim]   matrix type
//   blk.N.ffn_norm.weight    [dim]             F32
//   blk.N.ffn_gate.weight    [dim, ff]         matrix type
//   blk.N.ffn_up.weight      [dim, ff]         matrix type
//   blk.N.ffn_down.weight    [ff, dim]         matrix type
//   qwen2: blk.N.attn_{q,k,v}.bias [heads*hd], [kv*hd], [kv*hd]  F32
//   qwen3: blk.N.attn_{q,k}_norm.weight [hd]                     F32
//
// Weights are uniform random with the standard deviations below, drawn from
// a generator seeded by (seed, tensor name), so a tensor does not change when
// an unrelated flag does. They are chosen so that greedy decoding has wide
// margins (see docs/engine.md, "Synthetic models"):
//   token_embd         std 1 (embedding rows have RMS 1, like a normed state)
//   attn_q/k/v, gate/up std 1/sqrt(dim): q, k, v, gate, up have RMS ~1, so
//                      attention scores q.k/sqrt(hd) have std ~1 (attention is
//                      neither uniform nor one-hot)
//   attn_output, down  std 0.5/sqrt(fan_in * layers): all blocks together add
//                      a residual of RMS ~0.5-1, whatever the depth
//   norm weights       uniform in [0.8, 1.2]; qwen2 biases std 0.2
//   output             std 1/sqrt(dim) (random logits of std ~1) plus a
//                      "successor" term: the row of token t also holds
//                      (successor / dim) * embedding row of pred(t), pred a
//                      seeded permutation. The token after the current one
//                      then gets a logit bonus of ~successor * cos(h, emb),
//                      several units above the best random logit (~4.5 for
//                      a 32k vocabulary), so top-1 vs top-2 gaps are units,
//                      not hundredths. successor = 0 gives a purely random
//                      (and tie-prone) model.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "kernels/quant_types.h"
#include "util/status.h"

namespace mneme::model {

struct SyntheticModelOptions {
  std::string arch = "llama";  // llama | qwen2 | qwen3
  kernels::DType type = kernels::DType::kF16;  // of the matrices
  int dim = 256;
  int layers = 4;
  int heads = 4;
  int kv_heads = 2;
  int ff = 768;
  int ctx = 2048;
  bool tied = false;  // no output.weight: llama.cpp reuses token_embd
  uint64_t seed = 1;
  float rope_freq_base = 10000.f;
  float rms_eps = 1e-5f;
  float successor = 12.f;  // logit bonus scale of the successor term (above)
};

// Parses "f32", "q4_k", ... (the --type flag) into a matrix type.
Result<kernels::DType> ParseSyntheticType(std::string_view name);
// general.file_type (llama.cpp's llama_ftype) for a matrix type.
uint32_t FileTypeFor(kernels::DType type);

// INVALID_ARGUMENT with a clear message for an unknown arch or type, a
// non-positive size, heads not dividing dim, kv_heads not dividing heads, an
// odd head size, or dims that are not multiples of the type's block size
// (dim and ff must be multiples of 32 for q4_0/q8_0 and 256 for K-quants).
Status ValidateSyntheticModelOptions(const SyntheticModelOptions& opt);

// Builds the whole model in memory. `vocab` supplies the tokenizer.* keys and
// the vocabulary size (length of tokenizer.ggml.tokens).
Result<gguf::GgufWriter> BuildSyntheticModel(const SyntheticModelOptions& opt,
                                             const gguf::GgufFile& vocab);

// Opens `vocab_path`, builds the model and writes it to `out_path`.
Status WriteSyntheticModel(const SyntheticModelOptions& opt, const std::string& vocab_path,
                           const std::string& out_path);

}  // namespace mneme::model
