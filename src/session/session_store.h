// SessionStore: where conversations live, and how turns on them are ordered.
//
// Two implementations: MemorySessionStore (one process) and, next, a Redis
// store shared by several processes. Both pass session_store_contract.h.
//
// A turn on a session is   BeginTurn ─▶ read lease.session() ─▶ generate ─▶ Commit
//
//   - BeginTurn takes the session's turn lock and returns a TurnLease holding
//     it, with a snapshot of the session read under the lock. Turns on one
//     session run one at a time, in arrival order (FIFO); each sees every
//     exchange committed before it. Turns on different sessions never wait
//     for each other, and no store-wide lock is held while a lease exists.
//     BusyPolicy::kReject fails at once with ABORTED if the session is busy
//     (a turn holds it or waits for it); kQueue waits up to max_wait, then
//     fails with ABORTED. The API layer answers both with 409.
//   - Commit appends the turn's exchange atomically: all of it with the
//     version bumped, or nothing. It succeeds only if the stored version still
//     equals the snapshot's (fencing: a turn that lost its lock, e.g. a Redis
//     lock that expired, cannot overwrite a newer turn; ABORTED otherwise).
//     Commit ends the lease: the lock passes to the next waiting turn.
//   - Dropping a lease without Commit (the turn failed, the client went
//     away) releases the lock and leaves the session's content and version
//     exactly as they were before the turn.
//
// Ownership: with API keys, a session belongs to the key that created it.
// Every call names the caller's owner; another owner's session, an unknown
// id, a malformed id and an expired session are all the same NOT_FOUND (same
// message), so ids cannot be probed.
//
// Deleting a session whose turn is in progress takes effect at once: the
// running turn's Commit fails with NOT_FOUND and queued turns fail with
// NOT_FOUND. Fork copies the last committed state (not a turn in progress).
//
// Idle sessions expire after their sliding TTL (every Get, BeginTurn and
// Commit refreshes last_used); when there are more than max_sessions, the
// least recently used idle sessions are evicted. A session with a turn in
// progress or waiting is never expired or evicted.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session/session.h"
#include "util/status.h"

namespace mneme::session {

enum class BusyPolicy {
  kQueue,   // wait (FIFO) up to max_wait for the turn lock
  kReject,  // fail at once if any turn holds or waits for the lock
};

// The exchange a turn adds. Token updates either append (the usual case:
// the template rendered only the new suffix) or replace the whole list
// (the template re-rendered history differently); chunk_hashes follow the
// same mode: the newly completed chunks' hashes, or the whole list.
struct TurnAppend {
  std::vector<std::string> messages;  // appended to the history, in order
  bool replace_tokens = false;
  std::vector<int32_t> tokens;
  std::vector<kv::Hash128> chunk_hashes;
  std::optional<std::string> metadata;  // replaces the metadata when set
};

// The turn lock of one session, held from BeginTurn until Commit or
// destruction (which releases it; the destructor never fails).
class TurnLease {
 public:
  virtual ~TurnLease() = default;
  TurnLease(const TurnLease&) = delete;
  TurnLease& operator=(const TurnLease&) = delete;

  // The session as committed when the lock was taken (with its version).
  const Session& session() const { return snapshot_; }

  // Appends `append` atomically if the session's version is still
  // session().version, bumping it and refreshing last_used; then releases
  // the lock (on failure too: a lease commits at most once).
  //   NOT_FOUND            the session was deleted (or evicted) meanwhile
  //   ABORTED              the version moved on (this turn lost its lock)
  //   FAILED_PRECONDITION  this lease already committed
  virtual Status Commit(TurnAppend append) = 0;

 protected:
  explicit TurnLease(Session snapshot) : snapshot_(std::move(snapshot)) {}
  Session snapshot_;
};

struct SessionPage {
  std::vector<SessionInfo> sessions;  // in creation order, oldest first
  std::string next_cursor;            // pass to List for the next page; empty on the last
};

struct SessionStoreStats {
  int64_t num_sessions = 0;       // stored (may include expired ones not yet cleaned)
  int64_t num_turns_active = 0;   // sessions with a turn holding the lock
  int64_t num_turns_waiting = 0;  // turns queued for a lock (this process)
  int64_t num_expired_total = 0;  // removed by the idle TTL
  int64_t num_evicted_total = 0;  // removed by the max_sessions bound
};

class SessionStore {
 public:
  virtual ~SessionStore() = default;

  // A new session with a fresh id, owned by init.owner. May evict the least
  // recently used idle session to stay within max_sessions;
  // RESOURCE_EXHAUSTED if every session is busy.
  virtual Result<Session> Create(SessionInit init) = 0;

  // The committed state; refreshes last_used. NOT_FOUND as described above.
  virtual Result<Session> Get(std::string_view id, std::string_view owner) = 0;

  // owner's sessions, oldest first, at most `limit` (>= 1) per page.
  // `cursor` is empty for the first page, else a next_cursor from a previous
  // page (opaque; INVALID_ARGUMENT if malformed). Does not refresh last_used.
  virtual Result<SessionPage> List(std::string_view owner, std::string_view cursor, int limit) = 0;

  virtual Status Delete(std::string_view id, std::string_view owner) = 0;

  // A new session (new id, version 0, same owner, TTL and metadata) with a
  // copy of the source's committed history; independent afterwards.
  virtual Result<Session> Fork(std::string_view id, std::string_view owner) = 0;

  // Takes the session's turn lock (see the top of this file). Refreshes
  // last_used. NOT_FOUND, or ABORTED when busy (kReject) or after max_wait.
  virtual Result<std::unique_ptr<TurnLease>> BeginTurn(std::string_view id, std::string_view owner,
                                                       BusyPolicy policy,
                                                       std::chrono::milliseconds max_wait) = 0;

  // One pass of expiry and eviction (the cleanup thread calls this).
  virtual void RunCleanupOnce() = 0;

  virtual SessionStoreStats Stats() = 0;
};

}  // namespace mneme::session
