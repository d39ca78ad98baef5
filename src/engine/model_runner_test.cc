// ModelRunner against the golden ReferenceForward (last-position logits at
// every step, llama / qwen2 / qwen3, F32 and quantized weights, F32 and F16
// KV), the stories260K greedy golden, and the error paths.
//
// Tolerances, as max |diff| relative to the reference's logit range (the
// values measured when written are in brackets):
//   F32 weights + F32 KV: 1e-5. Only summation order and precision differ
//     (f32 sums here, double sums in the reference) [2e-7].
//   F16 KV: 2e-3. q, K, V and the attention probabilities are rounded to F16
//     (relative 2^-11 ~ 5e-4 each, as llama.cpp does), through 2 layers
//     [1.4e-4].
//   F16 / BF16 weights: activations rounded to F16 / BF16 before each
//     product (2^-11 / 2^-8 relative) [F16 ~1e-4, BF16 ~1e-3]: 2e-3 / 2e-2.
//   Q8_0 / Q4_0 / K-quant weights: 3e-2. Activations are quantized to Q8_0
//     or Q8_K before each product (error up to 1/254 of a block's max, as
//     llama.cpp); the reference keeps them in f32 [~6e-3].
#include "engine/model_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "engine/engine_test_util.h"
#include "model/reference_forward.h"
#include "tokenizer/tokenizer.h"

namespace mneme::engine {
namespace {

using model::testing::MakeTinyModel;
using model::testing::TinyModel;
using testing::Harness;
using ::testing::HasSubstr;
using testing::Loaded;

struct ParityCase {
  const char* arch;
  gguf::TensorType weights;
  kv::KvDType kv;
  double tolerance;
};

// Feeds a prompt as one chunk, then 12 teacher-forced decode steps, to the
// engine and to the reference; compares the logits after every step.
void ExpectParity(const Loaded& m, kv::KvDType kv_type, double tolerance, const char* what) {
  auto h = Harness::Make(m, kv_type);
  ASSERT_NE(h, nullptr);
  model::ReferenceForward ref(m.config, m.weights);
  const int64_t vocab = m.config.vocab_size;
  std::vector<TokenId> prompt = {1, 7, 3, 22, 9, 14, 5, 30, 2, 11};
  Sequence seq(1, prompt, h->pool.get());
  Result<std::vector<float>> ours = h->RunAll(&seq);
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  Result<std::vector<float>> theirs = ref.Eval(prompt);
  ASSERT_TRUE(theirs.ok()) << theirs.status().ToString();
  double worst = testing::RelativeMaxDiff(*ours, *theirs);
  for (int step = 0; step < 12; ++step) {
    const TokenId next = static_cast<TokenId>((step * 7 + 3) % vocab);
    seq.tokens.push_back(next);
    ours = h->RunAll(&seq);
    ASSERT_TRUE(ours.ok()) << ours.status().ToString();
    theirs = ref.Eval({&next, 1});
    ASSERT_TRUE(theirs.ok());
    worst = std::max(worst, testing::RelativeMaxDiff(*ours, *theirs));
  }
  EXPECT_LE(worst, tolerance) << what;
  std::printf("%-24s max relative logit diff %.3g (tolerance %.3g)\n", what, worst, tolerance);
}

TEST(ModelRunnerTest, LogitsMatchReferenceForward) {
  using T = gguf::TensorType;
  using K = kv::KvDType;
  const ParityCase cases[] = {
      {"llama", T::kF32, K::kF32, 1e-5},  {"qwen2", T::kF32, K::kF32, 1e-5},
      {"qwen3", T::kF32, K::kF32, 1e-5},  {"llama", T::kF32, K::kF16, 2e-3},
      {"qwen2", T::kF32, K::kF16, 2e-3},  {"qwen3", T::kF32, K::kF16, 2e-3},
      {"llama", T::kF16, K::kF32, 2e-3},  {"qwen2", T::kBF16, K::kF32, 2e-2},
      {"llama", T::kQ8_0, K::kF32, 3e-2}, {"qwen3", T::kQ8_0, K::kF16, 3e-2},
      {"qwen2", T::kQ4_0, K::kF16, 3e-2}, {"llama", T::kQ4_K, K::kF16, 3e-2},
      {"qwen3", T::kQ5_K, K::kF32, 3e-2}, {"qwen2", T::kQ6_K, K::kF16, 3e-2},
  };
  for (const ParityCase& c : cases) {
    // K-quants need rows of 256 elements.
    const bool k_quant = c.weights == T::kQ4_K || c.weights == T::kQ5_K || c.weights == T::kQ6_K;
    TinyModel tiny = k_quant ? MakeTinyModel({.arch = c.arch, .dim = 256, .heads = 8, .ffn = 256})
                             : MakeTinyModel({.arch = c.arch, .ffn = 64});
    testing::SetMatrixType(&tiny, c.weights);
    auto m = testing::LoadTiny(tiny);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const std::string what = std::string(c.arch) + " type " +
                             std::to_string(static_cast<int>(c.weights)) +
                             (c.kv == K::kF32 ? " kv-f32" : " kv-f16");
    ExpectParity(**m, c.kv, c.tolerance, what.c_str());
  }
}

// Llama 3 frequency factors, linear RoPE scaling and tied embeddings go
// through the same code paths as the reference.
TEST(ModelRunnerTest, RopeScalingAndTiedEmbeddingsMatchReference) {
  TinyModel tiny = MakeTinyModel({.arch = "llama", .tied = true});
  std::mt19937 rng(5);
  tiny.AddTensor("rope_freqs.weight", {4}, 0.5f, rng, 1.5f);
  tiny.Set("llama.rope.scaling.factor", gguf::MetaValue::Float32(2.f));
  auto m = testing::LoadTiny(tiny);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ExpectParity(**m, kv::KvDType::kF32, 1e-5, "llama rope_freqs tied");
}

TEST(ModelRunnerTest, Stories260KLogitsMatchReference) {
  auto m = testing::LoadStories();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ExpectParity(**m, kv::KvDType::kF32, 1e-5, "stories260K kv-f32");
  ExpectParity(**m, kv::KvDType::kF16, 2e-3, "stories260K kv-f16");
}


TEST(ModelRunnerTest, Stories260KGreedyGolden) {
  const std::string golden = model::testing::Stories260KReadmeGolden();
  ASSERT_GT(golden.size(), 300u);
  auto m = testing::LoadStories();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  Result<Tokenizer> tokenizer = Tokenizer::FromGguf((*m)->file);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  for (kv::KvDType kv_type : {kv::KvDType::kF16, kv::KvDType::kF32}) {
    auto h = Harness::Make(**m, kv_type);
    ASSERT_NE(h, nullptr);
    Sequence seq(1, {tokenizer->vocab().bos_id}, h->pool.get());
    std::vector<TokenId> generated;
    std::string text;
    while (text.size() < golden.size() && generated.size() < 400) {
      Result<std::vector<float>> logits = h->RunAll(&seq);
      ASSERT_TRUE(logits.ok()) << logits.status().ToString();
      const TokenId next = testing::Argmax(*logits);
      ASSERT_FALSE(tokenizer->vocab().IsEog(next)) << "stopped after " << generated.size();
      generated.push_back(next);
      seq.tokens.push_back(next);
      text = tokenizer->Decode(generated);
    }
    EXPECT_EQ(text.substr(0, golden.size()), golden);
    EXPECT_GE(generated.size(), 100u);
  }
}

// Columns and heads are split over threads at fixed boundaries (multiples of
// kColumnGrain, whole heads); each output is computed by the same code
// whatever the split, so the thread count changes no bit.
TEST(ModelRunnerTest, ThreadCountChangesNothing) {
  auto stories = testing::LoadStories();
  ASSERT_TRUE(stories.ok()) << stories.status().ToString();
  TinyModel tiny = MakeTinyModel({.arch = "qwen2", .dim = 256, .heads = 8, .ffn = 512});
  testing::SetMatrixType(&tiny, gguf::TensorType::kQ4_K);
  auto quant = testing::LoadTiny(tiny);
  ASSERT_TRUE(quant.ok()) << quant.status().ToString();
  for (const Loaded* m : {stories->get(), quant->get()}) {
    std::vector<std::vector<float>> runs[2];
    for (int i = 0; i < 2; ++i) {
      auto h = Harness::Make(*m, kv::KvDType::kF16, 64, /*num_threads=*/i == 0 ? 1 : 3);
      ASSERT_NE(h, nullptr);
      std::vector<TokenId> prompt;
      for (int t = 0; t < 37; ++t) prompt.push_back(static_cast<TokenId>((t * 13 + 1) % 40));
      Sequence seq(1, prompt, h->pool.get());
      for (int step = 0; step < 6; ++step) {
        Result<std::vector<float>> logits = h->RunAll(&seq);
        ASSERT_TRUE(logits.ok()) << logits.status().ToString();
        runs[i].push_back(*logits);
        seq.tokens.push_back(testing::Argmax(*logits));
      }
    }
    EXPECT_EQ(runs[0], runs[1]);
  }
}

TEST(ModelRunnerTest, ErrorsAreStatusesAndChangeNothing) {
  auto m = testing::LoadTiny(MakeTinyModel({.vocab = 40, .ctx = 40}));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // 3 blocks of 16 positions.
  auto h = Harness::Make(**m, kv::KvDType::kF16, /*num_blocks=*/3);
  ASSERT_NE(h, nullptr);
  Logits logits;

  // Longer than the context (40): refused before anything runs.
  Sequence too_long(1, std::vector<TokenId>(41, 3), h->pool.get());
  ASSERT_TRUE(too_long.block_table.Append(41).ok());
  Batch batch;
  ASSERT_TRUE(batch.AddRemaining(&too_long, true).ok());
  Status s = h->runner->Forward(batch, &logits);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("exceed the context length of 40"));
  EXPECT_EQ(too_long.num_computed, 0);
  too_long.block_table.Release();

  // Not enough KV blocks: the block table says so (check-then-act).
  Sequence big(2, std::vector<TokenId>(40, 3), h->pool.get());
  EXPECT_FALSE(big.block_table.CanAppend(49));
  s = big.block_table.Append(49);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(h->pool->num_free(), 3);

  // No room appended before Forward.
  batch.Clear();
  ASSERT_TRUE(batch.AddRemaining(&big, true).ok());
  s = h->runner->Forward(batch, &logits);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("Append room"));

  // A token outside the vocabulary.
  Sequence bad(3, {1, 2, 40}, h->pool.get());
  ASSERT_TRUE(bad.block_table.Append(3).ok());
  batch.Clear();
  ASSERT_TRUE(batch.AddRemaining(&bad, true).ok());
  s = h->runner->Forward(batch, &logits);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("outside the vocabulary"));
  EXPECT_EQ(bad.num_computed, 0);

  // Batch misuse.
  batch.Clear();
  EXPECT_FALSE(batch.Add(&bad, 1, 3, true).ok());  // 0 computed
  EXPECT_FALSE(batch.Add(&bad, 0, 4, true).ok());  // past the tokens
  EXPECT_FALSE(batch.Add(&bad, 0, 0, true).ok());  // empty
  ASSERT_TRUE(batch.Add(&bad, 0, 2, true).ok());
  EXPECT_FALSE(batch.Add(&bad, 0, 2, true).ok());  // twice
  EXPECT_EQ(h->runner->Forward(Batch(), &logits).code(), StatusCode::kInvalidArgument);

  // A pool of another shape.
  kv::KvShape wrong = KvShapeFor((*m)->config, kv::KvDType::kF16);
  wrong.head_dim *= 2;
  auto pool = kv::BlockPool::CreateWithBlocks(wrong, 2);
  ASSERT_TRUE(pool.ok());
  EXPECT_FALSE(
      ModelRunner::Create((*m)->config, (*m)->weights, pool->get(), h->threads.get()).ok());
}

}  // namespace
}  // namespace mneme::engine
