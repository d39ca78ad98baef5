// Scheduler: which tokens of which requests run in the next forward step, and
// where their KV comes from. Continuous batching over the paged KV with the
// radix prefix cache (kv/radix_cache.h).
//
// One step = Schedule → ModelRunner::Forward → Postprocess (nano-vllm's loop).
// Schedule builds one Batch under a per-step row budget:
//
//   1. decodes:  one row for every running sequence that has a sampled token
//                to compute, oldest admission first. A sequence whose next
//                token needs a new block gets one: free list, else evict
//                cached blocks (LRU leaves), else preempt the youngest running
//                sequence (its computed blocks go to the cache first, so its
//                recomputation later is mostly a cache hit).
//   2. prefills: the next chunk of every admitted sequence still prefilling,
//                in admission order, while the budget lasts (chunked prefill:
//                a long prompt never stalls the running decodes).
//   3. admit:    waiting requests, longest cached prefix first (SGLang's
//                cache-aware order; a request waiting >= starvation_steps
//                steps goes first, oldest first, so nothing starves;
//                a request that shares at least one more block with a
//                running prefill than with the cache waits for that prefill
//                instead of computing the same prefix twice). An
//                admission matches the cache (whole blocks, at most prompt - 1
//                tokens: the last one is computed to get logits), locks the
//                match, then reserves blocks for the rest of the prompt
//                (check, evict if needed, then allocate — all or nothing). If
//                the blocks are not there, admission waits for running
//                sequences to finish; with nothing running, everything
//                evictable is evicted first, so the queue never deadlocks.
//
// Postprocess inserts each sequence's newly computed whole blocks into the
// cache (as prefill progresses, so concurrent requests with one system
// prompt share it), swapping its own duplicates for the cache's blocks;
// samples a token for every entry that reached its end; and finishes
// requests (EOG, max_tokens, context full, cancelled), giving their computed
// tokens — prompt and answer — to the cache so the next turn finds them.
//
// Owned by one thread (EngineService's); not thread-safe. Only the scheduler
// allocates and frees KV blocks.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/batch.h"
#include "engine/model_runner.h"
#include "engine/sequence.h"
#include "kv/block_pool.h"
#include "kv/radix_cache.h"
#include "model/sampler.h"
#include "scheduler/request.h"
#include "util/status.h"

namespace mneme::scheduler {

struct SchedulerOptions {
  int max_batch_tokens = 512;   // rows per step (decodes + prefill chunks)
  int max_running = 32;         // sequences admitted at once (<= max_batch_tokens)
  int starvation_steps = 128;   // waiting this long overrides cache-aware order
  int max_peek = 64;            // waiting requests examined per admission
  bool prefix_cache = true;     // false: every prompt is computed from scratch
  int context_length = 0;       // the model's (> 0)
};

// Counters since creation (monotonic) and current sizes.
struct SchedulerStats {
  int64_t num_steps = 0;
  int64_t num_prompt_tokens = 0;           // prompt tokens of admitted requests (first admission)
  int64_t num_tokens_cached = 0;           // of those, served from the prefix cache
  int64_t num_tokens_computed = 0;         // prefill rows run (recomputation included;
                                           // decode steps are not counted)
  int64_t num_tokens_generated = 0;        // tokens emitted
  int64_t num_preemptions = 0;
  int64_t num_blocks_evicted = 0;          // released by cache eviction
  int64_t num_requests_finished = 0;
  int num_waiting = 0;
  int num_running = 0;
  int num_blocks_total = 0;
  int num_blocks_used = 0;                 // by sequences or the cache
  int num_blocks_cached = 0;               // held by the cache
};

class Scheduler {
 public:
  // The pool must outlive the scheduler. `eog_ids` end generation (unless a
  // request sets ignore_eos).
  Scheduler(const SchedulerOptions& options, kv::BlockPool* pool, int32_t vocab_size,
            std::vector<TokenId> eog_ids);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  static Status ValidateOptions(const SchedulerOptions& options);

  // Whether a request can ever run: a non-empty prompt within the context,
  // whose prompt and first token fit in the whole pool, valid sampling
  // parameters. Reads only immutable state: safe from any thread.
  Status Validate(const RequestOptions& request) const;

  // Validates and queues. On error nothing is queued and no event is pushed
  // (the caller reports the error). max_tokens == 0 finishes at once.
  Status Add(std::shared_ptr<RequestHandle> handle, RequestOptions request);

  // Builds the next step (Clear()s `batch` first). Finishes cancelled
  // requests. False when there is nothing to run.
  bool Schedule(engine::Batch* batch);
  // After Forward(batch) succeeded with `logits`.
  void Postprocess(const engine::Batch& batch, const engine::Logits& logits);
  // After Forward(batch) failed: its requests finish with kError.
  void FailBatch(const engine::Batch& batch, const Status& error);
  // Finishes every request with kCancelled (shutdown).
  void CancelAll();

  bool idle() const { return waiting_.empty() && running_.empty(); }
  int num_waiting() const { return static_cast<int>(waiting_.size()); }
  int num_running() const { return static_cast<int>(running_.size()); }
  SchedulerStats stats() const;
  kv::RadixCache* cache() { return cache_.get(); }  // null when prefix_cache is off

  // Every block is owned exactly as recorded: running block tables plus the
  // cache (BlockPool::VerifyOwners), and the cache's own invariants.
  Status CheckInvariants() const;

 private:
  struct Entry;

  void ScheduleDecodes(engine::Batch* batch, int* budget);
  void SchedulePrefills(engine::Batch* batch, int* budget);
  // The next prefill chunk of `seq` (as many uncomputed tokens as the budget
  // allows; logits when it reaches the end), taken from the budget.
  static void AddPrefillChunk(engine::Sequence* seq, engine::Batch* batch, int* budget);
  void Admit(engine::Batch* batch, int* budget);
  // Index into waiting_ of the request to admit next, if any.
  std::optional<size_t> PickNext() const;
  // Longest common prefix of e's tokens with a running sequence (same
  // namespace) that is still prefilling.
  int InFlightPrefixLength(const Entry& e) const;
  // Frees `n` blocks from the cache if needed; true if n blocks are free.
  bool EnsureFree(int n);
  void Preempt(Entry* e);
  // Gives e's newly computed whole blocks to the cache and relocks.
  void CacheComputed(Entry* e);
  void ReleaseKv(Entry* e);
  void Finish(Entry* e, FinishReason reason, Status error = Status::Ok());
  void RemoveFinished();
  void ReapCancelled();

  SchedulerOptions options_;
  kv::BlockPool* pool_;
  int32_t vocab_size_;
  std::vector<TokenId> eog_ids_;
  std::unique_ptr<kv::RadixCache> cache_;

  std::deque<std::unique_ptr<Entry>> waiting_;  // arrival order (preempted go back to the front)
  std::vector<std::unique_ptr<Entry>> running_;  // admission order: oldest first
  std::unordered_map<int64_t, Entry*> by_seq_id_;
  int64_t next_seq_id_ = 1;
  int64_t next_admission_ = 0;
  SchedulerStats stats_;
};

}  // namespace mneme::scheduler
