// StopChecker tests: stop strings split across tokens never leak, held text
// is released once it cannot be a stop string, end-of-generation ids.
#include "model/stop_checker.h"

#include <gtest/gtest.h>

#include <vector>

namespace mneme {
namespace {

constexpr TokenId kEos = 2;
constexpr TokenId kText = 100;  // any id that is not end-of-generation

// Feeds `pieces` until a stop; returns the released text of each step.
std::vector<std::string> Feed(StopChecker& c, const std::vector<std::string>& pieces) {
  std::vector<std::string> out;
  for (const std::string& piece : pieces) {
    out.push_back(c.Add(kText, piece).text);
    if (c.stopped()) break;
  }
  return out;
}

TEST(StopCheckerTest, NoStopStringsPassesTextThrough) {
  StopChecker c({}, std::vector<TokenId>{kEos}, false);
  EXPECT_EQ(Feed(c, {"a", "b\n", "c"}), (std::vector<std::string>{"a", "b\n", "c"}));
  EXPECT_FALSE(c.stopped());
  EXPECT_EQ(c.Finish(), "");
}

TEST(StopCheckerTest, StopStringAcrossTokensNeverLeaks) {
  StopChecker c({"\nUser:"}, {}, false);
  EXPECT_EQ(Feed(c, {"Hi", "!\n", "Us", "er"}), (std::vector<std::string>{"Hi", "!", "", ""}));
  EXPECT_EQ(c.held_bytes(), 5u);  // "\nUser"
  const StopChecker::Step last = c.Add(kText, ":");
  EXPECT_EQ(last.text, "");
  EXPECT_EQ(last.stop, StopReason::kStopString);
  EXPECT_EQ(last.stop_string, "\nUser:");
  EXPECT_TRUE(c.stopped());
}

TEST(StopCheckerTest, HeldTextIsReleasedWhenItDiverges) {
  StopChecker c({"\nUser:"}, {}, false);
  EXPECT_EQ(Feed(c, {"Hi", "!\n", "Us", "ed it"}),
            (std::vector<std::string>{"Hi", "!", "", "\nUsed it"}));
  EXPECT_FALSE(c.stopped());
}

TEST(StopCheckerTest, TextAfterStopStringInSameTokenIsDropped) {
  StopChecker c({"STOP"}, {}, false);
  const StopChecker::Step s = c.Add(kText, "abcSTOPdef");
  EXPECT_EQ(s.text, "abc");
  EXPECT_EQ(s.stop, StopReason::kStopString);
}

TEST(StopCheckerTest, EarliestStopStringWins) {
  StopChecker c({"world", "lo w"}, {}, false);
  const StopChecker::Step s = c.Add(kText, "hello world");
  EXPECT_EQ(s.text, "hel");
  EXPECT_EQ(s.stop_string, "lo w");
}

TEST(StopCheckerTest, OverlappingPrefixesHoldOnlyWhatCanStillMatch) {
  // "aaab" with stop "aab": the output before the stop string is "a".
  StopChecker c({"aab"}, {}, false);
  EXPECT_EQ(Feed(c, {"a", "a", "a", "b"}), (std::vector<std::string>{"", "", "a", ""}));
  EXPECT_TRUE(c.stopped());
}

TEST(StopCheckerTest, EndOfGenerationReleasesHeldText) {
  StopChecker c({"###"}, std::vector<TokenId>{7, kEos}, false);
  EXPECT_EQ(c.Add(kText, "a#").text, "a");
  const StopChecker::Step s = c.Add(kEos, "</s>");
  EXPECT_EQ(s.stop, StopReason::kEog);
  EXPECT_EQ(s.text, "#");  // the EOG token's own text is not output
  EXPECT_TRUE(c.stopped());
}

TEST(StopCheckerTest, IgnoreEosTreatsEogAsText) {
  StopChecker c({}, std::vector<TokenId>{kEos}, true);
  const StopChecker::Step s = c.Add(kEos, "x");
  EXPECT_EQ(s.stop, StopReason::kNone);
  EXPECT_EQ(s.text, "x");
}

TEST(StopCheckerTest, FinishReleasesHeldText) {
  StopChecker c({"\n\n"}, {}, false);
  EXPECT_EQ(c.Add(kText, "end\n").text, "end");
  EXPECT_EQ(c.Finish(), "\n");
}

TEST(StopCheckerTest, HoldbackSplitsOnCharacterBoundaries) {
  StopChecker c({"é!"}, {}, false);
  EXPECT_EQ(c.Add(kText, "café").text, "caf");
  EXPECT_EQ(c.Add(kText, " ok").text, "é ok");
}

}  // namespace
}  // namespace mneme
