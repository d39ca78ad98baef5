// Status and Result<T>: how expected failures travel in Mneme.
//
// A function that can fail for reasons outside our control (a malformed file,
// bad user input, a full disk) returns Status or Result<T>; it never throws
// across a module boundary and never aborts. Broken invariants (our own bugs)
// use CHECK from check.h instead.
//
//   Result<GgufFile> f = GgufFile::Open(path);
//   if (!f.ok()) return f.status();
//   GgufFile file = std::move(f).value();
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "util/check.h"

namespace mneme {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller's input is wrong (bad request, bad flag)
  kNotFound,         // a named thing does not exist
  kDataLoss,         // a file or stored value is malformed or truncated
  kUnimplemented,    // valid input we deliberately do not support
  kFailedPrecondition,
  kResourceExhausted,
  kInternal,
  kIo,               // an operating-system call failed
  kAborted,          // a concurrency conflict (busy, stale version): retry later (HTTP 409)
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "DATA_LOSS: model.gguf: bad magic" style, for logs and CLI errors.
  std::string ToString() const;

  // Returns a copy with "context: " prepended to the message.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status IoError(std::string m) { return {StatusCode::kIo, std::move(m)}; }
inline Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }

// Either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    CHECK(!std::get<Status>(v_).ok()) << "Result constructed from an OK status";
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  T& value() & {
    CHECK(ok()) << status().ToString();
    return std::get<T>(v_);
  }
  const T& value() const& {
    CHECK(ok()) << status().ToString();
    return std::get<T>(v_);
  }
  T&& value() && {
    CHECK(ok()) << status().ToString();
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace mneme

// Propagates a non-OK Status from an expression returning Status.
#define MNEME_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::mneme::Status mneme_status_ = (expr);        \
    if (!mneme_status_.ok()) return mneme_status_; \
  } while (0)

#define MNEME_CONCAT_INNER_(a, b) a##b
#define MNEME_CONCAT_(a, b) MNEME_CONCAT_INNER_(a, b)

// MNEME_ASSIGN_OR_RETURN(auto x, MakeX()); declares x or returns the error.
#define MNEME_ASSIGN_OR_RETURN(lhs, expr)                                      \
  auto MNEME_CONCAT_(mneme_result_, __LINE__) = (expr);                        \
  if (!MNEME_CONCAT_(mneme_result_, __LINE__).ok())                            \
    return MNEME_CONCAT_(mneme_result_, __LINE__).status();                    \
  lhs = std::move(MNEME_CONCAT_(mneme_result_, __LINE__)).value()
