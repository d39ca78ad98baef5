// The OpenAI error schema for every error the HTTP layer answers itself
// (404, 405, 413, 431, 500, 503, ...), and HTTP reason phrases.
//
//   {"error":{"message":"...","type":"invalid_request_error","code":"not_found"}}
//
// Written by hand: the layer must not depend on a JSON library or know any
// schema beyond this one object.
#pragma once

#include <string>
#include <string_view>

namespace mneme::http {

// OpenAI's error "type" for a status: "invalid_request_error" for 4xx,
// "authentication_error" for 401, "permission_error" for 403,
// "rate_limit_error" for 429, "server_error" otherwise.
std::string_view ErrorTypeForStatus(int status);

// The JSON error object. `code` empty -> "code":null. Invalid UTF-8 in
// `message` is replaced by U+FFFD so the body is always valid JSON.
std::string ErrorBody(std::string_view message, std::string_view type, std::string_view code);

// "OK", "Not Found", ...; "Unknown" for codes we never send.
std::string_view StatusReason(int status);

}  // namespace mneme::http
