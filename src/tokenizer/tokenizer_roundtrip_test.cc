// Round-trip property: for every shared vocab, Decode(Encode(x)) == x for
// seeded random Unicode text (ASCII, Latin-1, Cyrillic, CJK, Hangul, emoji
// with ZWJ, combining marks, runs of spaces/tabs/newlines, NBSP, ideographic
// space). Both models are lossless: SPM falls back to byte tokens and its
// prefix space is removed by Decode; byte-level BPE covers every byte.
//
// Also: encoding is deterministic and never crashes on invalid UTF-8.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"
#include "util/utf8.h"

namespace mneme {
namespace {

namespace fs = std::filesystem;

constexpr int kStringsPerVocab = 300;

std::vector<std::string> VocabPaths() {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& e :
       fs::directory_iterator(std::string(MNEME_SHARED_DIR) + "/models/vocab", ec)) {
    if (e.path().extension() == ".gguf") paths.push_back(e.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string Name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}


// One random string of 0..48 pieces drawn from mixed scripts.
std::string RandomText(std::mt19937& rng) {
  auto pick = [&rng](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  static const char* const kWhitespace[] = {
      " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "\xC2\xA0", "\xE3\x80\x80", "\t\t "};
  std::string s;
  const uint32_t pieces = pick(0, 48);
  for (uint32_t i = 0; i < pieces; ++i) {
    switch (pick(0, 11)) {
      case 0:
      case 1:
      case 2: AppendUtf8(pick(0x20, 0x7E), &s); break;  // ASCII
      case 3:
        AppendUtf8(pick('a', 'z'), &s);
        AppendUtf8(pick('a', 'z'), &s);
        break;
      case 4: AppendUtf8(pick(0xA1, 0xFF), &s); break;      // Latin-1
      case 5: AppendUtf8(pick(0x400, 0x4FF), &s); break;    // Cyrillic
      case 6: AppendUtf8(pick(0x4E00, 0x9FFF), &s); break;  // CJK
      case 7: AppendUtf8(pick(0xAC00, 0xD7A3), &s); break;  // Hangul
      case 8:                                               // emoji, maybe ZWJ
        AppendUtf8(pick(0x1F300, 0x1FAFF), &s);
        if (pick(0, 2) == 0) {
          AppendUtf8(0x200D, &s);
          AppendUtf8(pick(0x1F300, 0x1F64F), &s);
        }
        break;
      case 9: AppendUtf8(pick(0x300, 0x36F), &s); break;  // combining mark
      case 10: s += kWhitespace[pick(0, std::size(kWhitespace) - 1)]; break;
      case 11: AppendUtf8(pick('0', '9'), &s); break;
    }
  }
  return s;
}

class RoundTripTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTripTest, DecodeOfEncodeIsIdentity) {
  Result<gguf::GgufFile> file = gguf::GgufFile::Open(GetParam());
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  Result<Tokenizer> t = Tokenizer::FromGguf(*file);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::mt19937 rng(20240611);
  int failures = 0;
  for (int i = 0; i < kStringsPerVocab && failures < 5; ++i) {
    const std::string text = RandomText(rng);
    std::vector<TokenId> ids = t->Encode(text, {.add_special = false, .parse_special = false});
    const std::string back = t->Decode(ids);
    if (back != text) ++failures;
    EXPECT_EQ(back, text) << "string " << i;
    // With BOS (and EOS if the vocab adds it) the text still comes back.
    EXPECT_EQ(t->Decode(t->Encode(text)), text) << "string " << i << " with add_special";
  }
}

TEST_P(RoundTripTest, InvalidUtf8NeverCrashesAndIsDeterministic) {
  Result<gguf::GgufFile> file = gguf::GgufFile::Open(GetParam());
  ASSERT_TRUE(file.ok());
  Result<Tokenizer> t = Tokenizer::FromGguf(*file);
  ASSERT_TRUE(t.ok());
  std::mt19937 rng(7);
  for (int i = 0; i < 100; ++i) {
    std::string bytes(std::uniform_int_distribution<int>(0, 24)(rng), '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xFF);
    std::vector<TokenId> a = t->Encode(bytes, {.add_special = true, .parse_special = true});
    std::vector<TokenId> b = t->Encode(bytes, {.add_special = true, .parse_special = true});
    EXPECT_EQ(a, b);
    for (TokenId id : a) EXPECT_TRUE(t->vocab().IsValid(id));
  }
}

INSTANTIATE_TEST_SUITE_P(SharedVocabs, RoundTripTest, ::testing::ValuesIn(VocabPaths()), Name);

}  // namespace
}  // namespace mneme
