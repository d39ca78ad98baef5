// `mneme tokenize` and `mneme detokenize`: the tokenizer of a GGUF file on
// the command line, for scripts and for checking against llama.cpp.
//
//   mneme tokenize -m model.gguf [--no-bos] [--parse-special] < text
//       Reads stdin as raw bytes (nothing stripped, binary-safe) and prints
//       the ids on one line, separated by single spaces, then "\n". BOS (and
//       EOS) are added as the model says unless --no-bos, like llama.cpp's
//       llama-tokenize.
//   mneme tokenize -m model.gguf --jsonl [--no-bos] [--parse-special] < lines
//       Many texts with one load: each stdin line is one JSON string (JSON
//       Lines); prints one line of ids per input line, in order
//       (tests/tokenizer_oracle uses it).
//   mneme detokenize -m model.gguf [--render-special] < ids
//       Reads whitespace-separated ids and writes the text, with no newline
//       added. An id that is not a number or not in the vocabulary is an error.
//
// Errors go to stderr as "mneme tokenize: <message>" and exit with status 1.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/commands.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

namespace mneme::app {
namespace {

struct TokenizeOptions {
  std::string model;
  bool no_bos = false;
  bool parse_special = false;
  bool jsonl = false;
  bool render_special = false;
};

int Fail(const char* command, const std::string& message) {
  std::fprintf(stderr, "mneme %s: %s\n", command, message.c_str());
  return 1;
}

std::string ReadStdin() {
  std::ios::sync_with_stdio(false);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

Result<Tokenizer> LoadTokenizer(const std::string& path) {
  MNEME_ASSIGN_OR_RETURN(gguf::GgufFile file, gguf::GgufFile::Open(path));
  return Tokenizer::FromGguf(file);
}

void AppendIdsLine(const std::vector<TokenId>& ids, std::string& out) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out.push_back(' ');
    out.append(std::to_string(ids[i]));
  }
  out.push_back('\n');
}

int RunTokenize(const TokenizeOptions& options) {
  Result<Tokenizer> tokenizer = LoadTokenizer(options.model);
  if (!tokenizer.ok()) return Fail("tokenize", tokenizer.status().message());
  const std::string input = ReadStdin();
  if (std::cin.bad()) return Fail("tokenize", "cannot read stdin");
  const Tokenizer::EncodeOptions encode{.add_special = !options.no_bos,
                                        .parse_special = options.parse_special};
  std::string out;
  if (!options.jsonl) {
    AppendIdsLine(tokenizer->Encode(input, encode), out);
  } else {
    size_t begin = 0;
    for (size_t line = 1; begin < input.size(); ++line) {
      size_t end = input.find('\n', begin);
      if (end == std::string::npos) end = input.size();
      const nlohmann::json text =
          nlohmann::json::parse(input.begin() + begin, input.begin() + end, nullptr, false);
      if (!text.is_string()) {
        return Fail("tokenize", "--jsonl: line " + std::to_string(line) + " is not a JSON string");
      }
      AppendIdsLine(tokenizer->Encode(text.get_ref<const std::string&>(), encode), out);
      begin = end + 1;
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : Fail("tokenize", "cannot write stdout");
}

// Parses whitespace-separated decimal ids; every one must be in the vocab.
Result<std::vector<TokenId>> ParseIds(const std::string& input, const Vocab& vocab) {
  std::vector<TokenId> ids;
  size_t pos = 0;
  const auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  while (true) {
    while (pos < input.size() && is_space(input[pos])) ++pos;
    if (pos == input.size()) break;
    size_t end = pos;
    while (end < input.size() && !is_space(input[end])) ++end;
    const std::string word = input.substr(pos, end - pos);
    const size_t index = ids.size() + 1;
    bool numeric = word.size() <= 10;
    int64_t value = 0;
    for (char c : word) {
      if (c < '0' || c > '9') {
        numeric = false;
        break;
      }
      value = value * 10 + (c - '0');
    }
    if (!numeric) {
      return InvalidArgument("token " + std::to_string(index) + " '" + word.substr(0, 32) +
                             "' is not a token id");
    }
    if (value >= static_cast<int64_t>(vocab.size())) {
      return InvalidArgument("token " + std::to_string(index) + ": id " + word +
                             " is outside the vocabulary (" + std::to_string(vocab.size()) +
                             " tokens)");
    }
    ids.push_back(static_cast<TokenId>(value));
    pos = end;
  }
  return ids;
}

int RunDetokenize(const TokenizeOptions& options) {
  Result<Tokenizer> tokenizer = LoadTokenizer(options.model);
  if (!tokenizer.ok()) return Fail("detokenize", tokenizer.status().message());
  const std::string input = ReadStdin();
  if (std::cin.bad()) return Fail("detokenize", "cannot read stdin");
  Result<std::vector<TokenId>> ids = ParseIds(input, tokenizer->vocab());
  if (!ids.ok()) return Fail("detokenize", ids.status().message());
  const std::string text = tokenizer->Decode(*ids, options.render_special);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : Fail("detokenize", "cannot write stdout");
}

}  // namespace

void AddTokenizeCommands(CLI::App& app) {
  auto options = std::make_shared<TokenizeOptions>();

  CLI::App* tokenize = app.add_subcommand(
      "tokenize", "Print the token ids of the UTF-8 text on stdin (one line, space separated)");
  tokenize->add_option("-m,--model", options->model, "GGUF file with the tokenizer")->required();
  tokenize->add_flag("--no-bos", options->no_bos, "Do not add BOS/EOS tokens");
  tokenize->add_flag("--parse-special", options->parse_special,
                     "Recognize control-token text such as <s> or <|im_end|>");
  tokenize->add_flag("--jsonl", options->jsonl,
                     "Read one JSON string per line; print one line of ids per input line");
  tokenize->callback([options] { SetExitCode(RunTokenize(*options)); });

  CLI::App* detokenize = app.add_subcommand(
      "detokenize", "Print the text of the whitespace-separated token ids on stdin");
  detokenize->add_option("-m,--model", options->model, "GGUF file with the tokenizer")->required();
  detokenize->add_flag("--render-special", options->render_special,
                       "Print control tokens (BOS, EOS, ...) as their text");
  detokenize->callback([options] { SetExitCode(RunDetokenize(*options)); });
}

}  // namespace mneme::app
