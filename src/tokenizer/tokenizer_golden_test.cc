// Golden tests against llama.cpp's tokenizer vectors: for every vocab GGUF in
// the shared folder that has .inp/.out files, each of the 46 cases must
// tokenize (no BOS, parse_special) to exactly the ids on its .out line, and
// decoding must give the text back.
//
// The vocab list is discovered at run time, so a new vocab file is tested
// without touching this file; finding none is a failure, not a skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_vectors_test_util.h"
#include "util/mapped_file.h"

namespace mneme {
namespace {

namespace fs = std::filesystem;

std::string VocabDir() {
  return std::string(MNEME_SHARED_DIR) + "/models/vocab";
}

// Paths of *.gguf with both .inp and .out beside them, sorted.
std::vector<std::string> DiscoverVocabs() {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(VocabDir(), ec)) {
    const std::string path = entry.path().string();
    if (entry.path().extension() != ".gguf") continue;
    if (fs::exists(path + ".inp") && fs::exists(path + ".out")) paths.push_back(path);
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).stem().string();  // ggml-vocab-llama-spm
  const std::string prefix = "ggml-vocab-";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

std::vector<std::string> SplitLines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// llama.cpp's test-tokenizer-0 writes " id" per token.
std::string FormatIds(const std::vector<TokenId>& ids) {
  std::string s;
  for (TokenId id : ids) {
    s.push_back(' ');
    s.append(std::to_string(id));
  }
  return s;
}


std::string Escaped(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

class GoldenTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    // Loaded once per vocab for all the tests of this binary.
    static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
    std::unique_ptr<Tokenizer>& cached = cache[GetParam()];
    if (cached == nullptr) {
      Result<gguf::GgufFile> file = gguf::GgufFile::Open(GetParam());
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      Result<Tokenizer> tokenizer = Tokenizer::FromGguf(*file);
      ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
      cached = std::make_unique<Tokenizer>(std::move(tokenizer).value());
    }
    tokenizer_ = cached.get();
    Result<std::string> inp = ReadFileToString(GetParam() + ".inp");
    Result<std::string> out = ReadFileToString(GetParam() + ".out");
    ASSERT_TRUE(inp.ok() && out.ok());
    cases_ = testing_util::SplitVocabTestCases(*inp);
    lines_ = SplitLines(*out);
    ASSERT_EQ(cases_.size(), 46u);
    ASSERT_EQ(lines_.size(), cases_.size());
  }

  const Tokenizer* tokenizer_ = nullptr;
  std::vector<std::string> cases_;
  std::vector<std::string> lines_;
};

TEST_P(GoldenTest, EncodeMatchesLlamaCpp) {
  int failures = 0;
  for (size_t i = 0; i < cases_.size(); ++i) {
    std::vector<TokenId> ids =
        tokenizer_->Encode(cases_[i], {.add_special = false, .parse_special = true});
    if (FormatIds(ids) != lines_[i]) ++failures;
    EXPECT_EQ(FormatIds(ids), lines_[i]) << "case " << i << ": \"" << Escaped(cases_[i]) << "\"";
  }
  EXPECT_EQ(failures, 0) << "of " << cases_.size() << " cases";
}

TEST_P(GoldenTest, DecodeOfExpectedIdsGivesTheText) {
  for (size_t i = 0; i < cases_.size(); ++i) {
    EXPECT_EQ(tokenizer_->Decode(testing_util::ParseIdLine(lines_[i])), cases_[i]) << "case " << i;
  }
}

TEST_P(GoldenTest, DecodeOfEncodeRoundTrips) {
  for (size_t i = 0; i < cases_.size(); ++i) {
    std::vector<TokenId> ids =
        tokenizer_->Encode(cases_[i], {.add_special = false, .parse_special = true});
    EXPECT_EQ(tokenizer_->Decode(ids), cases_[i]) << "case " << i;
  }
}

TEST_P(GoldenTest, IncrementalDecodeMatchesDecode) {
  for (size_t i = 0; i < cases_.size(); ++i) {
    IncrementalDecoder decoder(*tokenizer_);
    std::string streamed;
    for (TokenId id : testing_util::ParseIdLine(lines_[i])) streamed += decoder.Add(id);
    streamed += decoder.Flush();
    EXPECT_EQ(streamed, cases_[i]) << "case " << i;
  }
}

TEST_P(GoldenTest, BosIsAddedAsTheVocabSays) {
  const Vocab& v = tokenizer_->vocab();
  std::vector<TokenId> with = tokenizer_->Encode(cases_[11]);  // "Hello world"
  std::vector<TokenId> without = tokenizer_->Encode(cases_[11], {.add_special = false});
  if (v.add_bos) {
    ASSERT_EQ(with.size(), without.size() + 1 + (v.add_eos ? 1 : 0));
    EXPECT_EQ(with.front(), v.bos_id);
  } else {
    EXPECT_EQ(with.size(), without.size() + (v.add_eos ? 1 : 0));
  }
}

INSTANTIATE_TEST_SUITE_P(SharedVocabs, GoldenTest, ::testing::ValuesIn(DiscoverVocabs()), TestName);

TEST(GoldenDiscoveryTest, FindsTheSharedVocabs) {
  std::vector<std::string> vocabs = DiscoverVocabs();
  EXPECT_FALSE(vocabs.empty()) << "no vocab GGUFs with .inp/.out in " << VocabDir();
}

}  // namespace
}  // namespace mneme
