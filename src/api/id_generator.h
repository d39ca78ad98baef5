// IdGenerator: the random ids of API objects ("chatcmpl-…", "resp_…",
// "msg_…"), injectable so tests get fixed ids.
//
// An id is a prefix plus 24 characters of [A-Za-z0-9] (~143 bits) from a
// mt19937_64 seeded once from std::random_device (or from the seed a test
// gives). These ids name objects, they do not guard anything: session ids,
// which are capabilities, come from the session store's own generator.
// Thread-safe (one mutex; an id costs a few hundred nanoseconds).
#pragma once

#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <string_view>

namespace mneme::api {

inline constexpr std::string_view kChatCompletionIdPrefix = "chatcmpl-";
inline constexpr std::string_view kCompletionIdPrefix = "cmpl-";
inline constexpr std::string_view kResponseIdPrefix = "resp_";
inline constexpr std::string_view kMessageIdPrefix = "msg_";

class IdGenerator {
 public:
  IdGenerator();  // seeded from std::random_device
  explicit IdGenerator(uint64_t seed);
  IdGenerator(const IdGenerator&) = delete;
  IdGenerator& operator=(const IdGenerator&) = delete;

  static constexpr int kRandomChars = 24;

  std::string Next(std::string_view prefix);

 private:
  std::mutex mu_;
  std::mt19937_64 rng_;
};

}  // namespace mneme::api
