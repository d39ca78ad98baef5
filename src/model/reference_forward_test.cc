// ReferenceForward: the stories260K golden (greedy text from BOS, documented
// in ../shared/models/README.md and upstream in llama2.c), a hand-computed
// single-token case, and the invariants the engine tests will lean on
// (prompt at once == token by token, thread count and Truncate change
// nothing, quantized weights == their dequantized values, errors change
// nothing).
#include "model/reference_forward.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "kernels/quantize.h"
#include "model/tiny_model_test_util.h"
#include "tokenizer/tokenizer.h"

namespace mneme::model {
namespace {

using ::testing::HasSubstr;
using testing::MakeTinyModel;
using testing::TinyModel;
using testing::TinySpec;

struct Loaded {
  gguf::GgufFile file;
  ModelConfig config;
  ModelWeights weights;
};

Result<std::unique_ptr<Loaded>> LoadFile(gguf::GgufFile file) {
  MNEME_ASSIGN_OR_RETURN(ModelConfig config, ModelConfig::FromGguf(file));
  MNEME_ASSIGN_OR_RETURN(ModelWeights weights, ModelWeights::Load(file, config));
  return std::make_unique<Loaded>(Loaded{std::move(file), config, std::move(weights)});
}

Result<std::unique_ptr<Loaded>> LoadTiny(const TinyModel& m) {
  MNEME_ASSIGN_OR_RETURN(gguf::GgufFile file, m.Build());
  return LoadFile(std::move(file));
}

Result<std::unique_ptr<Loaded>> LoadStories() {
  MNEME_ASSIGN_OR_RETURN(gguf::GgufFile file,
                         gguf::GgufFile::Open(MNEME_SHARED_DIR "/models/stories260K.gguf"));
  return LoadFile(std::move(file));
}

TokenId Argmax(std::span<const float> logits) {
  return static_cast<TokenId>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}


TEST(ReferenceForwardTest, Stories260KGreedyGolden) {
  const std::string golden = testing::Stories260KReadmeGolden();
  ASSERT_GT(golden.size(), 300u);
  ASSERT_EQ(golden.rfind("Once upon a time, there was a little girl named Lily.", 0), 0u);

  auto m = LoadStories();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  Result<Tokenizer> tokenizer = Tokenizer::FromGguf((*m)->file);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  ReferenceForward forward((*m)->config, (*m)->weights);

  std::vector<TokenId> generated;
  TokenId next = tokenizer->vocab().bos_id;
  ASSERT_EQ(next, 1);
  std::string text;
  while (text.size() < golden.size() && generated.size() < 400) {
    Result<std::vector<float>> logits = forward.Eval({&next, 1});
    ASSERT_TRUE(logits.ok()) << logits.status().ToString();
    next = Argmax(*logits);
    ASSERT_FALSE(tokenizer->vocab().IsEog(next)) << "stopped after " << generated.size();
    generated.push_back(next);
    text = tokenizer->Decode(generated);
  }
  EXPECT_EQ(text.substr(0, golden.size()), golden);
  EXPECT_GE(generated.size(), 100u);  // the golden covers over 100 tokens
}

// One token, and the FFN switched off (ffn_down = 0): attention over a single
// position is exactly v, so the logits are
//   W_out · RMSNorm(e + W_o · expand(W_v · RMSNorm(e) + b_v)) · output_norm
// where expand gives query head h the value head h / (heads / kv_heads).
// Computed here with plain double loops on the file's numbers.
TEST(ReferenceForwardTest, SingleTokenByHand) {
  for (const char* arch : {"llama", "qwen2", "qwen3"}) {
    const TinySpec spec{
        .arch = arch, .dim = 32, .layers = 1, .heads = 4, .kv_heads = 2, .ffn = 48, .vocab = 40};
    TinyModel model = MakeTinyModel(spec);
    std::fill(model.Find("blk.0.ffn_down.weight")->values.begin(),
              model.Find("blk.0.ffn_down.weight")->values.end(), 0.f);
    auto m = LoadTiny(model);
    ASSERT_TRUE(m.ok()) << m.status().ToString();

    const auto& emb = model.Find("token_embd.weight")->values;
    const auto& attn_norm = model.Find("blk.0.attn_norm.weight")->values;
    const auto& wv = model.Find("blk.0.attn_v.weight")->values;
    const auto& wo = model.Find("blk.0.attn_output.weight")->values;
    const auto& out_norm = model.Find("output_norm.weight")->values;
    const auto& wout = model.Find("output.weight")->values;
    const int dim = 32, hd = 8, kv_dim = 16, vocab = 40;
    const auto rms_norm = [&](const std::vector<double>& x, const std::vector<float>& w) {
      double ss = 0;
      for (double v : x) ss += v * v;
      const double scale = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + 1e-5);
      std::vector<double> y(x.size());
      for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * scale * w[i];
      return y;
    };

    const TokenId token = 7;
    std::vector<double> e(emb.begin() + token * dim, emb.begin() + (token + 1) * dim);
    const std::vector<double> xn = rms_norm(e, attn_norm);
    std::vector<double> v(kv_dim);
    for (int r = 0; r < kv_dim; ++r) {
      for (int c = 0; c < dim; ++c) v[r] += wv[r * dim + c] * xn[c];
      if (std::string(arch) == "qwen2") v[r] += model.Find("blk.0.attn_v.bias")->values[r];
    }
    std::vector<double> att(4 * hd);
    for (int h = 0; h < 4; ++h) {
      for (int i = 0; i < hd; ++i) att[h * hd + i] = v[(h / 2) * hd + i];
    }
    std::vector<double> x = e;
    for (int r = 0; r < dim; ++r) {
      for (int c = 0; c < 4 * hd; ++c) x[r] += wo[r * 4 * hd + c] * att[c];
    }
    const std::vector<double> xf = rms_norm(x, out_norm);
    std::vector<double> expected(vocab);
    for (int r = 0; r < vocab; ++r) {
      for (int c = 0; c < dim; ++c) expected[r] += wout[r * dim + c] * xf[c];
    }

    ReferenceForward forward((*m)->config, (*m)->weights);
    Result<std::vector<float>> logits = forward.Eval({&token, 1});
    ASSERT_TRUE(logits.ok()) << logits.status().ToString();
    ASSERT_EQ(logits->size(), 40u);
    for (int r = 0; r < vocab; ++r) {
      EXPECT_NEAR((*logits)[r], expected[r], 1e-5 * (1 + std::fabs(expected[r])))
          << arch << " " << r;
    }
  }
}

// The cached K/V of a prompt evaluated at once is what token-by-token
// evaluation caches, so every later logit is identical (bit for bit: the
// per-row arithmetic does not depend on the batch).
TEST(ReferenceForwardTest, PromptAtOnceEqualsTokenByToken) {
  std::vector<std::unique_ptr<Loaded>> models;
  auto stories = LoadStories();
  ASSERT_TRUE(stories.ok()) << stories.status().ToString();
  models.push_back(std::move(*stories));
  for (const char* arch : {"llama", "qwen2", "qwen3"}) {
    TinyModel tiny = MakeTinyModel({.arch = arch});
    if (std::string(arch) == "llama") {  // also Llama 3 frequency factors and linear scaling
      std::mt19937 rng(5);
      tiny.AddTensor("rope_freqs.weight", {4}, 0.5f, rng, 1.5f);
      tiny.Set("llama.rope.scaling.factor", gguf::MetaValue::Float32(2.f));
    }
    auto m = LoadTiny(tiny);
    ASSERT_TRUE(m.ok()) << arch << ": " << m.status().ToString();
    models.push_back(std::move(*m));
  }
  const std::vector<TokenId> prompt = {1, 5, 9, 13, 2, 17, 33, 8, 21};
  for (const auto& m : models) {
    const int64_t vocab = m->config.vocab_size;
    ReferenceForward at_once(m->config, m->weights);
    Result<std::vector<float>> all = at_once.Eval(prompt, /*all_logits=*/true);
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    ASSERT_EQ(all->size(), prompt.size() * static_cast<size_t>(vocab));
    EXPECT_EQ(at_once.num_tokens(), static_cast<int64_t>(prompt.size()));

    ReferenceForward stepwise(m->config, m->weights);
    for (size_t t = 0; t < prompt.size(); ++t) {
      Result<std::vector<float>> one = stepwise.Eval({&prompt[t], 1});
      ASSERT_TRUE(one.ok()) << one.status().ToString();
      const std::vector<float> row(all->begin() + t * vocab, all->begin() + (t + 1) * vocab);
      ASSERT_EQ(*one, row) << ArchName(m->config.arch) << " position " << t;
    }
    // Without all_logits, the last row only.
    ReferenceForward last_only(m->config, m->weights);
    Result<std::vector<float>> last = last_only.Eval(prompt);
    ASSERT_TRUE(last.ok());
    EXPECT_EQ(*last, std::vector<float>(all->end() - vocab, all->end()));
  }
}

// RoPE scaling identities: dividing every angle by 2 through Llama 3
// frequency factors (rope_freqs = 2) or through linear scaling (factor 2,
// freq_scale = 1/2) is the same rotation (exact in binary), and differs from
// no scaling; rope.scaling.type "none" ignores the factor.
TEST(ReferenceForwardTest, RopeFreqFactorsAndLinearScalingAgree) {
  const auto logits_of = [](const TinyModel& model) -> std::vector<float> {
    auto m = LoadTiny(model);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    if (!m.ok()) return {};
    ReferenceForward forward((*m)->config, (*m)->weights);
    const std::vector<TokenId> prompt = {1, 7, 3, 9, 30, 12, 5};
    Result<std::vector<float>> r = forward.Eval(prompt, /*all_logits=*/true);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::vector<float>();
  };
  const TinyModel base = MakeTinyModel({});
  TinyModel freqs = base;
  std::mt19937 rng(1);
  freqs.AddTensor("rope_freqs.weight", {4}, 0.f, rng, 2.f);
  TinyModel linear = base;
  linear.Set("llama.rope.scaling.factor", gguf::MetaValue::Float32(2.f));
  TinyModel none = linear;
  none.Set("llama.rope.scaling.type", gguf::MetaValue::String("none"));

  const std::vector<float> plain = logits_of(base);
  const std::vector<float> by_freqs = logits_of(freqs);
  ASSERT_EQ(plain.size(), 7u * 40);
  EXPECT_NE(by_freqs, plain);
  EXPECT_EQ(logits_of(linear), by_freqs);
  EXPECT_EQ(logits_of(none), plain);
  // The first position has angle 0 whatever the scaling.
  EXPECT_TRUE(std::equal(plain.begin(), plain.begin() + 40, by_freqs.begin()));
}

TEST(ReferenceForwardTest, ThreadsAndTruncateChangeNothing) {
  // Big enough that the FFN and output products are split over the pool
  // (ReferenceForward runs products under 2^18 multiply-adds inline).
  auto m = LoadTiny(MakeTinyModel(
      {.arch = "qwen2", .dim = 128, .heads = 4, .kv_heads = 2, .ffn = 384, .vocab = 600}));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const std::vector<TokenId> prompt = {1, 403, 407, 261, 378, 599, 0, 17};
  ReferenceForward single((*m)->config, (*m)->weights);
  Result<std::vector<float>> expected = single.Eval(prompt, /*all_logits=*/true);
  ASSERT_TRUE(expected.ok());
  const std::vector<float> expected_last(expected->end() - 600, expected->end());

  ThreadPool pool(3);
  ReferenceForward threaded((*m)->config, (*m)->weights, &pool);
  Result<std::vector<float>> got = threaded.Eval(prompt, /*all_logits=*/true);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, *expected);

  // Drop the last three positions and replay them.
  threaded.Truncate(5);
  EXPECT_EQ(threaded.num_tokens(), 5);
  got = threaded.Eval({prompt.data() + 5, 3});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, expected_last);

  threaded.Reset();
  EXPECT_EQ(threaded.num_tokens(), 0);
  got = threaded.Eval(prompt);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, expected_last);
}

// Weights are only ever dequantized rows: a quantized model computes exactly
// what an F32 model holding its dequantized values computes.
TEST(ReferenceForwardTest, QuantizedEqualsItsDequantizedValues) {
  for (gguf::TensorType type : {gguf::TensorType::kQ8_0, gguf::TensorType::kQ4_0,
                                gguf::TensorType::kF16, gguf::TensorType::kBF16}) {
    TinyModel quantized = MakeTinyModel({.ffn = 64});
    TinyModel dequantized = quantized;
    for (size_t i = 0; i < quantized.tensors.size(); ++i) {
      testing::TinyTensor& q = quantized.tensors[i];
      if (q.shape.size() != 2) continue;
      q.type = type;
      // Round-trip the values through the block format.
      const auto dtype = static_cast<kernels::DType>(type);
      const int64_t cols = static_cast<int64_t>(q.shape[0]);
      std::vector<uint8_t> block(kernels::RowBytes(dtype, cols));
      std::vector<float>& values = dequantized.tensors[i].values;
      for (size_t r = 0; r < values.size() / cols; ++r) {
        kernels::QuantizeRow(dtype, values.data() + r * cols, block.data(), cols);
        kernels::DequantizeRow(dtype, block.data(), values.data() + r * cols, cols);
      }
    }
    auto mq = LoadTiny(quantized);
    auto md = LoadTiny(dequantized);
    ASSERT_TRUE(mq.ok()) << mq.status().ToString();
    ASSERT_TRUE(md.ok()) << md.status().ToString();
    const std::vector<TokenId> prompt = {3, 1, 4, 1, 5, 9, 2, 6};
    ReferenceForward fq((*mq)->config, (*mq)->weights);
    ReferenceForward fd((*md)->config, (*md)->weights);
    Result<std::vector<float>> lq = fq.Eval(prompt, true);
    Result<std::vector<float>> ld = fd.Eval(prompt, true);
    ASSERT_TRUE(lq.ok() && ld.ok());
    EXPECT_EQ(*lq, *ld) << static_cast<int>(type);
  }
}

TEST(ReferenceForwardTest, BadInputIsRefusedAndChangesNothing) {
  auto m = LoadTiny(MakeTinyModel({.vocab = 40, .ctx = 8}));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ReferenceForward forward((*m)->config, (*m)->weights);
  const std::vector<TokenId> prompt = {1, 2, 3, 4, 5};
  Result<std::vector<float>> first = forward.Eval(prompt);
  ASSERT_TRUE(first.ok());

  const std::vector<TokenId> bad_id = {6, 40};
  Result<std::vector<float>> r = forward.Eval(bad_id);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("id 40 is outside the vocabulary (40 tokens)"));
  const std::vector<TokenId> negative = {-1};
  EXPECT_FALSE(forward.Eval(negative).ok());
  EXPECT_FALSE(forward.Eval({}).ok());

  const std::vector<TokenId> too_long = {6, 7, 8, 9};  // 5 + 4 > 8
  r = forward.Eval(too_long);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("exceed the context length of 8"));
  EXPECT_EQ(forward.num_tokens(), 5);

  // The failed calls left the state as it was: the next token sees the same
  // history as a fresh evaluation of the whole sequence.
  const std::vector<TokenId> next = {6, 7, 8};
  Result<std::vector<float>> after = forward.Eval(next);
  ASSERT_TRUE(after.ok());
  ReferenceForward fresh((*m)->config, (*m)->weights);
  const std::vector<TokenId> all = {1, 2, 3, 4, 5, 6, 7, 8};
  Result<std::vector<float>> expected = fresh.Eval(all);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(*after, *expected);
}

TEST(ReferenceForwardTest, NonFiniteWeightsAreReported) {
  TinyModel model = MakeTinyModel({});
  model.Find("blk.0.ffn_up.weight")->values[3] = NAN;
  auto m = LoadTiny(model);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ReferenceForward forward((*m)->config, (*m)->weights);
  const std::vector<TokenId> prompt = {1, 2};
  Result<std::vector<float>> r = forward.Eval(prompt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(r.status().message(), HasSubstr("non-finite"));
}

}  // namespace
}  // namespace mneme::model
