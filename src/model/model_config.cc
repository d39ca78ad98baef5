// ModelConfig::FromGguf: metadata keys -> hyperparameters (see model_config.h).
#include "model/model_config.h"

#include <cmath>
#include <optional>
#include <sstream>

namespace mneme::model {
namespace {

// Bounds that keep every product of two hyperparameters far from overflow and
// turn absurd metadata into a clear error instead of a giant allocation. The
// tensor shapes are checked against these values afterwards anyway.
constexpr uint64_t kMaxDim = 1 << 20;
constexpr uint64_t kMaxLayers = 4096;
constexpr uint64_t kMaxHeads = 4096;
constexpr uint64_t kMaxVocab = 1 << 24;
constexpr uint64_t kMaxContext = 1 << 24;

Status KeyError(const gguf::GgufFile& file, std::string_view key, const std::string& what) {
  return DataLoss(file.name() + ": key '" + std::string(key) + "' " + what);
}

// An optional unsigned key; nullopt when absent.
Result<std::optional<uint64_t>> FindUint(const gguf::GgufFile& file, const std::string& key) {
  if (file.Find(key) == nullptr) return std::optional<uint64_t>();
  MNEME_ASSIGN_OR_RETURN(uint64_t v, file.GetUint(key));
  return std::optional<uint64_t>(v);
}

// A per-layer hyperparameter: a scalar, or (as llama.cpp's get_key_or_arr
// allows) an array with one value per layer, accepted only if they are all
// equal. nullopt when absent.
Result<std::optional<uint64_t>> FindUintOrLayerArray(const gguf::GgufFile& file,
                                                     const std::string& key, uint64_t num_layers) {
  const gguf::Value* value = file.Find(key);
  if (value == nullptr) return std::optional<uint64_t>();
  const gguf::Array* array = value->AsArray();
  if (array == nullptr) return FindUint(file, key);
  if (array->items.size() != num_layers) {
    return KeyError(file, key,
                    "has " + std::to_string(array->items.size()) + " per-layer values for " +
                        std::to_string(num_layers) + " layers");
  }
  std::optional<uint64_t> first;
  for (const gguf::Value& item : array->items) {
    std::optional<uint64_t> v = item.AsUint();
    if (!v) return KeyError(file, key, "has a per-layer value that is not an unsigned integer");
    if (first && *first != *v) {
      return Unimplemented(file.name() + ": key '" + key +
                           "' differs between layers; per-layer sizes are not supported");
    }
    first = v;
  }
  if (!first) return KeyError(file, key, "is an empty array");
  return first;
}

Result<uint64_t> RequireInRange(const gguf::GgufFile& file, const std::string& key,
                                std::optional<uint64_t> v, uint64_t max) {
  if (!v) return NotFound(file.name() + ": missing required key '" + key + "'");
  if (*v == 0 || *v > max) {
    return KeyError(
        file, key, "= " + std::to_string(*v) + " is out of range [1, " + std::to_string(max) + "]");
  }
  return *v;
}

Result<std::optional<double>> FindFloat(const gguf::GgufFile& file, const std::string& key) {
  if (file.Find(key) == nullptr) return std::optional<double>();
  MNEME_ASSIGN_OR_RETURN(double v, file.GetFloat(key));
  if (!std::isfinite(v)) return KeyError(file, key, "is not a finite number");
  return std::optional<double>(v);
}

}  // namespace

std::string_view ArchName(Arch arch) {
  switch (arch) {
    case Arch::kLlama: return "llama";
    case Arch::kQwen2: return "qwen2";
    case Arch::kQwen3: return "qwen3";
  }
  return "?";
}

std::string LayerTensorName(int64_t layer, std::string_view suffix) {
  return "blk." + std::to_string(layer) + "." + std::string(suffix);
}

Result<ModelConfig> ModelConfig::FromGguf(const gguf::GgufFile& file) {
  ModelConfig c;
  MNEME_ASSIGN_OR_RETURN(std::string_view arch, file.GetString("general.architecture"));
  if (arch == "llama") {
    c.arch = Arch::kLlama;
    c.rope_type = RopeType::kNormal;
  } else if (arch == "qwen2") {
    c.arch = Arch::kQwen2;
    c.rope_type = RopeType::kNeox;
  } else if (arch == "qwen3") {
    c.arch = Arch::kQwen3;
    c.rope_type = RopeType::kNeox;
  } else {
    return Unimplemented(file.name() + ": model architecture '" + std::string(arch) +
                         "' is not supported (supported: llama, qwen2, qwen3)");
  }
  const std::string p = std::string(arch) + ".";

  MNEME_ASSIGN_OR_RETURN(auto n_expert, FindUint(file, p + "expert_count"));
  if (n_expert && *n_expert > 0) {
    return Unimplemented(file.name() + ": mixture-of-experts models (" + p +
                         "expert_count = " + std::to_string(*n_expert) + ") are not supported");
  }

  MNEME_ASSIGN_OR_RETURN(auto ctx, FindUint(file, p + "context_length"));
  MNEME_ASSIGN_OR_RETURN(c.context_length,
                         RequireInRange(file, p + "context_length", ctx, kMaxContext));
  MNEME_ASSIGN_OR_RETURN(auto dim, FindUint(file, p + "embedding_length"));
  MNEME_ASSIGN_OR_RETURN(c.dim, RequireInRange(file, p + "embedding_length", dim, kMaxDim));
  MNEME_ASSIGN_OR_RETURN(auto layers, FindUint(file, p + "block_count"));
  MNEME_ASSIGN_OR_RETURN(c.num_layers, RequireInRange(file, p + "block_count", layers, kMaxLayers));
  const uint64_t n_layer = static_cast<uint64_t>(c.num_layers);

  MNEME_ASSIGN_OR_RETURN(auto ff, FindUintOrLayerArray(file, p + "feed_forward_length", n_layer));
  MNEME_ASSIGN_OR_RETURN(c.ffn_dim,
                         RequireInRange(file, p + "feed_forward_length", ff, kMaxDim * 4));
  MNEME_ASSIGN_OR_RETURN(auto heads,
                         FindUintOrLayerArray(file, p + "attention.head_count", n_layer));
  MNEME_ASSIGN_OR_RETURN(c.num_heads,
                         RequireInRange(file, p + "attention.head_count", heads, kMaxHeads));
  MNEME_ASSIGN_OR_RETURN(auto kv_heads,
                         FindUintOrLayerArray(file, p + "attention.head_count_kv", n_layer));
  if (!kv_heads) kv_heads = static_cast<uint64_t>(c.num_heads);
  MNEME_ASSIGN_OR_RETURN(c.num_kv_heads,
                         RequireInRange(file, p + "attention.head_count_kv", kv_heads, kMaxHeads));
  if (c.num_heads % c.num_kv_heads != 0) {
    return DataLoss(file.name() + ": " + std::to_string(c.num_heads) +
                    " attention heads cannot be shared by " + std::to_string(c.num_kv_heads) +
                    " key/value heads (head_count must be a multiple of head_count_kv)");
  }

  // Head sizes default to dim / heads (llama.cpp's integer division).
  const uint64_t default_head = static_cast<uint64_t>(c.dim / c.num_heads);
  MNEME_ASSIGN_OR_RETURN(auto key_length, FindUint(file, p + "attention.key_length"));
  MNEME_ASSIGN_OR_RETURN(auto value_length, FindUint(file, p + "attention.value_length"));
  if (!key_length) key_length = default_head;
  if (!value_length) value_length = default_head;
  MNEME_ASSIGN_OR_RETURN(c.head_dim,
                         RequireInRange(file, p + "attention.key_length", key_length, kMaxDim / 4));
  if (*value_length != *key_length) {
    return Unimplemented(file.name() + ": key and value head sizes differ (" +
                         std::to_string(*key_length) + " vs " + std::to_string(*value_length) +
                         "); not supported");
  }
  if (c.head_dim * c.num_heads > static_cast<int64_t>(kMaxDim)) {
    return DataLoss(file.name() + ": " + std::to_string(c.num_heads) + " heads of " +
                    std::to_string(c.head_dim) + " dims exceed the supported width");
  }

  MNEME_ASSIGN_OR_RETURN(auto rope_dims, FindUint(file, p + "rope.dimension_count"));
  if (!rope_dims) rope_dims = static_cast<uint64_t>(c.head_dim);
  if (*rope_dims % 2 != 0 || *rope_dims > static_cast<uint64_t>(c.head_dim)) {
    return KeyError(file, p + "rope.dimension_count",
                    "= " + std::to_string(*rope_dims) + " must be even and at most the head size " +
                        std::to_string(c.head_dim));
  }
  // llama.cpp insists on full rotation for llama.
  if (c.arch == Arch::kLlama && *rope_dims != static_cast<uint64_t>(c.head_dim)) {
    return KeyError(file, p + "rope.dimension_count",
                    "= " + std::to_string(*rope_dims) + " must equal the head size " +
                        std::to_string(c.head_dim) + " for llama");
  }
  c.rope_dims = static_cast<int64_t>(*rope_dims);

  MNEME_ASSIGN_OR_RETURN(auto eps, FindFloat(file, p + "attention.layer_norm_rms_epsilon"));
  if (!eps) {
    return NotFound(file.name() + ": missing required key '" + p +
                    "attention.layer_norm_rms_epsilon'");
  }
  if (*eps < 0) return KeyError(file, p + "attention.layer_norm_rms_epsilon", "is negative");
  c.rms_eps = static_cast<float>(*eps);

  MNEME_ASSIGN_OR_RETURN(auto base, FindFloat(file, p + "rope.freq_base"));
  if (base) {
    if (*base <= 0) return KeyError(file, p + "rope.freq_base", "must be positive");
    c.rope_freq_base = static_cast<float>(*base);
  }

  // RoPE scaling: llama.cpp defaults the type to "linear"; the factor (or the
  // older rope.scale_linear) divides positions; "none" forces no scaling.
  std::string_view scaling = "linear";
  if (file.Find(p + "rope.scaling.type") != nullptr) {
    MNEME_ASSIGN_OR_RETURN(scaling, file.GetString(p + "rope.scaling.type"));
  }
  if (scaling != "linear" && scaling != "none") {
    return Unimplemented(file.name() + ": RoPE scaling type '" + std::string(scaling) + "' (" + p +
                         "rope.scaling.type) is not supported (supported: none, linear)");
  }
  MNEME_ASSIGN_OR_RETURN(auto factor, FindFloat(file, p + "rope.scaling.factor"));
  std::string factor_key = p + "rope.scaling.factor";
  if (!factor) {
    factor_key = p + "rope.scale_linear";
    MNEME_ASSIGN_OR_RETURN(factor, FindFloat(file, factor_key));
  }
  if (factor && *factor < 0) return KeyError(file, factor_key, "is negative");
  if (factor && *factor != 0 && scaling == "linear") {
    c.rope_freq_scale = static_cast<float>(1.0 / *factor);
  }

  // Vocabulary size: the tokenizer's token count, as llama.cpp sizes the
  // embedding from the vocab.
  if (const gguf::Value* tokens = file.Find("tokenizer.ggml.tokens");
      tokens != nullptr && tokens->AsArray() != nullptr) {
    c.vocab_size = static_cast<int64_t>(tokens->AsArray()->items.size());
  } else {
    MNEME_ASSIGN_OR_RETURN(auto vocab, FindUint(file, p + "vocab_size"));
    if (!vocab) {
      if (const gguf::TensorInfo* embd = file.FindTensor(kTokenEmbdName);
          embd != nullptr && embd->shape.size() == 2) {
        vocab = embd->shape[1];
      }
    }
    if (!vocab) {
      return NotFound(file.name() +
                      ": cannot tell the vocabulary size (no tokenizer.ggml.tokens, " + p +
                      "vocab_size or token_embd.weight)");
    }
    c.vocab_size = static_cast<int64_t>(*vocab);
  }
  if (c.vocab_size <= 0 || static_cast<uint64_t>(c.vocab_size) > kMaxVocab) {
    return DataLoss(file.name() + ": vocabulary size " + std::to_string(c.vocab_size) +
                    " is out of range [1, " + std::to_string(kMaxVocab) + "]");
  }

  c.tied_embeddings = file.FindTensor(kOutputName) == nullptr;
  c.has_rope_freqs = file.FindTensor(kRopeFreqsName) != nullptr;
  if (c.has_rope_freqs && c.arch != Arch::kLlama) {
    return Unimplemented(file.name() + ": " + std::string(kRopeFreqsName) +
                         " (RoPE frequency factors) is only supported for llama");
  }
  switch (c.arch) {
    case Arch::kLlama:
      c.has_qkv_bias = file.FindTensor(LayerTensorName(0, "attn_q.bias")) != nullptr;
      c.has_output_bias = file.FindTensor(LayerTensorName(0, "attn_output.bias")) != nullptr;
      break;
    case Arch::kQwen2: c.has_qkv_bias = true; break;
    case Arch::kQwen3: c.has_qk_norm = true; break;
  }
  return c;
}

std::string ModelConfig::DebugString() const {
  std::ostringstream s;
  s << "arch = " << ArchName(arch) << "\n"
    << "dim = " << dim << "\n"
    << "num_layers = " << num_layers << "\n"
    << "num_heads = " << num_heads << "\n"
    << "num_kv_heads = " << num_kv_heads << "\n"
    << "head_dim = " << head_dim << "\n"
    << "ffn_dim = " << ffn_dim << "\n"
    << "vocab_size = " << vocab_size << "\n"
    << "context_length = " << context_length << "\n"
    << "rms_eps = " << rms_eps << "\n"
    << "rope_type = " << (rope_type == RopeType::kNormal ? "normal" : "neox") << "\n"
    << "rope_dims = " << rope_dims << "\n"
    << "rope_freq_base = " << rope_freq_base << "\n"
    << "rope_freq_scale = " << rope_freq_scale << "\n"
    << "tied_embeddings = " << tied_embeddings << "\n"
    << "has_rope_freqs = " << has_rope_freqs << "\n"
    << "has_qkv_bias = " << has_qkv_bias << "\n"
    << "has_output_bias = " << has_output_bias << "\n"
    << "has_qk_norm = " << has_qk_norm << "\n";
  return s.str();
}

}  // namespace mneme::model
