// Session ids from the kernel CSPRNG, and their format check.
#include "session/session.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

namespace mneme::session {

Result<std::string> NewSessionId() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(std::string("getrandom: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(kSessionIdPrefix);
  for (unsigned char b : bytes) {
    id.push_back(kHex[b >> 4]);
    id.push_back(kHex[b & 15]);
  }
  return id;
}

bool IsWellFormedSessionId(std::string_view id) {
  if (id.size() != kSessionIdLength || !id.starts_with(kSessionIdPrefix)) return false;
  for (char c : id.substr(kSessionIdPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

SessionInfo InfoOf(const Session& s) {
  SessionInfo i;
  i.id = s.id;
  i.created = s.created;
  i.last_used = s.last_used;
  i.ttl_seconds = s.ttl_seconds;
  i.metadata = s.metadata;
  i.num_messages = static_cast<int64_t>(s.messages.size());
  i.num_tokens = static_cast<int64_t>(s.tokens.size());
  i.version = s.version;
  return i;
}

}  // namespace mneme::session
