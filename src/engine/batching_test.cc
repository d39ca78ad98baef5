// Batching invariants of ModelRunner: a sequence decoded inside mixed
// prefill + decode batches (any chunking of its prompt, any thread count)
// produces the logits and tokens it produces alone, and a sequence that
// starts from shared prefix blocks (BlockTable::FromBlocks, Fork, copy on
// write) produces the tokens of one that computed the prefix itself.
//
// Exactness: every weight product goes through kernels::Gemm, which gives a
// row the same bits whatever the number of rows in the batch and the row's
// place in it (a partial register tile runs the kernel for its own row
// count; decode reads prepacked weights with the same per-element
// operations), and Attention computes each (row, head) the same way however
// rows are grouped. So the logits are compared bit for bit, for F32 and F16
// KV, on stories260K (F32 weights) and on tiny Q8_0 / Q4_K models.
#include <gtest/gtest.h>

#include <map>

#include "engine/engine_test_util.h"

namespace mneme::engine {
namespace {

using testing::Harness;

struct Trace {
  std::vector<TokenId> tokens;             // generated
  std::vector<std::vector<float>> logits;  // after each step that sampled
};

// Greedy decoding of each prompt alone: prefill at once, then decode.
std::vector<Trace> RunAlone(Harness& h, const std::vector<std::vector<TokenId>>& prompts, int n) {
  std::vector<Trace> traces;
  for (size_t i = 0; i < prompts.size(); ++i) {
    Sequence seq(static_cast<int64_t>(i), prompts[i], h.pool.get());
    Trace t;
    for (int k = 0; k < n; ++k) {
      Result<std::vector<float>> logits = h.RunAll(&seq);
      EXPECT_TRUE(logits.ok()) << logits.status().ToString();
      if (!logits.ok()) return {};
      t.tokens.push_back(testing::Argmax(*logits));
      t.logits.push_back(*logits);
      seq.tokens.push_back(t.tokens.back());
    }
    traces.push_back(std::move(t));
  }
  return traces;
}

// All prompts at once: each step, every sequence contributes a prefill
// chunk of at most `chunk` tokens or its decode step; sequence i joins at
// step i (so prefills and decodes mix).
std::vector<Trace> RunBatched(Harness& h, const std::vector<std::vector<TokenId>>& prompts, int n,
                              int chunk) {
  std::vector<Sequence> seqs;
  for (size_t i = 0; i < prompts.size(); ++i) {
    seqs.emplace_back(static_cast<int64_t>(i), prompts[i], h.pool.get());
  }
  std::vector<Trace> traces(prompts.size());
  for (int step = 0;; ++step) {
    Batch batch;
    for (size_t i = 0; i < seqs.size(); ++i) {
      Sequence& s = seqs[i];
      if (static_cast<int>(i) > step || static_cast<int>(traces[i].tokens.size()) == n) continue;
      const int end = std::min(s.size(), s.num_computed + chunk);
      EXPECT_TRUE(s.block_table.Append(end - s.block_table.num_tokens()).ok());
      EXPECT_TRUE(batch.Add(&s, s.num_computed, end, end == s.size()).ok());
    }
    if (batch.empty()) break;
    Logits logits;
    Status st = h.runner->Forward(batch, &logits);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) return {};
    for (int j = 0; j < logits.size(); ++j) {
      const size_t i = static_cast<size_t>(
          batch.seqs()[static_cast<size_t>(logits.entry[static_cast<size_t>(j)])]->id);
      const TokenId next = testing::Argmax(logits.Row(j));
      traces[i].tokens.push_back(next);
      traces[i].logits.emplace_back(logits.Row(j).begin(), logits.Row(j).end());
      seqs[i].tokens.push_back(next);
    }
  }
  return traces;
}

// Alone on one thread; batched on three (uneven column and head splits),
// for several prefill chunk sizes: the same tokens and the same logit bits.
void ExpectBatchedEqualsAlone(const testing::Loaded& m,
                              const std::vector<std::vector<TokenId>>& prompts, const char* what) {
  constexpr int kTokens = 20;
  for (kv::KvDType kv_type : {kv::KvDType::kF16, kv::KvDType::kF32}) {
    const char* kv_name = kv_type == kv::KvDType::kF32 ? "kv f32" : "kv f16";
    auto h1 = Harness::Make(m, kv_type, 64, /*num_threads=*/1);
    ASSERT_NE(h1, nullptr);
    const std::vector<Trace> alone = RunAlone(*h1, prompts, kTokens);
    auto h = Harness::Make(m, kv_type, 64, /*num_threads=*/3);
    ASSERT_NE(h, nullptr);
    ASSERT_EQ(alone.size(), prompts.size());
    for (int chunk : {1, 3, 5, 16, 1 << 20}) {
      const std::vector<Trace> batched = RunBatched(*h, prompts, kTokens, chunk);
      ASSERT_EQ(batched.size(), prompts.size());
      for (size_t i = 0; i < prompts.size(); ++i) {
        EXPECT_EQ(batched[i].tokens, alone[i].tokens)
            << what << " " << kv_name << " prompt " << i << " chunk " << chunk;
        ASSERT_EQ(batched[i].logits.size(), alone[i].logits.size());
        for (size_t k = 0; k < batched[i].logits.size(); ++k) {
          EXPECT_EQ(batched[i].logits[k], alone[i].logits[k])
              << what << " " << kv_name << " prompt " << i << " chunk " << chunk << " step " << k
              << ": max relative difference "
              << testing::RelativeMaxDiff(batched[i].logits[k], alone[i].logits[k]);
        }
      }
      EXPECT_EQ(h->pool->num_used(), 0);  // the sequences gave their blocks back
    }
  }
}

TEST(BatchingTest, BatchedEqualsAloneForAnyChunking) {
  auto m = testing::LoadStories();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ExpectBatchedEqualsAlone(
      **m,
      {{1},
       {1, 403, 407, 261, 378},
       {1, 65, 88, 400, 270, 300, 301, 9, 290, 356, 290, 272},
       {1, 9, 8, 7, 6, 5, 4, 3, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}},
      "stories260K");
}

// The int8 Gemm paths (Q8_0 activations; Q8_K for K-quants) on tiny models.
TEST(BatchingTest, QuantizedBatchedEqualsAloneForAnyChunking) {
  using model::testing::MakeTinyModel;
  const std::vector<std::vector<TokenId>> prompts = {
      {1}, {1, 5, 7, 9}, {2, 30, 31, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}};
  struct Case {
    gguf::TensorType type;
    model::testing::TinySpec spec;
    const char* what;
  };
  const Case cases[] = {
      {gguf::TensorType::kQ8_0, {.arch = "llama", .ffn = 64}, "tiny q8_0"},
      {gguf::TensorType::kQ4_K, {.arch = "qwen2", .dim = 256, .heads = 8, .ffn = 256}, "tiny q4_K"},
  };
  for (const Case& c : cases) {
    model::testing::TinyModel tiny = MakeTinyModel(c.spec);
    testing::SetMatrixType(&tiny, c.type);
    auto m = testing::LoadTiny(tiny);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    ExpectBatchedEqualsAlone(**m, prompts, c.what);
  }
}

// Greedy continuation of `seq` for n steps (its uncomputed tokens first).
std::vector<std::vector<float>> Continue(Harness& h, Sequence* seq, int n) {
  std::vector<std::vector<float>> out;
  for (int k = 0; k < n; ++k) {
    Result<std::vector<float>> logits = h.RunAll(seq);
    EXPECT_TRUE(logits.ok()) << logits.status().ToString();
    if (!logits.ok()) break;
    out.push_back(*logits);
    seq->tokens.push_back(testing::Argmax(*logits));
  }
  return out;
}

TEST(BatchingTest, SharedPrefixBlocksGiveTheSameTokens) {
  auto m = testing::LoadStories();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto h = Harness::Make(**m, kv::KvDType::kF16);
  ASSERT_NE(h, nullptr);
  std::vector<TokenId> prefix = {1};
  for (int i = 0; i < 36; ++i) prefix.push_back(static_cast<TokenId>(260 + (i * 37) % 240));
  // 37 tokens: two full blocks and a partial third one, shared.
  const std::vector<TokenId> q1 = {300, 301, 302, 303, 304, 305};
  const std::vector<TokenId> q2 = {400, 401, 402, 403, 404};
  const auto concat = [&](const std::vector<TokenId>& q) {
    std::vector<TokenId> all = prefix;
    all.insert(all.end(), q.begin(), q.end());
    return all;
  };

  // Computed from scratch, in one chunk each.
  Sequence fresh1(10, concat(q1), h->pool.get());
  Sequence fresh2(11, concat(q2), h->pool.get());
  const auto want1 = Continue(*h, &fresh1, 8);
  const auto want2 = Continue(*h, &fresh2, 8);

  // The prefix computed once; one sequence starts from its blocks
  // (FromBlocks), another is a Fork, and the original goes on too.
  Sequence owner(1, prefix, h->pool.get());
  ASSERT_TRUE(h->RunAll(&owner).ok());
  const int used = h->pool->num_used();
  Result<kv::BlockTable> table =
      kv::BlockTable::FromBlocks(h->pool.get(), owner.block_table.blocks(), 37);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  Sequence from_blocks(2, concat(q1), nullptr);
  from_blocks.block_table = std::move(*table);
  from_blocks.num_computed = 37;
  Sequence forked(3, concat(q2), nullptr);
  forked.block_table = owner.block_table.Fork();
  forked.num_computed = 37;
  EXPECT_EQ(h->pool->num_used(), used);  // sharing takes no new blocks

  const auto got1 = Continue(*h, &from_blocks, 8);
  const auto got2 = Continue(*h, &forked, 8);
  owner.tokens.insert(owner.tokens.end(), q1.begin(), q1.end());
  const auto got_owner = Continue(*h, &owner, 8);
  // Same rows through the same kernels: bit-identical logits.
  EXPECT_EQ(got1, want1);
  EXPECT_EQ(got2, want2);
  EXPECT_EQ(got_owner, want1);  // the others' copy on write left it intact
  EXPECT_EQ(from_blocks.tokens, fresh1.tokens);
  EXPECT_EQ(forked.tokens, fresh2.tokens);
  // The two full prefix blocks are still shared by all three.
  EXPECT_EQ(h->pool->RefCount(owner.block_table.blocks()[0]), 3);
  EXPECT_EQ(h->pool->RefCount(owner.block_table.blocks()[1]), 3);
}

}  // namespace
}  // namespace mneme::engine
