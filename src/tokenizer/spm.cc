// SentencePiece BPE encoding, following llama.cpp's llm_tokenizer_spm so the
// ids match token for token.
//
// Symbols are a doubly linked list over the text (no copies: each symbol is
// a [start, start + n) range). A max-heap holds candidate merges of adjacent
// symbols whose concatenation is a vocab token, best score first, ties to the
// leftmost. A popped candidate is stale when either side has changed since it
// was pushed (a side was absorbed, n == 0, or grew, so the sizes no longer
// add up); stale candidates are skipped.
//
//   text:    ▁  t  h  e
//   symbols: [0]<->[1]<->[2]<->[3]
//   merge "th" (best score): [0]<->[1 "th"]<->[3]  [2] absorbed (n = 0)
//   then push the new neighbours "▁th" and "the", and so on.
#include "tokenizer/spm.h"

#include <cstdio>
#include <queue>

namespace mneme {
namespace {

struct Symbol {
  int prev;
  int next;
  size_t start;  // byte offset in the text
  size_t n;      // length in bytes; 0 once merged into its left neighbour
};

struct Bigram {
  int left;
  int right;
  float score;
  size_t size;  // bytes of the merged text
};

// Orders the heap: higher score on top, then the smaller left index.
struct BigramLess {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

// Length of a UTF-8 sequence from its first byte, as llama.cpp's
// unicode_len_utf8: continuation bytes count as 1, 0xF8..0xFF as 4.
size_t Utf8LenFromLeadByte(unsigned char c) {
  static constexpr size_t kLookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLookup[c >> 4];
}

}  // namespace

SpmEncoder::~SpmEncoder() = default;

Result<std::unique_ptr<SpmEncoder>> SpmEncoder::Create(const Vocab& vocab) {
  if (vocab.model != Vocab::Model::kSpm) {
    return InvalidArgument("SpmEncoder needs a 'llama' (SentencePiece) vocabulary, got '" +
                           vocab.model_name + "'");
  }
  if (vocab.size() == 0) return InvalidArgument("SpmEncoder: empty vocabulary");
  std::unique_ptr<SpmEncoder> encoder(new SpmEncoder());
  encoder->vocab_ = &vocab;
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
    TokenId id = vocab.Find(hex);
    if (id == kNoToken) id = vocab.Find(std::string(1, static_cast<char>(b)));
    if (id == kNoToken) id = vocab.unk_id;
    encoder->byte_tokens_[b] = id;
  }
  return encoder;
}

void SpmEncoder::Encode(std::string_view text, std::vector<TokenId>* out) const {
  if (text.empty()) return;
  const Vocab& vocab = *vocab_;

  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t offset = 0; offset < text.size();) {
    size_t n = std::min(Utf8LenFromLeadByte(static_cast<unsigned char>(text[offset])),
                        text.size() - offset);
    int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, offset + n == text.size() ? -1 : index + 1, offset, n});
    offset += n;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, BigramLess> queue;
  auto try_add = [&](int left, int right) {
    if (left == -1 || right == -1) return;
    const Symbol& l = symbols[left];
    const Symbol& r = symbols[right];
    std::string_view merged = text.substr(l.start, l.n + r.n);
    TokenId id = vocab.Find(merged);
    if (id == kNoToken) return;
    queue.push({left, right, vocab.scores[id], merged.size()});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    Bigram bigram = queue.top();
    queue.pop();
    Symbol& left = symbols[bigram.left];
    Symbol& right = symbols[bigram.right];
    if (left.n == 0 || right.n == 0 || left.n + right.n != bigram.size) continue;  // stale
    left.n += right.n;
    right.n = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    try_add(left.prev, bigram.left);
    try_add(bigram.left, left.next);
  }

  // Every merged symbol is a vocab token by construction; single characters
  // may not be, and fall back to byte tokens.
  for (int i = 0; i != -1; i = symbols[i].next) {
    std::string_view piece = text.substr(symbols[i].start, symbols[i].n);
    TokenId id = vocab.Find(piece);
    if (id != kNoToken) {
      out->push_back(id);
      continue;
    }
    for (char c : piece) {
      TokenId byte_id = byte_tokens_[static_cast<unsigned char>(c)];
      if (byte_id != kNoToken) out->push_back(byte_id);
    }
  }
}

}  // namespace mneme
