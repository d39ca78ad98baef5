// JSON in and out of the API, hardened against hostile bodies.
//
// In: ParseJsonObject bounds nesting with a byte pre-scan *before* handing
// the text to nlohmann (whose DOM, dump and our own walks recurse per level),
// parses into nlohmann::json (a std::map per object: inserting n keys costs
// n log n; ordered_json's linear-scan map would let a 1 MB body of distinct
// keys cost ~10^10 comparisons), never throws, and names what is wrong.
// Duplicate keys: the last one wins, as JSON.parse does. Strings are valid
// UTF-8 afterwards (nlohmann rejects ill-formed bytes and lone surrogates).
// A number too large for a double (1e400) is refused here (invalid_json);
// integers beyond 64 bits parse as doubles, which integer fields refuse.
//
// Out: DumpJson never throws: invalid UTF-8 in generated text (a model can
// emit any bytes) is replaced by U+FFFD instead of raising type_error.316.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "api/api_error.h"

namespace mneme::api {

inline constexpr int kDefaultMaxJsonDepth = 64;

// The deepest nesting of arrays/objects in `text` (0 for a scalar), counting
// only brackets outside strings; stops counting once `stop_above` is
// exceeded and returns stop_above + 1. Does not validate the JSON.
int JsonNestingDepth(std::string_view text, int stop_above);

// Parses a request body that must be one JSON object nested at most
// `max_depth` levels. Errors: 400 invalid_json.
ApiResult<nlohmann::json> ParseJsonObject(std::string_view body,
                                          int max_depth = kDefaultMaxJsonDepth);

// Compact serialization, invalid UTF-8 replaced by U+FFFD. Never throws.
std::string DumpJson(const nlohmann::ordered_json& value);
std::string DumpJson(const nlohmann::json& value);

// `s` cut to at most `max_bytes` on a UTF-8 character boundary, with "..."
// appended when cut: for quoting client-supplied text in error messages.
std::string TruncateForMessage(std::string_view s, size_t max_bytes = 64);

}  // namespace mneme::api
