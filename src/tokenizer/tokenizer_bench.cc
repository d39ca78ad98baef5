// Tokenizer throughput: Tokenizer::Encode over a long English corpus, cut in
// the same chunks as the llama.cpp driver (bench/tokenizer/llamacpp_tokenize.mjs),
// so scripts/bench_tokenizer.sh can put Mneme's MB/s beside llama.cpp's on the
// same vocab and the same bytes. One benchmark per vocab, BM_Encode/<vocab>.
//
// Environment (all optional; scripts/bench_tokenizer.sh sets them):
//   MNEME_BENCH_CORPUS   text file to tokenize. Default: the shared models
//                        README repeated to 1 MiB (a quick standalone check;
//                        the script uses the generated corpus instead).
//   MNEME_BENCH_VOCABS   ':'-separated vocab GGUF paths. Default: llama-spm,
//                        llama-bpe, qwen2 and gpt-2 from the shared vocab folder.
//   MNEME_BENCH_CHUNK    chunk size in bytes, 0 = whole text in one call (65536).
//   MNEME_BENCH_REPS     timed passes per vocab (5).
//   MNEME_BENCH_IDS_DIR  if set, the untimed warm-up pass writes the ids to
//                        <dir>/<vocab file name without .gguf>.ids, per chunk:
//                        int32 count, then count int32 ids (little-endian), for
//                        the cross-check against llama.cpp.
//
// Method: load (untimed), one untimed warm-up pass, then MNEME_BENCH_REPS
// repetitions of one pass each over every chunk, wall-clock time. Encode runs
// with add_special = false, parse_special = false, as llama.cpp's side does.
//
// Chunking (keep equal to SplitChunks in llamacpp_tokenize.mjs): a chunk ends
// just after the last '\n' within `chunk` bytes of its start; with no '\n' it
// ends at `chunk` bytes, moved back to a UTF-8 boundary.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"
#include "util/mapped_file.h"
#include "util/status.h"

namespace mneme {
namespace {

constexpr size_t kDefaultChunk = 65536;
constexpr int kDefaultReps = 5;
constexpr size_t kDefaultCorpusBytes = 1 << 20;

std::string EnvOr(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : std::move(fallback);
}

struct BenchConfig {
  std::string corpus_path;  // empty: the default corpus
  std::vector<std::string> vocab_paths;
  size_t chunk = kDefaultChunk;
  int reps = kDefaultReps;
  std::string ids_dir;  // empty: do not write ids
};

BenchConfig ConfigFromEnv() {
  BenchConfig config;
  config.corpus_path = EnvOr("MNEME_BENCH_CORPUS", "");
  std::string default_vocabs;
  for (std::string_view name : {"llama-spm", "llama-bpe", "qwen2", "gpt-2"}) {
    if (!default_vocabs.empty()) default_vocabs += ':';
    default_vocabs += std::string(MNEME_SHARED_DIR) + "/models/vocab/ggml-vocab-";
    default_vocabs += name;
    default_vocabs += ".gguf";
  }
  const std::string vocabs = EnvOr("MNEME_BENCH_VOCABS", default_vocabs);
  size_t begin = 0;
  while (begin <= vocabs.size()) {
    size_t end = vocabs.find(':', begin);
    if (end == std::string::npos) end = vocabs.size();
    if (end > begin) config.vocab_paths.push_back(vocabs.substr(begin, end - begin));
    begin = end + 1;
  }
  config.chunk =
      std::strtoull(EnvOr("MNEME_BENCH_CHUNK", std::to_string(kDefaultChunk)).c_str(), nullptr, 10);
  config.reps =
      std::max(1, std::atoi(EnvOr("MNEME_BENCH_REPS", std::to_string(kDefaultReps)).c_str()));
  config.ids_dir = EnvOr("MNEME_BENCH_IDS_DIR", "");
  return config;
}

Result<std::string> LoadCorpus(const BenchConfig& config) {
  if (!config.corpus_path.empty()) return ReadFileToString(config.corpus_path);
  MNEME_ASSIGN_OR_RETURN(std::string readme,
                         ReadFileToString(std::string(MNEME_SHARED_DIR) + "/models/README.md"));
  if (readme.empty()) return InvalidArgument("default corpus: models/README.md is empty");
  std::string corpus;
  while (corpus.size() < kDefaultCorpusBytes) corpus += readme;
  return corpus;
}

std::vector<std::string_view> SplitChunks(std::string_view text, size_t chunk) {
  std::vector<std::string_view> chunks;
  if (chunk == 0) {
    if (!text.empty()) chunks.push_back(text);
    return chunks;
  }
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(begin + chunk, text.size());
    if (end < text.size()) {
      const size_t nl = text.rfind('\n', end - 1);
      if (nl != std::string_view::npos && nl >= begin) {
        end = nl + 1;
      } else {
        while (end > begin + 1 && (static_cast<uint8_t>(text[end]) & 0xC0) == 0x80) --end;
      }
    }
    chunks.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return chunks;
}

std::string VocabStem(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.size() > 5 && name.ends_with(".gguf")) name.resize(name.size() - 5);
  return name;
}

void AppendInt32(std::string& out, int32_t v) {
  const auto u = static_cast<uint32_t>(v);
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((u >> shift) & 0xFF));
}

// Everything one vocab's benchmark needs, built on its first repetition.
struct EncodeBench {
  BenchConfig config;
  std::string vocab_path;
  std::string corpus;
  std::vector<std::string_view> chunks;  // into corpus
  std::optional<Tokenizer> tokenizer;
  size_t num_tokens = 0;           // per pass
  std::optional<Status> prepared;  // set by the first repetition

  Status Prepare() {
    MNEME_ASSIGN_OR_RETURN(corpus, LoadCorpus(config));
    chunks = SplitChunks(corpus, config.chunk);
    MNEME_ASSIGN_OR_RETURN(gguf::GgufFile file, gguf::GgufFile::Open(vocab_path));
    MNEME_ASSIGN_OR_RETURN(Tokenizer t, Tokenizer::FromGguf(file));
    tokenizer.emplace(std::move(t));
    // Warm-up pass; its ids go to the cross-check file.
    std::string ids_bytes;
    for (std::string_view chunk : chunks) {
      std::vector<TokenId> ids = tokenizer->Encode(chunk, Options());
      num_tokens += ids.size();
      AppendInt32(ids_bytes, static_cast<int32_t>(ids.size()));
      for (TokenId id : ids) AppendInt32(ids_bytes, id);
    }
    if (!config.ids_dir.empty()) {
      MNEME_RETURN_IF_ERROR(
          WriteStringToFile(config.ids_dir + "/" + VocabStem(vocab_path) + ".ids", ids_bytes));
    }
    return Status();
  }

  static Tokenizer::EncodeOptions Options() {
    Tokenizer::EncodeOptions options;
    options.add_special = false;
    options.parse_special = false;
    return options;
  }
};

void RunEncode(benchmark::State& state, EncodeBench& bench) {
  if (!bench.prepared.has_value()) bench.prepared = bench.Prepare();
  if (!bench.prepared->ok()) {
    state.SkipWithError(bench.prepared->ToString().c_str());
    return;
  }
  const Tokenizer::EncodeOptions options = EncodeBench::Options();
  for (auto _ : state) {
    size_t n = 0;
    for (std::string_view chunk : bench.chunks) {
      std::vector<TokenId> ids = bench.tokenizer->Encode(chunk, options);
      benchmark::DoNotOptimize(ids.data());
      n += ids.size();
    }
    if (n != bench.num_tokens) {
      state.SkipWithError("token count differs between passes");
      break;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bench.corpus.size()));
  state.counters["tokens"] = static_cast<double>(bench.num_tokens);
  state.counters["chunks"] = static_cast<double>(bench.chunks.size());
  state.counters["corpus_bytes"] = static_cast<double>(bench.corpus.size());
}

// Registers BM_Encode/<vocab> for every configured vocab; runs before main
// (the usual Google Benchmark registration), reading the environment once.
bool RegisterEncodeBenchmarks() {
  const BenchConfig config = ConfigFromEnv();
  for (const std::string& path : config.vocab_paths) {
    auto bench = std::make_shared<EncodeBench>();
    bench->config = config;
    bench->vocab_path = path;
    std::string name = "BM_Encode/" + VocabStem(path);
    if (name.starts_with("BM_Encode/ggml-vocab-")) name = "BM_Encode/" + name.substr(21);
    benchmark::RegisterBenchmark(name.c_str(),
                                 [bench](benchmark::State& state) { RunEncode(state, *bench); })
        ->Iterations(1)
        ->Repetitions(config.reps)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}

[[maybe_unused]] const bool kRegistered = RegisterEncodeBenchmarks();

}  // namespace
}  // namespace mneme
