// Vocab: the tokenizer half of a GGUF file (`tokenizer.ggml.*` metadata),
// loaded once into plain arrays indexed by token id.
//
// Two tokenizer models are supported:
//   "llama" -> kSpm: SentencePiece BPE with scores and byte fallback <0xXX>
//   "gpt2"  -> kBpe: byte-level BPE with ranked merges and a pre-tokenizer
//             chosen by `tokenizer.ggml.pre`
// Anything else is refused with a clear error at load.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gguf/gguf.h"
#include "util/status.h"

namespace mneme {

using TokenId = int32_t;
inline constexpr TokenId kNoToken = -1;

// `tokenizer.ggml.token_type` values, as llama.cpp/SentencePiece number them.
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct Vocab {
  enum class Model { kSpm, kBpe };

  Model model = Model::kSpm;
  std::string model_name;  // tokenizer.ggml.model
  std::string pre;         // tokenizer.ggml.pre ("default" when absent)

  std::vector<std::string> tokens;  // id -> token text as stored
  std::vector<float> scores;        // id -> score (SPM); empty when absent
  std::vector<TokenType> types;     // id -> type (kNormal when absent)
  std::vector<std::pair<std::string, std::string>> merges;  // BPE, in rank order
  std::unordered_map<std::string, TokenId> token_to_id;

  TokenId bos_id = kNoToken;
  TokenId eos_id = kNoToken;
  TokenId eot_id = kNoToken;
  TokenId unk_id = kNoToken;
  TokenId pad_id = kNoToken;
  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;  // SPM: prepend "▁" to the text

  size_t size() const { return tokens.size(); }
  bool IsValid(TokenId id) const { return id >= 0 && static_cast<size_t>(id) < tokens.size(); }

  // Loads and validates the vocabulary (ids in range, array lengths equal,
  // known model and pre-tokenizer). Errors name the file.
  static Result<Vocab> FromGguf(const gguf::GgufFile& file);
};

}  // namespace mneme
