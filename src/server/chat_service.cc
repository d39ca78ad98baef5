// ChatService (see chat_service.h).
#include "server/chat_service.h"
#include "server/turn.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "api/api_error.h"
#include "api/chat_messages.h"
#include "api/chat_request.h"
#include "api/chat_response.h"
#include "api/completion_request.h"
#include "api/completion_response.h"
#include "api/json_io.h"
#include "api/model_list.h"
#include "model/stop_checker.h"
#include "tokenizer/chat_prompt.h"
#include "tokenizer/incremental_decoder.h"

namespace mneme::server {

TaskQueue::TaskQueue(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) {
    threads_.emplace_back([this] {
      while (true) {
        std::function<void()> task;
        {
          std::unique_lock lock(mu_);
          cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
          if (tasks_.empty()) return;
          task = std::move(tasks_.front());
          tasks_.pop_front();
        }
        task();
      }
    });
  }
}

TaskQueue::~TaskQueue() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void TaskQueue::Post(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

namespace {

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void ChatService::SendError(http::ResponseWriter* w, const api::ApiError& e) {
  if (metrics_ != nullptr) metrics_->RecordError(e.http_status);
  w->Send(e.http_status, "application/json", api::ErrorBody(e));
}

ChatService::ChatService(ChatServiceOptions options, const Tokenizer* tokenizer,
                         const ChatTemplate* chat_template, scheduler::EngineService* engine,
                         session::SessionStore* store, Metrics* metrics)
    : options_(std::move(options)),
      tokenizer_(tokenizer),
      chat_template_(chat_template),
      engine_(engine),
      store_(store),
      metrics_(metrics),
      workers_(options_.turn_workers) {}

std::optional<std::string> ChatService::Authorize(const http::Request& request,
                                                  http::ResponseWriter* writer) {
  if (options_.api_keys.empty()) return std::string();
  std::string_view auth = request.Header("authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.size() > kBearer.size() && auth.substr(0, kBearer.size()) == kBearer) {
    const std::string key(auth.substr(kBearer.size()));
    for (const std::string& k : options_.api_keys) {
      if (k == key) return key;
    }
  }
  SendError(writer, api::Unauthorized(!auth.empty()));
  return std::nullopt;
}

void ChatService::HandleModels(const http::Request& request,
                               std::shared_ptr<http::ResponseWriter> writer) {
  if (!Authorize(request, writer.get())) return;
  const api::ModelInfo info{options_.model_name, UnixNow(), "mneme"};
  writer->Send(200, "application/json", api::ModelListJson(std::span(&info, 1)));
}

void ChatService::HandleHealth(const http::Request&, std::shared_ptr<http::ResponseWriter> writer) {
  writer->Send(200, "application/json", R"({"status":"ok"})");
}

void ChatService::HandleChat(const http::Request& request,
                             std::shared_ptr<http::ResponseWriter> writer) {
  auto accepted = Accept<api::ChatCompletionRequest>(request, writer.get(),
                                                     api::ParseChatCompletionRequest);
  if (!accepted) return;
  const std::optional<std::string> owner = std::move(accepted->first);
  api::ChatCompletionRequest chat = std::move(accepted->second);
  auto turn = std::make_shared<Turn>();
  turn->writer = std::move(writer);
  turn->new_messages = std::move(chat.messages);
  turn->sampling = std::move(chat.sampling);
  turn->max_tokens = chat.max_tokens;
  turn->stream = chat.stream;
  turn->include_usage = chat.include_usage;
  turn->owner = *owner;
  if (chat.session_id) {
    turn->session_id = *chat.session_id;
  } else if (std::string_view h = request.Header("x-session-id"); !h.empty()) {
    turn->session_id = std::string(h);
  }
  workers_.Post([this, turn] { RunTurn(turn); });
}

bool ChatService::PrepareSessionTurn(Turn* turn) {
  http::ResponseWriter* w = turn->writer.get();
  // The session: a fork of the previous response's, a new one, or the
  // named one; then its turn lock.
  if (!turn->fork_from.empty()) {
    Result<session::Session> forked = store_->Fork(turn->fork_from, turn->owner);
    if (!forked.ok()) {
      SendError(w, api::ResponseNotFound(turn->response.previous_response_id.value_or("")));
      return false;
    }
    turn->session_id = forked->id;
  } else if (turn->session_id.empty()) {
    session::SessionInit init;
    init.owner = turn->owner;
    Result<session::Session> created = store_->Create(std::move(init));
    if (!created.ok()) {
      SendError(w, api::ApiErrorFromStatus(created.status(), api::StatusOrigin::kSession));
      return false;
    }
    turn->session_id = created->id;
  }
  Result<std::unique_ptr<session::TurnLease>> lease =
      store_->BeginTurn(turn->session_id, turn->owner, options_.busy, options_.busy_wait);
  if (!lease.ok()) {
    if (lease.status().code() == StatusCode::kNotFound) {
      SendError(w, api::SessionNotFound(turn->session_id));
      return false;
    }
    if (lease.status().code() == StatusCode::kAborted) {
      SendError(w, api::SessionBusy(turn->session_id));
      return false;
    }
    SendError(w, api::ApiErrorFromStatus(lease.status(), api::StatusOrigin::kSession));
    return false;
  }
  turn->lease = std::move(*lease);
  const session::Session& s = turn->lease->session();

  // History + the new messages, rendered; the stored tokens stand for the
  // history's render up to the end of the last answer.
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (turn->instructions) {
    messages.push_back({{"role", "system"}, {"content", *turn->instructions}});
  }
  for (const std::string& m : s.messages) {
    messages.push_back(nlohmann::ordered_json::parse(m, nullptr, /*allow_exceptions=*/false));
  }
  std::optional<ConversationTokens> previous;
  if (!s.tokens.empty() && !messages.empty() && messages.back().value("role", "") == "assistant") {
    nlohmann::ordered_json before = messages;
    const std::string last_answer = before.back().value("content", "");
    before.erase(before.end() - 1);
    Result<std::string> text = chat_template_->Render(before, nullptr, true);
    if (text.ok()) previous = ConversationTokens{*text + last_answer, s.tokens};
  }
  const nlohmann::ordered_json fresh = api::ToTemplateMessages(turn->new_messages);
  for (const auto& m : fresh) messages.push_back(m);
  Result<TurnPrompt> prompt =
      BuildTurnPrompt(*chat_template_, *tokenizer_, messages, previous ? &*previous : nullptr);
  if (!prompt.ok()) {
    SendError(w, api::ApiErrorFromStatus(prompt.status(), api::StatusOrigin::kChatTemplate));
    DropForkedSession(*turn);
    return false;
  }
  // --context-overflow truncate: drop the oldest messages after the leading
  // system message(s), one at a time, until the prompt leaves room for at
  // least one generated token (the stored history keeps them; the next turn
  // renders in full again). The default answers 400 (RunTurn).
  if (options_.truncate_overflow) {
    size_t first = 0;
    while (first < messages.size() && messages[first].value("role", "") == "system") ++first;
    const size_t keep_last = fresh.size();  // this turn's messages always stay
    while (static_cast<int>(prompt->tokens.size()) >= options_.context_length &&
           messages.size() > first + keep_last) {
      messages.erase(messages.begin() + static_cast<long>(first));
      prompt = BuildTurnPrompt(*chat_template_, *tokenizer_, messages, nullptr);
      if (!prompt.ok()) {
        SendError(w, api::ApiErrorFromStatus(prompt.status(), api::StatusOrigin::kChatTemplate));
        DropForkedSession(*turn);
        return false;
      }
    }
  }
  turn->prompt = std::move(*prompt);
  return true;
}

void ChatService::RunTurn(std::shared_ptr<Turn> turn) {
  http::ResponseWriter* w = turn->writer.get();
  if (w->IsClosed()) return;
  if (turn->raw) {
    turn->prompt.tokens = turn->raw_prompt;
  } else if (!PrepareSessionTurn(turn.get())) {
    return;
  }
  const int n_prompt = static_cast<int>(turn->prompt.tokens.size());
  if (n_prompt >= options_.context_length) {
    return SendError(w, api::ContextLengthExceeded(n_prompt, options_.context_length));
  }

  scheduler::RequestOptions ro;
  ro.prompt = turn->prompt.tokens;
  ro.sampling = turn->sampling;
  const int room = options_.context_length - n_prompt;
  ro.sampling.max_tokens = std::min(room, turn->max_tokens.value_or(room));
  ro.cache_namespace = turn->owner;
  turn->id = ids_.Next(turn->raw ? "cmpl-" : turn->responses ? "resp_" : "chatcmpl-");
  turn->created = UnixNow();
  turn->decoder.emplace(*tokenizer_, IncrementalDecoder::Options{.continuation = true});
  turn->stops.emplace(ro.sampling.stop, tokenizer_->vocab().eog_ids, ro.sampling.ignore_eos);
  if (turn->raw) {
    if (turn->stream) {
      turn->completion_encoder.emplace(api::StreamHeader{turn->id, turn->created,
                                                         options_.model_name, std::nullopt,
                                                         turn->include_usage});
    }
  } else if (turn->responses) {
    turn->response.id = turn->id;
    turn->response.message_id = ids_.Next("msg_");
    turn->response.created_at = turn->created;
    turn->response.model = options_.model_name;
    turn->response.instructions = turn->instructions;
    turn->response.max_output_tokens = turn->max_tokens;
    turn->response.temperature = turn->sampling.temperature;
    turn->response.top_p = turn->sampling.top_p;
    if (turn->stream) turn->response_encoder.emplace(turn->response);
  } else if (turn->stream) {
    turn->encoder.emplace(api::StreamHeader{turn->id, turn->created, options_.model_name,
                                            turn->session_id, turn->include_usage});
  }
  turn->handle = std::make_shared<scheduler::RequestHandle>(0);
  // The turn lives in live_ until its final event; callbacks hold weak
  // references (the writer holds its close callback, the turn its writer).
  std::weak_ptr<Turn> weak = turn;
  turn->handle->SetNotifier([this, weak] {
    if (auto t = weak.lock()) OnEvents(t);
  });
  {
    std::lock_guard lock(live_mu_);
    live_[turn.get()] = turn;
  }
  ++turns_running_;
  if (turn->stream) {
    http::HeaderList headers;
    if (!turn->raw) headers.emplace_back("X-Session-Id", turn->session_id);
    w->StartStream(200, "text/event-stream", headers);
    if (!turn->raw) {
      w->Write(turn->responses ? turn->response_encoder->Start() : turn->encoder->Start());
    }
  }
  Status submitted = engine_->Submit(turn->handle, std::move(ro));
  if (!submitted.ok()) {
    {
      std::lock_guard lock(turn->mu);
      turn->done = true;
    }
    Release(turn.get());
    Fail(*turn, api::ApiErrorFromStatus(submitted, api::StatusOrigin::kEngineSubmit));
    return;
  }
  // A client that goes away cancels generation; the lease is then dropped
  // without a commit (the session stays as before the turn).
  w->SetOnClose([weak] {
    if (auto t = weak.lock()) t->handle->Cancel();
  });
}

void ChatService::Release(Turn* turn) {
  std::shared_ptr<Turn> keep;  // destroyed outside the lock
  std::lock_guard lock(live_mu_);
  auto it = live_.find(turn);
  if (it == live_.end()) return;
  keep = std::move(it->second);
  live_.erase(it);
  --turns_running_;
}

void ChatService::OnEvents(const std::shared_ptr<Turn>& turn) {
  std::lock_guard lock(turn->mu);
  if (turn->done) return;
  scheduler::TokenEvent ev;
  while (turn->handle->TryNext(&ev)) {
    if (ev.kind == scheduler::TokenEvent::Kind::kToken) {
      if (turn->stopped_by_string) continue;
      turn->answer_tokens.push_back(ev.token);
      const std::string piece = turn->decoder->Add(ev.token);
      StopChecker::Step step = turn->stops->Add(ev.token, piece);
      turn->answer += step.text;
      Delta(*turn, step.text);
      if (step.stop == StopReason::kStopString) {
        turn->stopped_by_string = true;
        turn->handle->Cancel();
      }
      continue;
    }
    // The final event. The turn leaves live_ when this call returns (the
    // caller holds a reference).
    turn->done = true;
    struct ReleaseAtExit {
      ChatService* self;
      Turn* t;
      ~ReleaseAtExit() { self->Release(t); }
    } release_at_exit{this, turn.get()};
    const bool ok = ev.reason == scheduler::FinishReason::kStop ||
                    ev.reason == scheduler::FinishReason::kLength ||
                    ev.reason == scheduler::FinishReason::kContext ||
                    (ev.reason == scheduler::FinishReason::kCancelled && turn->stopped_by_string);
    if (!ok) {
      // Failed or client gone: no commit, the session stays as it was.
      turn->lease.reset();
      Fail(*turn, ev.reason == scheduler::FinishReason::kError
                      ? api::InternalError(ev.error.message())
                      : api::MakeError(499, "the request was cancelled"));
      DropForkedSession(*turn);
      return;
    }
    if (!turn->stopped_by_string) {
      const std::string tail = turn->decoder->Flush();
      StopChecker::Step step = turn->stops->Add(-1, tail);
      std::string rest = step.text + (step.stop == StopReason::kNone ? turn->stops->Finish() : "");
      turn->answer += rest;
      Delta(*turn, rest);
    }
    const api::FinishReason reason =
        ev.reason == scheduler::FinishReason::kStop || turn->stopped_by_string
            ? api::FinishReason::kStop
            : api::FinishReason::kLength;
    if (metrics_ != nullptr) {
      const auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
      metrics_->RecordTurn(ev.stats.generated_tokens > 0
                               ? seconds(ev.stats.first_token - ev.stats.submitted)
                               : -1.0,
                           seconds(ev.stats.finished - ev.stats.submitted), ev.stats.prompt_tokens,
                           ev.stats.cached_tokens,
                           static_cast<int64_t>(turn->answer_tokens.size()));
    }
    api::Usage usage;
    usage.prompt_tokens = ev.stats.prompt_tokens;
    usage.completion_tokens = static_cast<int64_t>(turn->answer_tokens.size());
    usage.cached_tokens = ev.stats.cached_tokens;

    if (turn->raw) {
      FinishCompletion(*turn, reason, usage);
      return;
    }
    // Commit: the new messages and the answer; the tokens now stand for the
    // render up to the end of the answer (the model's own tokens, unless a
    // stop string cut the answer: then its text, re-tokenized).
    session::TurnAppend append;
    for (const api::ChatMessage& m : turn->new_messages) {
      append.messages.push_back(api::DumpJson(api::ChatMessageJson(m)));
    }
    append.messages.push_back(
        api::DumpJson(nlohmann::ordered_json{{"role", "assistant"}, {"content", turn->answer}}));
    std::vector<TokenId> answer_tokens = turn->answer_tokens;
    if (turn->stopped_by_string) {
      answer_tokens = tokenizer_->Encode(turn->answer, {.add_special = false, .parse_special = false});
    }
    const ConversationTokens after = AfterAnswer(turn->prompt, turn->answer, answer_tokens);
    const session::Session& before = turn->lease->session();
    append.replace_tokens = !turn->prompt.incremental ||
                            turn->prompt.num_reused_tokens != static_cast<int>(before.tokens.size());
    const size_t keep_hashes =
        append.replace_tokens ? kv::ChunkHasher::SharedChunks(before.tokens, after.tokens,
                                                              options_.chunk_tokens)
                              : before.chunk_hashes.size();
    kv::ChunkHasher hasher = kv::ChunkHasher::Resume(
        options_.fingerprint, options_.chunk_tokens,
        std::span<const int32_t>(after.tokens).first(
            std::min(after.tokens.size(), keep_hashes * static_cast<size_t>(options_.chunk_tokens))),
        std::span<const kv::Hash128>(before.chunk_hashes).first(
            std::min(keep_hashes, before.chunk_hashes.size())));
    hasher.Extend(std::span<const int32_t>(after.tokens)
                      .subspan(std::min(after.tokens.size(),
                                        keep_hashes * static_cast<size_t>(options_.chunk_tokens))));
    if (append.replace_tokens) {
      append.tokens = after.tokens;
      append.chunk_hashes = hasher.hashes();
    } else {
      append.tokens.assign(after.tokens.begin() + static_cast<long>(before.tokens.size()),
                           after.tokens.end());
      append.chunk_hashes.assign(hasher.hashes().begin() + static_cast<long>(before.chunk_hashes.size()),
                                 hasher.hashes().end());
    }
    Status committed = turn->lease->Commit(std::move(append));
    turn->lease.reset();
    if (!committed.ok()) {
      Fail(*turn, api::ApiErrorFromStatus(committed, api::StatusOrigin::kSession));
      DropForkedSession(*turn);
      return;
    }
    if (turn->responses) {
      FinishResponse(*turn, reason, usage);
      return;
    }
    if (turn->encoder) {
      turn->writer->Write(turn->encoder->Finish(reason, usage));
      turn->writer->End();
    } else {
      api::ChatCompletionResult r;
      r.id = turn->id;
      r.created = turn->created;
      r.model = options_.model_name;
      r.content = turn->answer;
      r.finish_reason = reason;
      r.usage = usage;
      r.session_id = turn->session_id;
      turn->writer->Send(200, "application/json", api::ChatCompletionJson(r),
                         {{"X-Session-Id", turn->session_id}});
    }
    return;
  }
}

void ChatService::Delta(Turn& turn, const std::string& text) {
  if (text.empty() || !turn.stream) return;
  turn.writer->Write(turn.raw         ? turn.completion_encoder->Delta(text)
                     : turn.responses ? turn.response_encoder->Delta(text)
                                      : turn.encoder->Delta(text));
}

void ChatService::FinishCompletion(Turn& turn, api::FinishReason reason, const api::Usage& usage) {
  if (turn.stream) {
    turn.writer->Write(turn.completion_encoder->Finish(reason, usage));
    turn.writer->End();
    return;
  }
  api::CompletionResult r;
  r.id = turn.id;
  r.created = turn.created;
  r.model = options_.model_name;
  r.text = turn.answer;
  r.finish_reason = reason;
  r.usage = usage;
  turn.writer->Send(200, "application/json", api::CompletionJson(r));
}

void ChatService::HandleCompletions(const http::Request& request,
                                    std::shared_ptr<http::ResponseWriter> writer) {
  auto accepted =
      Accept<api::CompletionRequest>(request, writer.get(), api::ParseCompletionRequest);
  if (!accepted) return;
  const std::optional<std::string> owner = std::move(accepted->first);
  api::CompletionRequest req = std::move(accepted->second);
  auto turn = std::make_shared<Turn>();
  turn->writer = std::move(writer);
  turn->owner = *owner;
  turn->raw = true;
  if (req.prompt_is_tokens()) {
    turn->raw_prompt = std::get<std::vector<TokenId>>(req.prompt);
  } else {
    // As llama-server: BOS when the vocabulary asks for it, special-token
    // text recognized.
    turn->raw_prompt = tokenizer_->Encode(std::get<std::string>(req.prompt),
                                          {.add_special = true, .parse_special = true});
  }
  if (turn->raw_prompt.empty()) {
    return SendError(turn->writer.get(), api::InvalidRequest("prompt", "the prompt is empty"));
  }
  turn->sampling = std::move(req.sampling);
  turn->max_tokens = req.max_tokens;
  turn->stream = req.stream;
  turn->include_usage = req.include_usage;
  workers_.Post([this, turn] { RunTurn(turn); });
}

void ChatService::Fail(Turn& turn, const api::ApiError& e) {
  if (!turn.stream) return SendError(turn.writer.get(), e);
  if (metrics_ != nullptr) metrics_->RecordError(e.http_status);
  turn.writer->Write(turn.responses ? turn.response_encoder->Fail(e) : api::ChatStreamEncoder::Error(e));
  turn.writer->Abort();
}

}  // namespace mneme::server
