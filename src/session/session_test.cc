// Session ids: format, validation of client-supplied ids, uniqueness.
#include "session/session.h"

#include <gtest/gtest.h>

#include <set>

namespace mneme::session {
namespace {

TEST(SessionIdTest, NewIdsAreWellFormedAndDistinct) {
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) {
    Result<std::string> id = NewSessionId();
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    ASSERT_EQ(id->size(), 37u);
    EXPECT_EQ(id->substr(0, 5), "sess_");
    EXPECT_TRUE(IsWellFormedSessionId(*id)) << *id;
    ids.insert(*id);
  }
  EXPECT_EQ(ids.size(), 1000u);
}

TEST(SessionIdTest, EveryHexDigitShowsUp) {
  // 128 random bits per id: over 100 ids every digit appears in every
  // position class with overwhelming probability (a stuck or short source,
  // e.g. only 64 random bits zero-padded, would fail this).
  std::set<char> digits;
  std::set<size_t> nonzero_positions;
  for (int i = 0; i < 100; ++i) {
    const std::string id = std::move(NewSessionId()).value();
    for (size_t p = 5; p < id.size(); ++p) {
      digits.insert(id[p]);
      if (id[p] != '0') nonzero_positions.insert(p);
    }
  }
  EXPECT_EQ(digits.size(), 16u);
  EXPECT_EQ(nonzero_positions.size(), 32u);
}

TEST(SessionIdTest, Validation) {
  const std::string ok = "sess_0123456789abcdef0123456789abcdef";
  EXPECT_TRUE(IsWellFormedSessionId(ok));
  EXPECT_FALSE(IsWellFormedSessionId(""));
  EXPECT_FALSE(IsWellFormedSessionId("sess_"));
  EXPECT_FALSE(IsWellFormedSessionId(ok.substr(0, 36)));
  EXPECT_FALSE(IsWellFormedSessionId(ok + "0"));
  EXPECT_FALSE(IsWellFormedSessionId("sess_0123456789ABCDEF0123456789abcdef"));
  EXPECT_FALSE(IsWellFormedSessionId("sess-0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsWellFormedSessionId("xxxx_0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsWellFormedSessionId("sess_0123456789abcdef0123456789abcdeg"));
  std::string with_nul = ok;
  with_nul[20] = '\0';
  EXPECT_FALSE(IsWellFormedSessionId(with_nul));
}

TEST(SessionTest, InfoOfSummarizes) {
  Session s;
  s.id = "sess_0123456789abcdef0123456789abcdef";
  s.messages = {"a", "b", "c"};
  s.tokens = {1, 2};
  s.version = 4;
  s.metadata = "{}";
  s.ttl_seconds = 9;
  const SessionInfo i = InfoOf(s);
  EXPECT_EQ(i.id, s.id);
  EXPECT_EQ(i.num_messages, 3);
  EXPECT_EQ(i.num_tokens, 2);
  EXPECT_EQ(i.version, 4);
  EXPECT_EQ(i.metadata, "{}");
  EXPECT_EQ(i.ttl_seconds, 9);
}

}  // namespace
}  // namespace mneme::session
