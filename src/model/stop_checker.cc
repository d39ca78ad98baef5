// StopChecker: stop strings across token boundaries with holdback (see the
// header). Per token the work is O(sum of stop-string lengths squared) in the
// worst case, bounded by ValidateSamplingParams (16 strings of <= 256 bytes),
// and the held text never exceeds the longest stop string.
#include "model/stop_checker.h"

#include <algorithm>

#include "util/check.h"

namespace mneme {

StopChecker::StopChecker(std::vector<std::string> stop_strings, std::span<const TokenId> eog_ids,
                         bool ignore_eos)
    : stop_strings_(std::move(stop_strings)),
      eog_ids_(eog_ids.begin(), eog_ids.end()),
      ignore_eos_(ignore_eos) {
  std::erase_if(stop_strings_, [](const std::string& s) { return s.empty(); });
  std::sort(eog_ids_.begin(), eog_ids_.end());
}

size_t StopChecker::HoldFrom() const {
  size_t from = pending_.size();
  const std::string_view text = pending_;
  for (const std::string& stop : stop_strings_) {
    // Longest proper prefix of `stop` that `text` ends with.
    const size_t max_len = std::min(stop.size() - 1, text.size());
    for (size_t len = max_len; len > 0; --len) {
      if (text.size() - len >= from) break;  // cannot beat what we have
      if (text.ends_with(std::string_view(stop).substr(0, len))) {
        from = text.size() - len;
        break;
      }
    }
  }
  return from;
}

StopChecker::Step StopChecker::Add(TokenId id, std::string_view text) {
  CHECK(!stopped_) << "StopChecker::Add after the generation stopped";
  Step step;
  if (!ignore_eos_ && std::binary_search(eog_ids_.begin(), eog_ids_.end(), id)) {
    stopped_ = true;
    step.stop = StopReason::kEog;
    step.text = std::move(pending_);
    pending_.clear();
    return step;
  }
  pending_.append(text);

  // The earliest complete stop string wins (on a tie, the first listed).
  size_t match_at = std::string::npos;
  const std::string* matched = nullptr;
  for (const std::string& stop : stop_strings_) {
    const size_t at = pending_.find(stop);
    if (at < match_at) {
      match_at = at;
      matched = &stop;
    }
  }
  if (matched != nullptr) {
    stopped_ = true;
    step.stop = StopReason::kStopString;
    step.stop_string = *matched;
    step.text = pending_.substr(0, match_at);
    pending_.clear();
    return step;
  }

  const size_t hold = HoldFrom();
  step.text = pending_.substr(0, hold);
  pending_.erase(0, hold);
  return step;
}

std::string StopChecker::Finish() {
  stopped_ = true;
  std::string out = std::move(pending_);
  pending_.clear();
  return out;
}

}  // namespace mneme
