// `mneme bench-kv`: what the radix prefix cache and continuous batching buy,
// measured in-process on the engine thread (EngineService), no HTTP.
//
//   mneme bench-kv -m MODEL.gguf [--threads N] [--kv-mem MiB] [--json FILE]
//                  [--scenarios multiturn,system,batching,noreuse] [...]
//
// Scenarios (token ids drawn from a seeded RNG; greedy; EOG ignored so every
// answer has its full length):
//   multiturn  one conversation of --turns turns; each turn adds a user
//              message of --turn-tokens tokens to the history (prompt, all
//              previous answers) and generates --answer-tokens. Per turn:
//              time to first token, prompt / cached / computed tokens, and a
//              lower bound on TTFT from FLOPs: the matrix products of the
//              computed tokens plus attention of those tokens over the whole
//              context, at the FLOP rate the engine reaches on a first turn
//              (best of 3 after a warm-up). Run
//              with the cache on and off.
//   system     --sessions requests arriving together, each --system-tokens
//              shared tokens plus --session-tokens of its own: tokens
//              computed in all (the shared prefix should be computed once).
//   batching   --concurrency requests of --gen-tokens generated tokens at
//              once vs one alone: aggregate generation tokens/s.
//   noreuse    random prompts that share nothing, cache on vs off
//              (interleaved repetitions, best of each): the cache's overhead.
// Prints a table per scenario; --json writes every number.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "app/commands.h"
#include "engine/model_runner.h"
#include "gguf/gguf.h"
#include "kv/block_pool.h"
#include "model/model_config.h"
#include "model/weights.h"
#include "scheduler/engine_service.h"
#include "tokenizer/tokenizer.h"
#include "util/thread_pool.h"

namespace mneme::app {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct BenchKvOptions {
  std::string model;
  int threads = 0;
  int kv_mem_mib = 1024;
  std::string scenarios = "multiturn,system,batching,noreuse";
  std::string json_path;
  uint64_t seed = 1;
  int turns = 10, turn_tokens = 200, answer_tokens = 32;
  int sessions = 32, system_tokens = 1000, session_tokens = 50;
  int concurrency = 16, gen_tokens = 128;
  int noreuse_requests = 24, noreuse_tokens = 256, reps = 3;
  int max_batch_tokens = 512;
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

struct Loaded {
  gguf::GgufFile file;
  model::ModelConfig config;
  model::ModelWeights weights;
  std::vector<TokenId> eog_ids;
};

// One engine (fresh KV pool, fresh cache) per configuration.
struct Engine {
  std::unique_ptr<kv::BlockPool> pool;
  std::unique_ptr<engine::ModelRunner> runner;
  std::unique_ptr<scheduler::EngineService> service;
};

Result<Engine> MakeEngine(const Loaded& m, ThreadPool* threads, const BenchKvOptions& o,
                          bool cache, int max_running) {
  Engine e;
  const kv::KvShape shape = engine::KvShapeFor(m.config, kv::KvDType::kF16);
  MNEME_ASSIGN_OR_RETURN(e.pool,
                         kv::BlockPool::Create(shape, static_cast<size_t>(o.kv_mem_mib) << 20));
  MNEME_ASSIGN_OR_RETURN(e.runner,
                         engine::ModelRunner::Create(m.config, m.weights, e.pool.get(), threads));
  scheduler::EngineOptions eo;
  eo.scheduler.prefix_cache = cache;
  eo.scheduler.max_batch_tokens = o.max_batch_tokens;
  eo.scheduler.max_running = max_running;
  eo.max_waiting = 4096;
  MNEME_ASSIGN_OR_RETURN(e.service,
                         scheduler::EngineService::Create(e.runner.get(), m.eog_ids, eo));
  return e;
}

class TokenSource {
 public:
  TokenSource(uint64_t seed, int64_t vocab) : rng_(seed), lo_(vocab / 8), hi_(vocab - 1) {}
  std::vector<TokenId> Draw(int n) {
    std::uniform_int_distribution<int64_t> d(lo_, hi_);
    std::vector<TokenId> v(static_cast<size_t>(n));
    for (TokenId& t : v) t = static_cast<TokenId>(d(rng_));
    return v;
  }

 private:
  std::mt19937_64 rng_;
  int64_t lo_, hi_;
};

scheduler::RequestOptions Request(std::vector<TokenId> prompt, int max_tokens) {
  scheduler::RequestOptions r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.sampling.penalty_last_n = 0;
  r.sampling.max_tokens = max_tokens;
  r.sampling.ignore_eos = true;
  return r;
}

struct Outcome {
  std::vector<TokenId> tokens;
  scheduler::RequestStats stats;
  Status error;
  double ttft_s = 0, total_s = 0;
};

Outcome Collect(scheduler::RequestHandle* h, Clock::time_point submitted) {
  Outcome o;
  scheduler::TokenEvent ev;
  while (h->Next(&ev)) {
    if (ev.kind == scheduler::TokenEvent::Kind::kToken) {
      if (o.tokens.empty()) o.ttft_s = Seconds(Clock::now() - submitted);
      o.tokens.push_back(ev.token);
    } else {
      o.stats = ev.stats;
      o.error = ev.error;
    }
  }
  o.total_s = Seconds(Clock::now() - submitted);
  return o;
}

// Runs requests submitted together; returns outcomes in order.
Result<std::vector<Outcome>> RunTogether(scheduler::EngineService* s,
                                         std::vector<scheduler::RequestOptions> requests) {
  const auto start = Clock::now();
  std::vector<std::shared_ptr<scheduler::RequestHandle>> hs;
  for (auto& r : requests) {
    MNEME_ASSIGN_OR_RETURN(auto h, s->Submit(std::move(r)));
    hs.push_back(std::move(h));
  }
  std::vector<Outcome> out;
  for (auto& h : hs) {
    out.push_back(Collect(h.get(), start));
    if (!out.back().error.ok()) return out.back().error;
  }
  return out;
}

// FLOPs of the matrix products for one token (the output head excluded).
double MatmulFlopsPerToken(const model::ModelConfig& c) {
  const double d = static_cast<double>(c.dim);
  const double per_layer = d * static_cast<double>(c.q_dim()) * 2 +  // Wq, Wo
                           d * static_cast<double>(c.kv_dim()) * 2 +  // Wk, Wv
                           d * static_cast<double>(c.ffn_dim) * 3;    // gate, up, down
  return 2.0 * per_layer * static_cast<double>(c.num_layers);
}

// Attention FLOPs (QK^T and AV) of tokens at positions [first, last).
double AttentionFlops(const model::ModelConfig& c, int first, int last) {
  double positions = 0;  // sum over tokens of the positions they attend to
  for (int p = first; p < last; ++p) positions += p + 1;
  return 4.0 * positions * static_cast<double>(c.q_dim()) * static_cast<double>(c.num_layers);
}

// FLOPs of a turn that computes `computed` tokens ending at `context`.
double TurnFlops(const model::ModelConfig& c, int computed, int context) {
  return computed * MatmulFlopsPerToken(c) + AttentionFlops(c, context - computed, context) +
         2.0 * static_cast<double>(c.dim * c.vocab_size);
}

Result<json> MultiTurn(const Loaded& m, ThreadPool* threads, const BenchKvOptions& o) {
  json result = json::array();
  std::printf("\n== multiturn: %d turns, %d new user tokens and %d answer tokens per turn ==\n",
              o.turns, o.turn_tokens, o.answer_tokens);
  // The FLOP rate of a first turn (best of 3 fresh prompts after a warm-up):
  // the bound assumes every later turn's work runs at that rate.
  double rate = 0;
  {
    MNEME_ASSIGN_OR_RETURN(Engine e, MakeEngine(m, threads, o, false, 8));
    TokenSource src(o.seed + 100, m.config.vocab_size);
    for (int i = 0; i < 4; ++i) {
      MNEME_ASSIGN_OR_RETURN(auto runs,
                             RunTogether(e.service.get(), {Request(src.Draw(o.turn_tokens), 1)}));
      if (i > 0) rate = std::max(rate, TurnFlops(m.config, o.turn_tokens, o.turn_tokens) /
                                           runs[0].ttft_s);
    }
  }
  std::printf("bound: FLOPs of the turn (products of the computed tokens + their attention over\n"
              "the context) at the rate of a first turn, %.1f GFLOP/s\n", rate / 1e9);
  for (bool cache : {true, false}) {
    MNEME_ASSIGN_OR_RETURN(Engine e, MakeEngine(m, threads, o, cache, 8));
    TokenSource src(o.seed, m.config.vocab_size);
    std::vector<TokenId> history;
    std::printf("cache %-3s  turn  context  cached  computed  TTFT ms  bound ms  TTFT/bound\n",
                cache ? "on" : "off");
    json turns = json::array();
    for (int t = 1; t <= o.turns; ++t) {
      const std::vector<TokenId> user = src.Draw(o.turn_tokens);
      history.insert(history.end(), user.begin(), user.end());
      if (static_cast<int64_t>(history.size()) + o.answer_tokens > m.config.context_length) {
        return InvalidArgument("the conversation outgrows the model's context of " +
                               std::to_string(m.config.context_length) +
                               " tokens; use fewer --turns or a model with --ctx larger");
      }
      MNEME_ASSIGN_OR_RETURN(auto runs,
                             RunTogether(e.service.get(), {Request(history, o.answer_tokens)}));
      const Outcome& r = runs[0];
      const int context = static_cast<int>(history.size());
      const int computed = r.stats.computed_tokens;
      const double flops = TurnFlops(m.config, computed, context);
      const double bound = flops / rate;
      std::printf("           %4d  %7d  %6d  %8d  %7.1f  %8.1f  %10.2f\n", t, context,
                  r.stats.cached_tokens, computed, r.ttft_s * 1e3, bound * 1e3, r.ttft_s / bound);
      turns.push_back({{"turn", t},
                       {"context", context},
                       {"cached_tokens", r.stats.cached_tokens},
                       {"computed_tokens", computed},
                       {"ttft_ms", r.ttft_s * 1e3},
                       {"bound_ms", bound * 1e3},
                       {"flops", flops}});
      history.insert(history.end(), r.tokens.begin(), r.tokens.end());
    }
    result.push_back({{"cache", cache}, {"gflops_first_turn", rate / 1e9}, {"turns", turns}});
  }
  return result;
}

Result<json> SharedSystem(const Loaded& m, ThreadPool* threads, const BenchKvOptions& o) {
  json result = json::array();
  std::printf("\n== system: %d sessions arriving together, %d shared + %d own tokens ==\n",
              o.sessions, o.system_tokens, o.session_tokens);
  std::printf("cache  prompt tokens  cached  computed  all first tokens s  wall s\n");
  for (bool cache : {true, false}) {
    MNEME_ASSIGN_OR_RETURN(Engine e, MakeEngine(m, threads, o, cache, 32));
    TokenSource src(o.seed + 1, m.config.vocab_size);
    const std::vector<TokenId> system = src.Draw(o.system_tokens);
    std::vector<scheduler::RequestOptions> reqs;
    for (int i = 0; i < o.sessions; ++i) {
      std::vector<TokenId> p = system;
      const std::vector<TokenId> own = src.Draw(o.session_tokens);
      p.insert(p.end(), own.begin(), own.end());
      reqs.push_back(Request(std::move(p), 8));
    }
    const auto start = Clock::now();
    MNEME_ASSIGN_OR_RETURN(auto runs, RunTogether(e.service.get(), std::move(reqs)));
    const double wall = Seconds(Clock::now() - start);
    double last_first = 0;
    for (const Outcome& r : runs) last_first = std::max(last_first, r.ttft_s);
    const scheduler::SchedulerStats st = e.service->Stats();
    std::printf("%-5s  %13lld  %6lld  %8lld  %18.2f  %6.2f\n", cache ? "on" : "off",
                static_cast<long long>(st.num_prompt_tokens),
                static_cast<long long>(st.num_tokens_cached),
                static_cast<long long>(st.num_tokens_computed), last_first, wall);
    result.push_back({{"cache", cache},
                      {"prompt_tokens", st.num_prompt_tokens},
                      {"cached_tokens", st.num_tokens_cached},
                      {"computed_tokens", st.num_tokens_computed},
                      {"all_first_tokens_s", last_first},
                      {"wall_s", wall}});
  }
  return result;
}

Result<json> Batching(const Loaded& m, ThreadPool* threads, const BenchKvOptions& o) {
  std::printf("\n== batching: %d generated tokens per request, 64-token prompts ==\n",
              o.gen_tokens);
  std::printf("concurrent  generated  wall s  tokens/s\n");
  json result = json::array();
  double single = 0;
  for (int n : {1, o.concurrency}) {
    MNEME_ASSIGN_OR_RETURN(Engine e, MakeEngine(m, threads, o, true, std::max(n, 1)));
    TokenSource src(o.seed + 2, m.config.vocab_size);
    std::vector<scheduler::RequestOptions> reqs;
    for (int i = 0; i < n; ++i) reqs.push_back(Request(src.Draw(64), o.gen_tokens));
    const auto start = Clock::now();
    MNEME_ASSIGN_OR_RETURN(auto runs, RunTogether(e.service.get(), std::move(reqs)));
    const double wall = Seconds(Clock::now() - start);
    int64_t generated = 0;
    for (const Outcome& r : runs) generated += static_cast<int64_t>(r.tokens.size());
    const double tps = static_cast<double>(generated) / wall;
    if (n == 1) single = tps;
    std::printf("%10d  %9lld  %6.2f  %8.1f%s\n", n, static_cast<long long>(generated), wall, tps,
                n == 1 ? "" : ("  (" + std::to_string(tps / single).substr(0, 4) + "x)").c_str());
    result.push_back({{"concurrent", n}, {"generated", generated}, {"wall_s", wall},
                      {"tokens_per_s", tps}});
  }
  return result;
}

Result<json> NoReuse(const Loaded& m, ThreadPool* threads, const BenchKvOptions& o) {
  std::printf("\n== noreuse: %d requests of %d random tokens, 16 generated, best of %d ==\n",
              o.noreuse_requests, o.noreuse_tokens, o.reps);
  double best[2] = {1e30, 1e30};
  for (int rep = 0; rep < o.reps; ++rep) {
    for (int c = 0; c < 2; ++c) {
      const bool cache = c == 0;
      MNEME_ASSIGN_OR_RETURN(Engine e, MakeEngine(m, threads, o, cache, 8));
      TokenSource src(o.seed + 3 + static_cast<uint64_t>(rep), m.config.vocab_size);
      std::vector<scheduler::RequestOptions> reqs;
      for (int i = 0; i < o.noreuse_requests; ++i) {
        reqs.push_back(Request(src.Draw(o.noreuse_tokens), 16));
      }
      const auto start = Clock::now();
      MNEME_ASSIGN_OR_RETURN(auto runs, RunTogether(e.service.get(), std::move(reqs)));
      best[c] = std::min(best[c], Seconds(Clock::now() - start));
    }
  }
  std::printf("cache on %.3f s, cache off %.3f s: on/off = %.3f\n", best[0], best[1],
              best[0] / best[1]);
  return json{{"cache_on_s", best[0]}, {"cache_off_s", best[1]}, {"ratio", best[0] / best[1]}};
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "mneme bench-kv: %s\n", message.c_str());
  return 1;
}

int RunBenchKv(const BenchKvOptions& o) {
  Result<gguf::GgufFile> file = gguf::GgufFile::Open(o.model);
  if (!file.ok()) return Fail(file.status().message());
  Result<model::ModelConfig> config = model::ModelConfig::FromGguf(*file);
  if (!config.ok()) return Fail(config.status().message());
  Result<model::ModelWeights> weights = model::ModelWeights::Load(*file, *config);
  if (!weights.ok()) return Fail(weights.status().message());
  Result<Tokenizer> tokenizer = Tokenizer::FromGguf(*file);
  if (!tokenizer.ok()) return Fail(tokenizer.status().message());
  Loaded m{std::move(*file), *config, std::move(*weights), tokenizer->vocab().eog_ids};
  const int n_threads =
      o.threads > 0 ? o.threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  ThreadPool threads(n_threads);
  std::printf("mneme bench-kv: %s, %lld layers, dim %lld, %d threads, KV %d MiB (F16)\n",
              o.model.c_str(), static_cast<long long>(m.config.num_layers),
              static_cast<long long>(m.config.dim), n_threads, o.kv_mem_mib);
  json out = {{"model", o.model}, {"threads", n_threads}};
  std::stringstream names(o.scenarios);
  for (std::string name; std::getline(names, name, ',');) {
    Result<json> r = InvalidArgument("unknown scenario '" + name + "'");
    if (name == "multiturn") r = MultiTurn(m, &threads, o);
    if (name == "system") r = SharedSystem(m, &threads, o);
    if (name == "batching") r = Batching(m, &threads, o);
    if (name == "noreuse") r = NoReuse(m, &threads, o);
    if (!r.ok()) return Fail(r.status().message());
    out[name] = *r;
  }
  if (!o.json_path.empty()) {
    std::ofstream f(o.json_path);
    f << out.dump(1) << "\n";
    if (!f) return Fail("cannot write " + o.json_path);
  }
  return 0;
}

}  // namespace

void AddBenchKvCommand(CLI::App& app) {
  auto o = std::make_shared<BenchKvOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench-kv", "Measure the prefix cache and continuous batching on the engine (no HTTP)");
  cmd->add_option("-m,--model", o->model, "GGUF model file")->required();
  cmd->add_option("--threads", o->threads, "Threads (default: one per hardware thread)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--kv-mem", o->kv_mem_mib, "KV cache memory budget in MiB")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--scenarios", o->scenarios, "Comma-separated scenarios")->capture_default_str();
  cmd->add_option("--json", o->json_path, "Write all numbers to this JSON file");
  cmd->add_option("--seed", o->seed, "Seed of the token streams")->capture_default_str();
  cmd->add_option("--turns", o->turns, "multiturn: turns")->capture_default_str();
  cmd->add_option("--turn-tokens", o->turn_tokens, "multiturn: new user tokens per turn")
      ->capture_default_str();
  cmd->add_option("--answer-tokens", o->answer_tokens, "multiturn: answer tokens per turn")
      ->capture_default_str();
  cmd->add_option("--sessions", o->sessions, "system: sessions")->capture_default_str();
  cmd->add_option("--system-tokens", o->system_tokens, "system: shared prompt tokens")
      ->capture_default_str();
  cmd->add_option("--session-tokens", o->session_tokens, "system: own tokens per session")
      ->capture_default_str();
  cmd->add_option("--concurrency", o->concurrency, "batching: concurrent requests")
      ->capture_default_str();
  cmd->add_option("--gen-tokens", o->gen_tokens, "batching: generated tokens per request")
      ->capture_default_str();
  cmd->add_option("--reps", o->reps, "noreuse: repetitions")->capture_default_str();
  cmd->add_option("--max-batch-tokens", o->max_batch_tokens, "Scheduler rows per step")
      ->capture_default_str();
  cmd->callback([o] { SetExitCode(RunBenchKv(*o)); });
}

}  // namespace mneme::app
