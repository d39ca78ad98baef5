// MemorySessionStore beyond the shared contract: the cleanup thread (runs,
// expires, stops cleanly), the all-busy bound, the lease-outlives-store
// check, and a seeded random walk of every operation checked against a
// plain model (contents, versions, expiry, LRU eviction) with
// CheckInvariants after every step.
#include "session/memory_session_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <list>
#include <map>
#include <random>

#include "session/fake_clock.h"

namespace mneme::session {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

MemorySessionStoreOptions Options(FakeClock* clock, int64_t max_sessions = 1000,
                                  seconds ttl = seconds(3600)) {
  MemorySessionStoreOptions o;
  o.default_ttl = ttl;
  o.max_sessions = max_sessions;
  o.cleanup_interval = milliseconds(0);
  o.clock = clock->AsFunction();
  return o;
}

TEST(MemorySessionStoreTest, CleanupThreadExpiresIdleSessionsAndStopsCleanly) {
  FakeClock clock;
  std::mutex m;
  std::condition_variable cv;
  int passes = 0;
  MemorySessionStoreOptions o = Options(&clock, 1000, seconds(10));
  o.cleanup_interval = milliseconds(1);
  o.after_cleanup_pass = [&] {
    std::lock_guard lock(m);
    ++passes;
    cv.notify_all();
  };
  MemorySessionStore store(std::move(o));
  SessionInit init;
  const std::string id = store.Create(init)->id;
  const std::string kept = store.Create(init)->id;
  clock.Advance(seconds(9));
  ASSERT_TRUE(store.Get(kept, "").ok());
  clock.Advance(seconds(2));  // `id` is 11 s idle, `kept` 2 s
  {
    // Two more passes: the second one began after the clock moved.
    std::unique_lock lock(m);
    const int start = passes;
    cv.wait(lock, [&] { return passes >= start + 2; });
  }
  EXPECT_EQ(store.Stats().num_sessions, 1);
  EXPECT_EQ(store.Stats().num_expired_total, 1);
  EXPECT_TRUE(store.Get(kept, "").ok());
  store.Stop();
  store.Stop();  // idempotent
  int after_stop;
  {
    std::lock_guard lock(m);
    after_stop = passes;
  }
  clock.Advance(seconds(100));
  store.RunCleanupOnce();  // still callable by hand
  std::lock_guard lock(m);
  EXPECT_EQ(passes, after_stop);  // the thread is gone
}

TEST(MemorySessionStoreTest, DestructorStopsARunningCleanupThread) {
  FakeClock clock;
  MemorySessionStoreOptions o = Options(&clock);
  o.cleanup_interval = milliseconds(3600 * 1000);  // it would sleep an hour
  auto store = std::make_unique<MemorySessionStore>(std::move(o));
  ASSERT_TRUE(store->Create(SessionInit{}).ok());
  store.reset();  // returns promptly: Stop wakes the thread
}

TEST(MemorySessionStoreTest, CreateFailsOnlyWhenEverySessionIsBusy) {
  FakeClock clock;
  MemorySessionStore store(Options(&clock, 2));
  const std::string a = store.Create(SessionInit{})->id;
  const std::string b = store.Create(SessionInit{})->id;
  auto la = std::move(store.BeginTurn(a, "", BusyPolicy::kReject, milliseconds(0))).value();
  auto lb = std::move(store.BeginTurn(b, "", BusyPolicy::kReject, milliseconds(0))).value();
  EXPECT_EQ(store.Create(SessionInit{}).status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(store.Fork(a, "").status().code(), StatusCode::kResourceExhausted);
  ASSERT_TRUE(lb->Commit(TurnAppend{}).ok());  // b is idle again
  Result<Session> c = store.Create(SessionInit{});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(store.Get(b, "").status().code(), StatusCode::kNotFound);  // evicted
  EXPECT_EQ(store.Stats().num_evicted_total, 1);
  EXPECT_TRUE(la->Commit(TurnAppend{}).ok());
  EXPECT_TRUE(store.CheckInvariants().ok());
}

TEST(MemorySessionStoreDeathTest, LeaseMustNotOutliveTheStore) {
  EXPECT_DEATH(
      {
        FakeClock clock;
        auto store = std::make_unique<MemorySessionStore>(Options(&clock));
        const std::string id = store->Create(SessionInit{})->id;
        auto lease = store->BeginTurn(id, "", BusyPolicy::kReject, milliseconds(0));
        store.reset();
      },
      "outlive");
}

// The model: what each live session must contain, and the recency order.
struct ModelSession {
  std::string owner;
  std::vector<std::string> messages;
  int64_t version = 0;
  TimePoint last_used;
};

TEST(MemorySessionStoreTest, RandomOperationsMatchAModel) {
  constexpr int64_t kMax = 6;
  constexpr seconds kTtl(100);
  FakeClock clock;
  MemorySessionStore store(Options(&clock, kMax, kTtl));
  std::mt19937 rng(1234);
  std::map<std::string, ModelSession> model;
  std::list<std::string> lru;  // front = least recently used
  auto touch = [&](const std::string& id) {
    lru.remove(id);
    lru.push_back(id);
    model[id].last_used = clock.Now();
  };
  auto forget = [&](std::string id) {  // by value: callers pass lru.front()
    lru.remove(id);
    model.erase(id);
  };
  auto expired = [&](const std::string& id) { return clock.Now() - model[id].last_used >= kTtl; };
  auto make_room = [&] {  // no turn is ever held between steps: all idle
    while (static_cast<int64_t>(model.size()) >= kMax) forget(lru.front());
  };
  auto pick = [&]() -> std::string {
    if (model.empty() || rng() % 8 == 0) return "sess_" + std::string(32, 'a');  // unknown
    auto it = model.begin();
    std::advance(it, rng() % model.size());
    return it->first;
  };
  const std::vector<std::string> owners = {"", "k1", "k2"};
  for (int step = 0; step < 3000; ++step) {
    SCOPED_TRACE(step);
    const int op = static_cast<int>(rng() % 7);
    const std::string id = pick();
    const bool live = model.count(id) != 0;
    const std::string owner = live && rng() % 5 != 0 ? model[id].owner : owners[rng() % 3];
    const bool mine = live && model[id].owner == owner;
    if (live && expired(id) && op != 0 && op != 6) {
      forget(id);  // any lookup finds it expired
      EXPECT_EQ(store.Get(id, owner).status().code(), StatusCode::kNotFound);
      continue;
    }
    switch (op) {
      case 0: {  // create
        make_room();
        SessionInit init;
        init.owner = owners[rng() % 3];
        Result<Session> s = store.Create(init);
        ASSERT_TRUE(s.ok());
        model[s->id] = ModelSession{init.owner, {}, 0, clock.Now()};
        touch(s->id);
        break;
      }
      case 1: {  // get
        Result<Session> s = store.Get(id, owner);
        ASSERT_EQ(s.ok(), mine);
        if (mine) {
          EXPECT_EQ(s->messages, model[id].messages);
          EXPECT_EQ(s->version, model[id].version);
          touch(id);
        }
        break;
      }
      case 2: {  // delete
        ASSERT_EQ(store.Delete(id, owner).ok(), mine);
        if (mine) forget(id);
        break;
      }
      case 3: {  // fork
        if (mine) {
          touch(id);
          make_room();
        }
        Result<Session> f = store.Fork(id, owner);
        ASSERT_EQ(f.ok(), mine);
        if (mine) {
          model[f->id] = ModelSession{owner, model[id].messages, 0, clock.Now()};
          touch(f->id);
        }
        break;
      }
      case 4: {  // a turn that commits or fails
        auto lease = store.BeginTurn(id, owner, BusyPolicy::kReject, milliseconds(0));
        ASSERT_EQ(lease.ok(), mine);
        if (!mine) break;
        touch(id);
        clock.Advance(seconds(rng() % 20));
        if (rng() % 3 == 0) {
          lease->reset();  // dropped: content unchanged, end of turn is a use
          touch(id);
        } else {
          const std::string m = "step " + std::to_string(step);
          ASSERT_TRUE((*lease)->Commit(TurnAppend{{m}, false, {}, {}, {}}).ok());
          model[id].messages.push_back(m);
          ++model[id].version;
          touch(id);
        }
        break;
      }
      case 5: {  // time passes
        clock.Advance(seconds(rng() % 40));
        break;
      }
      case 6: {  // cleanup
        store.RunCleanupOnce();
        std::vector<std::string> gone;
        for (const auto& [sid, s] : model) {
          if (clock.Now() - s.last_used >= kTtl) gone.push_back(sid);
        }
        for (const std::string& sid : gone) forget(sid);
        EXPECT_EQ(store.Stats().num_sessions, static_cast<int64_t>(model.size()));
        break;
      }
    }
    ASSERT_TRUE(store.CheckInvariants().ok()) << store.CheckInvariants().ToString();
  }
  // The walk reached both ways of losing a session.
  EXPECT_GT(store.Stats().num_evicted_total, 10);
  EXPECT_GT(store.Stats().num_expired_total, 10);
  // Everything the model holds is there, with its content.
  for (const auto& [id, s] : model) {
    if (clock.Now() - s.last_used >= kTtl) continue;
    Result<Session> got = store.Get(id, s.owner);
    ASSERT_TRUE(got.ok()) << id;
    EXPECT_EQ(got->messages, s.messages);
    EXPECT_EQ(got->version, s.version);
  }
}

}  // namespace
}  // namespace mneme::session
