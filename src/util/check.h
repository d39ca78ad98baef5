// CHECK: for broken invariants only (our bugs), never for bad input.
//
// A failed CHECK prints file:line, the condition and any streamed message to
// stderr and aborts. Expected failures return Status instead (status.h).
// DCHECK compiles away in release builds (NDEBUG) and is for checks on hot
// paths and for CheckInvariants() calls after every mutation in debug builds.
#pragma once

#include <sstream>

namespace mneme::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  template <typename T>
  CheckFailure& operator<<(const T& v) {
    stream_ << v;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

// Lets `CHECK(x) << "msg"` be a void expression in both branches.
struct Voidify {
  void operator&(const CheckFailure&) {}
};

}  // namespace mneme::internal

#define CHECK(cond)                    \
  (cond) ? (void)0                     \
         : ::mneme::internal::Voidify() & \
               ::mneme::internal::CheckFailure(__FILE__, __LINE__, #cond)

#ifdef NDEBUG
#define DCHECK(cond) \
  while (false) CHECK(cond)
#else
#define DCHECK(cond) CHECK(cond)
#endif
