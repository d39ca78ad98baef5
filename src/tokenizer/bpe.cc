// BpeEncoder: llama.cpp's byte-level BPE (llm_tokenizer_bpe_session), with
// every string replaced by an integer id so that the hot loop never touches
// std::string:
//
//   word bytes ──byte_ids_──▶ [id id id id]   one symbol per byte
//                ──merge lowest (rank, position) adjacent pair──▶ [id id]
//                ──emit: real token, or llama.cpp's per-byte fallback──▶ out
//
// Ids below vocab.size() are vocab tokens. Strings that BPE can produce but
// the vocab lacks (a merge whose result or part is not a token, or a byte
// whose alphabet character is missing) get "pseudo" ids above that, so every
// symbol has an id; emitting a pseudo id falls back to bytes as llama.cpp
// does. Merges are looked up by (left id << 32 | right id).
//
// Merging order equals llama.cpp's priority queue: always the adjacent pair
// with the lowest merge rank, the leftmost one on ties. Short words use a
// linear scan over a small array (cheaper than a heap); long words use a heap.
// Within one Encode call, a word cache remembers the ids of short words
// (running text repeats its words); nothing is cached across calls, so the
// encoder stays immutable and thread-safe.
#include "tokenizer/bpe.h"

#include <algorithm>
#include <climits>
#include <deque>
#include <functional>
#include <string>
#include <utility>

#include "tokenizer/bpe_tables.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pretokenizer.h"

namespace mneme {
namespace {

// Words of up to this many bytes merge by linear scan, longer ones by heap.
constexpr size_t kLinearMergeMaxSymbols = 48;
// Words of 2..this many bytes go through the per-call word cache.
constexpr size_t kMaxCachedWordBytes = 32;

// A candidate merge in the heap: (rank << 32 | left symbol index), smallest
// first. It is stale when the pair now at `left` has another rank (a pair's
// rank identifies the pair: ranks are unique per pair).
using HeapKey = uint64_t;
inline HeapKey MakeHeapKey(int32_t rank, int32_t left) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(rank)) << 32) | static_cast<uint32_t>(left);
}

struct Symbol {
  TokenId id;
  int32_t prev;
  int32_t next;
};

// Per-Encode scratch buffers, reused across the words of one call.
struct Scratch {
  std::vector<TokenId> ids;
  std::vector<int32_t> ranks;
  std::vector<TokenId> results;
  std::vector<Symbol> symbols;
  std::vector<HeapKey> heap;  // min-heap via std::greater
  std::string encoded;
  WordCache cache;
};

}  // namespace

struct BpeEncoder::Impl {
  explicit Impl(PreTokenizer p) : pre(std::move(p)) {}

  PreTokenizer pre;
  TokenId num_real = 0;
  std::deque<std::string> pseudo_texts;  // stable storage for pseudo ids
  std::vector<std::string_view> texts;   // id -> byte-level text
  StringIdMap text_to_id;                // real and pseudo
  MergeMap merges;
  std::array<TokenId, 256> byte_ids{};           // byte -> id of its alphabet char
  std::array<TokenId, 256> single_byte_token{};  // 1-byte text -> real token or kNoToken
  size_t max_real_token_bytes = 0;

  TokenId Intern(std::string_view text) {
    TokenId id = text_to_id.Find(text, texts);
    if (id != kNoToken) return id;
    id = static_cast<TokenId>(texts.size());
    pseudo_texts.emplace_back(text);
    texts.push_back(pseudo_texts.back());
    text_to_id.Insert(pseudo_texts.back(), id, texts);
    return id;
  }

  TokenId FindReal(std::string_view text) const {
    const TokenId id = text_to_id.Find(text, texts);
    return id < num_real ? id : kNoToken;
  }

  void Emit(TokenId id, std::vector<TokenId>* out) const {
    if (id < num_real) {
      out->push_back(id);
      return;
    }
    // llama.cpp: a symbol that is not a token becomes the tokens of its
    // single bytes (of the byte-level text), skipping bytes that have none.
    for (char c : texts[id]) {
      const TokenId t = single_byte_token[static_cast<unsigned char>(c)];
      if (t != kNoToken) out->push_back(t);
    }
  }

  void EncodeWord(std::string_view word, std::vector<TokenId>* out, Scratch* s) const;
  void EncodeWordUncached(std::string_view word, std::vector<TokenId>* out, Scratch* s) const;
  void MergeLinear(Scratch* s) const;
  void MergeHeap(Scratch* s) const;
};

void BpeEncoder::Impl::EncodeWord(std::string_view word, std::vector<TokenId>* out,
                                  Scratch* s) const {
  if (word.size() < 2 || word.size() > kMaxCachedWordBytes) {
    EncodeWordUncached(word, out, s);
    return;
  }
  const uint64_t hash = HashBytes(word);
  if (s->cache.Find(word, hash, out)) return;
  const size_t before = out->size();
  EncodeWordUncached(word, out, s);
  s->cache.Insert(word, hash, out->data() + before, out->size() - before);
}

void BpeEncoder::Impl::EncodeWordUncached(std::string_view word, std::vector<TokenId>* out,
                                          Scratch* s) const {
  if (pre.ignore_merges() && word.size() <= max_real_token_bytes) {
    s->encoded.clear();
    for (char c : word) s->encoded += byte_level::ByteToUtf8(static_cast<uint8_t>(c));
    const TokenId whole = FindReal(s->encoded);
    if (whole != kNoToken) {
      out->push_back(whole);
      return;
    }
  }
  if (word.size() == 1) {
    Emit(byte_ids[static_cast<unsigned char>(word[0])], out);
    return;
  }
  s->ids.clear();
  for (char c : word) s->ids.push_back(byte_ids[static_cast<unsigned char>(c)]);
  if (s->ids.size() <= kLinearMergeMaxSymbols) {
    MergeLinear(s);
    for (TokenId id : s->ids) Emit(id, out);
  } else {
    MergeHeap(s);
    for (int32_t i = 0; i != -1; i = s->symbols[i].next) Emit(s->symbols[i].id, out);
  }
}

void BpeEncoder::Impl::MergeLinear(Scratch* s) const {
  std::vector<TokenId>& ids = s->ids;
  std::vector<int32_t>& ranks = s->ranks;  // ranks[i]: pair (i, i+1)
  std::vector<TokenId>& results = s->results;
  size_t m = ids.size();
  ranks.resize(m - 1);
  results.resize(m - 1);
  for (size_t i = 0; i + 1 < m; ++i) {
    const MergeMap::Entry* e = merges.Find(ids[i], ids[i + 1]);
    ranks[i] = e ? e->rank : INT_MAX;
    results[i] = e ? e->result : kNoToken;
  }
  while (m > 1) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < m; ++i) {
      if (ranks[i] < ranks[best]) best = i;
    }
    if (ranks[best] == INT_MAX) break;
    ids[best] = results[best];
    std::copy(ids.begin() + best + 2, ids.begin() + m, ids.begin() + best + 1);
    std::copy(ranks.begin() + best + 1, ranks.begin() + m - 1, ranks.begin() + best);
    std::copy(results.begin() + best + 1, results.begin() + m - 1, results.begin() + best);
    --m;
    for (size_t i = (best > 0 ? best - 1 : 0); i <= best && i + 1 < m; ++i) {
      const MergeMap::Entry* e = merges.Find(ids[i], ids[i + 1]);
      ranks[i] = e ? e->rank : INT_MAX;
      results[i] = e ? e->result : kNoToken;
    }
  }
  ids.resize(m);
}

void BpeEncoder::Impl::MergeHeap(Scratch* s) const {
  std::vector<Symbol>& sym = s->symbols;
  std::vector<HeapKey>& heap = s->heap;
  const auto n = static_cast<int32_t>(s->ids.size());
  sym.resize(n);
  for (int32_t i = 0; i < n; ++i) sym[i] = {s->ids[i], i - 1, i + 1 < n ? i + 1 : -1};
  const auto later = std::greater<HeapKey>();
  heap.clear();
  for (int32_t i = 0; i + 1 < n; ++i) {
    if (const MergeMap::Entry* e = merges.Find(sym[i].id, sym[i + 1].id)) {
      heap.push_back(MakeHeapKey(e->rank, i));
    }
  }
  std::make_heap(heap.begin(), heap.end(), later);
  auto add_pair = [&](int32_t left) {
    if (left < 0 || sym[left].next < 0) return;
    if (const MergeMap::Entry* e = merges.Find(sym[left].id, sym[sym[left].next].id)) {
      heap.push_back(MakeHeapKey(e->rank, left));
      std::push_heap(heap.begin(), heap.end(), later);
    }
  };
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const HeapKey top = heap.back();
    heap.pop_back();
    const auto left_index = static_cast<int32_t>(top & 0xFFFFFFFFu);
    const auto rank = static_cast<int32_t>(top >> 32);
    Symbol& left = sym[left_index];
    if (left.id == kNoToken || left.next < 0) continue;  // merged away, or last
    Symbol& right = sym[left.next];
    const MergeMap::Entry* e = merges.Find(left.id, right.id);
    if (e == nullptr || e->rank != rank) continue;  // the pair here changed
    left.id = e->result;
    right.id = kNoToken;
    left.next = right.next;
    if (right.next >= 0) sym[right.next].prev = left_index;
    add_pair(left.prev);
    add_pair(left_index);
  }
}

BpeEncoder::~BpeEncoder() = default;

Result<std::unique_ptr<BpeEncoder>> BpeEncoder::Create(const Vocab& vocab) {
  if (vocab.model != Vocab::Model::kBpe) {
    return InvalidArgument("BpeEncoder needs a byte-level BPE (gpt2) vocabulary, got '" +
                           vocab.model_name + "'");
  }
  MNEME_ASSIGN_OR_RETURN(PreTokenizer pre, PreTokenizer::Create(vocab.pre));
  auto impl = std::make_unique<Impl>(std::move(pre));
  impl->num_real = static_cast<TokenId>(vocab.tokens.size());
  impl->texts.reserve(vocab.tokens.size() + 256);
  impl->text_to_id.Reserve(vocab.tokens.size() + 2 * vocab.merges.size() + 256);
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    const std::string& text = vocab.tokens[id];
    impl->texts.push_back(text);
    impl->max_real_token_bytes = std::max(impl->max_real_token_bytes, text.size());
    // First id wins for duplicate texts, as in llama.cpp's token_to_id.
    if (impl->text_to_id.Find(text, impl->texts) == kNoToken) {
      impl->text_to_id.Insert(text, static_cast<TokenId>(id), impl->texts);
    }
  }
  for (int b = 0; b < 256; ++b) {
    impl->byte_ids[b] = impl->Intern(byte_level::ByteToUtf8(static_cast<uint8_t>(b)));
    const char c = static_cast<char>(b);
    impl->single_byte_token[b] = impl->FindReal(std::string_view(&c, 1));
  }
  impl->merges.Reserve(vocab.merges.size());
  std::string joined;
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const auto& [a, b] = vocab.merges[rank];
    if (a.empty() || b.empty()) continue;  // malformed line: no symbol is empty
    const TokenId left = impl->Intern(a);
    const TokenId right = impl->Intern(b);
    joined.assign(a).append(b);
    const TokenId result = impl->Intern(joined);
    // First rank wins for a repeated pair, as in llama.cpp's bpe_ranks.
    impl->merges.InsertIfAbsent(left, right, static_cast<int32_t>(rank), result);
  }
  std::unique_ptr<BpeEncoder> encoder(new BpeEncoder());
  encoder->impl_ = std::move(impl);
  return encoder;
}

void BpeEncoder::Encode(std::string_view text, std::vector<TokenId>* out) const {
  struct Sink : WordSink {
    const Impl* impl;
    std::vector<TokenId>* out;
    Scratch scratch;
    void OnWord(std::string_view word) override { impl->EncodeWord(word, out, &scratch); }
  } sink;
  sink.impl = impl_.get();
  sink.out = out;
  impl_->pre.Split(text, &sink);
}

const std::vector<std::string_view>& BpeEncoder::SupportedPreTokenizers() {
  return PreTokenizer::SupportedNames();
}

}  // namespace mneme
