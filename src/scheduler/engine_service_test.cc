// EngineService on a real model (stories260K): requests submitted from
// other threads, decoded together on the engine thread with continuous
// batching, the prefix cache and (with a small KV pool) preemption, produce
// exactly the greedy tokens each prompt produces alone; a second turn reuses
// the first turn's KV; a full queue says "overloaded"; Cancel and Stop end
// requests cleanly and give their blocks back.
#include "scheduler/engine_service.h"

#include <gtest/gtest.h>

#include <future>
#include <latch>
#include <string>

#include "engine/engine_test_util.h"
#include "tokenizer/tokenizer.h"

namespace mneme::scheduler {
namespace {

using engine::testing::Harness;

struct Model {
  std::unique_ptr<engine::testing::Loaded> loaded;
  std::unique_ptr<Tokenizer> tokenizer;
};

Model& Stories() {
  static Model* m = [] {
    auto* model = new Model;
    auto loaded = engine::testing::LoadStories();
    CHECK(loaded.ok()) << loaded.status().ToString();
    model->loaded = std::move(*loaded);
    auto tok = Tokenizer::FromGguf(model->loaded->file);
    CHECK(tok.ok()) << tok.status().ToString();
    model->tokenizer = std::make_unique<Tokenizer>(std::move(*tok));
    return model;
  }();
  return *m;
}

std::vector<TokenId> Encode(const std::string& text) {
  const Vocab& v = Stories().tokenizer->vocab();
  std::vector<TokenId> ids = {v.bos_id};
  const std::vector<TokenId> t = Stories().tokenizer->Encode(text, {.add_special = false});
  ids.insert(ids.end(), t.begin(), t.end());
  return ids;
}

// Greedy decoding of one prompt alone (its own pool, each decode step a
// one-row batch), stopping at EOG. The engine is batch-invariant (every
// matrix product and attention row gives the same bits whatever the batch;
// engine/batching_test.cc), so batched, chunked, cached and preempted runs
// must give exactly these tokens.
std::vector<TokenId> Alone(const std::vector<TokenId>& prompt, int n) {
  auto h = Harness::Make(*Stories().loaded, kv::KvDType::kF16, 64);
  engine::Sequence seq(0, prompt, h->pool.get());
  std::vector<TokenId> out;
  const Vocab& v = Stories().tokenizer->vocab();
  while (static_cast<int>(out.size()) < n) {
    auto logits = h->RunAll(&seq);
    EXPECT_TRUE(logits.ok());
    const TokenId t = engine::testing::Argmax(*logits);
    if (v.IsEog(t)) break;
    out.push_back(t);
    seq.tokens.push_back(t);
  }
  return out;
}

RequestOptions Greedy(std::vector<TokenId> prompt, int max_tokens) {
  RequestOptions r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.sampling.penalty_last_n = 0;
  r.sampling.max_tokens = max_tokens;
  return r;
}

struct Output {
  std::vector<TokenId> tokens;
  TokenEvent final_event;
};

Output Collect(RequestHandle* h) {
  Output r;
  TokenEvent ev;
  while (h->Next(&ev)) {
    if (ev.kind == TokenEvent::Kind::kToken) {
      r.tokens.push_back(ev.token);
    } else {
      r.final_event = ev;
    }
  }
  return r;
}

struct Service {
  std::unique_ptr<Harness> harness;
  std::unique_ptr<EngineService> engine;

  Service(int num_blocks, EngineOptions options) {
    harness = Harness::Make(*Stories().loaded, kv::KvDType::kF16, num_blocks, 2, 16,
                            int64_t{1} << 18);
    options.check_invariants = true;
    auto e = EngineService::Create(harness->runner.get(), Stories().tokenizer->vocab().eog_ids,
                                   options);
    CHECK(e.ok()) << e.status().ToString();
    engine = std::move(*e);
  }
};

const char* kStory = "Once upon a time, there was a little girl named Lily. She loved to";

TEST(EngineServiceTest, ConcurrentRequestsProduceWhatEachProducesAlone) {
  const std::vector<std::string> endings = {" play", " sing", " eat cake", " run in the park",
                                            " read books", " draw", " swim", " dance with her mom"};
  std::vector<std::vector<TokenId>> prompts;
  std::vector<std::vector<TokenId>> want;
  for (const std::string& e : endings) {
    prompts.push_back(Encode(kStory + e));
    want.push_back(Alone(prompts.back(), 40));
  }
  struct Config {
    const char* name;
    bool cache;
    int blocks;
    int max_batch_tokens;
  };
  for (const Config& c : {Config{"cache, roomy", true, 256, 512},
                          Config{"no cache, roomy", false, 256, 512},
                          Config{"cache, tight pool + small steps", true, 12, 24},
                          Config{"no cache, tight pool", false, 12, 64}}) {
    SCOPED_TRACE(c.name);
    EngineOptions o;
    o.scheduler.prefix_cache = c.cache;
    o.scheduler.max_batch_tokens = c.max_batch_tokens;
    o.scheduler.max_running = 8;
    Service s(c.blocks, o);
    // The first request runs alone for a step (so its prompt is cached),
    // then all others arrive together.
    std::vector<std::shared_ptr<RequestHandle>> handles;
    for (size_t i = 0; i < prompts.size(); ++i) {
      auto h = s.engine->Submit(Greedy(prompts[i], 40));
      ASSERT_TRUE(h.ok()) << h.status().ToString();
      handles.push_back(*h);
      if (i == 0) {
        TokenEvent first;
        ASSERT_TRUE(handles[0]->Next(&first));
        ASSERT_EQ(first.kind, TokenEvent::Kind::kToken);
        ASSERT_EQ(first.token, want[0][0]);
      }
    }
    for (size_t i = 0; i < handles.size(); ++i) {
      Output r = Collect(handles[i].get());
      if (i == 0) r.tokens.insert(r.tokens.begin(), want[0][0]);
      EXPECT_EQ(r.tokens, want[i]) << "request " << i;
      EXPECT_TRUE(r.final_event.reason == FinishReason::kStop ||
                  r.final_event.reason == FinishReason::kLength)
          << FinishReasonName(r.final_event.reason) << " " << r.final_event.error.ToString();
    }
    const SchedulerStats st = s.engine->Stats();
    if (c.cache) {
      EXPECT_GT(st.num_tokens_cached, 0);  // the shared story opening
    }
    if (c.blocks == 12) {
      EXPECT_GT(st.num_preemptions, 0);
    }
    std::printf("%s: %lld steps, %lld cached / %lld prompt tokens, %lld preemptions\n", c.name,
                static_cast<long long>(st.num_steps), static_cast<long long>(st.num_tokens_cached),
                static_cast<long long>(st.num_prompt_tokens),
                static_cast<long long>(st.num_preemptions));
  }
}

TEST(EngineServiceTest, SecondTurnPrefillsOnlyItsNewTokens) {
  Service s(128, {});
  const std::vector<TokenId> turn1 = Encode(kStory);
  auto h1 = s.engine->Submit(Greedy(turn1, 20));
  ASSERT_TRUE(h1.ok());
  Output r1 = Collect(h1->get());
  std::vector<TokenId> turn2 = turn1;
  turn2.insert(turn2.end(), r1.tokens.begin(), r1.tokens.end());
  const std::vector<TokenId> more = Stories().tokenizer->Encode(" The end. One day", {});
  turn2.insert(turn2.end(), more.begin(), more.end());
  auto h2 = s.engine->Submit(Greedy(turn2, 20));
  ASSERT_TRUE(h2.ok());
  Output r2 = Collect(h2->get());
  // Turn 1 computed its prompt and all its answer but the last token.
  const int computed = static_cast<int>(turn1.size() + r1.tokens.size()) - 1;
  EXPECT_EQ(r2.final_event.stats.cached_tokens, computed / 16 * 16);
  EXPECT_EQ(r2.tokens, Alone(turn2, 20));
}

// A cache hit of any length — ending on a block boundary or inside a block
// (the tail then recomputed), after a turn whose prompt was that prefix —
// gives exactly the tokens of a run without the cache.
TEST(EngineServiceTest, CacheHitIsTokenIdenticalForEveryPrefixLength) {
  const std::vector<TokenId> prompt =
      Encode("Once upon a time, there was a little dog named Max. Max liked to run and jump in "
             "the big green park with his best friend");
  ASSERT_GE(prompt.size(), 34u);
  EngineOptions off;
  off.scheduler.prefix_cache = false;
  Service plain(64, off);
  const Output want = Collect(plain.engine->Submit(Greedy(prompt, 12))->get());
  ASSERT_EQ(want.tokens.size(), 12u);
  int hits = 0;
  for (size_t len = 1; len <= prompt.size(); ++len) {
    SCOPED_TRACE("prefix of " + std::to_string(len) + " tokens");
    Service cached(64, {});  // a fresh cache holding only this prefix's turn
    const std::vector<TokenId> prefix(prompt.begin(), prompt.begin() + static_cast<long>(len));
    const Output first = Collect(cached.engine->Submit(Greedy(prefix, 2))->get());
    const Output got = Collect(cached.engine->Submit(Greedy(prompt, 12))->get());
    // The first turn computed its prompt and its first answer token (which
    // may well continue the story as the prompt does); the hit is the whole
    // blocks of what it computed that match the prompt.
    std::vector<TokenId> computed = prefix;
    computed.push_back(first.tokens.at(0));
    size_t common = 0;
    while (common < computed.size() && common + 1 < prompt.size() &&
           computed[common] == prompt[common]) {
      ++common;
    }
    const int expected_hit = static_cast<int>(common) / 16 * 16;
    EXPECT_EQ(got.final_event.stats.cached_tokens, expected_hit);
    hits += expected_hit > 0;
    EXPECT_EQ(got.tokens, want.tokens);
  }
  EXPECT_GE(hits, 2);
}

TEST(EngineServiceTest, AFullQueueIsOverloaded) {
  EngineOptions o;
  o.max_waiting = 3;
  o.scheduler.max_running = 1;
  Service s(128, o);
  // The first request's first token blocks the engine thread until the test
  // has filled the queue, so nothing is drained meanwhile.
  std::latch release(1);
  auto first = std::make_shared<RequestHandle>(100);
  std::atomic<bool> blocked_once{false};
  first->SetNotifier([&] {
    if (!blocked_once.exchange(true)) release.wait();
  });
  ASSERT_TRUE(s.engine->Submit(first, Greedy(Encode(kStory), 5)).ok());
  std::vector<std::shared_ptr<RequestHandle>> queued;
  Status overloaded;
  for (int i = 0; i < 4 && overloaded.ok(); ++i) {
    auto h = s.engine->Submit(Greedy(Encode("Tim"), 3));
    if (h.ok()) {
      queued.push_back(*h);
    } else {
      overloaded = h.status();
    }
  }
  release.count_down();
  EXPECT_EQ(overloaded.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(overloaded.message().find("overloaded"), std::string::npos) << overloaded.ToString();
  EXPECT_LE(queued.size(), 3u);
  for (auto& h : queued) EXPECT_EQ(Collect(h.get()).final_event.reason, FinishReason::kLength);
  EXPECT_EQ(Collect(first.get()).final_event.reason, FinishReason::kLength);
}

TEST(EngineServiceTest, CancelAndStopEndRequestsAndFreeTheirBlocks) {
  Service s(128, {});
  RequestOptions long_request = Greedy(Encode(kStory), 400);
  long_request.sampling.ignore_eos = true;
  auto h = s.engine->Submit(long_request);
  ASSERT_TRUE(h.ok());
  TokenEvent ev;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*h)->Next(&ev));
    ASSERT_EQ(ev.kind, TokenEvent::Kind::kToken);
  }
  (*h)->Cancel();
  Output r = Collect(h->get());
  EXPECT_EQ(r.final_event.reason, FinishReason::kCancelled);
  // Wait for the engine to go idle: a request submitted now finishes only
  // after the cancelled one was reaped.
  ASSERT_EQ(Collect(s.engine->Submit(Greedy(Encode("Tim"), 1))->get()).final_event.reason,
            FinishReason::kLength);
  const SchedulerStats st = s.engine->Stats();
  EXPECT_EQ(st.num_running, 0);
  EXPECT_EQ(st.num_blocks_used, st.num_blocks_cached);

  auto a = s.engine->Submit(long_request);
  auto b = s.engine->Submit(long_request);
  ASSERT_TRUE(a.ok() && b.ok());
  s.engine->Stop();
  EXPECT_EQ(Collect(a->get()).final_event.reason, FinishReason::kCancelled);
  EXPECT_EQ(Collect(b->get()).final_event.reason, FinishReason::kCancelled);
  EXPECT_EQ(s.engine->Submit(Greedy(Encode("Tim"), 1)).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(EngineServiceTest, SubmitValidatesAtOnce) {
  Service s(8, {});
  EXPECT_EQ(s.engine->Submit(Greedy({}, 3)).status().code(), StatusCode::kInvalidArgument);
  std::vector<TokenId> huge(200, 1);  // 8 blocks of 16 hold 128 tokens
  EXPECT_EQ(s.engine->Submit(Greedy(huge, 3)).status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace mneme::scheduler
