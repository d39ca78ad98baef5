// Object ids: prefix + 24 base-62 characters; reproducible under a seed.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "api/id_generator.h"

namespace mneme::api {
namespace {

bool IsBase62(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

TEST(IdGenerator, Shape) {
  IdGenerator gen;
  for (std::string_view prefix :
       {kChatCompletionIdPrefix, kCompletionIdPrefix, kResponseIdPrefix, kMessageIdPrefix}) {
    std::string id = gen.Next(prefix);
    ASSERT_EQ(id.size(), prefix.size() + 24);
    EXPECT_EQ(id.substr(0, prefix.size()), prefix);
    for (char c : id.substr(prefix.size())) EXPECT_TRUE(IsBase62(c)) << id;
  }
}

TEST(IdGenerator, SeedReproducesAndIdsDiffer) {
  IdGenerator a(42), b(42), c(43);
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string x = a.Next("p_");
    EXPECT_EQ(x, b.Next("p_"));
    EXPECT_NE(x, c.Next("p_"));
    EXPECT_TRUE(seen.insert(x).second) << "repeated id " << x;
  }
}

TEST(IdGenerator, UsesTheWholeAlphabet) {
  IdGenerator gen(7);
  std::set<char> chars;
  for (int i = 0; i < 200; ++i) {
    std::string id = gen.Next("");
    chars.insert(id.begin(), id.end());
  }
  EXPECT_EQ(chars.size(), 62u);
}

}  // namespace
}  // namespace mneme::api
