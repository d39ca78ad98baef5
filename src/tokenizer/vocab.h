// Vocab: the tokenizer half of a GGUF file (`tokenizer.ggml.*` metadata),
// loaded once into plain arrays indexed by token id.
//
// Two tokenizer models are supported:
//   "llama" -> kSpm: SentencePiece BPE with scores and byte fallback <0xXX>
//   "gpt2"  -> kBpe: byte-level BPE with ranked merges and a pre-tokenizer
//             chosen by `tokenizer.ggml.pre`
// Anything else ("bert", "t5", "rwkv", "none", ...) is refused at load.
//
// Loading follows llama.cpp (llama-vocab.cpp) so that the same file gives the
// same ids: the same defaults for missing keys, the same per-token attributes
// (a token's type from `token_type`, plus llama.cpp's fix-ups by token text:
// end-of-generation tokens become control tokens, control tokens named
// "unused" are unused, Phi-3's special tokens strip whitespace to their right,
// ...). Where llama.cpp only warns about a malformed file (an out-of-range
// special token id, arrays of different lengths) we refuse it instead.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
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

// Per-token attribute bits (llama.cpp's llama_token_attr). Derived from the
// token type at load, then adjusted by the text-based fix-ups above.
enum TokenAttr : uint32_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1u << 0,
  kAttrUnused = 1u << 1,
  kAttrNormal = 1u << 2,
  kAttrControl = 1u << 3,
  kAttrUserDefined = 1u << 4,
  kAttrByte = 1u << 5,
  kAttrLstrip = 1u << 7,  // matching the token eats whitespace to its left
  kAttrRstrip = 1u << 8,  // ... and to its right
};

// Hash and equality that let an unordered_map<std::string, V> be searched
// with a std::string_view (no temporary string per lookup).
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>>;

struct Vocab {
  enum class Model { kSpm, kBpe };

  Model model = Model::kSpm;
  std::string model_name;  // tokenizer.ggml.model
  std::string pre;         // tokenizer.ggml.pre ("default" when absent)

  std::vector<std::string> tokens;  // id -> token text as stored ("[EMPTY_i]" for "")
  std::vector<float> scores;        // id -> score; all 0 when the file has none
  std::vector<TokenType> types;     // id -> type (kNormal when absent)
  std::vector<uint32_t> attrs;      // id -> TokenAttr bits
  std::vector<std::pair<std::string, std::string>> merges;  // BPE, in rank order
  TokenMap token_to_id;

  TokenId bos_id = kNoToken;
  TokenId eos_id = kNoToken;
  TokenId eot_id = kNoToken;
  TokenId eom_id = kNoToken;
  TokenId unk_id = kNoToken;
  TokenId pad_id = kNoToken;
  TokenId sep_id = kNoToken;
  // Tokens that end generation (eos, eot, eom and llama.cpp's list of
  // end-of-turn texts such as "<|im_end|>"), sorted.
  std::vector<TokenId> eog_ids;
  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;  // SPM: prepend "▁" to the text

  size_t size() const { return tokens.size(); }
  bool IsValid(TokenId id) const { return id >= 0 && static_cast<size_t>(id) < tokens.size(); }
  // The id of the token whose text is exactly `text`, or kNoToken.
  TokenId Find(std::string_view text) const;
  bool HasAttr(TokenId id, uint32_t attr) const { return (attrs[id] & attr) != 0; }
  bool IsEog(TokenId id) const;

  // Loads and validates the vocabulary (ids in range, array lengths equal,
  // known model, no duplicate token texts). Errors name the file.
  static Result<Vocab> FromGguf(const gguf::GgufFile& file);

  // Recomputes token_to_id and attrs from tokens/types (as FromGguf does,
  // without the text-based fix-ups). For vocabularies built in tests.
  Status Finalize();
};

}  // namespace mneme
