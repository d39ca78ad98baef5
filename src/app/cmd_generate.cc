// `mneme generate`: a raw completion of one prompt, on the command line.
//
//   mneme generate -m MODEL.gguf -p PROMPT [-n N] [--temp T] [--seed S]
//                  [--threads N] [--ids] [--no-bos] [--timings]
//                  [--kv-mem MiB] [--kv-type f16|f32]
//
// The prompt is tokenized with special-token text such as <|im_start|>
// recognized (as llama.cpp's CLI does) and BOS first whenever the vocabulary
// has one, unless --no-bos (even where the vocabulary's add_bos is false, as
// for Qwen: a raw completion starts from BOS; no EOS is ever appended). It is
// evaluated and up to N tokens are generated (greedy at --temp 0, the
// default; otherwise pure temperature sampling, no top-k/top-p, from --seed).
// Generation stops early at an end-of-generation token (not printed) or when
// the model's context is full (a note on stderr).
//
// Output: the generated text, streamed token by token as UTF-8-safe text
// (IncrementalDecoder), with no newline added; with --ids only the generated
// ids, space separated, on one line. --timings prints load time and tokens
// per second to stderr. Errors print "mneme generate: <message>" to stderr
// and exit 1 (a prompt longer than the context is one).
//
// It runs the engine (src/engine/ ModelRunner) over a paged KV pool of at
// most --kv-mem MiB (never more than the model's context needs), K/V stored
// as --kv-type; the prompt is prefilled in chunks of kPrefillChunk tokens.
// Running out of KV blocks stops generation with a note (a prompt that does
// not fit is an error). The hidden flag --reference runs the scalar golden
// ReferenceForward (src/model/) instead, for comparison.
//
// Hidden flag --dump-logits FILE (for the logits parity tests,
// tests/logits.cmake): writes the raw logits of the first generation step
// (after the whole prompt) to FILE as {"n_vocab":N,"logits":[...]}, each
// float32 as %.9g (round-trips exactly; a non-finite value is null).
//
// Hidden flag --dump-steps FILE (for the greedy parity tests,
// tests/generate_oracle.sh; greedy only, refused with --temp > 0): writes one
// JSON line per generation step, the end-of-generation step included,
//   {"step":i,"token":id,"runner_up":id,"margin":m,"next":[[id,m],...]}
// where runner_up is the best other id (ties: the lowest) and margin is
// logit[token] - logit[runner_up] on the raw float32 logits (%.9g; null when
// not finite); "next" lists the 8 best other ids, best first (runner_up
// first), each with logit[token] - logit[id] (a near tie can be three-way).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "app/commands.h"
#include "engine/model_runner.h"
#include "gguf/gguf.h"
#include "kv/block_pool.h"
#include "model/model_config.h"
#include "model/reference_forward.h"
#include "model/sampler.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"
#include "util/thread_pool.h"

namespace mneme::app {
namespace {

struct GenerateOptions {
  std::string model;
  std::string prompt;
  int n_predict = 128;
  float temperature = 0.0f;
  std::optional<uint64_t> seed;
  int threads = 0;  // 0: one per hardware thread
  bool ids = false;
  bool no_bos = false;
  bool timings = false;
  bool reference = false;
  std::string dump_logits;
  std::string dump_steps;
  int kv_mem_mib = 256;
  std::string kv_type = "f16";
};

// Prompt tokens per Forward call (bounds the step's activation buffers).
constexpr int kPrefillChunk = 512;

// Evaluates tokens and returns the last token's logits: the engine's paged
// ModelRunner or the scalar ReferenceForward (--reference).
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Appends `tokens` to the sequence and runs them.
  virtual Result<std::vector<float>> Eval(std::span<const TokenId> tokens) = 0;
  // Whether one more token fits (context and, for the engine, KV blocks).
  virtual bool CanGrow() const = 0;
};

class ReferenceEvaluator : public Evaluator {
 public:
  ReferenceEvaluator(const model::ModelConfig& c, const model::ModelWeights& w, ThreadPool* pool)
      : config_(c), forward_(c, w, pool) {}
  Result<std::vector<float>> Eval(std::span<const TokenId> tokens) override {
    return forward_.Eval(tokens);
  }
  bool CanGrow() const override { return forward_.num_tokens() < config_.context_length; }

 private:
  const model::ModelConfig& config_;
  model::ReferenceForward forward_;
};

class EngineEvaluator : public Evaluator {
 public:
  static Result<std::unique_ptr<EngineEvaluator>> Create(const model::ModelConfig& c,
                                                         const model::ModelWeights& w,
                                                         ThreadPool* threads,
                                                         const GenerateOptions& options) {
    kv::KvDType dtype;
    if (options.kv_type == "f16") {
      dtype = kv::KvDType::kF16;
    } else if (options.kv_type == "f32") {
      dtype = kv::KvDType::kF32;
    } else {
      return InvalidArgument("--kv-type must be f16 or f32, not '" + options.kv_type + "'");
    }
    auto e = std::unique_ptr<EngineEvaluator>(new EngineEvaluator(c));
    const kv::KvShape shape = engine::KvShapeFor(c, dtype);
    // One sequence never needs more than the context (plus a partial block).
    const size_t needed =
        shape.BytesPerBlock() * static_cast<size_t>(c.context_length / shape.block_size + 1);
    const size_t budget = std::min(needed, static_cast<size_t>(options.kv_mem_mib) << 20);
    MNEME_ASSIGN_OR_RETURN(e->pool_, kv::BlockPool::Create(shape, budget));
    MNEME_ASSIGN_OR_RETURN(e->runner_, engine::ModelRunner::Create(c, w, e->pool_.get(), threads));
    e->seq_.block_table = kv::BlockTable(e->pool_.get());
    return e;
  }

  Result<std::vector<float>> Eval(std::span<const TokenId> tokens) override {
    const int n = static_cast<int>(tokens.size());
    if (seq_.size() + n > config_.context_length) {
      return InvalidArgument(std::to_string(n) + " tokens after " + std::to_string(seq_.size()) +
                             " would exceed the context length of " +
                             std::to_string(config_.context_length));
    }
    if (!seq_.block_table.CanAppend(n)) {
      return ResourceExhausted("the KV cache (" + std::to_string(pool_->num_blocks()) +
                               " blocks of " + std::to_string(pool_->block_size()) +
                               " tokens) cannot hold " + std::to_string(seq_.size() + n) +
                               " tokens; raise --kv-mem");
    }
    MNEME_RETURN_IF_ERROR(seq_.block_table.Append(n));
    seq_.tokens.insert(seq_.tokens.end(), tokens.begin(), tokens.end());
    engine::Logits logits;
    while (seq_.num_uncomputed() > 0) {
      engine::Batch batch;
      const int end = std::min(seq_.size(), seq_.num_computed + kPrefillChunk);
      MNEME_RETURN_IF_ERROR(batch.Add(&seq_, seq_.num_computed, end, end == seq_.size()));
      MNEME_RETURN_IF_ERROR(runner_->Forward(batch, &logits));
    }
    return std::move(logits.data);
  }
  bool CanGrow() const override {
    return seq_.size() < config_.context_length && seq_.block_table.CanAppend(1);
  }

 private:
  explicit EngineEvaluator(const model::ModelConfig& c) : config_(c) {}
  const model::ModelConfig& config_;
  std::unique_ptr<kv::BlockPool> pool_;
  std::unique_ptr<engine::ModelRunner> runner_;
  engine::Sequence seq_;
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "mneme generate: %s\n", message.c_str());
  return 1;
}

// Writes --dump-logits' JSON (see the header comment).
Status DumpLogits(const std::string& path, std::span<const float> logits) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return IoError("cannot open --dump-logits file '" + path + "'");
  std::fprintf(f, "{\"n_vocab\":%zu,\"logits\":[", logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    if (i > 0) std::fputc(',', f);
    if (std::isfinite(logits[i])) {
      std::fprintf(f, "%.9g", static_cast<double>(logits[i]));
    } else {
      std::fputs("null", f);
    }
  }
  std::fputs("]}\n", f);
  const bool failed = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || failed) return IoError("cannot write --dump-logits file '" + path + "'");
  return Status::Ok();
}

// A float as JSON: %.9g (round-trips exactly), null when not finite.
std::string JsonFloat(float v) {
  if (!std::isfinite(v)) return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", static_cast<double>(v));
  return buffer;
}

// Writes --dump-steps' JSON lines (see the header comment).
class StepDump {
 public:
  // Other ids listed per step ("next").
  static constexpr size_t kNext = 8;

  static Result<std::unique_ptr<StepDump>> Open(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) return IoError("cannot open --dump-steps file '" + path + "'");
    return std::unique_ptr<StepDump>(new StepDump(path, f));
  }
  ~StepDump() {
    if (file_ != nullptr) std::fclose(file_);
  }
  StepDump(const StepDump&) = delete;
  StepDump& operator=(const StepDump&) = delete;

  // Records that `token` was chosen from `logits` at generation step `step`.
  void Add(int step, TokenId token, std::span<const float> logits) {
    // The kNext best other ids, best first; strict comparisons keep the
    // lowest id first among equal logits, and NaN never enters.
    std::vector<TokenId> next;
    for (size_t i = 0; i < logits.size(); ++i) {
      const TokenId id = static_cast<TokenId>(i);
      if (id == token || std::isnan(logits[i])) continue;
      if (next.size() == kNext && !(logits[i] > logits[next.back()])) continue;
      if (next.size() == kNext) next.pop_back();
      auto at = next.end();
      while (at != next.begin() && logits[i] > logits[*(at - 1)]) --at;
      next.insert(at, id);
    }
    auto margin = [&](TokenId other) { return JsonFloat(logits[token] - logits[other]); };
    std::string line = "{\"step\":" + std::to_string(step) +
                       ",\"token\":" + std::to_string(token) + ",\"runner_up\":" +
                       std::to_string(next.empty() ? kNoToken : next[0]) +
                       ",\"margin\":" + (next.empty() ? "null" : margin(next[0])) + ",\"next\":[";
    for (size_t i = 0; i < next.size(); ++i) {
      if (i > 0) line += ',';
      line += "[" + std::to_string(next[i]) + "," + margin(next[i]) + "]";
    }
    line += "]}\n";
    std::fputs(line.c_str(), file_);
  }

  Status Close() {
    const bool failed = std::ferror(file_) != 0;
    const bool close_failed = std::fclose(file_) != 0;
    file_ = nullptr;
    if (failed || close_failed) return IoError("cannot write --dump-steps file '" + path_ + "'");
    return Status::Ok();
  }

 private:
  StepDump(std::string path, FILE* file) : path_(std::move(path)), file_(file) {}
  std::string path_;
  FILE* file_;
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int RunGenerate(const GenerateOptions& options) {
  if (options.n_predict < 0) return Fail("-n must be >= 0");
  if (!options.dump_steps.empty() && options.temperature > 0.0f) {
    return Fail("--dump-steps needs greedy decoding (--temp 0)");
  }
  const auto load_start = std::chrono::steady_clock::now();
  Result<gguf::GgufFile> file = gguf::GgufFile::Open(options.model);
  if (!file.ok()) return Fail(file.status().message());
  Result<model::ModelConfig> config = model::ModelConfig::FromGguf(*file);
  if (!config.ok()) return Fail(config.status().message());
  Result<model::ModelWeights> weights = model::ModelWeights::Load(*file, *config);
  if (!weights.ok()) return Fail(weights.status().message());
  Result<Tokenizer> tokenizer = Tokenizer::FromGguf(*file);
  if (!tokenizer.ok()) return Fail(tokenizer.status().message());
  if (static_cast<int64_t>(tokenizer->vocab().size()) != config->vocab_size) {
    return Fail(options.model + ": the tokenizer has " + std::to_string(tokenizer->vocab().size()) +
                " tokens but the model " + std::to_string(config->vocab_size));
  }
  const double load_s = SecondsSince(load_start);

  SamplingParams sampling;
  sampling.temperature = options.temperature;
  sampling.seed = options.seed;
  sampling.penalty_last_n = 0;
  Result<Sampler> sampler = Sampler::Create(sampling, static_cast<int32_t>(config->vocab_size),
                                            tokenizer->vocab().eog_ids);
  if (!sampler.ok()) return Fail(sampler.status().message());

  std::vector<TokenId> prompt;
  const Vocab& vocab = tokenizer->vocab();
  if (!options.no_bos && vocab.IsValid(vocab.bos_id)) prompt.push_back(vocab.bos_id);
  const std::vector<TokenId> text_ids =
      tokenizer->Encode(options.prompt, {.add_special = false, .parse_special = true});
  prompt.insert(prompt.end(), text_ids.begin(), text_ids.end());
  if (prompt.empty()) {
    return Fail("the prompt is empty and no BOS token is added: nothing to continue from");
  }
  if (static_cast<int64_t>(prompt.size()) > config->context_length) {
    return Fail("the prompt is " + std::to_string(prompt.size()) +
                " tokens, longer than the model's context of " +
                std::to_string(config->context_length) + " tokens");
  }

  const int threads = options.threads > 0
                          ? options.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  ThreadPool pool(threads);
  std::unique_ptr<Evaluator> forward;
  if (options.reference) {
    forward = std::make_unique<ReferenceEvaluator>(*config, *weights, &pool);
  } else {
    Result<std::unique_ptr<EngineEvaluator>> engine =
        EngineEvaluator::Create(*config, *weights, &pool, options);
    if (!engine.ok()) return Fail(engine.status().message());
    forward = std::move(*engine);
  }

  const auto prompt_start = std::chrono::steady_clock::now();
  Result<std::vector<float>> logits = forward->Eval(prompt);
  if (!logits.ok()) return Fail(logits.status().message());
  const double prompt_s = SecondsSince(prompt_start);
  if (!options.dump_logits.empty()) {
    if (Status s = DumpLogits(options.dump_logits, *logits); !s.ok()) return Fail(s.message());
  }

  std::unique_ptr<StepDump> steps;
  if (!options.dump_steps.empty()) {
    Result<std::unique_ptr<StepDump>> opened = StepDump::Open(options.dump_steps);
    if (!opened.ok()) return Fail(opened.status().message());
    steps = std::move(*opened);
  }

  // A reply after prompt text keeps its leading space (SPM "▁word").
  IncrementalDecoder decoder(*tokenizer,
                             {.render_special = false, .continuation = !options.prompt.empty()});
  std::vector<TokenId> generated;
  const auto gen_start = std::chrono::steady_clock::now();
  bool context_full = false;
  while (static_cast<int>(generated.size()) < options.n_predict) {
    const TokenId id = sampler->Sample(*logits);
    if (steps != nullptr) steps->Add(static_cast<int>(generated.size()), id, *logits);
    if (tokenizer->vocab().IsEog(id)) break;
    sampler->Accept(id);
    generated.push_back(id);
    if (!options.ids) {
      const std::string text = decoder.Add(id);
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    }
    if (static_cast<int>(generated.size()) == options.n_predict) break;
    if (!forward->CanGrow()) {
      context_full = true;
      break;
    }
    logits = forward->Eval({&id, 1});
    if (!logits.ok()) return Fail(logits.status().message());
  }
  const double gen_s = SecondsSince(gen_start);
  if (steps != nullptr) {
    if (Status s = steps->Close(); !s.ok()) return Fail(s.message());
  }

  std::string tail;
  if (options.ids) {
    for (size_t i = 0; i < generated.size(); ++i) {
      if (i > 0) tail.push_back(' ');
      tail += std::to_string(generated[i]);
    }
    tail.push_back('\n');
  } else {
    tail = decoder.Flush();
  }
  std::fwrite(tail.data(), 1, tail.size(), stdout);
  if (std::fflush(stdout) != 0) return Fail("cannot write stdout");

  if (context_full) {
    std::fprintf(stderr,
                 "mneme generate: stopped after %zu tokens: the context of %lld tokens (or the "
                 "KV cache, --kv-mem) is full\n",
                 generated.size(), static_cast<long long>(config->context_length));
  }
  if (options.timings) {
    // Decode steps: every generated token but the last was evaluated.
    const size_t steps = generated.empty() ? 0 : generated.size() - 1;
    std::fprintf(stderr,
                 "mneme generate: load %.1f ms; prompt %zu tokens in %.1f ms (%.1f tok/s); "
                 "generation %zu tokens in %.1f ms (%.1f tok/s); %d threads\n",
                 load_s * 1e3, prompt.size(), prompt_s * 1e3, prompt.size() / prompt_s,
                 generated.size(), gen_s * 1e3, steps > 0 ? steps / gen_s : 0.0, threads);
    std::fprintf(stderr, "mneme generate: forward %s\n",
                 options.reference ? "reference (scalar)" : "engine (paged KV)");
  }
  return 0;
}

}  // namespace

void AddGenerateCommand(CLI::App& app) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand("generate", "Complete a prompt with a model (raw completion)");
  cmd->add_option("-m,--model", options->model, "GGUF model file")->required();
  cmd->add_option("-p,--prompt", options->prompt, "Prompt text")->required();
  cmd->add_option("-n,--n-predict", options->n_predict, "Maximum tokens to generate")
      ->capture_default_str();
  cmd->add_option("--temp", options->temperature, "Temperature; 0 is greedy")
      ->capture_default_str();
  cmd->add_option("--seed", options->seed, "Random seed for sampling (default: random)");
  cmd->add_option("--threads", options->threads, "Threads (default: one per hardware thread)")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--ids", options->ids, "Print only the generated token ids on one line");
  cmd->add_flag("--no-bos", options->no_bos, "Do not add a BOS token to the prompt");
  cmd->add_flag("--timings", options->timings, "Print load time and tokens/s to stderr");
  cmd->add_option("--kv-mem", options->kv_mem_mib, "KV cache memory budget in MiB")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--kv-type", options->kv_type, "KV cache element type: f16 or f32")
      ->capture_default_str()
      ->check(CLI::IsMember({"f16", "f32"}));
  // Hidden (empty group): the scalar golden forward, for comparisons.
  cmd->add_flag("--reference", options->reference, "Use the scalar reference forward pass")
      ->group("");
  cmd->add_option("--dump-logits", options->dump_logits,
                  "Write the first step's logits to this file as JSON")
      ->group("");
  cmd->add_option("--dump-steps", options->dump_steps,
                  "Write each greedy step's token, runner-up and margin as JSON lines")
      ->group("");
  cmd->callback([options] { SetExitCode(RunGenerate(*options)); });
}

}  // namespace mneme::app
