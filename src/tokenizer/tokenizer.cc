// Tokenizer: the facade over Vocab + SpmEncoder/BpeEncoder. Owns what both
// models share: special-token splitting, BOS/EOS, the SPM space prefix, and
// token -> piece rendering. See tokenizer.h for the rules and llama.cpp's
// llama_vocab::impl::tokenize / token_to_piece for where they come from.
#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cctype>

#include "tokenizer/bpe.h"
#include "tokenizer/spm.h"

namespace mneme {
namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581 "▁"

void ReplaceAll(std::string* s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s->size());
  size_t pos = 0;
  for (size_t hit; (hit = s->find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(*s, pos, hit - pos);
    out.append(to);
  }
  out.append(*s, pos, std::string::npos);
  *s = std::move(out);
}

bool IsSpace(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "<0x0A>" -> '\n'. Like llama.cpp (strtol on text[3..4]) a malformed byte
// token yields the hex digits that do parse, or 0.
char ByteTokenValue(std::string_view text) {
  int value = 0;
  for (size_t i = 3; i < 5 && i < text.size(); ++i) {
    int digit = HexValue(text[i]);
    if (digit < 0) break;
    value = value * 16 + digit;
  }
  return static_cast<char>(value);
}

}  // namespace

struct Tokenizer::Fragment {
  TokenId token;  // kNoToken for plain text
  size_t offset;  // plain text: bytes [offset, offset + length) of the input
  size_t length;
};

Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::FromGguf(const gguf::GgufFile& file) {
  MNEME_ASSIGN_OR_RETURN(Vocab vocab, Vocab::FromGguf(file));
  Result<Tokenizer> tokenizer = FromVocab(std::move(vocab));
  if (!tokenizer.ok()) return tokenizer.status().WithContext(file.name());
  return tokenizer;
}

Result<Tokenizer> Tokenizer::FromVocab(Vocab vocab) {
  if (vocab.size() == 0) return InvalidArgument("empty vocabulary");
  if (vocab.attrs.size() != vocab.size() || vocab.scores.size() != vocab.size()) {
    return InvalidArgument("vocabulary arrays differ in length (call Vocab::Finalize)");
  }
  Tokenizer t;
  t.vocab_ = std::make_unique<Vocab>(std::move(vocab));
  const Vocab& v = *t.vocab_;
  if (v.add_bos && !v.IsValid(v.bos_id))
    return InvalidArgument("add_bos is set but there is no BOS token");
  if (v.add_eos && !v.IsValid(v.eos_id))
    return InvalidArgument("add_eos is set but there is no EOS token");
  if (v.model == Vocab::Model::kSpm) {
    MNEME_ASSIGN_OR_RETURN(t.spm_, SpmEncoder::Create(v));
  } else {
    MNEME_ASSIGN_OR_RETURN(t.bpe_, BpeEncoder::Create(v));
  }

  for (TokenId id = 0; id < static_cast<TokenId>(v.size()); ++id) {
    if (v.HasAttr(id, kAttrControl | kAttrUserDefined | kAttrUnknown)) {
      t.special_by_length_.push_back(id);
    }
  }
  std::stable_sort(t.special_by_length_.begin(), t.special_by_length_.end(),
                   [&v](TokenId a, TokenId b) { return v.tokens[a].size() > v.tokens[b].size(); });

  t.pieces_.reserve(v.size());
  for (TokenId id = 0; id < static_cast<TokenId>(v.size()); ++id) {
    const std::string& text = v.tokens[id];
    std::string piece;
    if (v.HasAttr(id, kAttrUnknown | kAttrControl | kAttrUserDefined)) {
      piece = text;
    } else if (v.HasAttr(id, kAttrNormal)) {
      if (v.model == Vocab::Model::kSpm) {
        piece = text;
        ReplaceAll(&piece, kSpmSpace, " ");
      } else {
        piece = ByteLevelDecode(text);
      }
    } else if (v.HasAttr(id, kAttrByte)) {
      piece = std::string(1, ByteTokenValue(text));
    }  // unused / undefined tokens render as nothing
    t.pieces_.push_back(std::move(piece));
  }
  return t;
}

std::vector<Tokenizer::Fragment> Tokenizer::Partition(std::string_view text,
                                                      bool parse_special) const {
  std::vector<Fragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({kNoToken, 0, text.size()});
  std::vector<Fragment> next;
  for (TokenId id : special_by_length_) {
    const uint32_t attr = vocab_->attrs[id];
    if (!parse_special && (attr & (kAttrControl | kAttrUnknown))) continue;
    const std::string& special = vocab_->tokens[id];
    next.clear();
    bool changed = false;
    for (const Fragment& f : fragments) {
      if (f.token != kNoToken) {
        next.push_back(f);
        continue;
      }
      size_t base = f.offset;
      size_t length = f.length;
      while (length > 0) {
        size_t match = text.substr(0, base + length).find(special, base);
        if (match == std::string_view::npos) {
          next.push_back({kNoToken, base, length});
          break;
        }
        changed = true;
        size_t left = match - base;
        if (attr & kAttrLstrip) {
          while (left > 0 && IsSpace(text[base + left - 1])) --left;
        }
        if (left > 0) next.push_back({kNoToken, base, left});
        next.push_back({id, 0, 0});
        size_t right = match + special.size();
        size_t end = base + length;
        if (attr & kAttrRstrip) {
          while (right < end && IsSpace(text[right])) ++right;
        }
        base = right;
        length = end - right;
      }
    }
    if (changed) fragments.swap(next);
  }
  return fragments;
}

std::vector<TokenId> Tokenizer::Encode(std::string_view text, EncodeOptions options) const {
  const Vocab& v = *vocab_;
  std::vector<TokenId> out;
  if (options.add_special && v.add_bos) out.push_back(v.bos_id);
  const std::vector<Fragment> fragments = Partition(text, options.parse_special);
  if (v.model == Vocab::Model::kSpm) {
    bool after_special = true;  // the start of the text counts as "after special"
    std::string piece;
    for (const Fragment& f : fragments) {
      if (f.token != kNoToken) {
        out.push_back(f.token);
        after_special = true;
        continue;
      }
      piece.clear();
      if (v.add_space_prefix && after_special) piece.push_back(' ');
      piece.append(text.substr(f.offset, f.length));
      ReplaceAll(&piece, " ", kSpmSpace);
      spm_->Encode(piece, &out);
      after_special = false;
    }
  } else {
    for (const Fragment& f : fragments) {
      if (f.token != kNoToken) {
        out.push_back(f.token);
      } else {
        bpe_->Encode(text.substr(f.offset, f.length), &out);
      }
    }
  }
  if (options.add_special && v.add_eos) out.push_back(v.eos_id);
  return out;
}

std::string Tokenizer::TokenToPiece(TokenId id, bool render_special) const {
  if (!vocab_->IsValid(id)) return "";
  if (!render_special && vocab_->HasAttr(id, kAttrControl | kAttrUnknown)) return "";
  return pieces_[id];
}

std::string Tokenizer::Decode(std::span<const TokenId> ids, bool render_special) const {
  std::string out;
  bool strip_space = vocab_->add_space_prefix;
  for (TokenId id : ids) {
    if (!vocab_->IsValid(id)) continue;
    if (!render_special && vocab_->HasAttr(id, kAttrControl | kAttrUnknown)) continue;
    const std::string& piece = pieces_[id];
    if (piece.empty()) continue;
    if (strip_space && piece[0] == ' ') {
      out.append(piece, 1, std::string::npos);
    } else {
      out.append(piece);
    }
    strip_space = false;
  }
  return out;
}

}  // namespace mneme
