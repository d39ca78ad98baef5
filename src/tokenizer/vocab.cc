// Vocab::FromGguf: reads `tokenizer.ggml.*` the way llama.cpp's
// llama_vocab::impl::load does, so that a file means the same thing to both.
//
// Order of work (it matters: later steps read what earlier ones set):
//   1. model ("llama"/"gpt2") and its defaults: special ids, add_bos,
//      add_space_prefix; for BPE the merges and the pre-tokenizer's defaults
//   2. tokens, scores, token types -> attributes; token_to_id
//   3. special token ids and add_bos/add_eos from the file
//   4. text-based fix-ups of attributes and the end-of-generation set
//      (vocab_fixups.cc)
#include "tokenizer/vocab.h"

#include <algorithm>
#include <initializer_list>
#include <optional>

#include "tokenizer/vocab_fixups.h"

namespace mneme {
namespace {

constexpr uint64_t kU32None = 0xFFFFFFFFull;

uint32_t AttrFromType(int32_t type) {
  switch (static_cast<TokenType>(type)) {
    case TokenType::kNormal: return kAttrNormal;
    case TokenType::kUnknown: return kAttrUnknown;
    case TokenType::kControl: return kAttrControl;
    case TokenType::kUserDefined: return kAttrUserDefined;
    case TokenType::kUnused: return kAttrUnused;
    case TokenType::kByte: return kAttrByte;
    case TokenType::kUndefined: return kAttrUndefined;
  }
  return kAttrUndefined;
}

bool OneOf(std::string_view s, std::initializer_list<std::string_view> options) {
  return std::find(options.begin(), options.end(), s) != options.end();
}

// BPE pre-tokenizers whose models want BOS by default (llama.cpp sets
// add_bos for these before reading tokenizer.ggml.add_bos_token).
bool PreAddsBos(std::string_view pre) {
  return OneOf(pre, {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
                     "midm-2.0", "lfm2", "jina-v5-nano", "tekken", "chameleon"});
}

class Loader {
 public:
  explicit Loader(const gguf::GgufFile& file) : file_(file) {}

  Result<Vocab> Load();

 private:
  Status Error(StatusCode code, const std::string& what) const {
    return Status(code, file_.name() + ": " + what);
  }
  Status LoadModel();
  Status LoadTokens();
  Status LoadSpecialIds();
  // Reads an optional bool key into *out; a wrong type is an error.
  Status OptionalBool(std::string_view key, bool* out) const;
  // Reads an optional token id key. Absent: *out unchanged. 0xFFFFFFFF or
  // -1: none. Any other id outside the vocabulary: error.
  Status OptionalId(std::string_view key, TokenId* out) const;

  const gguf::GgufFile& file_;
  Vocab v_;
  // Fill-in-the-middle ids: prefix, suffix, middle, pad, repo, file sep.
  TokenId fim_[6] = {kNoToken, kNoToken, kNoToken, kNoToken, kNoToken, kNoToken};
};

Status Loader::OptionalBool(std::string_view key, bool* out) const {
  const gguf::Value* value = file_.Find(key);
  if (value == nullptr) return Status::Ok();
  std::optional<bool> b = value->AsBool();
  if (!b) return Error(StatusCode::kDataLoss, "key '" + std::string(key) + "' is not a bool");
  *out = *b;
  return Status::Ok();
}

Status Loader::OptionalId(std::string_view key, TokenId* out) const {
  const gguf::Value* value = file_.Find(key);
  if (value == nullptr) return Status::Ok();
  if (!value->IsInteger()) {
    return Error(StatusCode::kDataLoss, "key '" + std::string(key) + "' is not an integer");
  }
  std::optional<int64_t> signed_id = value->AsInt();
  std::optional<uint64_t> unsigned_id = value->AsUint();
  if ((signed_id && *signed_id == -1) || (unsigned_id && *unsigned_id == kU32None)) {
    *out = kNoToken;
    return Status::Ok();
  }
  if (!unsigned_id || *unsigned_id >= v_.size()) {
    std::string shown = unsigned_id ? std::to_string(*unsigned_id) : std::to_string(*signed_id);
    return Error(StatusCode::kDataLoss, "key '" + std::string(key) + "' = " + shown +
                                            " is outside the vocabulary (" +
                                            std::to_string(v_.size()) + " tokens)");
  }
  *out = static_cast<TokenId>(*unsigned_id);
  return Status::Ok();
}

Status Loader::LoadModel() {
  MNEME_ASSIGN_OR_RETURN(std::string_view model, file_.GetString("tokenizer.ggml.model"));
  v_.model_name = std::string(model);
  v_.pre = "default";
  if (file_.Find("tokenizer.ggml.pre") != nullptr) {
    MNEME_ASSIGN_OR_RETURN(std::string_view pre, file_.GetString("tokenizer.ggml.pre"));
    if (!pre.empty()) v_.pre = std::string(pre);
  }
  if (model == "llama") {
    v_.model = Vocab::Model::kSpm;
    v_.bos_id = 1;  // llama.cpp's defaults for a file without the id keys
    v_.eos_id = 2;
    v_.unk_id = 0;
    v_.add_space_prefix = true;
    v_.add_bos = true;
    v_.add_eos = false;
  } else if (model == "gpt2") {
    v_.model = Vocab::Model::kBpe;
    v_.bos_id = 11;  // sic: llama.cpp's legacy defaults (Falcon's <|endoftext|>)
    v_.eos_id = 11;
    v_.add_space_prefix = false;
    v_.add_bos = PreAddsBos(v_.pre);
    if (v_.pre == "glm4" || v_.pre == "chatglm-bpe") v_.bos_id = kNoToken;
    MNEME_ASSIGN_OR_RETURN(std::vector<std::string_view> merges,
                           file_.GetStringArray("tokenizer.ggml.merges"));
    v_.merges.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
      std::string_view m = merges[i];
      size_t space = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
      if (space == std::string_view::npos) {
        return Error(StatusCode::kDataLoss,
                     "merge #" + std::to_string(i) + " '" + std::string(m) + "' has no space");
      }
      v_.merges.emplace_back(std::string(m.substr(0, space)), std::string(m.substr(space + 1)));
    }
  } else {
    return Error(StatusCode::kUnimplemented,
                 "tokenizer model '" + std::string(model) +
                     "' (tokenizer.ggml.model) is not supported; supported: 'llama' "
                     "(SentencePiece) and 'gpt2' (byte-level BPE)");
  }
  return OptionalBool("tokenizer.ggml.add_space_prefix", &v_.add_space_prefix);
}

Status Loader::LoadTokens() {
  MNEME_ASSIGN_OR_RETURN(std::vector<std::string_view> tokens,
                         file_.GetStringArray("tokenizer.ggml.tokens"));
  if (tokens.empty()) return Error(StatusCode::kDataLoss, "tokenizer.ggml.tokens is empty");
  if (tokens.size() >= static_cast<size_t>(INT32_MAX)) {
    return Error(StatusCode::kDataLoss, "tokenizer.ggml.tokens is too long");
  }
  const size_t n = tokens.size();

  v_.scores.assign(n, 0.0f);
  if (const gguf::Value* scores = file_.Find("tokenizer.ggml.scores")) {
    const gguf::Array* array = scores->AsArray();
    if (array == nullptr || (array->element_type != gguf::ValueType::kFloat32 &&
                             array->element_type != gguf::ValueType::kInt32)) {
      return Error(StatusCode::kDataLoss,
                   "tokenizer.ggml.scores is not an array of FLOAT32 or INT32");
    }
    if (array->items.size() != n) {
      return Error(StatusCode::kDataLoss,
                   "tokenizer.ggml.scores has " + std::to_string(array->items.size()) +
                       " entries but there are " + std::to_string(n) + " tokens");
    }
    for (size_t i = 0; i < n; ++i) {
      v_.scores[i] = static_cast<float>(array->items[i].AsFloat().value_or(0.0));
    }
  }

  v_.types.assign(n, TokenType::kNormal);
  v_.attrs.assign(n, kAttrNormal);
  if (file_.Find("tokenizer.ggml.token_type") != nullptr) {
    MNEME_ASSIGN_OR_RETURN(std::vector<int32_t> types,
                           file_.GetInt32Array("tokenizer.ggml.token_type"));
    if (types.size() != n) {
      return Error(StatusCode::kDataLoss,
                   "tokenizer.ggml.token_type has " + std::to_string(types.size()) +
                       " entries but there are " + std::to_string(n) + " tokens");
    }
    for (size_t i = 0; i < n; ++i) {
      v_.types[i] = static_cast<TokenType>(types[i]);
      v_.attrs[i] = AttrFromType(types[i]);
    }
  }

  v_.tokens.reserve(n);
  v_.token_to_id.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string text =
        tokens[i].empty() ? "[EMPTY_" + std::to_string(i) + "]" : std::string(tokens[i]);
    auto [it, inserted] = v_.token_to_id.emplace(text, static_cast<TokenId>(i));
    if (!inserted) {
      return Error(StatusCode::kDataLoss, "duplicate token '" + text + "' (ids " +
                                              std::to_string(it->second) + " and " +
                                              std::to_string(i) + ")");
    }
    v_.tokens.push_back(std::move(text));
  }
  return Status::Ok();
}

Status Loader::LoadSpecialIds() {
  // A default id outside this vocabulary is dropped (llama.cpp does too).
  for (TokenId* id : {&v_.bos_id, &v_.eos_id, &v_.unk_id}) {
    if (*id != kNoToken && !v_.IsValid(*id)) *id = kNoToken;
  }
  MNEME_RETURN_IF_ERROR(OptionalId("tokenizer.ggml.bos_token_id", &v_.bos_id));
  MNEME_RETURN_IF_ERROR(OptionalId("tokenizer.ggml.eos_token_id", &v_.eos_id));
  MNEME_RETURN_IF_ERROR(OptionalId("tokenizer.ggml.eot_token_id", &v_.eot_id));
  MNEME_RETURN_IF_ERROR(OptionalId("tokenizer.ggml.eom_token_id", &v_.eom_id));
  MNEME_RETURN_IF_ERROR(OptionalId("tokenizer.ggml.unknown_token_id", &v_.unk_id));
  MNEME_RETURN_IF_ERROR(OptionalId("tokenizer.ggml.seperator_token_id", &v_.sep_id));
  MNEME_RETURN_IF_ERROR(OptionalId("tokenizer.ggml.padding_token_id", &v_.pad_id));
  static constexpr std::string_view kFimKeys[6] = {"fim_pre", "fim_suf", "fim_mid",
                                                   "fim_pad", "fim_rep", "fim_sep"};
  for (int i = 0; i < 6; ++i) {
    std::string key = "tokenizer.ggml." + std::string(kFimKeys[i]) + "_token_id";
    MNEME_RETURN_IF_ERROR(OptionalId(key, &fim_[i]));
  }
  MNEME_RETURN_IF_ERROR(OptionalId("tokenizer.ggml.prefix_token_id", &fim_[0]));  // deprecated
  MNEME_RETURN_IF_ERROR(OptionalId("tokenizer.ggml.suffix_token_id", &fim_[1]));
  MNEME_RETURN_IF_ERROR(OptionalId("tokenizer.ggml.middle_token_id", &fim_[2]));
  MNEME_RETURN_IF_ERROR(OptionalBool("tokenizer.ggml.add_bos_token", &v_.add_bos));
  MNEME_RETURN_IF_ERROR(OptionalBool("tokenizer.ggml.add_eos_token", &v_.add_eos));
  if (v_.add_bos && v_.bos_id == kNoToken) {
    return Error(StatusCode::kDataLoss, "add_bos_token is true but there is no BOS token");
  }
  if (v_.add_eos && v_.eos_id == kNoToken) {
    return Error(StatusCode::kDataLoss, "add_eos_token is true but there is no EOS token");
  }
  return Status::Ok();
}

Result<Vocab> Loader::Load() {
  MNEME_RETURN_IF_ERROR(LoadModel());
  MNEME_RETURN_IF_ERROR(LoadTokens());
  MNEME_RETURN_IF_ERROR(LoadSpecialIds());
  FixupInput input;
  for (int i = 0; i < 6; ++i) input.fim[i] = fim_[i];
  if (const gguf::Value* value = file_.Find("general.name")) {
    input.general_name = std::string(value->AsString().value_or(""));
  }
  if (const gguf::Value* value = file_.Find("general.architecture")) {
    input.architecture = std::string(value->AsString().value_or(""));
  }
  ApplyLlamaCppFixups(input, &v_);
  return std::move(v_);
}

}  // namespace

TokenId Vocab::Find(std::string_view text) const {
  auto it = token_to_id.find(text);
  return it == token_to_id.end() ? kNoToken : it->second;
}

bool Vocab::IsEog(TokenId id) const {
  return id != kNoToken && std::binary_search(eog_ids.begin(), eog_ids.end(), id);
}

Result<Vocab> Vocab::FromGguf(const gguf::GgufFile& file) {
  return Loader(file).Load();
}

Status Vocab::Finalize() {
  if (tokens.empty()) return InvalidArgument("vocabulary is empty");
  if (types.empty()) types.assign(tokens.size(), TokenType::kNormal);
  if (scores.empty()) scores.assign(tokens.size(), 0.0f);
  if (types.size() != tokens.size() || scores.size() != tokens.size()) {
    return InvalidArgument("tokens, scores and types differ in length");
  }
  token_to_id.clear();
  attrs.clear();
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!token_to_id.emplace(tokens[i], static_cast<TokenId>(i)).second) {
      return InvalidArgument("duplicate token '" + tokens[i] + "'");
    }
    attrs.push_back(AttrFromType(static_cast<int32_t>(types[i])));
  }
  for (TokenId id : {bos_id, eos_id, eot_id, eom_id, unk_id, pad_id, sep_id}) {
    if (id != kNoToken && !IsValid(id)) return InvalidArgument("special token id out of range");
  }
  eog_ids.clear();
  for (TokenId id : {eos_id, eot_id, eom_id}) {
    if (id != kNoToken) eog_ids.push_back(id);
  }
  std::sort(eog_ids.begin(), eog_ids.end());
  eog_ids.erase(std::unique(eog_ids.begin(), eog_ids.end()), eog_ids.end());
  return Status::Ok();
}

}  // namespace mneme
