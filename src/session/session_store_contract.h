// The SessionStore contract, part 1: creating, reading, listing, deleting
// and forking sessions, ownership, malformed ids, expiry and eviction. Part 2
// (session_turn_contract.h) covers turns. Every store must pass both.
//
// The suites are typed over a factory, so each store instantiates them once:
//
//   struct MyStoreFactory {
//     static ContractStore Make(const ContractOptions& options);
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(My, SessionStoreContractTest,
//                                  ::testing::Types<MyStoreFactory>);
//   INSTANTIATE_TYPED_TEST_SUITE_P(My, SessionTurnContractTest,
//                                  ::testing::Types<MyStoreFactory>);
//
// A store that cannot run on a fake clock leaves ContractStore::clock null
// (the TTL and LRU cases are then skipped); one that cannot take a turn lock
// away leaves break_turn_lock null (the fencing cases are then skipped).
// Include this header from exactly one test file per binary.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "session/fake_clock.h"
#include "session/session_store.h"

namespace mneme::session {

struct ContractOptions {
  std::chrono::seconds default_ttl{3600};
  int64_t max_sessions = 1000;
};

struct ContractStore {
  std::shared_ptr<FakeClock> clock;     // drives the store's time; null if unsupported
  std::unique_ptr<SessionStore> store;  // declared after clock: destroyed first
  // Takes the session's turn lock away from its holder (a lock expiry).
  std::function<void(std::string_view id)> break_turn_lock;
};

namespace contract {

using std::chrono::milliseconds;
using std::chrono::seconds;

inline SessionInit Init(std::string owner, std::vector<std::string> messages = {}) {
  SessionInit init;
  init.owner = std::move(owner);
  init.messages = std::move(messages);
  return init;
}

inline Session MustCreate(SessionStore* s, SessionInit init) {
  Result<Session> r = s->Create(std::move(init));
  CHECK(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

inline std::unique_ptr<TurnLease> MustBegin(SessionStore* s, const std::string& id,
                                            const std::string& owner = "") {
  auto r = s->BeginTurn(id, owner, BusyPolicy::kReject, milliseconds(0));
  CHECK(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

inline TurnAppend Messages(std::vector<std::string> m) {
  TurnAppend a;
  a.messages = std::move(m);
  return a;
}

// Advances the store's clock, if it has one (keeps creation order strict).
inline void Tick(const ContractStore& c, seconds d = seconds(1)) {
  if (c.clock) c.clock->Advance(d);
}

}  // namespace contract

template <typename Factory>
class SessionStoreContractTest : public ::testing::Test {
 protected:
  static ContractStore Make(ContractOptions o = {}) { return Factory::Make(o); }
};

TYPED_TEST_SUITE_P(SessionStoreContractTest);

TYPED_TEST_P(SessionStoreContractTest, CreateThenGetReturnsWhatWasStored) {
  using namespace contract;
  ContractStore c = this->Make();
  SessionInit init = Init("key-a", {R"({"role":"system","content":"be brief"})"});
  init.metadata = R"({"title":"t"})";
  init.tokens = {1, 2, 3};
  init.chunk_hashes = {kv::Hash128{7, 8}};
  const Session s = MustCreate(c.store.get(), init);
  EXPECT_TRUE(IsWellFormedSessionId(s.id)) << s.id;
  EXPECT_EQ(s.owner, "key-a");
  EXPECT_EQ(s.version, 0);
  EXPECT_EQ(s.ttl_seconds, 3600);
  if (c.clock) {
    EXPECT_EQ(s.created, c.clock->Now());
    EXPECT_EQ(s.last_used, c.clock->Now());
  }
  Result<Session> got = c.store->Get(s.id, "key-a");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->id, s.id);
  EXPECT_EQ(got->metadata, init.metadata);
  EXPECT_EQ(got->messages, init.messages);
  EXPECT_EQ(got->tokens, init.tokens);
  EXPECT_EQ(got->chunk_hashes, init.chunk_hashes);
  EXPECT_EQ(got->version, 0);
  SessionInit custom = Init("");
  custom.ttl_seconds = 42;
  EXPECT_EQ(MustCreate(c.store.get(), custom).ttl_seconds, 42);
}

TYPED_TEST_P(SessionStoreContractTest, IdsAreDistinctAndWellFormed) {
  ContractStore c = this->Make();
  std::set<std::string> ids;
  for (int i = 0; i < 200; ++i) {
    const Session s = contract::MustCreate(c.store.get(), contract::Init(""));
    EXPECT_TRUE(IsWellFormedSessionId(s.id)) << s.id;
    ids.insert(s.id);
  }
  EXPECT_EQ(ids.size(), 200u);
}

TYPED_TEST_P(SessionStoreContractTest, MalformedAndUnknownIdsAreNotFound) {
  using namespace contract;
  ContractStore c = this->Make();
  const Session s = MustCreate(c.store.get(), Init(""));
  std::string upper = s.id;
  for (size_t i = kSessionIdPrefix.size(); i < upper.size(); ++i) upper[i] = 'A';
  std::string with_nul = s.id;
  with_nul[10] = '\0';
  const std::string unknown = "sess_" + std::string(32, '0');
  const std::vector<std::string> bad = {"",
                                        "sess_",
                                        s.id.substr(0, s.id.size() - 1),
                                        s.id + "0",
                                        upper,
                                        "SESS_" + s.id.substr(5),
                                        "resp_" + s.id.substr(5),
                                        "sess_" + std::string(31, '0') + "g",
                                        "../../etc/passwd",
                                        with_nul,
                                        std::string(100000, 'x'),
                                        "sess_" + std::string(32, '0') + "\xff",
                                        unknown};
  const Status reference = c.store->Get(unknown, "").status();
  ASSERT_EQ(reference.code(), StatusCode::kNotFound);
  for (const std::string& id : bad) {
    SCOPED_TRACE(id.substr(0, 40));
    EXPECT_EQ(c.store->Get(id, "").status().code(), StatusCode::kNotFound);
    EXPECT_EQ(c.store->Get(id, "").status().message(), reference.message());
    EXPECT_EQ(c.store->Delete(id, "").code(), StatusCode::kNotFound);
    EXPECT_EQ(c.store->Fork(id, "").status().code(), StatusCode::kNotFound);
    EXPECT_EQ(c.store->BeginTurn(id, "", BusyPolicy::kQueue, milliseconds(0)).status().code(),
              StatusCode::kNotFound);
  }
  EXPECT_TRUE(c.store->Get(s.id, "").ok());  // nothing above touched it
}

TYPED_TEST_P(SessionStoreContractTest, OtherOwnersSeeNothing) {
  using namespace contract;
  ContractStore c = this->Make();
  const Session s = MustCreate(c.store.get(), Init("key-a", {"m"}));
  const Status unknown = c.store->Get("sess_" + std::string(32, 'f'), "key-b").status();
  for (const std::string owner : {"key-b", "", "key-a ", "KEY-A"}) {
    SCOPED_TRACE(owner);
    const Status st = c.store->Get(s.id, owner).status();
    EXPECT_EQ(st.code(), StatusCode::kNotFound);
    EXPECT_EQ(st.message(), unknown.message());  // indistinguishable from an unknown id
    EXPECT_EQ(c.store->Delete(s.id, owner).code(), StatusCode::kNotFound);
    EXPECT_EQ(c.store->Fork(s.id, owner).status().code(), StatusCode::kNotFound);
    EXPECT_EQ(c.store->BeginTurn(s.id, owner, BusyPolicy::kQueue, milliseconds(0)).status().code(),
              StatusCode::kNotFound);
    Result<SessionPage> page = c.store->List(owner, "", 100);
    ASSERT_TRUE(page.ok());
    EXPECT_TRUE(page->sessions.empty());
  }
  Result<Session> mine = c.store->Get(s.id, "key-a");
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(mine->messages, std::vector<std::string>{"m"});
}

TYPED_TEST_P(SessionStoreContractTest, ListPaginatesInCreationOrder) {
  using namespace contract;
  ContractStore c = this->Make();
  std::vector<std::string> mine;
  for (int i = 0; i < 7; ++i) {
    mine.push_back(MustCreate(c.store.get(), Init("a")).id);
    Tick(c);
    if (i % 2 == 0) MustCreate(c.store.get(), Init("b"));
    Tick(c);
  }
  // Pages of 3: 3 + 3 + 1, each session once, oldest first.
  std::vector<std::string> seen;
  std::string cursor;
  int pages = 0;
  do {
    Result<SessionPage> page = c.store->List("a", cursor, 3);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ++pages;
    EXPECT_LE(page->sessions.size(), 3u);
    for (const SessionInfo& info : page->sessions) seen.push_back(info.id);
    cursor = page->next_cursor;
  } while (!cursor.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen, mine);
  // An exact fit is one page with no cursor.
  Result<SessionPage> all = c.store->List("a", "", 7);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->sessions.size(), 7u);
  EXPECT_TRUE(all->next_cursor.empty());
  Result<SessionPage> others = c.store->List("b", "", 100);
  ASSERT_TRUE(others.ok());
  EXPECT_EQ(others->sessions.size(), 4u);
  // Deleting the session a cursor points after does not break the walk.
  Result<SessionPage> first = c.store->List("a", "", 2);
  ASSERT_TRUE(first.ok());
  ASSERT_FALSE(first->next_cursor.empty());
  ASSERT_TRUE(c.store->Delete(mine[1], "a").ok());
  Result<SessionPage> rest = c.store->List("a", first->next_cursor, 100);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->sessions.size(), 5u);
  EXPECT_EQ(rest->sessions[0].id, mine[2]);
  // Bad arguments.
  EXPECT_EQ(c.store->List("a", "", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.store->List("a", "not a cursor", 3).status().code(), StatusCode::kInvalidArgument);
}

TYPED_TEST_P(SessionStoreContractTest, ListReportsSizesNotHistory) {
  using namespace contract;
  ContractStore c = this->Make();
  SessionInit init = Init("a", {"m1", "m2"});
  init.tokens = {1, 2, 3, 4, 5};
  init.metadata = "{}";
  const Session s = MustCreate(c.store.get(), init);
  Result<SessionPage> page = c.store->List("a", "", 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->sessions.size(), 1u);
  const SessionInfo& info = page->sessions[0];
  EXPECT_EQ(info.id, s.id);
  EXPECT_EQ(info.num_messages, 2);
  EXPECT_EQ(info.num_tokens, 5);
  EXPECT_EQ(info.version, 0);
  EXPECT_EQ(info.metadata, "{}");
  EXPECT_EQ(info.created, s.created);
}

TYPED_TEST_P(SessionStoreContractTest, DeleteRemovesTheSession) {
  using namespace contract;
  ContractStore c = this->Make();
  const Session s = MustCreate(c.store.get(), Init("a"));
  const Session keep = MustCreate(c.store.get(), Init("a"));
  ASSERT_TRUE(c.store->Delete(s.id, "a").ok());
  EXPECT_EQ(c.store->Get(s.id, "a").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(c.store->Delete(s.id, "a").code(), StatusCode::kNotFound);
  Result<SessionPage> page = c.store->List("a", "", 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->sessions.size(), 1u);
  EXPECT_EQ(page->sessions[0].id, keep.id);
}

TYPED_TEST_P(SessionStoreContractTest, ForkCopiesHistoryAndIsIndependent) {
  using namespace contract;
  ContractStore c = this->Make();
  SessionInit init = Init("a", {"sys"});
  init.tokens = {10, 11};
  init.metadata = R"({"k":1})";
  const Session src = MustCreate(c.store.get(), init);
  {
    auto lease = MustBegin(c.store.get(), src.id, "a");
    TurnAppend t = Messages({"user", "assistant"});
    t.tokens = {12, 13};
    t.chunk_hashes = {kv::Hash128{1, 2}};
    ASSERT_TRUE(lease->Commit(t).ok());
  }
  Tick(c);
  Result<Session> fork = c.store->Fork(src.id, "a");
  ASSERT_TRUE(fork.ok()) << fork.status().ToString();
  EXPECT_NE(fork->id, src.id);
  EXPECT_TRUE(IsWellFormedSessionId(fork->id));
  EXPECT_EQ(fork->owner, "a");
  EXPECT_EQ(fork->version, 0);
  EXPECT_EQ(fork->metadata, init.metadata);
  EXPECT_EQ(fork->messages, (std::vector<std::string>{"sys", "user", "assistant"}));
  EXPECT_EQ(fork->tokens, (std::vector<int32_t>{10, 11, 12, 13}));
  EXPECT_EQ(fork->chunk_hashes, std::vector<kv::Hash128>{(kv::Hash128{1, 2})});
  if (c.clock) {
    EXPECT_EQ(fork->created, c.clock->Now());
  }
  // Independent: a turn on the fork does not show in the source, and back.
  {
    auto lease = MustBegin(c.store.get(), fork->id, "a");
    ASSERT_TRUE(lease->Commit(Messages({"fork only"})).ok());
  }
  {
    auto lease = MustBegin(c.store.get(), src.id, "a");
    ASSERT_TRUE(lease->Commit(Messages({"source only"})).ok());
  }
  Result<Session> s2 = c.store->Get(src.id, "a");
  Result<Session> f2 = c.store->Get(fork->id, "a");
  ASSERT_TRUE(s2.ok() && f2.ok());
  EXPECT_EQ(s2->messages.back(), "source only");
  EXPECT_EQ(f2->messages.back(), "fork only");
  EXPECT_EQ(s2->messages.size(), 4u);
  EXPECT_EQ(f2->messages.size(), 4u);
  // Deleting the source leaves the fork.
  ASSERT_TRUE(c.store->Delete(src.id, "a").ok());
  EXPECT_TRUE(c.store->Get(fork->id, "a").ok());
}

TYPED_TEST_P(SessionStoreContractTest, SlidingTtlExpiresIdleSessions) {
  using namespace contract;
  ContractStore c = this->Make({.default_ttl = seconds(100)});
  if (!c.clock) GTEST_SKIP() << "store has no fake clock";
  const Session a = MustCreate(c.store.get(), Init(""));
  const Session b = MustCreate(c.store.get(), Init(""));
  SessionInit short_init = Init("");
  short_init.ttl_seconds = 10;
  const Session s = MustCreate(c.store.get(), short_init);
  c.clock->Advance(seconds(60));
  ASSERT_TRUE(c.store->Get(a.id, "").ok());  // refreshes a at t=60
  c.clock->Advance(seconds(40));             // t=100: b idle for exactly its TTL
  EXPECT_EQ(c.store->Get(b.id, "").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(c.store->Get(s.id, "").status().code(), StatusCode::kNotFound);
  c.clock->Advance(seconds(59));  // t=159: a idle 99 s
  ASSERT_TRUE(c.store->Get(a.id, "").ok());
  // A turn refreshes too: begin at 159, commit at 249, still alive at 348.
  {
    auto lease = MustBegin(c.store.get(), a.id);
    c.clock->Advance(seconds(90));
    ASSERT_TRUE(lease->Commit(Messages({"m"})).ok());
  }
  c.clock->Advance(seconds(99));
  c.store->RunCleanupOnce();
  ASSERT_TRUE(c.store->Get(a.id, "").ok());
  // Cleanup removes expired sessions nobody asks for.
  const int64_t before = c.store->Stats().num_sessions;
  c.clock->Advance(seconds(100));
  c.store->RunCleanupOnce();
  EXPECT_EQ(c.store->Stats().num_sessions, before - 1);
  EXPECT_GE(c.store->Stats().num_expired_total, 1);
  Result<SessionPage> page = c.store->List("", "", 10);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->sessions.empty());
}

TYPED_TEST_P(SessionStoreContractTest, ExpiredSessionsAreNotListed) {
  using namespace contract;
  ContractStore c = this->Make({.default_ttl = seconds(100)});
  if (!c.clock) GTEST_SKIP() << "store has no fake clock";
  MustCreate(c.store.get(), Init("a"));
  c.clock->Advance(seconds(50));
  const Session young = MustCreate(c.store.get(), Init("a"));
  c.clock->Advance(seconds(60));  // the first is 110 s idle, no cleanup ran
  Result<SessionPage> page = c.store->List("a", "", 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->sessions.size(), 1u);
  EXPECT_EQ(page->sessions[0].id, young.id);
}

TYPED_TEST_P(SessionStoreContractTest, BusySessionsNeverExpire) {
  using namespace contract;
  ContractStore c = this->Make({.default_ttl = seconds(100)});
  if (!c.clock) GTEST_SKIP() << "store has no fake clock";
  const Session s = MustCreate(c.store.get(), Init(""));
  auto lease = MustBegin(c.store.get(), s.id);
  c.clock->Advance(seconds(1000));
  c.store->RunCleanupOnce();
  EXPECT_EQ(c.store->Stats().num_sessions, 1);
  ASSERT_TRUE(lease->Commit(Messages({"late answer"})).ok());
  Result<Session> got = c.store->Get(s.id, "");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->messages.size(), 1u);
}

TYPED_TEST_P(SessionStoreContractTest, MaxSessionsEvictsLeastRecentlyUsedIdleFirst) {
  using namespace contract;
  ContractStore c = this->Make({.max_sessions = 3});
  if (!c.clock) GTEST_SKIP() << "store has no fake clock";
  const Session s1 = MustCreate(c.store.get(), Init(""));
  Tick(c);
  const Session s2 = MustCreate(c.store.get(), Init(""));
  Tick(c);
  const Session s3 = MustCreate(c.store.get(), Init(""));
  Tick(c);
  auto busy = MustBegin(c.store.get(), s1.id);  // s1 is busy from here on
  Tick(c);
  ASSERT_TRUE(c.store->Get(s2.id, "").ok());
  Tick(c);
  ASSERT_TRUE(c.store->Get(s3.id, "").ok());
  Tick(c);
  // Recency: s1 (busy) < s2 < s3. A fourth session pushes out s2.
  const Session s4 = MustCreate(c.store.get(), Init(""));
  c.store->RunCleanupOnce();
  EXPECT_LE(c.store->Stats().num_sessions, 3);
  EXPECT_EQ(c.store->Get(s2.id, "").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(c.store->Get(s3.id, "").ok());
  EXPECT_TRUE(c.store->Get(s4.id, "").ok());
  EXPECT_GE(c.store->Stats().num_evicted_total, 1);
  ASSERT_TRUE(busy->Commit(Messages({"kept"})).ok());  // s1 survived
  EXPECT_TRUE(c.store->Get(s1.id, "").ok());
}

REGISTER_TYPED_TEST_SUITE_P(SessionStoreContractTest, CreateThenGetReturnsWhatWasStored,
                            IdsAreDistinctAndWellFormed, MalformedAndUnknownIdsAreNotFound,
                            OtherOwnersSeeNothing, ListPaginatesInCreationOrder,
                            ListReportsSizesNotHistory, DeleteRemovesTheSession,
                            ForkCopiesHistoryAndIsIndependent, SlidingTtlExpiresIdleSessions,
                            ExpiredSessionsAreNotListed, BusySessionsNeverExpire,
                            MaxSessionsEvictsLeastRecentlyUsedIdleFirst);

}  // namespace mneme::session
