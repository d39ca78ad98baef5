// IncrementalDecoder and AppendValidUtf8: characters split across byte
// tokens come out whole, invalid bytes become U+FFFD per the Unicode
// "maximal subpart" rule, and the stream equals Tokenizer::Decode.
#include "tokenizer/incremental_decoder.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

namespace mneme {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

constexpr TokenId Byte(int b) {
  return 3 + b;
}  // <0xXX> in the Llama 2 vocab

class IncrementalDecoderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const char* name : {"llama-spm", "gpt-2"}) {
      Result<gguf::GgufFile> file = gguf::GgufFile::Open(
          std::string(MNEME_SHARED_DIR) + "/models/vocab/ggml-vocab-" + name + ".gguf");
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      Result<Tokenizer> t = Tokenizer::FromGguf(*file);
      ASSERT_TRUE(t.ok()) << t.status().ToString();
      (std::string(name) == "gpt-2" ? gpt2_ : spm_) = new Tokenizer(std::move(t).value());
    }
  }
  static void TearDownTestSuite() {
    delete spm_;
    delete gpt2_;
  }
  static Tokenizer* spm_;
  static Tokenizer* gpt2_;
};
Tokenizer* IncrementalDecoderTest::spm_ = nullptr;
Tokenizer* IncrementalDecoderTest::gpt2_ = nullptr;

std::string Clean(std::string bytes) {
  std::string out;
  AppendValidUtf8(&bytes, &out, /*final=*/true);
  return out;
}

TEST(AppendValidUtf8Test, ValidTextPassesThrough) {
  EXPECT_EQ(Clean("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"),
            "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(Clean(std::string("\0x", 2)), std::string("\0x", 2));
}

TEST(AppendValidUtf8Test, InvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(Clean("\x80"), kFffd);                                      // stray continuation
  EXPECT_EQ(Clean("\xC0\x80"), kFffd + kFffd);                          // overlong: C0 never valid
  EXPECT_EQ(Clean("\xE0\x80\x80"), kFffd + kFffd + kFffd);              // overlong 3-byte
  EXPECT_EQ(Clean("\xED\xA0\x80"), kFffd + kFffd + kFffd);              // surrogate U+D800
  EXPECT_EQ(Clean("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // > U+10FFFF
  EXPECT_EQ(Clean("\xF5"
                  "a"),
            kFffd + "a");
  EXPECT_EQ(Clean("\xE2\x82"
                  "a"),
            kFffd + "a");                   // truncated sequence is one U+FFFD
  EXPECT_EQ(Clean("\xF0\x9F\x98"), kFffd);  // dangling at the end
}

TEST(AppendValidUtf8Test, HoldsAnIncompleteTail) {
  std::string bytes = "ok\xF0\x9F";
  std::string out;
  AppendValidUtf8(&bytes, &out, /*final=*/false);
  EXPECT_EQ(out, "ok");
  EXPECT_EQ(bytes, "\xF0\x9F");
  bytes += "\x98\x80!";
  AppendValidUtf8(&bytes, &out, /*final=*/false);
  EXPECT_EQ(out, "ok\xF0\x9F\x98\x80!");
  EXPECT_TRUE(bytes.empty());
}

TEST_F(IncrementalDecoderTest, EuroSignSplitOverThreeByteTokens) {
  IncrementalDecoder d(*spm_);
  EXPECT_EQ(d.Add(Byte(0xE2)), "");
  EXPECT_EQ(d.pending_bytes(), 1u);
  EXPECT_EQ(d.Add(Byte(0x82)), "");
  EXPECT_EQ(d.Add(Byte(0xAC)), "\xE2\x82\xAC");
  EXPECT_EQ(d.Add(15043), " Hello");
  EXPECT_EQ(d.Flush(), "");
}

TEST_F(IncrementalDecoderTest, DanglingSequenceFlushesAsReplacement) {
  IncrementalDecoder d(*spm_);
  EXPECT_EQ(d.Add(Byte(0xF0)), "");
  EXPECT_EQ(d.Add(Byte(0x9F)), "");
  EXPECT_EQ(d.Flush(), kFffd);
  EXPECT_EQ(d.Flush(), "");
}

TEST_F(IncrementalDecoderTest, InvalidBytesComeOutAtOnce) {
  IncrementalDecoder d(*spm_);
  EXPECT_EQ(d.Add(Byte(0x80)), kFffd);
  EXPECT_EQ(d.Add(Byte(0xE2)), "");
  EXPECT_EQ(d.Add(Byte('A')), kFffd + "A");
}

TEST_F(IncrementalDecoderTest, PrefixSpaceRemovedFromFirstVisiblePieceOnly) {
  IncrementalDecoder d(*spm_);
  EXPECT_EQ(d.Add(1), "");  // BOS renders as nothing
  EXPECT_EQ(d.Add(15043), "Hello");
  EXPECT_EQ(d.Add(3186), " world");

  IncrementalDecoder cont(*spm_, {.render_special = false, .continuation = true});
  EXPECT_EQ(cont.Add(15043), " Hello");

  IncrementalDecoder special(*spm_, /*render_special=*/true);
  EXPECT_EQ(special.Add(1), "<s>");
  EXPECT_EQ(special.Add(15043), " Hello");
}

TEST_F(IncrementalDecoderTest, FlushStartsANewStream) {
  IncrementalDecoder d(*spm_);
  EXPECT_EQ(d.Add(15043), "Hello");
  EXPECT_EQ(d.Flush(), "");
  EXPECT_EQ(d.Add(15043), "Hello");
}

TEST_F(IncrementalDecoderTest, BpeEmojiSplitAcrossTokens) {
  // gpt-2 has no token for "😀"; its four bytes are spread over tokens.
  const std::string text = "hi \xF0\x9F\x98\x80 there";
  std::vector<TokenId> ids = gpt2_->Encode(text, {.add_special = false});
  IncrementalDecoder d(*gpt2_);
  std::string streamed;
  bool held_back = false;
  for (TokenId id : ids) {
    streamed += d.Add(id);
    held_back |= d.pending_bytes() > 0;
    std::string check = streamed;
    std::string cleaned;
    AppendValidUtf8(&check, &cleaned, /*final=*/true);
    EXPECT_EQ(cleaned, streamed) << "emitted invalid UTF-8";
  }
  streamed += d.Flush();
  EXPECT_TRUE(held_back) << "expected the emoji to span tokens";
  EXPECT_EQ(streamed, text);
}

// Random ids (including byte tokens that do not form characters): the stream
// is always valid UTF-8 and equals the cleaned-up Decode of the same ids.
TEST_F(IncrementalDecoderTest, StreamEqualsCleanedDecode) {
  std::mt19937 rng(1234);
  for (Tokenizer* t : {spm_, gpt2_}) {
    std::uniform_int_distribution<TokenId> any_id(0, static_cast<TokenId>(t->vocab().size()) - 1);
    std::uniform_int_distribution<TokenId> byte_id(Byte(0x80), Byte(0xFF));
    for (int round = 0; round < 200; ++round) {
      std::vector<TokenId> ids;
      for (int i = 0; i < 12; ++i)
        ids.push_back(t == spm_ && (rng() & 1) ? byte_id(rng) : any_id(rng));
      IncrementalDecoder d(*t);
      std::string streamed;
      for (TokenId id : ids) streamed += d.Add(id);
      streamed += d.Flush();
      EXPECT_EQ(streamed, Clean(t->Decode(ids))) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace mneme
