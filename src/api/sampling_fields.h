// The sampling fields every generation endpoint shares, read from a request
// body straight into mneme::SamplingParams, with OpenAI's ranges:
//
//   temperature        number 0..2       (0: greedy)
//   top_p              number 0..1
//   presence_penalty   number -2..2
//   frequency_penalty  number -2..2
//   seed               integer (int64 or uint64; stored as its uint64 bits)
//   stop               string or array of up to 16 strings of <= 256 bytes
//                      (OpenAI allows 4; empty strings are dropped)
//   logit_bias         object {"<token id>": number -100..100}, <= 1024 entries
//
// and the Mneme extensions (not in OpenAI's API; llama.cpp / vLLM names):
//
//   top_k              integer >= -1     (0 or -1: off)
//   min_p              number 0..1
//   repetition_penalty number > 0 .. 10  (1: off)
//   ignore_eos         boolean           (generate through end-of-turn tokens)
//
// The result always passes ValidateSamplingParams (given the same vocab size).
#pragma once

#include <initializer_list>
#include <optional>
#include <string_view>

#include "api/field_reader.h"
#include "model/sampler.h"

namespace mneme::api {

inline constexpr int kMaxStopStrings = 16;
inline constexpr int kMaxStopBytes = 256;
inline constexpr int kMaxLogitBiasEntries = 1024;

// Reads the fields above from the object `r` reads into *params (fields not
// present keep their value). `vocab_size` > 0 bounds logit_bias ids.
void ReadSamplingFields(const FieldReader& r, int32_t vocab_size, SamplingParams* params);

// The output-token limit: the first of `keys` present (e.g.
// {"max_completion_tokens", "max_tokens"}), an integer 1..2^31-1.
std::optional<int32_t> ReadMaxTokens(const FieldReader& r,
                                     std::initializer_list<std::string_view> keys);

}  // namespace mneme::api
