// The pre-tokenizer regex sets, keyed by tokenizer.ggml.pre, as llama.cpp
// (src/llama-vocab.cpp, llm_tokenizer_bpe) defines them, and the PCRE2
// machinery that applies them. See pretokenizer.h for the splitting rules.
#include "tokenizer/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "util/check.h"
#include "util/utf8.h"

namespace mneme {
namespace {

// The regexes below are written as llama.cpp writes them (`\s` included);
// ToPcre2 spells `\s` / `\S` out as llama.cpp's whitespace set.
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr std::string_view kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// DeepSeek LLM's letter class (cased letters of selected scripts). Spelled
// with escapes: several of these characters (U+1F7D, U+1FBE, U+2126,
// U+212A, ...) change under Unicode normalization, which would silently
// corrupt the ranges if written as literals.
constexpr std::string_view kDeepseekLlmLetters =
    R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293})"
    R"(\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A})"
    R"(\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556})"
    R"(\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF})"
    R"(\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D})"
    R"(\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D})"
    R"(\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4})"
    R"(\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4})"
    R"(\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124})"
    R"(\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F})"
    R"(\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4})"
    R"(\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F})"
    R"(\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17})"
    R"(\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3})"
    R"(\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF})"
    R"(\x{1E900}-\x{1E943}]+)";
// In llama.cpp these two classes never see non-ASCII whitespace: it replaces
// every such code point by U+000B before running a regex that has no \p{..}.
// So the ranges below leave out the whitespace they contain in llama.cpp's
// source: U+3000 from U+3000..U+3002, and U+1680, U+2000..U+200A, U+2028,
// U+2029, U+202F, U+205F, U+3000 from U+0800..U+4E00.
constexpr std::string_view kDeepseekPunct =
    R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3001}\x{3002}]+)";
// CJK ideographs, U+0800..U+4E00 (sic) and Hangul, as llama.cpp has them.
constexpr std::string_view kDeepseekCjk =
    R"([\x{4E00}-\x{9FA5}\x{800}-\x{167F}\x{1681}-\x{1FFF}\x{200B}-\x{2027}\x{202A}-\x{202E})"
    R"(\x{2030}-\x{205E}\x{2060}-\x{2FFF}\x{3001}-\x{4E00}\x{AC00}-\x{D7FF}]+)";

struct Spec {
  std::array<std::string_view, 8> names;  // aliases; unused slots are empty
  std::array<std::string_view, 6> regexes;
  bool ignore_merges;
};

// One entry per llama.cpp LLAMA_VOCAB_PRE_TYPE_* we support. "gpt2" and
// "gpt-neox" are not llama.cpp names; their tokenizers use the GPT-2 regex.
constexpr Spec kSpecs[] = {
    {{"default"}, {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}, false},
    {{"gpt-2", "gpt2", "phi-2", "mpt", "olmo", "gpt-neox"}, {kGpt2}, false},
    {{"llama-bpe", "llama3", "llama-v3", "falcon3", "pixtral"}, {kLlama3}, true},
    {{"dbrx", "smaug-bpe"}, {kLlama3}, false},
    {{"qwen2", "stablelm2", "deepseek-r1-qwen", "megrez"}, {kQwen2}, false},
    {{"deepseek-llm"},
     {"[\r\n]", kDeepseekLlmLetters, kDeepseekPunct, R"(\s+$)", kDeepseekCjk, R"(\p{N}+)"},
     false},
    {{"deepseek-coder"},
     {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kDeepseekCjk, R"(\p{N})"},
     false},
    {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}, false},
    {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"},
     {R"(\p{N})", kGpt2},
     false},
};

// llama.cpp's whitespace: the Unicode White_Space property (what Python's
// `regex` module calls \s), as the inside of a character class.
constexpr std::string_view kWhitespaceClass =
    R"(\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

// Rewrites `\s` and `\S` (inside and outside character classes) to the
// explicit whitespace set. `\S` inside a class does not occur in our specs.
std::string ToPcre2(std::string_view regex) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < regex.size(); ++i) {
    const char c = regex[i];
    if (c == '\\' && i + 1 < regex.size()) {
      const char e = regex[i + 1];
      ++i;
      if (e == 's') {
        if (in_class) {
          out += kWhitespaceClass;
        } else {
          out += '[';
          out += kWhitespaceClass;
          out += ']';
        }
      } else if (e == 'S' && !in_class) {
        out += "[^";
        out += kWhitespaceClass;
        out += ']';
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal.
      if (i + 1 < regex.size() && regex[i + 1] == '^') out += regex[++i];
      if (i + 1 < regex.size() && regex[i + 1] == ']') out += regex[++i];
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

bool IsCont(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

bool RepairUtf8(std::string_view text, std::string* out) {
  if (IsWellFormedUtf8(text)) return true;
  constexpr uint32_t kReplacement = 0xFFFD;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  out->clear();
  out->reserve(n + n / 2);
  size_t i = 0;
  while (i < n) {
    // llama.cpp's unicode_cpt_from_utf8: the lead byte alone decides the
    // length; a bad lead or continuation costs exactly one byte -> U+FFFD.
    const unsigned char c = p[i];
    uint32_t cp = kReplacement;
    size_t len = 1;
    if (c < 0x80) {
      cp = c;
    } else if (c < 0xC0) {
      // stray continuation byte
    } else if (c < 0xE0) {
      if (i + 1 < n && IsCont(p[i + 1])) {
        cp = ((c & 0x1Fu) << 6) | (p[i + 1] & 0x3Fu);
        len = 2;
      }
    } else if (c < 0xF0) {
      if (i + 2 < n && IsCont(p[i + 1]) && IsCont(p[i + 2])) {
        cp = ((c & 0x0Fu) << 12) | ((p[i + 1] & 0x3Fu) << 6) | (p[i + 2] & 0x3Fu);
        len = 3;
      }
    } else if (c < 0xF8) {
      if (i + 3 < n && IsCont(p[i + 1]) && IsCont(p[i + 2]) && IsCont(p[i + 3])) {
        cp = ((c & 0x07u) << 18) | ((p[i + 1] & 0x3Fu) << 12) | ((p[i + 2] & 0x3Fu) << 6) |
             (p[i + 3] & 0x3Fu);
        len = 4;
      }
    }
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = kReplacement;
    AppendUtf8(cp, out);
    i += len;
  }
  return false;
}

struct PreTokenizer::Regex {
  pcre2_code* code = nullptr;
  // Only read while matching, so shared by all threads. It lifts the match
  // limit: `\s*[\r\n]+` backtracks over a whole whitespace run, and a run of
  // ten million spaces would otherwise stop the match (see SplitLevel).
  pcre2_match_context* context = nullptr;
  bool jit = false;  // JIT-compiled: match with the faster pcre2_jit_match
  ~Regex() {
    pcre2_match_context_free(context);
    pcre2_code_free(code);
  }
};

namespace {

// Splits `piece` with regexes[level], recursing into the next level for
// every match and every gap; past the last level, pieces are words.
void SplitLevel(const std::vector<std::unique_ptr<PreTokenizer::Regex>>& regexes, size_t level,
                std::string_view piece, pcre2_match_data* md, WordSink* sink);

}  // namespace

PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

const std::vector<std::string_view>& PreTokenizer::SupportedNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const Spec& spec : kSpecs) {
      for (std::string_view name : spec.names) {
        if (!name.empty()) v.push_back(name);
      }
    }
    return v;
  }();
  return names;
}

Result<PreTokenizer> PreTokenizer::Create(std::string_view pre) {
  const Spec* found = nullptr;
  for (const Spec& spec : kSpecs) {
    for (std::string_view name : spec.names) {
      if (!name.empty() && name == pre) found = &spec;
    }
  }
  if (found == nullptr) {
    std::string list;
    for (std::string_view name : SupportedNames()) {
      if (!list.empty()) list += ", ";
      list += name;
    }
    return Unimplemented("unsupported BPE pre-tokenizer tokenizer.ggml.pre='" + std::string(pre) +
                         "' (supported: " + list + ")");
  }

  PreTokenizer result;
  result.name_ = std::string(pre);
  result.ignore_merges_ = found->ignore_merges;
  for (std::string_view source : found->regexes) {
    if (source.empty()) continue;
    const std::string pattern = ToPcre2(source);
    int error = 0;
    PCRE2_SIZE error_offset = 0;
    auto regex = std::make_unique<Regex>();
    regex->code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                      PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &error, &error_offset, nullptr);
    if (regex->code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof(message));
      return Internal("pre-tokenizer '" + std::string(pre) + "': regex does not compile at " +
                      std::to_string(error_offset) + ": " + reinterpret_cast<const char*>(message) +
                      ": " + pattern);
    }
    regex->context = pcre2_match_context_create(nullptr);
    CHECK(regex->context != nullptr) << "out of memory";
    pcre2_set_match_limit(regex->context, UINT32_MAX);
    // Without JIT (unsupported CPU) we match with the interpreter.
    regex->jit = pcre2_jit_compile(regex->code, PCRE2_JIT_COMPLETE) == 0;
    result.regexes_.push_back(std::move(regex));
  }
  return result;
}

void PreTokenizer::Split(std::string_view text, WordSink* sink) const {
  if (text.empty()) return;
  std::string repaired;
  if (!RepairUtf8(text, &repaired)) text = repaired;
  pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
  CHECK(md != nullptr) << "out of memory";
  SplitLevel(regexes_, 0, text, md, sink);
  pcre2_match_data_free(md);
}

std::vector<std::string> PreTokenizer::SplitToStrings(std::string_view text) const {
  struct Collect : WordSink {
    std::vector<std::string> words;
    void OnWord(std::string_view word) override { words.emplace_back(word); }
  } collect;
  Split(text, &collect);
  return std::move(collect.words);
}

namespace {

void SplitLevel(const std::vector<std::unique_ptr<PreTokenizer::Regex>>& regexes, size_t level,
                std::string_view piece, pcre2_match_data* md, WordSink* sink) {
  if (level == regexes.size()) {
    sink->OnWord(piece);
    return;
  }
  const pcre2_code* code = regexes[level]->code;
  pcre2_match_context* context = regexes[level]->context;
  const bool jit = regexes[level]->jit;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
  const size_t n = piece.size();
  size_t pos = 0;      // where the next search starts
  size_t emitted = 0;  // end of the last piece handed down
  while (pos < n) {
    // The subject is well-formed UTF-8 (RepairUtf8) and `pos` is always on a
    // character boundary, so no UTF check is needed.
    int rc = jit ? pcre2_jit_match(code, subject, n, pos, PCRE2_NO_UTF_CHECK, md, context)
                 : pcre2_match(code, subject, n, pos, PCRE2_NO_UTF_CHECK, md, context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      // JIT stack or match limit: retry once with the interpreter, which
      // keeps its backtracking state on the heap.
      rc = pcre2_match(code, subject, n, pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, context);
      if (rc < 0) break;  // give up matching: the rest stays one piece
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const size_t start = ov[0];
    const size_t end = ov[1];
    if (end == start) {
      // No spec regex matches the empty string; step over one character
      // anyway so that a future one cannot loop forever.
      pos = start + 1;
      while (pos < n && (static_cast<unsigned char>(piece[pos]) & 0xC0) == 0x80) ++pos;
      continue;
    }
    if (start > emitted) {
      SplitLevel(regexes, level + 1, piece.substr(emitted, start - emitted), md, sink);
    }
    SplitLevel(regexes, level + 1, piece.substr(start, end - start), md, sink);
    emitted = pos = end;
  }
  if (emitted < n) SplitLevel(regexes, level + 1, piece.substr(emitted), md, sink);
}

}  // namespace
}  // namespace mneme
