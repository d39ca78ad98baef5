// `mneme serve`: the OpenAI-compatible HTTP server with server-side sessions.
//
//   mneme serve -m MODEL.gguf [--host 127.0.0.1] [--port 8080] [--threads N]
//               [--ctx-size N] [--kv-mem MiB] [--api-key KEY ...]
//               [--session-ttl SECONDS] [--max-sessions N]
//               [--session-busy queue|reject] [--context-overflow error|truncate]
//
// Every flag can also come from the environment (MNEME_HOST, MNEME_PORT,
// MNEME_THREADS, MNEME_CTX_SIZE, MNEME_KV_MEM, MNEME_API_KEY (comma-separated
// keys), MNEME_SESSION_TTL, MNEME_MAX_SESSIONS, MNEME_SESSION_BUSY,
// MNEME_CONTEXT_OVERFLOW); a flag
// on the command line wins. Runs until SIGINT or SIGTERM, then shuts down
// gracefully: stops accepting, lets running turns finish for up to 10 s,
// cancels the rest.
//
// Endpoints in this version: POST /v1/completions, POST /v1/chat/completions
// (streaming or not,
// with session_id / X-Session-Id), /v1/responses (create with
// previous_response_id, get, delete), /v1/sessions (create, list, get, delete,
// fork), GET /v1/models, GET /health, GET /metrics (Prometheus). See
// docs/api.md.
#include <csignal>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "app/commands.h"
#include "engine/model_runner.h"
#include "gguf/gguf.h"
#include "http/router.h"
#include "http/server.h"
#include "kv/block_pool.h"
#include "kv/chunk_hasher.h"
#include "model/model_config.h"
#include "model/weights.h"
#include "scheduler/engine_service.h"
#include "server/chat_service.h"
#include "server/session_service.h"
#include "session/memory_session_store.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "util/thread_pool.h"

namespace mneme::app {
namespace {

struct ServeOptions {
  std::string model;
  std::string host = "127.0.0.1";
  int port = 8080;
  int threads = 0;
  int ctx_size = 0;  // 0: the model's
  int kv_mem_mib = 1024;
  std::vector<std::string> api_keys;
  int session_ttl = 3600;
  int64_t max_sessions = 100000;
  std::string session_busy = "queue";
  std::string context_overflow = "error";
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "mneme serve: %s\n", message.c_str());
  return 1;
}

std::string WeightsIdentityOf(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  const auto size = static_cast<uint64_t>(f.tellg());
  f.seekg(0);
  std::vector<uint8_t> head(std::min<uint64_t>(size, 1 << 20));
  f.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  return kv::WeightsIdentity(size, head);
}

int RunServe(const ServeOptions& o) {
  // Signals are taken synchronously by this thread (sigwait), so block them
  // before any other thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Result<gguf::GgufFile> file = gguf::GgufFile::Open(o.model);
  if (!file.ok()) return Fail(file.status().message());
  Result<model::ModelConfig> config = model::ModelConfig::FromGguf(*file);
  if (!config.ok()) return Fail(config.status().message());
  if (o.ctx_size > 0) config->context_length = std::min<int64_t>(config->context_length, o.ctx_size);
  Result<model::ModelWeights> weights = model::ModelWeights::Load(*file, *config);
  if (!weights.ok()) return Fail(weights.status().message());
  Result<Tokenizer> tokenizer = Tokenizer::FromGguf(*file);
  if (!tokenizer.ok()) return Fail(tokenizer.status().message());
  const ChatTemplate chat_template = ChatTemplate::FromGguf(*file);
  if (chat_template.is_fallback()) {
    std::fprintf(stderr, "mneme serve: %s\n", chat_template.warning().c_str());
  }

  const int n_threads =
      o.threads > 0 ? o.threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  ThreadPool threads(n_threads);
  const kv::KvShape shape = engine::KvShapeFor(*config, kv::KvDType::kF16);
  auto pool = kv::BlockPool::Create(shape, static_cast<size_t>(o.kv_mem_mib) << 20);
  if (!pool.ok()) return Fail(pool.status().message());
  auto runner = engine::ModelRunner::Create(*config, *weights, pool->get(), &threads);
  if (!runner.ok()) return Fail(runner.status().message());
  scheduler::EngineOptions eo;
  eo.scheduler.context_length = static_cast<int>(config->context_length);
  // Thousands of open streams may wait for the engine (each costs a few KiB);
  // beyond this the API answers 429.
  eo.max_waiting = 4096;
  auto engine = scheduler::EngineService::Create(runner->get(), tokenizer->vocab().eog_ids, eo);
  if (!engine.ok()) return Fail(engine.status().message());

  session::MemorySessionStoreOptions so;
  so.default_ttl = std::chrono::seconds(o.session_ttl);
  so.max_sessions = o.max_sessions;
  session::MemorySessionStore store(so);

  server::ChatServiceOptions co;
  co.model_name = std::filesystem::path(o.model).filename().string();
  co.api_keys = o.api_keys;
  co.busy = o.session_busy == "reject" ? session::BusyPolicy::kReject : session::BusyPolicy::kQueue;
  co.context_length = static_cast<int>(config->context_length);
  co.truncate_overflow = o.context_overflow == "truncate";
  co.fingerprint = kv::ModelFingerprint(
      {WeightsIdentityOf(o.model), std::string(model::ArchName(config->arch)), "f16", 256});
  server::Metrics metrics;
  server::ChatService chat(co, &*tokenizer, &chat_template, engine->get(), &store, &metrics);
  server::SessionService sessions(&chat, &store, co.model_name);

  http::Router router;
  router.Add("POST", "/v1/chat/completions",
             [&](const http::Request& r, std::shared_ptr<http::ResponseWriter> w) {
               chat.HandleChat(r, std::move(w));
             });
  router.Add("GET", "/v1/models", [&](const http::Request& r, std::shared_ptr<http::ResponseWriter> w) {
    chat.HandleModels(r, std::move(w));
  });
  router.Add("POST", "/v1/completions", [&](const http::Request& r, std::shared_ptr<http::ResponseWriter> w) {
    chat.HandleCompletions(r, std::move(w));
  });
  router.Add("POST", "/v1/responses", [&](const http::Request& r, std::shared_ptr<http::ResponseWriter> w) {
    chat.HandleResponses(r, std::move(w));
  });
  for (const char* method : {"GET", "DELETE"}) {
    router.AddPrefix(method, "/v1/responses/",
                     [&](const http::Request& r, std::shared_ptr<http::ResponseWriter> w) {
                       chat.HandleResponseById(r, std::move(w));
                     });
  }
  router.Add("POST", "/v1/sessions", [&](const http::Request& r, std::shared_ptr<http::ResponseWriter> w) {
    sessions.HandleCreate(r, std::move(w));
  });
  router.Add("GET", "/v1/sessions", [&](const http::Request& r, std::shared_ptr<http::ResponseWriter> w) {
    sessions.HandleList(r, std::move(w));
  });
  for (const char* method : {"GET", "DELETE", "POST"}) {
    router.AddPrefix(method, "/v1/sessions/",
                     [&](const http::Request& r, std::shared_ptr<http::ResponseWriter> w) {
                       sessions.HandleOne(r, std::move(w));
                     });
  }
  router.Add("GET", "/health", [&](const http::Request& r, std::shared_ptr<http::ResponseWriter> w) {
    chat.HandleHealth(r, std::move(w));
  });
  http::Server* http_server = nullptr;  // set below, before the first request
  router.Add("GET", "/metrics", [&](const http::Request&, std::shared_ptr<http::ResponseWriter> w) {
    server::HttpGauges h;
    if (http_server != nullptr) {
      h = {http_server->open_connections(), http_server->requests_total(),
           http_server->active_streams()};
    }
    w->Send(200, "text/plain; version=0.0.4",
            metrics.Render((*engine)->Stats(), store.Stats(), h));
  });
  http::ServerOptions ho;
  ho.host = o.host;
  ho.port = o.port;
  auto server = http::Server::Create(ho, std::move(router));
  if (!server.ok()) return Fail(server.status().message());
  http_server = server->get();
  if (Status s = (*server)->Start(); !s.ok()) return Fail(s.message());
  std::fprintf(stderr, "mneme serve: %s on http://%s:%d (%lld-token context, %d KV blocks)\n",
               co.model_name.c_str(), o.host.c_str(), (*server)->port(),
               static_cast<long long>(config->context_length), (*pool)->num_blocks());
  std::fflush(stderr);

  int sig = 0;
  sigwait(&signals, &sig);
  std::fprintf(stderr, "mneme serve: %s, shutting down\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
  (*server)->Shutdown(std::chrono::seconds(10));
  (*engine)->Stop();
  return 0;
}

}  // namespace

void AddServeCommand(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "Serve the OpenAI-compatible API with sessions");
  cmd->add_option("-m,--model", o->model, "GGUF model file")->required()->envname("MNEME_MODEL");
  cmd->add_option("--host", o->host, "Address to listen on")->capture_default_str()->envname("MNEME_HOST");
  cmd->add_option("--port", o->port, "Port (0: any free port)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535))
      ->envname("MNEME_PORT");
  cmd->add_option("--threads", o->threads, "Threads (default: one per hardware thread)")
      ->check(CLI::Range(1, 1024))
      ->envname("MNEME_THREADS");
  cmd->add_option("--ctx-size", o->ctx_size, "Context length (default: the model's)")
      ->check(CLI::Range(1, 1 << 24))
      ->envname("MNEME_CTX_SIZE");
  cmd->add_option("--kv-mem", o->kv_mem_mib, "KV cache memory budget in MiB")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20))
      ->envname("MNEME_KV_MEM");
  cmd->add_option("--api-key", o->api_keys, "Accepted API key (repeatable)")
      ->delimiter(',')
      ->envname("MNEME_API_KEY");
  cmd->add_option("--session-ttl", o->session_ttl, "Idle seconds before a session expires")
      ->capture_default_str()
      ->check(CLI::Range(1, 365 * 24 * 3600))
      ->envname("MNEME_SESSION_TTL");
  cmd->add_option("--max-sessions", o->max_sessions, "Sessions kept (LRU idle evicted first)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->envname("MNEME_MAX_SESSIONS");
  cmd->add_option("--session-busy", o->session_busy,
                  "A turn on a busy session: queue (wait its turn) or reject (409)")
      ->capture_default_str()
      ->check(CLI::IsMember({"queue", "reject"}))
      ->envname("MNEME_SESSION_BUSY");
  cmd->add_option("--context-overflow", o->context_overflow,
                  "A conversation longer than the context: error (400) or truncate (drop the "
                  "oldest turns after the system message)")
      ->capture_default_str()
      ->check(CLI::IsMember({"error", "truncate"}))
      ->envname("MNEME_CONTEXT_OVERFLOW");
  cmd->callback([o] { SetExitCode(RunServe(*o)); });
}

}  // namespace mneme::app
