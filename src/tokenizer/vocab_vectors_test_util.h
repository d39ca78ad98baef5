// Readers for llama.cpp's tokenizer test vectors (../shared/models/vocab):
// VOCAB.gguf.inp holds the cases separated by "\n__ggml_vocab_test__\n" (with
// a trailing separator), VOCAB.gguf.out one line of " id id ..." per case.
// Test-only; shared by the golden and BPE tests.
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace mneme::testing_util {

// The .inp cases; the text after the trailing separator is not a case.
inline std::vector<std::string> SplitVocabTestCases(std::string_view inp) {
  constexpr std::string_view kSeparator = "\n__ggml_vocab_test__\n";
  std::vector<std::string> cases;
  size_t pos = 0;
  for (size_t hit; (hit = inp.find(kSeparator, pos)) != std::string_view::npos;
       pos = hit + kSeparator.size()) {
    cases.emplace_back(inp.substr(pos, hit - pos));
  }
  return cases;
}

// The ids of one .out line.
inline std::vector<TokenId> ParseIdLine(const std::string& line) {
  std::vector<TokenId> ids;
  std::istringstream in(line);
  for (long id; in >> id;) ids.push_back(static_cast<TokenId>(id));
  return ids;
}

}  // namespace mneme::testing_util
