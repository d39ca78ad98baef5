// Test helpers for the engine (test-only, header-only): loading tiny and
// real models, a KV pool + runner harness, and running one sequence.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "engine/model_runner.h"
#include "gguf/gguf.h"
#include "kv/block_pool.h"
#include "model/model_config.h"
#include "model/tiny_model_test_util.h"
#include "model/weights.h"
#include "util/thread_pool.h"

namespace mneme::engine::testing {

struct Loaded {
  gguf::GgufFile file;
  model::ModelConfig config;
  model::ModelWeights weights;
};

inline Result<std::unique_ptr<Loaded>> LoadFile(gguf::GgufFile file) {
  MNEME_ASSIGN_OR_RETURN(model::ModelConfig config, model::ModelConfig::FromGguf(file));
  MNEME_ASSIGN_OR_RETURN(model::ModelWeights weights, model::ModelWeights::Load(file, config));
  return std::make_unique<Loaded>(Loaded{std::move(file), config, std::move(weights)});
}

inline Result<std::unique_ptr<Loaded>> LoadTiny(const model::testing::TinyModel& m) {
  MNEME_ASSIGN_OR_RETURN(gguf::GgufFile file, m.Build());
  return LoadFile(std::move(file));
}

inline Result<std::unique_ptr<Loaded>> LoadStories() {
  MNEME_ASSIGN_OR_RETURN(gguf::GgufFile file,
                         gguf::GgufFile::Open(MNEME_SHARED_DIR "/models/stories260K.gguf"));
  return LoadFile(std::move(file));
}

// Sets every matrix (2-D tensor) of a tiny model to `type`.
inline void SetMatrixType(model::testing::TinyModel* m, gguf::TensorType type) {
  for (model::testing::TinyTensor& t : m->tensors) {
    if (t.shape.size() == 2) t.type = type;
  }
}

// A KV pool, a thread pool and a runner for one loaded model. By default
// every product and attention call is split over the threads (tiny models
// would otherwise never take the parallel paths).
struct Harness {
  std::unique_ptr<kv::BlockPool> pool;
  std::unique_ptr<ThreadPool> threads;
  std::unique_ptr<ModelRunner> runner;

  static std::unique_ptr<Harness> Make(const Loaded& m, kv::KvDType dtype, int num_blocks = 64,
                                       int num_threads = 2, int block_size = 16,
                                       int64_t min_parallel_macs = 0) {
    auto h = std::make_unique<Harness>();
    auto pool =
        kv::BlockPool::CreateWithBlocks(KvShapeFor(m.config, dtype, block_size), num_blocks);
    EXPECT_TRUE(pool.ok()) << pool.status().ToString();
    if (!pool.ok()) return nullptr;
    h->pool = std::move(*pool);
    h->threads = std::make_unique<ThreadPool>(num_threads);
    auto runner = ModelRunner::Create(m.config, m.weights, h->pool.get(), h->threads.get(),
                                      {.min_parallel_macs = min_parallel_macs});
    EXPECT_TRUE(runner.ok()) << runner.status().ToString();
    if (!runner.ok()) return nullptr;
    h->runner = std::move(*runner);
    return h;
  }

  // Appends room for the uncomputed tokens of `seq`, runs them in chunks of
  // at most `chunk` tokens and returns the last chunk's logits.
  Result<std::vector<float>> RunAll(Sequence* seq, int chunk = 1 << 30) {
    MNEME_RETURN_IF_ERROR(seq->block_table.Append(seq->size() - seq->block_table.num_tokens()));
    Logits logits;
    while (seq->num_uncomputed() > 0) {
      Batch batch;
      const int end = std::min(seq->size(), seq->num_computed + chunk);
      MNEME_RETURN_IF_ERROR(batch.Add(seq, seq->num_computed, end, true));
      MNEME_RETURN_IF_ERROR(runner->Forward(batch, &logits));
    }
    return std::vector<float>(logits.data.begin(), logits.data.end());
  }
};

inline TokenId Argmax(std::span<const float> logits) {
  return static_cast<TokenId>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// max |a - b| / (max(b) - min(b)): a difference relative to the logit range.
inline double RelativeMaxDiff(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
  }
  const auto [lo, hi] = std::minmax_element(b.begin(), b.end());
  return diff / std::max(1e-30, static_cast<double>(*hi - *lo));
}

}  // namespace mneme::engine::testing
