// FakeClock: a settable clock for the session stores' TTL and LRU tests, so
// that expiry is tested by advancing time rather than by sleeping.
// Thread-safe (the cleanup thread reads it while the test advances it).
#pragma once

#include <chrono>
#include <functional>
#include <mutex>

#include "session/session.h"

namespace mneme::session {

class FakeClock {
 public:
  // Starts at an arbitrary fixed instant (2023-11-14), not at the epoch.
  FakeClock() : now_(std::chrono::seconds(1'700'000'000)) {}

  TimePoint Now() const {
    std::lock_guard lock(mu_);
    return now_;
  }
  void Advance(std::chrono::nanoseconds d) {
    std::lock_guard lock(mu_);
    now_ += std::chrono::duration_cast<TimePoint::duration>(d);
  }
  // For MemorySessionStoreOptions::clock; the clock must outlive the store.
  std::function<TimePoint()> AsFunction() {
    return [this] { return Now(); };
  }

 private:
  mutable std::mutex mu_;
  TimePoint now_;
};

}  // namespace mneme::session
