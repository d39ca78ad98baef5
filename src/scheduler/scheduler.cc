// Scheduler: admission, chunked prefill, decode, preemption, finishing.
// See scheduler.h for the step structure.
#include "scheduler/scheduler.h"

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "util/check.h"

namespace mneme::scheduler {

struct Scheduler::Entry {
  std::shared_ptr<RequestHandle> handle;
  RequestOptions request;
  Sampler sampler;
  engine::Sequence seq;  // tokens = prompt + emitted tokens
  kv::RadixCache::Node* locked = nullptr;
  int num_blocks_cached = 0;  // leading blocks already given to the cache
  int64_t admission = -1;     // order of the latest admission (larger: younger)
  int64_t enqueued_step = 0;  // step it (re)entered the waiting queue
  bool admitted_once = false;
  bool done = false;
  bool decoding = false;      // this step's row is a decode step
  RequestStats stats;

  Entry(std::shared_ptr<RequestHandle> h, RequestOptions r, Sampler s)
      : handle(std::move(h)), request(std::move(r)), sampler(std::move(s)) {}
  int prompt_size() const { return static_cast<int>(request.prompt.size()); }
};

namespace {

int CeilDiv(int a, int b) { return (a + b - 1) / b; }

}  // namespace

Scheduler::Scheduler(const SchedulerOptions& options, kv::BlockPool* pool, int32_t vocab_size,
                     std::vector<TokenId> eog_ids)
    : options_(options), pool_(pool), vocab_size_(vocab_size), eog_ids_(std::move(eog_ids)) {
  CHECK(ValidateOptions(options).ok()) << ValidateOptions(options).ToString();
  if (options_.prefix_cache) cache_ = std::make_unique<kv::RadixCache>(pool_);
}

Scheduler::~Scheduler() {
  // Tables release their blocks; the cache its own (entries first: they may
  // hold locks on cache nodes).
  for (auto& e : running_) ReleaseKv(e.get());
  running_.clear();
  waiting_.clear();
  cache_.reset();
}

Status Scheduler::ValidateOptions(const SchedulerOptions& o) {
  if (o.max_batch_tokens < 1 || o.max_running < 1 || o.max_running > o.max_batch_tokens) {
    return InvalidArgument("scheduler: need 1 <= max_running (" + std::to_string(o.max_running) +
                           ") <= max_batch_tokens (" + std::to_string(o.max_batch_tokens) + ")");
  }
  if (o.context_length < 1) return InvalidArgument("scheduler: context_length must be > 0");
  if (o.starvation_steps < 0 || o.max_peek < 1) {
    return InvalidArgument("scheduler: starvation_steps >= 0 and max_peek >= 1 required");
  }
  return Status::Ok();
}

Status Scheduler::Validate(const RequestOptions& r) const {
  const int n = static_cast<int>(r.prompt.size());
  if (n == 0) return InvalidArgument("the prompt is empty");
  if (n > options_.context_length) {
    return InvalidArgument("the prompt is " + std::to_string(n) +
                           " tokens, longer than the model's context of " +
                           std::to_string(options_.context_length) + " tokens");
  }
  for (TokenId t : r.prompt) {
    if (t < 0 || t >= vocab_size_) {
      return InvalidArgument("prompt token id " + std::to_string(t) + " is out of range");
    }
  }
  const int blocks = CeilDiv(n + 1, pool_->block_size());
  if (blocks > pool_->num_blocks()) {
    return ResourceExhausted("the prompt needs " + std::to_string(blocks) +
                             " KV blocks but the whole cache has " +
                             std::to_string(pool_->num_blocks()) + "; raise --kv-mem");
  }
  return ValidateSamplingParams(r.sampling, vocab_size_);
}

Status Scheduler::Add(std::shared_ptr<RequestHandle> handle, RequestOptions request) {
  MNEME_RETURN_IF_ERROR(Validate(request));
  MNEME_ASSIGN_OR_RETURN(Sampler sampler,
                         Sampler::Create(request.sampling, vocab_size_, eog_ids_));
  // Penalties see the prompt too, as llama-server's do.
  sampler.Accept(request.prompt);
  auto e = std::make_unique<Entry>(std::move(handle), std::move(request), std::move(sampler));
  e->stats.submitted = std::chrono::steady_clock::now();
  e->stats.prompt_tokens = e->prompt_size();
  e->seq = engine::Sequence(next_seq_id_++, e->request.prompt, pool_);
  e->enqueued_step = stats_.num_steps;
  if (e->request.sampling.max_tokens == 0) {
    Finish(e.get(), FinishReason::kLength);
    return Status::Ok();
  }
  waiting_.push_back(std::move(e));
  return Status::Ok();
}

bool Scheduler::Schedule(engine::Batch* batch) {
  batch->Clear();
  ++stats_.num_steps;
  ReapCancelled();
  int budget = options_.max_batch_tokens;
  ScheduleDecodes(batch, &budget);
  SchedulePrefills(batch, &budget);
  Admit(batch, &budget);
  RemoveFinished();
  return !batch->empty();
}

void Scheduler::ScheduleDecodes(engine::Batch* batch, int* budget) {
  // Oldest admission first; a preemption victim is the youngest sequence
  // not yet in the batch (possibly the current one). Preempting removes an
  // entry from running_ at or after index i, so i only advances past
  // entries that stay.
  size_t i = 0;
  while (i < running_.size()) {
    Entry* e = running_[i].get();
    if (e->done || e->seq.num_uncomputed() != 1) {
      ++i;
      continue;
    }
    const int grow = e->seq.size() - e->seq.block_table.num_tokens();  // 0 or 1
    bool gave_up = false;
    while (!e->seq.block_table.CanAppend(grow) &&
           !EnsureFree(e->seq.block_table.BlocksNeededToAppend(grow))) {
      Entry* victim = nullptr;
      for (size_t j = running_.size(); j-- > i;) {
        if (!running_[j]->done) {
          victim = running_[j].get();
          break;
        }
      }
      if (victim != e) {
        Preempt(victim);
        continue;
      }
      bool others = false;
      for (auto& r : running_) others |= (r.get() != e && !r->done);
      if (others) {
        Preempt(e);  // running_[i] is now the next entry
      } else {
        // Alone and still no room: this sequence fills the whole pool.
        Finish(e, FinishReason::kContext);
        ++i;
      }
      gave_up = true;
      break;
    }
    if (gave_up) continue;
    Status s = e->seq.block_table.Append(grow);
    CHECK(s.ok()) << s.ToString();
    s = batch->AddRemaining(&e->seq, /*want_logits=*/true);
    CHECK(s.ok()) << s.ToString();
    e->decoding = e->stats.generated_tokens > 0;
    --*budget;
    ++i;
  }
}

void Scheduler::AddPrefillChunk(engine::Sequence* seq, engine::Batch* batch, int* budget) {
  const int end = seq->num_computed + std::min(seq->num_uncomputed(), *budget);
  Status s = batch->Add(seq, seq->num_computed, end, /*want_logits=*/end == seq->size());
  CHECK(s.ok()) << s.ToString();
  *budget -= end - seq->num_computed;
}

void Scheduler::SchedulePrefills(engine::Batch* batch, int* budget) {
  for (auto& up : running_) {
    Entry* e = up.get();
    if (*budget <= 0) return;
    if (e->done || e->seq.num_uncomputed() <= 1) continue;
    AddPrefillChunk(&e->seq, batch, budget);
  }
}

int Scheduler::InFlightPrefixLength(const Entry& e) const {
  int best = 0;
  for (const auto& r : running_) {
    if (r->done || r->seq.num_uncomputed() <= 1 ||
        r->request.cache_namespace != e.request.cache_namespace) {
      continue;
    }
    const size_t n = std::min(r->seq.tokens.size(), e.seq.tokens.size());
    size_t k = 0;
    while (k < n && r->seq.tokens[k] == e.seq.tokens[k]) ++k;
    best = std::max(best, static_cast<int>(k));
  }
  return best;
}

std::optional<size_t> Scheduler::PickNext() const {
  // The oldest waiting request, if it has waited too long; otherwise the
  // longest cached prefix among the first max_peek (ties: oldest), skipping
  // requests that would gain at least a block by waiting for a running
  // prefill of the same prefix to reach the cache (32 sessions arriving with
  // one system prompt compute it once).
  size_t oldest = 0;
  for (size_t i = 1; i < waiting_.size(); ++i) {
    if (waiting_[i]->enqueued_step < waiting_[oldest]->enqueued_step) oldest = i;
  }
  if (cache_ == nullptr ||
      stats_.num_steps - waiting_[oldest]->enqueued_step >= options_.starvation_steps) {
    return oldest;
  }
  std::optional<size_t> best;
  int best_len = -1;
  const size_t n = std::min(waiting_.size(), static_cast<size_t>(options_.max_peek));
  for (size_t i = 0; i < n; ++i) {
    const Entry& e = *waiting_[i];
    const int len =
        cache_->PeekPrefixLength(e.request.cache_namespace, e.seq.tokens, e.seq.size() - 1);
    if (len <= best_len) continue;
    if (std::min(InFlightPrefixLength(e), e.seq.size() - 1) >= len + pool_->block_size()) {
      continue;
    }
    best_len = len;
    best = i;
  }
  return best;
}

void Scheduler::Admit(engine::Batch* batch, int* budget) {
  while (*budget > 0 && !waiting_.empty() &&
         static_cast<int>(running_.size()) < options_.max_running) {
    const std::optional<size_t> next = PickNext();
    if (!next) return;  // everything worth admitting waits for a running prefill
    const size_t index = *next;
    Entry* e = waiting_[index].get();
    kv::RadixCache::Match match;
    if (cache_ != nullptr) {
      match = cache_->MatchPrefix(e->request.cache_namespace, e->seq.tokens, e->seq.size() - 1);
      cache_->Lock(match.node);
    }
    const int need = CeilDiv(e->seq.size(), pool_->block_size()) -
                     static_cast<int>(match.blocks.size());
    if (!EnsureFree(need)) {
      if (cache_ != nullptr) cache_->Unlock(match.node);
      bool any_running = false;
      for (auto& r : running_) any_running |= !r->done;
      if (any_running) return;  // wait for running sequences to finish
      // Nothing runs and the evictable cache is gone: it can never fit.
      std::unique_ptr<Entry> owned = std::move(waiting_[index]);
      waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(index));
      Finish(owned.get(), FinishReason::kError,
             ResourceExhausted("the KV cache cannot hold this sequence's " +
                               std::to_string(owned->seq.size()) + " tokens; raise --kv-mem"));
      continue;
    }
    auto table = kv::BlockTable::FromBlocks(pool_, match.blocks, match.num_tokens);
    CHECK(table.ok()) << table.status().ToString();
    e->seq.block_table = std::move(*table);
    Status s = e->seq.block_table.Append(e->seq.size() - match.num_tokens);
    CHECK(s.ok()) << s.ToString();
    e->seq.num_computed = match.num_tokens;
    e->locked = match.node;
    e->num_blocks_cached = static_cast<int>(match.blocks.size());
    e->admission = next_admission_++;
    if (!e->admitted_once) {
      e->admitted_once = true;
      e->stats.cached_tokens = match.num_tokens;
      stats_.num_prompt_tokens += e->prompt_size();
      stats_.num_tokens_cached += match.num_tokens;
    }
    by_seq_id_[e->seq.id] = e;
    running_.push_back(std::move(waiting_[index]));
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(index));

    AddPrefillChunk(&e->seq, batch, budget);
  }
}

bool Scheduler::EnsureFree(int n) {
  if (pool_->num_free() >= n) return true;
  if (cache_ != nullptr) {
    stats_.num_blocks_evicted += cache_->Evict(n - pool_->num_free());
  }
  return pool_->num_free() >= n;
}

void Scheduler::CacheComputed(Entry* e) {
  if (cache_ == nullptr) return;
  const int bs = pool_->block_size();
  const int full = e->seq.num_computed / bs;
  if (full <= e->num_blocks_cached) return;
  const auto tokens = std::span<const TokenId>(e->seq.tokens).first(static_cast<size_t>(full) * bs);
  const auto blocks =
      std::span<const kv::BlockId>(e->seq.block_table.blocks()).first(static_cast<size_t>(full));
  kv::RadixCache::InsertResult r = cache_->Insert(e->request.cache_namespace, tokens, blocks);
  for (int i = 0; i < full; ++i) {
    e->seq.block_table.ReplaceFullBlock(i, r.blocks[static_cast<size_t>(i)]);
  }
  cache_->Lock(r.node);
  if (e->locked != nullptr) cache_->Unlock(e->locked);
  e->locked = r.node;
  e->num_blocks_cached = full;
}

void Scheduler::ReleaseKv(Entry* e) {
  if (cache_ != nullptr && e->locked != nullptr) cache_->Unlock(e->locked);
  e->locked = nullptr;
  e->seq.block_table.Release();
  e->seq.num_computed = 0;
  e->num_blocks_cached = 0;
  by_seq_id_.erase(e->seq.id);
}

void Scheduler::Preempt(Entry* e) {
  CacheComputed(e);
  ReleaseKv(e);
  ++e->stats.num_preemptions;
  ++stats_.num_preemptions;
  e->enqueued_step = stats_.num_steps;
  auto it = std::find_if(running_.begin(), running_.end(),
                         [&](const std::unique_ptr<Entry>& p) { return p.get() == e; });
  CHECK(it != running_.end());
  waiting_.push_front(std::move(*it));
  running_.erase(it);
}

void Scheduler::Finish(Entry* e, FinishReason reason, Status error) {
  if (e->done) return;
  e->done = true;
  CacheComputed(e);
  ReleaseKv(e);
  e->stats.finished = std::chrono::steady_clock::now();
  ++stats_.num_requests_finished;
  TokenEvent ev;
  ev.kind = TokenEvent::Kind::kFinal;
  ev.reason = reason;
  ev.error = std::move(error);
  ev.stats = e->stats;
  e->handle->Push(std::move(ev));
}

void Scheduler::RemoveFinished() {
  std::erase_if(running_, [](const std::unique_ptr<Entry>& e) { return e->done; });
  std::erase_if(waiting_, [](const std::unique_ptr<Entry>& e) { return e->done; });
}

void Scheduler::ReapCancelled() {
  for (auto& e : running_) {
    if (e->handle->cancelled()) Finish(e.get(), FinishReason::kCancelled);
  }
  for (auto& e : waiting_) {
    if (e->handle->cancelled()) Finish(e.get(), FinishReason::kCancelled);
  }
  RemoveFinished();
}

void Scheduler::Postprocess(const engine::Batch& batch, const engine::Logits& logits) {
  int row = 0;
  for (int i = 0; i < batch.num_entries(); ++i) {
    auto it = by_seq_id_.find(batch.seqs()[static_cast<size_t>(i)]->id);
    CHECK(it != by_seq_id_.end()) << "batch entry of an unknown sequence";
    Entry* e = it->second;
    const int rows = batch.ends()[static_cast<size_t>(i)] - batch.starts()[static_cast<size_t>(i)];
    if (!e->decoding) {
      stats_.num_tokens_computed += rows;
      e->stats.computed_tokens += rows;
    }
    e->decoding = false;
    CacheComputed(e);
    if (!batch.want_logits()[static_cast<size_t>(i)]) continue;
    CHECK(row < logits.size() && logits.entry[static_cast<size_t>(row)] == i);
    const TokenId token = e->sampler.Sample(logits.Row(row++));
    e->sampler.Accept(token);
    if (e->stats.generated_tokens == 0) e->stats.first_token = std::chrono::steady_clock::now();
    const bool eog = std::find(eog_ids_.begin(), eog_ids_.end(), token) != eog_ids_.end();
    if (eog && !e->request.sampling.ignore_eos) {
      Finish(e, FinishReason::kStop);
      continue;
    }
    e->seq.tokens.push_back(token);
    ++e->stats.generated_tokens;
    ++stats_.num_tokens_generated;
    TokenEvent ev;
    ev.token = token;
    e->handle->Push(std::move(ev));
    if (e->stats.generated_tokens >= e->request.sampling.max_tokens) {
      Finish(e, FinishReason::kLength);
    } else if (e->seq.size() > options_.context_length) {
      // The new token would sit at position context_length: no room to
      // compute it and continue.
      Finish(e, FinishReason::kContext);
    }
  }
  RemoveFinished();
}

void Scheduler::FailBatch(const engine::Batch& batch, const Status& error) {
  for (engine::Sequence* seq : batch.seqs()) {
    auto it = by_seq_id_.find(seq->id);
    if (it == by_seq_id_.end()) continue;
    Entry* e = it->second;
    // Its KV is in an unspecified state: do not cache it.
    if (cache_ != nullptr && e->locked != nullptr) cache_->Unlock(e->locked);
    e->locked = nullptr;
    e->seq.num_computed = 0;  // so Finish gives nothing to the cache
    Finish(e, FinishReason::kError, error);
  }
  RemoveFinished();
}

void Scheduler::CancelAll() {
  for (auto& e : running_) Finish(e.get(), FinishReason::kCancelled);
  for (auto& e : waiting_) Finish(e.get(), FinishReason::kCancelled);
  RemoveFinished();
}

SchedulerStats Scheduler::stats() const {
  SchedulerStats s = stats_;
  s.num_waiting = num_waiting();
  s.num_running = num_running();
  s.num_blocks_total = pool_->num_blocks();
  s.num_blocks_used = pool_->num_used();
  s.num_blocks_cached = cache_ != nullptr ? cache_->num_blocks() : 0;
  return s;
}

Status Scheduler::CheckInvariants() const {
  std::vector<std::vector<kv::BlockId>> owners;
  for (const auto& e : running_) owners.push_back(e->seq.block_table.blocks());
  if (cache_ != nullptr) {
    owners.push_back(cache_->OwnedBlocks());
    MNEME_RETURN_IF_ERROR(cache_->CheckInvariants());
  }
  std::vector<std::span<const kv::BlockId>> spans(owners.begin(), owners.end());
  MNEME_RETURN_IF_ERROR(pool_->VerifyOwners(spans));
  for (const auto& e : waiting_) {
    if (e->seq.block_table.num_blocks() != 0) {
      return Internal("waiting request " + std::to_string(e->handle->id()) + " holds KV blocks");
    }
  }
  return Status::Ok();
}

}  // namespace mneme::scheduler
