// Sampler tests: each transform on small hand-made logit vectors (expected
// values worked out by hand from the definitions in sampler.h), the order of
// the chain, seed reproducibility and a seeded goodness-of-fit check.
#include "model/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <vector>

namespace mneme {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

Sampler Make(const SamplingParams& p, int32_t vocab, std::vector<TokenId> eog = {}) {
  Result<Sampler> s = Sampler::Create(p, vocab, eog);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

std::vector<float> Logs(std::vector<double> probs) {
  std::vector<float> out;
  for (double p : probs) out.push_back(static_cast<float>(std::log(p)));
  return out;
}

std::map<TokenId, double> Probs(const std::vector<TokenProb>& d) {
  std::map<TokenId, double> m;
  for (const TokenProb& t : d) m[t.id] = t.prob;
  return m;
}

TEST(SamplerTest, GreedyTakesArgmaxLowestIdOnTies) {
  SamplingParams p;
  p.temperature = 0.0f;
  Sampler s = Make(p, 4);
  const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 2.0f};
  EXPECT_EQ(s.Sample(logits), 1);
  const auto d = s.Distribution(logits);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 1);
  EXPECT_EQ(d[0].prob, 1.0);
}

TEST(SamplerTest, GreedyDoesNotDependOnSeed) {
  SamplingParams p;
  p.temperature = -1.0f;
  p.seed = 1;
  Sampler a = Make(p, 3);
  p.seed = 2;
  Sampler b = Make(p, 3);
  const std::vector<float> logits = {0.5f, 0.4f, 0.6f};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(a.Sample(logits), 2);
    EXPECT_EQ(b.Sample(logits), 2);
  }
}

TEST(SamplerTest, LogitBiasAddsAndBans) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.logit_bias = {{0, 5.0f}};
  EXPECT_EQ(Make(p, 3).Sample(std::vector<float>{1, 3, 2}), 0);  // 1 + 5 > 3
  p.logit_bias = {{1, -kInf}};
  EXPECT_EQ(Make(p, 3).Sample(std::vector<float>{1, 3, 2}), 2);
}

TEST(SamplerTest, PenaltiesFollowLlamaCppFormula) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.repetition_penalty = 2.0f;
  p.frequency_penalty = 0.5f;
  p.presence_penalty = 1.0f;
  Sampler s = Make(p, 4);
  s.Accept(std::vector<TokenId>{0, 1, 1});
  // id 0, count 1, positive:  2 / 2 - 1 * 0.5 - 1 = -0.5
  // id 1, count 2, negative: -2 * 2 - 2 * 0.5 - 1 = -6
  // ids 2 and 3 unseen: unchanged.
  const auto d = s.Distribution(std::vector<float>{2.0f, -2.0f, 1.0f, 0.5f});
  ASSERT_EQ(d.size(), 4u);
  const float want[] = {-0.5f, -6.0f, 1.0f, 0.5f};
  double z = 0;
  for (float w : want) z += std::exp(static_cast<double>(w));
  for (const TokenProb& t : d) {
    EXPECT_FLOAT_EQ(t.logit, want[t.id]) << "id " << t.id;
    EXPECT_NEAR(t.prob, std::exp(static_cast<double>(want[t.id])) / z, 1e-9) << "id " << t.id;
  }
}

TEST(SamplerTest, PenaltyWindowKeepsLastN) {
  SamplingParams p;
  p.penalty_last_n = 2;
  Sampler s = Make(p, 4);
  s.Accept(std::vector<TokenId>{0, 1, 1});
  EXPECT_EQ(s.CountInWindow(0), 0);
  EXPECT_EQ(s.CountInWindow(1), 2);
  s.Accept(3);
  EXPECT_EQ(s.CountInWindow(1), 1);
  EXPECT_EQ(s.CountInWindow(3), 1);

  p.penalty_last_n = 0;  // off: nothing counted, nothing penalized
  p.temperature = 0.0f;
  p.repetition_penalty = 100.0f;
  Sampler off = Make(p, 2);
  off.Accept(0);
  EXPECT_EQ(off.CountInWindow(0), 0);
  EXPECT_EQ(off.Sample(std::vector<float>{2.0f, 1.0f}), 0);

  p.penalty_last_n = -1;  // whole history
  Sampler all = Make(p, 2);
  for (int i = 0; i < 1000; ++i) all.Accept(0);
  EXPECT_EQ(all.CountInWindow(0), 1000);
  EXPECT_EQ(all.Sample(std::vector<float>{2.0f, 1.0f}), 1);  // 2 / 100 < 1
}

TEST(SamplerTest, TopKKeepsKBestInOrder) {
  SamplingParams p;
  p.top_k = 2;
  Sampler s = Make(p, 5);
  const auto d = s.Distribution(std::vector<float>{0.1f, 2.0f, 1.0f, 3.0f, -1.0f});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].id, 3);
  EXPECT_EQ(d[1].id, 1);
  const double z = std::exp(3.0) + std::exp(2.0);
  EXPECT_NEAR(d[0].prob, std::exp(3.0) / z, 1e-9);
  EXPECT_NEAR(d[1].prob, std::exp(2.0) / z, 1e-9);
}

TEST(SamplerTest, TopPKeepsSmallestPrefixReachingP) {
  // Probabilities by id: 0.1, 0.5, 0.2, 0.2 (ids 2 and 3 tie: 2 first).
  const std::vector<float> logits = Logs({0.1, 0.5, 0.2, 0.2});
  SamplingParams p;
  p.top_p = 0.4f;  // 0.5 >= 0.4
  EXPECT_EQ(Probs(Make(p, 4).Distribution(logits)), (std::map<TokenId, double>{{1, 1.0}}));
  p.top_p = 0.6f;  // 0.5 < 0.6 <= 0.7
  auto m = Probs(Make(p, 4).Distribution(logits));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_NEAR(m[1], 0.5 / 0.7, 1e-6);
  EXPECT_NEAR(m[2], 0.2 / 0.7, 1e-6);
  p.top_p = 0.75f;  // 0.7 < 0.75 <= 0.9
  m = Probs(Make(p, 4).Distribution(logits));
  ASSERT_EQ(m.size(), 3u);
  EXPECT_NEAR(m[3], 0.2 / 0.9, 1e-6);
}

TEST(SamplerTest, TopPOnLargeUniformVocabKeepsLowestIds) {
  // 10000 equal logits: the kept mass grows by exactly 1/10000 per token, so
  // p = 0.5 keeps ids 0..4999 (the prefix sort has to grow several times).
  SamplingParams p;
  p.top_p = 0.5f;
  const auto d = Make(p, 10000).Distribution(std::vector<float>(10000, 0.25f));
  ASSERT_EQ(d.size(), 5000u);
  for (size_t i = 0; i < d.size(); ++i) ASSERT_EQ(d[i].id, static_cast<TokenId>(i));
  EXPECT_NEAR(d[0].prob, 1.0 / 5000, 1e-12);
}

TEST(SamplerTest, TopPOnLargeSpreadVocabMatchesSortedWalk) {
  // Distinct logits in a scrambled order; the reference is the definition:
  // sort by probability, keep the shortest prefix with mass >= p.
  constexpr int kVocab = 50000;
  std::vector<float> logits(kVocab);
  for (int i = 0; i < kVocab; ++i) logits[i] = -0.0003f * static_cast<float>((i * 7919) % kVocab);
  for (float top_p : {0.05f, 0.5f, 0.9f, 0.99f}) {
    std::vector<int> order(kVocab);
    for (int i = 0; i < kVocab; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
    double total = 0;
    for (float l : logits) total += std::exp(static_cast<double>(l) - logits[order[0]]);
    std::set<TokenId> want;
    double cum = 0;
    for (int id : order) {
      want.insert(id);
      cum += std::exp(static_cast<double>(logits[id]) - logits[order[0]]);
      if (cum >= top_p * total) break;
    }
    SamplingParams p;
    p.top_p = top_p;
    std::set<TokenId> got;
    double mass = 0;
    for (const TokenProb& t : Make(p, kVocab).Distribution(logits)) {
      got.insert(t.id);
      mass += t.prob;
    }
    EXPECT_EQ(got, want) << "top_p " << top_p;
    EXPECT_NEAR(mass, 1.0, 1e-9);
  }
}

TEST(SamplerTest, MinPDropsTokensBelowFractionOfMax) {
  SamplingParams p;
  p.min_p = 0.3f;  // threshold 0.3 * 0.5 = 0.15: drops 0.05 only
  const auto m = Probs(Make(p, 4).Distribution(Logs({0.5, 0.2, 0.05, 0.25})));
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m.count(2), 0u);
  EXPECT_NEAR(m.at(0), 0.5 / 0.95, 1e-6);
  EXPECT_NEAR(m.at(1), 0.2 / 0.95, 1e-6);
  EXPECT_NEAR(m.at(3), 0.25 / 0.95, 1e-6);
}

TEST(SamplerTest, TemperatureDividesLogits) {
  SamplingParams p;
  p.temperature = 2.0f;
  const auto d = Make(p, 3).Distribution(std::vector<float>{1.0f, 2.0f, 3.0f});
  ASSERT_EQ(d.size(), 3u);
  const double z = std::exp(0.5) + std::exp(1.0) + std::exp(1.5);
  for (const TokenProb& t : d) {
    EXPECT_FLOAT_EQ(t.logit, (t.id + 1) / 2.0f);
    EXPECT_NEAR(t.prob, std::exp((t.id + 1) / 2.0) / z, 1e-9);
  }
}

TEST(SamplerTest, TopPSeesTemperatureOneProbabilities) {
  // At T = 1 the top token alone has 0.6 >= top_p = 0.55. Were T = 3 applied
  // first it would have 0.6^(1/3) / sum = 0.43 and two tokens would survive.
  SamplingParams p;
  p.temperature = 3.0f;
  p.top_p = 0.55f;
  const auto d = Make(p, 3).Distribution(Logs({0.6, 0.3, 0.1}));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 0);
}

TEST(SamplerTest, TopPRenormalizesAfterTopK) {
  // After top-k 2: {0.4, 0.3} -> {0.571, 0.429}; 0.571 >= 0.55 keeps one.
  // (top-p first would keep 0.4 + 0.3 = 0.7 and top-k then two.)
  SamplingParams p;
  p.top_k = 2;
  p.top_p = 0.55f;
  const auto d = Make(p, 4).Distribution(Logs({0.4, 0.3, 0.2, 0.1}));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 0);
}

TEST(SamplerTest, SameSeedSameTokens) {
  std::vector<float> logits(1000);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = 3.0f * std::sin(0.37f * i);
  SamplingParams p;
  p.temperature = 1.5f;
  p.seed = 42;
  Sampler a = Make(p, 1000), b = Make(p, 1000);
  p.seed = 43;
  Sampler c = Make(p, 1000);
  std::vector<TokenId> ta, tb, tc;
  for (int i = 0; i < 200; ++i) {
    ta.push_back(a.Sample(logits));
    tb.push_back(b.Sample(logits));
    tc.push_back(c.Sample(logits));
  }
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ta, tc);
}

// Pearson chi-square of observed counts against expected probabilities.
double ChiSquare(const std::vector<int>& counts, const std::vector<double>& probs, int n) {
  double chi = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double e = probs[i] * n;
    chi += (counts[i] - e) * (counts[i] - e) / e;
  }
  return chi;
}

TEST(SamplerTest, DrawsFollowTheDistribution) {
  SamplingParams p;
  p.seed = 7;
  Sampler s = Make(p, 4);
  const std::vector<float> logits = Logs({0.1, 0.2, 0.3, 0.4});
  constexpr int kDraws = 20000;
  std::vector<int> counts(4);
  for (int i = 0; i < kDraws; ++i) ++counts[s.Sample(logits)];
  // 3 degrees of freedom: P(chi2 > 16.27) = 0.001 for a correct sampler.
  EXPECT_LT(ChiSquare(counts, {0.1, 0.2, 0.3, 0.4}, kDraws), 16.27);

  p.top_k = 2;  // only ids 2 and 3, in the ratio 3 : 4
  Sampler k = Make(p, 4);
  std::vector<int> kc(4);
  for (int i = 0; i < kDraws; ++i) ++kc[k.Sample(logits)];
  EXPECT_EQ(kc[0] + kc[1], 0);
  // 1 degree of freedom: P(chi2 > 10.83) = 0.001.
  EXPECT_LT(ChiSquare({kc[2], kc[3]}, {3.0 / 7, 4.0 / 7}, kDraws), 10.83);
}

TEST(SamplerTest, IgnoreEosBansEndOfGeneration) {
  SamplingParams p;
  p.temperature = 0.0f;
  const std::vector<float> logits = {1.0f, 5.0f, 2.0f};
  EXPECT_EQ(Make(p, 3, {1}).Sample(logits), 1);
  p.ignore_eos = true;
  EXPECT_EQ(Make(p, 3, {1}).Sample(logits), 2);
}

TEST(SamplerTest, NanIsNeverChosenAndAllBannedFallsBack) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  SamplingParams p;
  p.temperature = 0.0f;
  EXPECT_EQ(Make(p, 3).Sample(std::vector<float>{nan, 1.0f, 2.0f}), 2);
  p.temperature = 1.0f;
  const auto d = Make(p, 3).Distribution(std::vector<float>{nan, 1.0f, 2.0f});
  EXPECT_EQ(Probs(d).count(0), 0u);
  EXPECT_EQ(d.size(), 2u);

  p.logit_bias = {{0, -kInf}, {1, -kInf}};
  Sampler banned = Make(p, 2);
  EXPECT_TRUE(banned.Distribution(std::vector<float>{1.0f, 3.0f}).empty());
  EXPECT_EQ(banned.Sample(std::vector<float>{1.0f, 3.0f}), 1);
}

TEST(SamplerTest, RejectsBadParams) {
  auto bad = [](auto mutate) {
    SamplingParams p;
    mutate(p);
    return !Sampler::Create(p, 10).ok();
  };
  EXPECT_TRUE(bad([](SamplingParams& p) { p.temperature = std::nanf(""); }));
  EXPECT_TRUE(bad([](SamplingParams& p) { p.top_p = 1.5f; }));
  EXPECT_TRUE(bad([](SamplingParams& p) { p.min_p = -0.1f; }));
  EXPECT_TRUE(bad([](SamplingParams& p) { p.repetition_penalty = 0.0f; }));
  EXPECT_TRUE(bad([](SamplingParams& p) { p.penalty_last_n = -2; }));
  EXPECT_TRUE(bad([](SamplingParams& p) { p.logit_bias = {{10, 1.0f}}; }));
  EXPECT_TRUE(bad([](SamplingParams& p) { p.logit_bias = {{0, kInf}}; }));
  EXPECT_TRUE(bad([](SamplingParams& p) { p.max_tokens = -1; }));
  EXPECT_TRUE(bad([](SamplingParams& p) { p.stop = {""}; }));
  EXPECT_TRUE(bad([](SamplingParams& p) { p.stop.assign(17, "x"); }));
  EXPECT_FALSE(bad([](SamplingParams& p) { p.logit_bias = {{9, -kInf}}; }));
  EXPECT_FALSE(Sampler::Create(SamplingParams{}, 0).ok());
}

}  // namespace
}  // namespace mneme
