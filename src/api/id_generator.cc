// Random object ids (see id_generator.h).
#include "api/id_generator.h"

namespace mneme::api {

namespace {

uint64_t RandomSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr uint64_t kAlphabetSize = sizeof(kAlphabet) - 1;  // 62

}  // namespace

IdGenerator::IdGenerator() : rng_(RandomSeed()) {}
IdGenerator::IdGenerator(uint64_t seed) : rng_(seed) {}

std::string IdGenerator::Next(std::string_view prefix) {
  std::string id(prefix);
  id.reserve(prefix.size() + kRandomChars);
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < kRandomChars; ++i) {
    uint64_t x;
    // Rejection sampling keeps the characters uniform (2^64 is not a multiple of 62).
    constexpr uint64_t kLimit = UINT64_MAX - UINT64_MAX % kAlphabetSize;
    do {
      x = rng_();
    } while (x >= kLimit);
    id += kAlphabet[x % kAlphabetSize];
  }
  return id;
}

}  // namespace mneme::api
