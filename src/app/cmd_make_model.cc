// `mneme make-model`: writes a seeded synthetic Llama-family GGUF model.
//
//   mneme make-model --arch llama|qwen2|qwen3 --type f32|f16|bf16|q8_0|q4_0|
//       q4_k|q5_k|q6_k --vocab VOCAB.gguf [--dim --layers --heads --kv-heads
//       --ff --ctx --tied --successor] --seed S -o OUT.gguf
//
// Tests and benchmarks make their models with it, so no large model file is
// committed. The recipe is in src/model/synthetic_model.h and docs/engine.md.
// Bad flags print "mneme make-model: <why>" and exit 1.
#include <cstdio>
#include <memory>
#include <string>

#include "app/commands.h"
#include "model/synthetic_model.h"

namespace mneme::app {
namespace {

struct MakeModelOptions {
  model::SyntheticModelOptions model;
  std::string type = "f16";
  std::string vocab;
  std::string out;
};

int RunMakeModel(MakeModelOptions& opt) {
  Result<kernels::DType> type = model::ParseSyntheticType(opt.type);
  Status s = type.ok() ? Status::Ok() : type.status();
  if (s.ok()) {
    opt.model.type = *type;
    s = model::WriteSyntheticModel(opt.model, opt.vocab, opt.out);
  }
  if (!s.ok()) {
    std::fprintf(stderr, "mneme make-model: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

void AddMakeModelCommand(CLI::App& app) {
  auto opt = std::make_shared<MakeModelOptions>();
  model::SyntheticModelOptions& m = opt->model;
  CLI::App* cmd = app.add_subcommand(
      "make-model", "Write a synthetic model (seeded random weights) that llama.cpp can load");
  cmd->add_option("--arch", m.arch, "llama, qwen2 or qwen3")->capture_default_str();
  cmd->add_option("--type", opt->type, "Matrix type: f32 f16 bf16 q8_0 q4_0 q4_k q5_k q6_k")
      ->capture_default_str();
  cmd->add_option("--vocab", opt->vocab, "GGUF file whose tokenizer.* keys are copied")
      ->required();
  cmd->add_option("--dim", m.dim, "Embedding size")->capture_default_str();
  cmd->add_option("--layers", m.layers, "Transformer blocks")->capture_default_str();
  cmd->add_option("--heads", m.heads, "Attention heads")->capture_default_str();
  cmd->add_option("--kv-heads", m.kv_heads, "Key/value heads (GQA)")->capture_default_str();
  cmd->add_option("--ff", m.ff, "Feed-forward size")->capture_default_str();
  cmd->add_option("--ctx", m.ctx, "Context length")->capture_default_str();
  cmd->add_option("--rope-base", m.rope_freq_base, "RoPE frequency base")->capture_default_str();
  cmd->add_option("--successor", m.successor,
                  "Logit bonus scale of each token's seeded successor (0: purely random)")
      ->capture_default_str();
  cmd->add_flag("--tied", m.tied, "No output.weight (tied to token_embd)");
  cmd->add_option("--seed", m.seed, "Random seed")->capture_default_str();
  cmd->add_option("-o,--output", opt->out, "Output GGUF file")->required();
  cmd->callback([opt] { SetExitCode(RunMakeModel(*opt)); });
}

}  // namespace mneme::app
