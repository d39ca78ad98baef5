// The SessionStore contract, part 2: turns. Atomic commits with a version
// bump, dropped leases that change nothing, fencing of a turn that lost its
// lock, busy policies (reject, bounded wait), FIFO order of queued turns on
// one session, no waiting across sessions, and delete during a turn. See
// session_store_contract.h for how a store instantiates it.
//
// Threads synchronize on the store's own Stats (num_turns_waiting: a turn is
// known to be queued) and on joins, never on sleeps; the only timed wait is
// the bounded-wait case, whose outcome does not depend on the timing.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "session/session_store_contract.h"

namespace mneme::session {

namespace contract {

// Spins (yielding) until `n` turns are queued; fails after 60 s so that a
// broken store fails the test instead of hanging it.
inline void WaitUntilQueued(SessionStore* s, int64_t n) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (s->Stats().num_turns_waiting < n) {
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "turn never queued";
    std::this_thread::yield();
  }
}

inline constexpr milliseconds kLongWait{60000};

}  // namespace contract

template <typename Factory>
class SessionTurnContractTest : public ::testing::Test {
 protected:
  static ContractStore Make(ContractOptions o = {}) { return Factory::Make(o); }
};

TYPED_TEST_SUITE_P(SessionTurnContractTest);

TYPED_TEST_P(SessionTurnContractTest, CommitAppendsAndBumpsVersion) {
  using namespace contract;
  ContractStore c = this->Make();
  SessionInit init = Init("k", {"sys"});
  init.tokens = {1, 2, 3};
  init.metadata = "m0";
  const Session s = MustCreate(c.store.get(), init);
  {
    auto lease = MustBegin(c.store.get(), s.id, "k");
    EXPECT_EQ(lease->session().version, 0);
    EXPECT_EQ(lease->session().messages, init.messages);
    TurnAppend t = Messages({"u1", "a1"});
    t.tokens = {4, 5};
    t.chunk_hashes = {kv::Hash128{1, 1}};
    t.metadata = "m1";
    ASSERT_TRUE(lease->Commit(t).ok());
  }
  Tick(c);
  {
    auto lease = MustBegin(c.store.get(), s.id, "k");
    EXPECT_EQ(lease->session().version, 1);  // the snapshot shows the first turn
    EXPECT_EQ(lease->session().messages.size(), 3u);
    TurnAppend t = Messages({"u2", "a2"});
    t.tokens = {6};
    t.chunk_hashes = {kv::Hash128{2, 2}};
    ASSERT_TRUE(lease->Commit(t).ok());
  }
  Result<Session> got = c.store->Get(s.id, "k");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->messages, (std::vector<std::string>{"sys", "u1", "a1", "u2", "a2"}));
  EXPECT_EQ(got->tokens, (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(got->chunk_hashes, (std::vector<kv::Hash128>{{1, 1}, {2, 2}}));
  EXPECT_EQ(got->metadata, "m1");  // unset metadata keeps the old one
  if (c.clock) {
    EXPECT_EQ(got->last_used, c.clock->Now());
  }
}

TYPED_TEST_P(SessionTurnContractTest, CommitCanReplaceTokens) {
  using namespace contract;
  ContractStore c = this->Make();
  SessionInit init = Init("", {"sys"});
  init.tokens = {1, 2, 3, 4};
  init.chunk_hashes = {kv::Hash128{9, 9}, kv::Hash128{8, 8}};
  const Session s = MustCreate(c.store.get(), init);
  auto lease = MustBegin(c.store.get(), s.id);
  TurnAppend t = Messages({"u"});
  t.replace_tokens = true;
  t.tokens = {1, 7, 7};
  t.chunk_hashes = {kv::Hash128{5, 5}};
  ASSERT_TRUE(lease->Commit(t).ok());
  Result<Session> got = c.store->Get(s.id, "");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->tokens, (std::vector<int32_t>{1, 7, 7}));
  EXPECT_EQ(got->chunk_hashes, std::vector<kv::Hash128>{(kv::Hash128{5, 5})});
  EXPECT_EQ(got->messages, (std::vector<std::string>{"sys", "u"}));
}

TYPED_TEST_P(SessionTurnContractTest, DroppedLeaseLeavesSessionUnchanged) {
  using namespace contract;
  ContractStore c = this->Make();
  const Session s = MustCreate(c.store.get(), Init("", {"sys"}));
  {
    auto lease = MustBegin(c.store.get(), s.id);
    TurnAppend t = Messages({"u1", "a1"});
    t.tokens = {1, 2};
    ASSERT_TRUE(lease->Commit(t).ok());
  }
  Result<Session> before = c.store->Get(s.id, "");
  ASSERT_TRUE(before.ok());
  {
    auto lease = MustBegin(c.store.get(), s.id);  // the turn fails: no Commit
  }
  Result<Session> after = c.store->Get(s.id, "");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->messages, before->messages);
  EXPECT_EQ(after->tokens, before->tokens);
  EXPECT_EQ(after->chunk_hashes, before->chunk_hashes);
  EXPECT_EQ(after->metadata, before->metadata);
  EXPECT_EQ(after->version, before->version);
  // And the lock is free again.
  auto next = c.store->BeginTurn(s.id, "", BusyPolicy::kReject, milliseconds(0));
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ((*next)->session().version, before->version);
}

TYPED_TEST_P(SessionTurnContractTest, CommitEndsTheLease) {
  using namespace contract;
  ContractStore c = this->Make();
  const Session s = MustCreate(c.store.get(), Init(""));
  auto first = MustBegin(c.store.get(), s.id);
  ASSERT_TRUE(first->Commit(Messages({"a"})).ok());
  // The lock passed on although `first` still exists.
  auto second = c.store->BeginTurn(s.id, "", BusyPolicy::kReject, milliseconds(0));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(first->Commit(Messages({"again"})).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE((*second)->Commit(Messages({"b"})).ok());
  first.reset();  // releasing a spent lease takes nothing from anyone
  Result<Session> got = c.store->Get(s.id, "");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->messages, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(got->version, 2);
}

TYPED_TEST_P(SessionTurnContractTest, RejectPolicyFailsAtOnceWhenBusy) {
  using namespace contract;
  ContractStore c = this->Make();
  const Session s = MustCreate(c.store.get(), Init(""));
  auto held = MustBegin(c.store.get(), s.id);
  auto busy = c.store->BeginTurn(s.id, "", BusyPolicy::kReject, kLongWait);
  EXPECT_EQ(busy.status().code(), StatusCode::kAborted);
  EXPECT_NE(busy.status().message().find("busy"), std::string::npos) << busy.status().message();
  held.reset();
  EXPECT_TRUE(c.store->BeginTurn(s.id, "", BusyPolicy::kReject, milliseconds(0)).ok());
}

TYPED_TEST_P(SessionTurnContractTest, QueuePolicyGivesUpAfterMaxWait) {
  using namespace contract;
  ContractStore c = this->Make();
  const Session s = MustCreate(c.store.get(), Init(""));
  auto held = MustBegin(c.store.get(), s.id);
  auto late = c.store->BeginTurn(s.id, "", BusyPolicy::kQueue, milliseconds(20));
  EXPECT_EQ(late.status().code(), StatusCode::kAborted);
  EXPECT_EQ(c.store->Stats().num_turns_waiting, 0);  // it left the queue
  // A negative wait is no wait; an endless one on a free session is instant.
  EXPECT_EQ(c.store->BeginTurn(s.id, "", BusyPolicy::kQueue, milliseconds(-5)).status().code(),
            StatusCode::kAborted);
  const Session free = MustCreate(c.store.get(), Init(""));
  EXPECT_TRUE(c.store->BeginTurn(free.id, "", BusyPolicy::kQueue, milliseconds::max()).ok());
  ASSERT_TRUE(held->Commit(Messages({"x"})).ok());  // the holder is unaffected
  auto after = c.store->BeginTurn(s.id, "", BusyPolicy::kQueue, milliseconds(0));
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)->session().messages.size(), 1u);
}

TYPED_TEST_P(SessionTurnContractTest, QueuedTurnSeesThePreviousExchange) {
  using namespace contract;
  ContractStore c = this->Make();
  const Session s = MustCreate(c.store.get(), Init("k"));
  auto held = MustBegin(c.store.get(), s.id, "k");
  Result<std::unique_ptr<TurnLease>> queued = Status(StatusCode::kInternal, "not run");
  std::thread t([&] { queued = c.store->BeginTurn(s.id, "k", BusyPolicy::kQueue, kLongWait); });
  WaitUntilQueued(c.store.get(), 1);
  ASSERT_TRUE(held->Commit(Messages({"first"})).ok());
  t.join();
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  EXPECT_EQ((*queued)->session().version, 1);
  EXPECT_EQ((*queued)->session().messages, std::vector<std::string>{"first"});
}

TYPED_TEST_P(SessionTurnContractTest, QueuedTurnsRunInArrivalOrder) {
  using namespace contract;
  constexpr int kTurns = 50;
  ContractStore c = this->Make();
  const Session s = MustCreate(c.store.get(), Init(""));
  auto held = MustBegin(c.store.get(), s.id);
  std::vector<std::thread> threads;
  std::vector<Status> results(kTurns);
  for (int i = 0; i < kTurns; ++i) {
    threads.emplace_back([&, i] {
      auto lease = c.store->BeginTurn(s.id, "", BusyPolicy::kQueue, kLongWait);
      if (!lease.ok()) {
        results[i] = lease.status();
        return;
      }
      const size_t seen = (*lease)->session().messages.size();
      results[i] = (*lease)->Commit(Messages({std::to_string(i) + " saw " + std::to_string(seen)}));
    });
    WaitUntilQueued(c.store.get(), i + 1);  // turn i arrived before turn i+1 starts
  }
  ASSERT_TRUE(held->Commit(Messages({"opening"})).ok());
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kTurns; ++i) EXPECT_TRUE(results[i].ok()) << i << results[i].ToString();
  Result<Session> got = c.store->Get(s.id, "");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->messages.size(), kTurns + 1u);
  for (int i = 0; i < kTurns; ++i) {
    // Turn i ran i-th and saw the opening plus every earlier turn.
    EXPECT_EQ(got->messages[i + 1], std::to_string(i) + " saw " + std::to_string(i + 1));
  }
  EXPECT_EQ(got->version, kTurns + 1);
}

TYPED_TEST_P(SessionTurnContractTest, ContendedTurnsNeverLoseAnExchange) {
  using namespace contract;
  constexpr int kThreads = 8;
  constexpr int kTurnsEach = 20;
  ContractStore c = this->Make();
  const Session s = MustCreate(c.store.get(), Init(""));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int k = 0; k < kTurnsEach; ++k) {
        auto lease = c.store->BeginTurn(s.id, "", BusyPolicy::kQueue, kLongWait);
        if (!lease.ok()) {
          ++failures;
          continue;
        }
        const size_t seen = (*lease)->session().messages.size();
        TurnAppend a = Messages({std::to_string(seen)});
        a.tokens = {static_cast<int32_t>(seen)};
        if (!(*lease)->Commit(a).ok()) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  Result<Session> got = c.store->Get(s.id, "");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->messages.size(), size_t{kThreads * kTurnsEach});
  for (size_t k = 0; k < got->messages.size(); ++k) {
    EXPECT_EQ(got->messages[k], std::to_string(k));  // each saw all earlier exchanges
    EXPECT_EQ(got->tokens[k], static_cast<int32_t>(k));
  }
  EXPECT_EQ(got->version, kThreads * kTurnsEach);
}

TYPED_TEST_P(SessionTurnContractTest, SessionsDoNotWaitForEachOther) {
  using namespace contract;
  ContractStore c = this->Make();
  const Session a = MustCreate(c.store.get(), Init("k", {"a0"}));
  const Session b = MustCreate(c.store.get(), Init("k"));
  const Session d = MustCreate(c.store.get(), Init("k"));
  auto on_a = MustBegin(c.store.get(), a.id, "k");
  // Zero wait: anything that needed A's turn to end would fail right here.
  auto on_b = c.store->BeginTurn(b.id, "k", BusyPolicy::kQueue, milliseconds(0));
  ASSERT_TRUE(on_b.ok()) << on_b.status().ToString();
  EXPECT_TRUE(c.store->Get(a.id, "k").ok());  // reads the committed state
  EXPECT_TRUE(c.store->List("k", "", 10).ok());
  EXPECT_TRUE(c.store->Create(Init("k")).ok());
  EXPECT_TRUE(c.store->Delete(d.id, "k").ok());
  Result<Session> fork = c.store->Fork(a.id, "k");  // copies the committed history
  ASSERT_TRUE(fork.ok());
  EXPECT_EQ(fork->messages, std::vector<std::string>{"a0"});
  ASSERT_TRUE((*on_b)->Commit(Messages({"b1"})).ok());
  ASSERT_TRUE(on_a->Commit(Messages({"a1"})).ok());
}

TYPED_TEST_P(SessionTurnContractTest, DeleteDuringTurnFailsTheTurnAndTheQueue) {
  using namespace contract;
  ContractStore c = this->Make();
  const Session s = MustCreate(c.store.get(), Init(""));
  auto held = MustBegin(c.store.get(), s.id);
  Status waiter = Status(StatusCode::kInternal, "not run");
  std::thread t(
      [&] { waiter = c.store->BeginTurn(s.id, "", BusyPolicy::kQueue, kLongWait).status(); });
  WaitUntilQueued(c.store.get(), 1);
  ASSERT_TRUE(c.store->Delete(s.id, "").ok());  // does not wait for the turn
  t.join();
  EXPECT_EQ(waiter.code(), StatusCode::kNotFound);
  EXPECT_EQ(held->Commit(Messages({"too late"})).code(), StatusCode::kNotFound);
  EXPECT_EQ(c.store->Get(s.id, "").status().code(), StatusCode::kNotFound);
  held.reset();
  EXPECT_EQ(c.store->Stats().num_turns_active, 0);
  EXPECT_EQ(c.store->Stats().num_turns_waiting, 0);
}

TYPED_TEST_P(SessionTurnContractTest, TurnThatLostItsLockIsFenced) {
  using namespace contract;
  ContractStore c = this->Make();
  if (!c.break_turn_lock) GTEST_SKIP() << "store cannot take a lock away";
  const Session s = MustCreate(c.store.get(), Init(""));
  // A loses its lock; B takes it and commits; A's commit must not land.
  auto a = MustBegin(c.store.get(), s.id);
  c.break_turn_lock(s.id);
  auto b = MustBegin(c.store.get(), s.id);
  ASSERT_TRUE(b->Commit(Messages({"b"})).ok());
  const Status stale = a->Commit(Messages({"a"}));
  EXPECT_EQ(stale.code(), StatusCode::kAborted) << stale.ToString();
  a.reset();  // does not release anyone else's lock
  // The other way round: the first commit wins, the second is fenced.
  auto a2 = MustBegin(c.store.get(), s.id);
  c.break_turn_lock(s.id);
  auto b2 = MustBegin(c.store.get(), s.id);
  ASSERT_TRUE(a2->Commit(Messages({"a2"})).ok());
  EXPECT_EQ(b2->Commit(Messages({"b2"})).code(), StatusCode::kAborted);
  Result<Session> got = c.store->Get(s.id, "");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->messages, (std::vector<std::string>{"b", "a2"}));
  EXPECT_EQ(got->version, 2);
}

TYPED_TEST_P(SessionTurnContractTest, StatsCountTurns) {
  using namespace contract;
  ContractStore c = this->Make();
  const Session s = MustCreate(c.store.get(), Init(""));
  MustCreate(c.store.get(), Init(""));
  EXPECT_EQ(c.store->Stats().num_sessions, 2);
  EXPECT_EQ(c.store->Stats().num_turns_active, 0);
  auto held = MustBegin(c.store.get(), s.id);
  EXPECT_EQ(c.store->Stats().num_turns_active, 1);
  std::unique_ptr<TurnLease> second;
  std::thread t([&] {
    auto r = c.store->BeginTurn(s.id, "", BusyPolicy::kQueue, kLongWait);
    if (r.ok()) second = std::move(r).value();
  });
  WaitUntilQueued(c.store.get(), 1);
  EXPECT_EQ(c.store->Stats().num_turns_waiting, 1);
  held.reset();
  t.join();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(c.store->Stats().num_turns_active, 1);
  EXPECT_EQ(c.store->Stats().num_turns_waiting, 0);
  second.reset();
  EXPECT_EQ(c.store->Stats().num_turns_active, 0);
}

REGISTER_TYPED_TEST_SUITE_P(SessionTurnContractTest, CommitAppendsAndBumpsVersion,
                            CommitCanReplaceTokens, DroppedLeaseLeavesSessionUnchanged,
                            CommitEndsTheLease, RejectPolicyFailsAtOnceWhenBusy,
                            QueuePolicyGivesUpAfterMaxWait, QueuedTurnSeesThePreviousExchange,
                            QueuedTurnsRunInArrivalOrder, ContendedTurnsNeverLoseAnExchange,
                            SessionsDoNotWaitForEachOther, DeleteDuringTurnFailsTheTurnAndTheQueue,
                            TurnThatLostItsLockIsFenced, StatsCountTurns);

}  // namespace mneme::session
