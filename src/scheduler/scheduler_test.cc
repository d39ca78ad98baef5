// Scheduler without a model. A fake runner stands in for ModelRunner: for
// each batch row it first checks that every earlier position of the sequence
// holds the right "K/V" in the paged pool (a tag derived from the whole
// token prefix up to that position, as real K/V depends on the prefix), then
// writes the tags of its own rows, and its "logits" make the next token a
// hash of the whole sequence. So a block shared through the radix cache, a
// swapped duplicate, a preempted-and-recomputed sequence or a chunked prefill
// that read or wrote the wrong slot is caught, and each request's tokens can
// be predicted by iterating the hash alone (the reference).
#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

namespace mneme::scheduler {
namespace {

constexpr int kVocab = 64;
constexpr TokenId kEog = 0;
constexpr int kBlock = 4;

uint32_t Mix(uint32_t h, uint32_t v) {
  h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
  return h * 0x85ebca6bu;
}

// Tag of position p: a hash of tokens[0..p].
uint32_t PrefixTag(std::span<const TokenId> tokens, int p) {
  uint32_t h = 17;
  for (int i = 0; i <= p; ++i) h = Mix(h, static_cast<uint32_t>(tokens[static_cast<size_t>(i)]));
  return h;
}

// The next token after `tokens`: never the EOG id unless eog_every > 0 says
// so for this prefix.
TokenId NextToken(std::span<const TokenId> tokens, int eog_every = 0) {
  const uint32_t h = PrefixTag(tokens, static_cast<int>(tokens.size()) - 1);
  if (eog_every > 0 && h % static_cast<uint32_t>(eog_every) == 0) return kEog;
  return static_cast<TokenId>(1 + h % (kVocab - 1));
}

std::unique_ptr<kv::BlockPool> MakePool(int blocks) {
  kv::KvShape s;
  s.n_layers = 1;
  s.n_kv_heads = 1;
  s.head_dim = 1;
  s.block_size = kBlock;
  s.dtype = kv::KvDType::kF32;
  return std::move(kv::BlockPool::CreateWithBlocks(s, blocks)).value();
}

uint32_t* SlotPtr(kv::BlockPool* pool, const engine::Sequence& seq, int p) {
  const kv::KvSlot s = seq.block_table.Slot(p);
  return reinterpret_cast<uint32_t*>(pool->K(0, s.block)) + pool->ElementOffset(0, s.slot);
}

// Runs a batch like ModelRunner would, on tags instead of tensors.
struct FakeRunner {
  kv::BlockPool* pool;
  int eog_every = 0;
  int64_t rows_run = 0;

  void Forward(const engine::Batch& batch, engine::Logits* out) {
    out->vocab_size = kVocab;
    out->entry.clear();
    out->data.clear();
    for (int e = 0; e < batch.num_entries(); ++e) {
      engine::Sequence* seq = batch.seqs()[static_cast<size_t>(e)];
      const int start = batch.starts()[static_cast<size_t>(e)];
      const int end = batch.ends()[static_cast<size_t>(e)];
      ASSERT_GE(seq->block_table.num_tokens(), end);
      for (int p = 0; p < start; ++p) {
        ASSERT_EQ(*SlotPtr(pool, *seq, p), PrefixTag(seq->tokens, p))
            << "sequence " << seq->id << " reads a wrong K/V at position " << p;
      }
      for (int p = start; p < end; ++p) *SlotPtr(pool, *seq, p) = PrefixTag(seq->tokens, p);
      seq->num_computed = end;
      rows_run += end - start;
      if (batch.want_logits()[static_cast<size_t>(e)]) {
        out->entry.push_back(e);
        const TokenId next =
            NextToken(std::span<const TokenId>(seq->tokens).first(static_cast<size_t>(end)),
                      eog_every);
        for (int v = 0; v < kVocab; ++v) out->data.push_back(v == next ? 1.0f : 0.0f);
      }
    }
  }
};

struct Outcome {
  std::vector<TokenId> tokens;
  bool finished = false;
  FinishReason reason = FinishReason::kError;
  RequestStats stats;
};

Outcome Drain(RequestHandle* h) {
  Outcome o;
  TokenEvent ev;
  while (h->TryNext(&ev)) {
    if (ev.kind == TokenEvent::Kind::kToken) {
      o.tokens.push_back(ev.token);
    } else {
      o.finished = true;
      o.reason = ev.reason;
      o.stats = ev.stats;
    }
  }
  return o;
}

// What a request must produce: iterate NextToken from the prompt.
std::vector<TokenId> Expected(std::vector<TokenId> seq, int max_tokens, int eog_every = 0) {
  std::vector<TokenId> out;
  while (static_cast<int>(out.size()) < max_tokens) {
    const TokenId t = NextToken(seq, eog_every);
    if (t == kEog) break;
    out.push_back(t);
    seq.push_back(t);
  }
  return out;
}

RequestOptions Greedy(std::vector<TokenId> prompt, int max_tokens, std::string ns = "") {
  RequestOptions r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.sampling.penalty_last_n = 0;
  r.sampling.max_tokens = max_tokens;
  r.cache_namespace = std::move(ns);
  return r;
}

struct Fixture {
  std::unique_ptr<kv::BlockPool> pool;
  std::unique_ptr<Scheduler> sched;
  FakeRunner runner;
  int64_t next_id = 1;

  Fixture(int blocks, SchedulerOptions o = {}) : pool(MakePool(blocks)), runner{pool.get()} {
    if (o.context_length == 0) o.context_length = 1024;
    sched = std::make_unique<Scheduler>(o, pool.get(), kVocab, std::vector<TokenId>{kEog});
  }
  std::shared_ptr<RequestHandle> Add(RequestOptions r) {
    auto h = std::make_shared<RequestHandle>(next_id++);
    Status s = sched->Add(h, std::move(r));
    EXPECT_TRUE(s.ok()) << s.ToString();
    return h;
  }
  // One step; false when idle.
  bool Step(engine::Batch* batch = nullptr) {
    engine::Batch local;
    engine::Batch* b = batch != nullptr ? batch : &local;
    if (!sched->Schedule(b)) return false;
    engine::Logits logits;
    runner.Forward(*b, &logits);
    if (::testing::Test::HasFatalFailure()) return false;
    sched->Postprocess(*b, logits);
    Status s = sched->CheckInvariants();
    EXPECT_TRUE(s.ok()) << s.ToString();
    return s.ok();
  }
  void RunToIdle(int max_steps = 100000) {
    int steps = 0;
    while (Step()) {
      ASSERT_LT(++steps, max_steps) << "no progress";
    }
    EXPECT_TRUE(sched->idle());
  }
};

std::vector<TokenId> Range(int n, TokenId first = 1) {
  std::vector<TokenId> v;
  for (int i = 0; i < n; ++i) v.push_back(1 + (first + i * 7) % (kVocab - 1));
  return v;
}

TEST(SchedulerTest, OneRequestGeneratesTheReferenceTokens) {
  Fixture f(64);
  auto h = f.Add(Greedy(Range(10), 12));
  f.RunToIdle();
  Outcome o = Drain(h.get());
  ASSERT_TRUE(o.finished);
  EXPECT_EQ(o.reason, FinishReason::kLength);
  EXPECT_EQ(o.tokens, Expected(Range(10), 12));
  EXPECT_EQ(o.stats.prompt_tokens, 10);
  EXPECT_EQ(o.stats.cached_tokens, 0);
  EXPECT_EQ(o.stats.generated_tokens, 12);
}

TEST(SchedulerTest, EndOfGenerationStopsWithoutEmittingIt) {
  Fixture f(64);
  f.runner.eog_every = 5;  // roughly one prefix in five ends the answer
  auto h = f.Add(Greedy(Range(6), 100));
  f.RunToIdle();
  Outcome o = Drain(h.get());
  const std::vector<TokenId> want = Expected(Range(6), 100, 5);
  ASSERT_LT(want.size(), 100u) << "pick a prompt whose answer ends earlier";
  EXPECT_EQ(o.reason, FinishReason::kStop);
  EXPECT_EQ(o.tokens, want);
}

TEST(SchedulerTest, NextTurnReusesThePreviousTurnsKv) {
  Fixture f(64);
  const std::vector<TokenId> prompt = Range(10);
  auto h1 = f.Add(Greedy(prompt, 7));
  f.RunToIdle();
  Outcome o1 = Drain(h1.get());
  // Turn 2 = turn 1's prompt + answer + a new message.
  std::vector<TokenId> turn2 = prompt;
  turn2.insert(turn2.end(), o1.tokens.begin(), o1.tokens.end());
  const std::vector<TokenId> extra = Range(5, 3);
  turn2.insert(turn2.end(), extra.begin(), extra.end());
  auto h2 = f.Add(Greedy(turn2, 4));
  f.RunToIdle();
  Outcome o2 = Drain(h2.get());
  // Turn 1 computed its prompt and all but its last answer token: 16 tokens,
  // four whole blocks of 4.
  EXPECT_EQ(o2.stats.cached_tokens, 16);
  EXPECT_EQ(o2.stats.computed_tokens, 22 - 16);  // the prompt's uncached tail only
  EXPECT_EQ(o1.stats.computed_tokens, 10);
  EXPECT_EQ(o2.tokens, Expected(turn2, 4));
  EXPECT_EQ(f.sched->stats().num_tokens_cached, 16);
}

TEST(SchedulerTest, IdenticalPromptComputesAtLeastTheLastToken) {
  Fixture f(64);
  auto h1 = f.Add(Greedy(Range(8), 1));
  f.RunToIdle();
  auto h2 = f.Add(Greedy(Range(8), 3));
  f.RunToIdle();
  Outcome o2 = Drain(h2.get());
  EXPECT_EQ(o2.stats.cached_tokens, 4);  // whole blocks of at most 8 - 1 tokens
  EXPECT_EQ(o2.tokens, Expected(Range(8), 3));
}

TEST(SchedulerTest, CacheOffAndNamespacesDoNotShare) {
  for (bool cache : {false, true}) {
    SchedulerOptions o;
    o.prefix_cache = cache;
    Fixture f(64, o);
    f.Add(Greedy(Range(12), 2, "tenant-a"));
    f.RunToIdle();
    auto other_ns = f.Add(Greedy(Range(12), 2, "tenant-b"));
    f.RunToIdle();
    auto same_ns = f.Add(Greedy(Range(12), 2, "tenant-a"));
    f.RunToIdle();
    EXPECT_EQ(Drain(other_ns.get()).stats.cached_tokens, 0);
    EXPECT_EQ(Drain(same_ns.get()).stats.cached_tokens, cache ? 8 : 0);
  }
}

TEST(SchedulerTest, ChunkedPrefillNeverStallsRunningDecodes) {
  SchedulerOptions o;
  o.max_batch_tokens = 6;
  o.max_running = 4;
  Fixture f(128, o);
  auto a = f.Add(Greedy(Range(3), 40));
  ASSERT_TRUE(f.Step());  // a's prompt
  auto b = f.Add(Greedy(Range(60, 5), 2));
  int steps_with_b_prefill = 0;
  for (int step = 0; step < 30; ++step) {
    engine::Batch batch;
    ASSERT_TRUE(f.Step(&batch));
    // a decodes every step; b's prompt arrives in chunks of <= 5 rows.
    ASSERT_GE(batch.num_entries(), 1);
    EXPECT_EQ(batch.ends()[0] - batch.starts()[0], 1) << "a's decode row comes first";
    EXPECT_LE(batch.num_rows(), 6);
    if (batch.num_entries() == 2 && batch.ends()[1] - batch.starts()[1] > 1) ++steps_with_b_prefill;
  }
  EXPECT_GE(steps_with_b_prefill, 60 / 5);
  f.RunToIdle();
  EXPECT_EQ(Drain(a.get()).tokens, Expected(Range(3), 40));
  EXPECT_EQ(Drain(b.get()).tokens, Expected(Range(60, 5), 2));
}

TEST(SchedulerTest, LongestCachedPrefixIsAdmittedFirstButNothingStarves) {
  for (int starvation : {1000, 0}) {
    SchedulerOptions o;
    o.max_running = 1;
    o.starvation_steps = starvation;
    Fixture f(64, o);
    f.Add(Greedy(Range(16, 9), 1));  // warms the cache with Range(16, 9)
    f.RunToIdle();
    auto busy = f.Add(Greedy(Range(4, 2), 3));
    ASSERT_TRUE(f.Step());  // busy is running; the next two must wait
    auto cold = f.Add(Greedy(Range(16, 30), 1));
    auto warm = f.Add(Greedy(Range(16, 9), 1));
    f.RunToIdle();
    const Outcome c = Drain(cold.get()), w = Drain(warm.get());
    ASSERT_TRUE(c.finished && w.finished);
    EXPECT_EQ(w.stats.cached_tokens, 12);
    // Cache-aware order admits `warm` first; with no patience at all
    // (starvation_steps 0) arrival order wins.
    if (starvation > 0) {
      EXPECT_LT(w.stats.finished, c.stats.finished);
    } else {
      EXPECT_LT(c.stats.finished, w.stats.finished);
    }
    (void)busy;
  }
}

TEST(SchedulerTest, ASharedSystemPromptIsComputedOnce) {
  for (bool cache : {true, false}) {
    SchedulerOptions o;
    o.max_batch_tokens = 16;
    o.max_running = 8;
    o.prefix_cache = cache;
    Fixture f(128, o);
    const std::vector<TokenId> system = Range(40, 11);  // 10 whole blocks
    std::vector<std::shared_ptr<RequestHandle>> hs;
    std::vector<std::vector<TokenId>> prompts;
    for (int i = 0; i < 8; ++i) {
      std::vector<TokenId> p = system;
      const std::vector<TokenId> tail = Range(6, static_cast<TokenId>(20 + i));
      p.insert(p.end(), tail.begin(), tail.end());
      prompts.push_back(p);
      hs.push_back(f.Add(Greedy(p, 3)));
    }
    f.RunToIdle();
    for (int i = 0; i < 8; ++i) EXPECT_EQ(Drain(hs[static_cast<size_t>(i)].get()).tokens, Expected(prompts[static_cast<size_t>(i)], 3));
    const SchedulerStats st = f.sched->stats();
    // Arriving together, all but the first wait for its prefill to put the
    // 40 shared tokens in the cache, then compute only their own tails.
    EXPECT_EQ(st.num_tokens_cached, cache ? 7 * 40 : 0);
    EXPECT_EQ(f.runner.rows_run, cache ? 8 * 46 - 7 * 40 + 8 * 2 : 8 * 46 + 8 * 2);
  }
}

TEST(SchedulerTest, CancelFreesEverythingAtTheNextStep) {
  Fixture f(64);
  auto h = f.Add(Greedy(Range(9), 50));
  auto waiting = f.Add(Greedy(Range(9, 4), 50));
  ASSERT_TRUE(f.Step());
  ASSERT_TRUE(f.Step());
  h->Cancel();
  waiting->Cancel();
  engine::Batch batch;
  EXPECT_FALSE(f.sched->Schedule(&batch));
  EXPECT_TRUE(f.sched->idle());
  EXPECT_EQ(Drain(h.get()).reason, FinishReason::kCancelled);
  EXPECT_EQ(Drain(waiting.get()).reason, FinishReason::kCancelled);
  // Only the cache holds blocks now, and all of them can be evicted.
  EXPECT_EQ(f.pool->num_used(), f.sched->cache()->num_blocks());
  EXPECT_EQ(f.sched->cache()->evictable_blocks(), f.sched->cache()->num_blocks());
  EXPECT_TRUE(f.sched->CheckInvariants().ok());
}

TEST(SchedulerTest, ValidationErrors) {
  SchedulerOptions o;
  o.context_length = 32;
  Fixture f(4, o);  // 16 token slots
  auto h = std::make_shared<RequestHandle>(1);
  EXPECT_EQ(f.sched->Add(h, Greedy({}, 1)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(f.sched->Add(h, Greedy(Range(33), 1)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(f.sched->Add(h, Greedy(Range(16), 1)).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(f.sched->Add(h, Greedy({kVocab}, 1)).code(), StatusCode::kInvalidArgument);
  RequestOptions bad = Greedy(Range(3), 1);
  bad.sampling.top_p = 1.5f;
  EXPECT_EQ(f.sched->Add(h, bad).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(f.sched->idle());
  // max_tokens 0 finishes at once, with nothing computed.
  EXPECT_TRUE(f.sched->Add(h, Greedy(Range(3), 0)).ok());
  EXPECT_EQ(Drain(h.get()).reason, FinishReason::kLength);
  EXPECT_FALSE(f.Step());
}

TEST(SchedulerTest, ASequenceThatFillsThePoolEndsWithContext) {
  Fixture f(3);  // 12 slots
  auto h = f.Add(Greedy(Range(5), 100));
  f.RunToIdle();
  Outcome o = Drain(h.get());
  EXPECT_EQ(o.reason, FinishReason::kContext);
  // Tokens 0..11 computed; the 13th token was sampled from position 11.
  EXPECT_EQ(o.tokens, Expected(Range(5), 8));
}

TEST(SchedulerTest, ContextLengthEndsGeneration) {
  SchedulerOptions o;
  o.context_length = 10;
  Fixture f(64, o);
  auto h = f.Add(Greedy(Range(6), 100));
  f.RunToIdle();
  Outcome o1 = Drain(h.get());
  EXPECT_EQ(o1.reason, FinishReason::kContext);
  EXPECT_EQ(o1.tokens.size(), 5u);  // positions 0..9 computed, 11 tokens in all
}

// Many requests with shared system prompts, random lengths, a pool too small
// to run them all (eviction and preemption) and random cancellations: every
// request ends, every finished one produced exactly the reference tokens,
// and the invariants hold after every step (checked in Step()).
TEST(SchedulerRandomTest, ManyRequestsSmallPool) {
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    std::mt19937 rng(seed);
    SchedulerOptions o;
    o.max_batch_tokens = 8 + static_cast<int>(rng() % 24);
    o.max_running = 1 + static_cast<int>(rng() % 6);
    o.starvation_steps = static_cast<int>(rng() % 40);
    o.prefix_cache = seed != 4;
    Fixture f(24 + static_cast<int>(rng() % 16), o);
    std::vector<std::vector<TokenId>> systems = {Range(9, 1), Range(13, 2), Range(4, 3)};
    struct Live {
      std::shared_ptr<RequestHandle> h;
      std::vector<TokenId> prompt;
      int max_tokens;
      Outcome out;
    };
    std::vector<Live> all;
    int steps = 0;
    for (int round = 0; round < 300 || !f.sched->idle(); ++round) {
      if (round < 300 && rng() % 3 == 0) {
        std::vector<TokenId> p = systems[rng() % systems.size()];
        const std::vector<TokenId> tail = Range(1 + static_cast<int>(rng() % 20), static_cast<TokenId>(rng() % 50));
        p.insert(p.end(), tail.begin(), tail.end());
        const int max_tokens = 1 + static_cast<int>(rng() % 30);
        all.push_back({f.Add(Greedy(p, max_tokens)), p, max_tokens, {}});
      }
      if (!all.empty() && rng() % 17 == 0) all[rng() % all.size()].h->Cancel();
      if (f.Step()) {
        ASSERT_LT(++steps, 20000);
      }
      if (HasFailure()) return;
    }
    int finished = 0, cancelled = 0;
    for (Live& l : all) {
      l.out = Drain(l.h.get());
      ASSERT_TRUE(l.out.finished) << "seed " << seed;
      const std::vector<TokenId> want = Expected(l.prompt, l.max_tokens);
      if (l.out.reason == FinishReason::kCancelled) {
        ++cancelled;
        ASSERT_LE(l.out.tokens.size(), want.size());
        EXPECT_TRUE(std::equal(l.out.tokens.begin(), l.out.tokens.end(), want.begin()));
      } else {
        ++finished;
        EXPECT_EQ(l.out.reason, FinishReason::kLength) << "seed " << seed;
        EXPECT_EQ(l.out.tokens, want) << "seed " << seed;
      }
    }
    const SchedulerStats st = f.sched->stats();
    EXPECT_GT(finished, 50);
    EXPECT_GT(cancelled, 0);
    if (o.prefix_cache) {
      EXPECT_GT(st.num_tokens_cached, 0) << "seed " << seed;
    }
    // Everything given back: only the cache (all evictable) holds blocks.
    EXPECT_EQ(f.pool->num_used(), st.num_blocks_cached);
    std::printf("seed %u: %zu requests, %d steps, %lld preemptions, %lld cached / %lld prompt tokens\n",
                seed, all.size(), steps, static_cast<long long>(st.num_preemptions),
                static_cast<long long>(st.num_tokens_cached),
                static_cast<long long>(st.num_prompt_tokens));
  }
}

}  // namespace
}  // namespace mneme::scheduler
