// `mneme info -m FILE.gguf`: what is in a GGUF file, at a glance.
//
// Prints the header facts, the architecture's hyperparameters, a tensor
// summary (count per type, parameters, bytes) and the tokenizer facts.
// --metadata lists every key with its value, --tensors every tensor, --json
// prints everything (full arrays included) as one JSON object for tools and
// the oracle test. A file the reader refuses prints "mneme info: <why>" to
// stderr and exits 1.
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "app/commands.h"
#include "gguf/gguf.h"

namespace mneme::app {
namespace {

struct InfoOptions {
  std::string model;
  bool metadata = false;
  bool tensors = false;
  bool json = false;
};

std::string WithUnit(uint64_t n, double unit, const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llu (%.2f %s)", static_cast<unsigned long long>(n),
                static_cast<double>(n) / unit, suffix);
  return buf;
}

void PrintField(std::string_view label, std::string_view value) {
  std::printf("%-34.*s %.*s\n", static_cast<int>(label.size()), label.data(),
              static_cast<int>(value.size()), value.data());
}

// "(not set)" for a missing key, else the value as the file stores it.
std::string Describe(const gguf::GgufFile& f, const std::string& key) {
  const gguf::Value* v = f.Find(key);
  if (v == nullptr) return "(not set)";
  if (auto s = v->AsString()) return std::string(*s);
  return v->DebugString();
}

void PrintHyperparameters(const gguf::GgufFile& f, const std::string& arch) {
  std::printf("hyperparameters (%s.*):\n", arch.c_str());
  const char* always[] = {"context_length",      "embedding_length",     "block_count",
                          "feed_forward_length", "attention.head_count", "attention.head_count_kv"};
  const char* if_present[] = {"attention.key_length", "attention.value_length"};
  const char* more[] = {"rope.dimension_count", "rope.freq_base",
                        "attention.layer_norm_rms_epsilon", "vocab_size"};
  for (const char* k : always) PrintField(std::string("  ") + k, Describe(f, arch + "." + k));
  for (const char* k : if_present) {
    if (f.Find(arch + "." + k) != nullptr)
      PrintField(std::string("  ") + k, Describe(f, arch + "." + k));
  }
  for (const char* k : more) PrintField(std::string("  ") + k, Describe(f, arch + "." + k));
}

void PrintTensorSummary(const gguf::GgufFile& f) {
  std::map<std::string_view, size_t> per_type;
  uint64_t params = 0;
  uint64_t bytes = 0;
  for (const gguf::TensorInfo& t : f.tensors()) {
    per_type[gguf::FindTensorTypeInfo(t.type)->name]++;
    params += t.num_elements;
    bytes += t.num_bytes;
  }
  std::string types;
  for (const auto& [name, count] : per_type) {
    types += (types.empty() ? "" : ", ") + std::string(name) + ": " + std::to_string(count);
  }
  std::string line = std::to_string(f.tensors().size());
  if (!types.empty()) line += " (" + types + ")";
  PrintField("tensors", line);
  PrintField("parameters", WithUnit(params, 1e6, "M"));
  PrintField("tensor bytes", WithUnit(bytes, 1024.0 * 1024.0, "MiB"));
}

void PrintTokenizer(const gguf::GgufFile& f) {
  PrintField("tokenizer model", Describe(f, "tokenizer.ggml.model"));
  PrintField("tokenizer pre", Describe(f, "tokenizer.ggml.pre"));
  const gguf::Value* tokens = f.Find("tokenizer.ggml.tokens");
  const gguf::Array* a = tokens == nullptr ? nullptr : tokens->AsArray();
  PrintField("vocabulary size",
             a == nullptr ? "(not set)" : std::to_string(a->items.size()) + " tokens");
  PrintField("bos token id", Describe(f, "tokenizer.ggml.bos_token_id"));
  PrintField("eos token id", Describe(f, "tokenizer.ggml.eos_token_id"));
  const gguf::Value* tmpl = f.Find("tokenizer.chat_template");
  std::optional<std::string_view> s = tmpl == nullptr ? std::nullopt : tmpl->AsString();
  PrintField("chat template", s ? "yes (" + std::to_string(s->size()) + " bytes)" : "no");
}

void PrintMetadata(const gguf::GgufFile& f) {
  std::printf("\nmetadata (%zu keys):\n", f.metadata().size());
  for (const auto& [key, value] : f.metadata()) {
    std::string type(gguf::ValueTypeName(value.type));
    std::printf("  %-50.*s %-8s %s\n", static_cast<int>(key.size()), key.data(), type.c_str(),
                value.DebugString().c_str());
  }
}

void PrintTensors(const gguf::GgufFile& f) {
  std::printf("\ntensors (%zu):\n", f.tensors().size());
  for (const gguf::TensorInfo& t : f.tensors()) {
    std::string shape;
    for (uint64_t ne : t.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(ne);
    std::printf("  %-40.*s %-8s [%s] offset %llu, %llu bytes\n", static_cast<int>(t.name.size()),
                t.name.data(), std::string(gguf::FindTensorTypeInfo(t.type)->name).c_str(),
                shape.c_str(), static_cast<unsigned long long>(t.offset),
                static_cast<unsigned long long>(t.num_bytes));
  }
}

nlohmann::json ToJson(const gguf::Value& v) {
  switch (v.type) {
    case gguf::ValueType::kFloat32:
    case gguf::ValueType::kFloat64: return *v.AsFloat();
    case gguf::ValueType::kBool: return *v.AsBool();
    case gguf::ValueType::kString: return std::string(*v.AsString());
    case gguf::ValueType::kArray: {
      nlohmann::json items = nlohmann::json::array();
      for (const gguf::Value& item : v.AsArray()->items) items.push_back(ToJson(item));
      return items;
    }
    default:
      if (auto u = v.AsUint()) return *u;
      return *v.AsInt();
  }
}

// Everything the reader knows, with full arrays: {file, version, alignment,
// data_offset, file_size, metadata: [{key, type, element_type?, value}],
// tensors: [{name, type, shape, offset, num_elements, num_bytes}]}.
void PrintJson(const gguf::GgufFile& f) {
  nlohmann::json out;
  out["file"] = f.name();
  out["version"] = f.version();
  out["alignment"] = f.alignment();
  out["data_offset"] = f.data_offset();
  out["file_size"] = f.file_size();
  nlohmann::json& metadata = out["metadata"] = nlohmann::json::array();
  for (const auto& [key, value] : f.metadata()) {
    nlohmann::json kv;
    kv["key"] = std::string(key);
    kv["type"] = std::string(gguf::ValueTypeName(value.type));
    if (const gguf::Array* a = value.AsArray()) {
      kv["element_type"] = std::string(gguf::ValueTypeName(a->element_type));
    }
    kv["value"] = ToJson(value);
    metadata.push_back(std::move(kv));
  }
  nlohmann::json& tensors = out["tensors"] = nlohmann::json::array();
  for (const gguf::TensorInfo& t : f.tensors()) {
    tensors.push_back({{"name", std::string(t.name)},
                       {"type", std::string(gguf::FindTensorTypeInfo(t.type)->name)},
                       {"type_id", static_cast<uint32_t>(t.type)},
                       {"shape", t.shape},
                       {"offset", t.offset},
                       {"num_elements", t.num_elements},
                       {"num_bytes", t.num_bytes}});
  }
  // Strings from the file need not be UTF-8; replace what is not.
  std::string text = out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
}

int RunInfo(const InfoOptions& opt) {
  Result<gguf::GgufFile> opened = gguf::GgufFile::Open(opt.model);
  if (!opened.ok()) {
    std::fprintf(stderr, "mneme info: %s\n", opened.status().message().c_str());
    return 1;
  }
  const gguf::GgufFile& f = *opened;
  if (opt.json) {
    PrintJson(f);
    return 0;
  }
  PrintField("file", f.name());
  PrintField("gguf version", std::to_string(f.version()));
  PrintField("file size", WithUnit(f.file_size(), 1024.0 * 1024.0, "MiB"));
  PrintField("alignment", std::to_string(f.alignment()));
  PrintField("tensor data offset", std::to_string(f.data_offset()));
  PrintField("metadata keys", std::to_string(f.metadata().size()));
  std::string arch = Describe(f, "general.architecture");
  PrintField("architecture", arch);
  PrintField("name", Describe(f, "general.name"));
  if (f.Find("general.architecture") != nullptr) PrintHyperparameters(f, arch);
  PrintTensorSummary(f);
  PrintTokenizer(f);
  if (opt.metadata) PrintMetadata(f);
  if (opt.tensors) PrintTensors(f);
  return 0;
}

}  // namespace

void AddInfoCommand(CLI::App& app) {
  auto opt = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "info", "Summarize a GGUF file: header, hyperparameters, tensors, tokenizer");
  cmd->add_option("-m,--model", opt->model, "GGUF file")->required();
  cmd->add_flag("--metadata", opt->metadata, "Also list every metadata key and value");
  cmd->add_flag("--tensors", opt->tensors, "Also list every tensor (type, shape, offset, bytes)");
  cmd->add_flag("--json", opt->json, "Print everything, full arrays included, as one JSON object");
  cmd->callback([opt] { SetExitCode(RunInfo(*opt)); });
}

}  // namespace mneme::app
