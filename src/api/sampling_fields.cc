// Shared sampling fields -> SamplingParams (see sampling_fields.h).
#include "api/sampling_fields.h"

#include <cstdint>
#include <limits>
#include <string>

namespace mneme::api {

namespace {

void ReadSeed(const FieldReader& r, SamplingParams* params) {
  const Json* v = r.Find("seed");
  if (v == nullptr) return;
  if (v->is_number_unsigned()) {
    params->seed = v->get<uint64_t>();
    return;
  }
  auto n = r.IntegerValue(*v, r.PathOf("seed"), std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max());
  if (n) params->seed = static_cast<uint64_t>(*n);
}

void ReadStop(const FieldReader& r, SamplingParams* params) {
  const Json* v = r.Find("stop");
  if (v == nullptr) return;
  const std::string path = r.PathOf("stop");
  std::vector<std::string> stop;
  auto add = [&](const std::string& s, const std::string& at) {
    if (s.empty()) return;  // an empty stop string would end every generation at once
    if (s.size() > static_cast<size_t>(kMaxStopBytes)) {
      r.Fail(at, "Invalid '" + at + "': a stop string may be at most " +
                     std::to_string(kMaxStopBytes) + " bytes long.");
      return;
    }
    stop.push_back(s);
  };
  if (v->is_string()) {
    add(v->get_ref<const std::string&>(), path);
  } else if (v->is_array()) {
    if (v->size() > static_cast<size_t>(kMaxStopStrings)) {
      r.Fail(path, "Invalid '" + path + "': at most " + std::to_string(kMaxStopStrings) +
                       " stop strings are allowed, but got " + std::to_string(v->size()) + ".");
      return;
    }
    for (size_t i = 0; i < v->size() && r.ok(); ++i) {
      std::string at = IndexPath(path, i);
      if (auto s = r.StringValue((*v)[i], at)) add(*s, at);
    }
  } else {
    r.Fail(path,
           "Invalid type for '" + path + "': expected a string or an array of strings, but got " +
               std::string(JsonKindWithArticle(*v)) + " instead.",
           "invalid_type");
  }
  if (r.ok()) params->stop = std::move(stop);
}

// A token id written as a decimal string: digits only, no sign, fits int32.
std::optional<int32_t> ParseTokenIdKey(const std::string& key) {
  if (key.empty() || key.size() > 10) return std::nullopt;
  int64_t n = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  if (n > std::numeric_limits<int32_t>::max()) return std::nullopt;
  return static_cast<int32_t>(n);
}

void ReadLogitBias(const FieldReader& r, int32_t vocab_size, SamplingParams* params) {
  const Json* v = r.Object("logit_bias");
  if (v == nullptr) return;
  const std::string path = r.PathOf("logit_bias");
  if (v->size() > static_cast<size_t>(kMaxLogitBiasEntries)) {
    r.Fail(path, "Invalid '" + path + "': at most " + std::to_string(kMaxLogitBiasEntries) +
                     " entries are allowed, but got " + std::to_string(v->size()) + ".");
    return;
  }
  std::unordered_map<TokenId, float> bias;
  for (const auto& [key, value] : v->items()) {
    std::string at = FieldPath(path, key);
    auto id = ParseTokenIdKey(key);
    if (!id || (vocab_size > 0 && *id >= vocab_size)) {
      std::string range =
          vocab_size > 0 ? "0.." + std::to_string(vocab_size - 1) : "a non-negative integer";
      r.Fail(path, "Invalid '" + path + "': key '" + TruncateForMessage(key) +
                       "' is not a token id (expected " + range + ").");
      return;
    }
    if (value.is_null()) continue;
    auto b = r.NumberValue(value, at, -100, 100);
    if (!b) return;
    bias[*id] = static_cast<float>(*b);
  }
  params->logit_bias = std::move(bias);
}

}  // namespace

void ReadSamplingFields(const FieldReader& r, int32_t vocab_size, SamplingParams* params) {
  if (auto t = r.Number("temperature", 0, 2)) params->temperature = static_cast<float>(*t);
  if (auto p = r.Number("top_p", 0, 1)) params->top_p = static_cast<float>(*p);
  if (auto p = r.Number("presence_penalty", -2, 2))
    params->presence_penalty = static_cast<float>(*p);
  if (auto p = r.Number("frequency_penalty", -2, 2)) {
    params->frequency_penalty = static_cast<float>(*p);
  }
  ReadSeed(r, params);
  ReadStop(r, params);
  ReadLogitBias(r, vocab_size, params);
  // Mneme extensions.
  if (auto k = r.Integer("top_k", -1, std::numeric_limits<int32_t>::max())) {
    params->top_k = *k < 0 ? 0 : static_cast<int32_t>(*k);
  }
  if (auto p = r.Number("min_p", 0, 1)) params->min_p = static_cast<float>(*p);
  if (auto p = r.Number("repetition_penalty", 0, 10)) {
    if (*p <= 0) {
      r.Fail(r.PathOf("repetition_penalty"),
             "Invalid 'repetition_penalty': expected a value above 0 (1 turns it off).");
    } else {
      params->repetition_penalty = static_cast<float>(*p);
    }
  }
  if (auto b = r.Bool("ignore_eos")) params->ignore_eos = *b;
}

std::optional<int32_t> ReadMaxTokens(const FieldReader& r,
                                     std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    if (r.Find(key) == nullptr) continue;
    auto n = r.Integer(key, 1, std::numeric_limits<int32_t>::max());
    if (!n) return std::nullopt;
    return static_cast<int32_t>(*n);
  }
  return std::nullopt;
}

}  // namespace mneme::api
