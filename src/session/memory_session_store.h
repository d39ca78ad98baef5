// MemorySessionStore: sessions in this process's memory (the default store).
//
// One mutex (mu_) guards the maps below and is held only for short, bounded
// sections: never while a turn generates. Each session's turn lock is not a
// mutex but state in its Entry: `holder` (the token of the lease holding
// it, 0 = free) and a FIFO queue of waiting turns. Releasing hands the lock
// straight to the queue's front (no barging), so turns run in arrival order:
//
//   sessions_ ─▶ Entry{session, holder = lease 7, queue = [w8, w9], cv}
//                  ▲ shared_ptr, also held by the lease and by the waiters,
//                  │ so a Delete during a turn leaves them a valid (deleted) Entry
//   lru_:  front (least recently used) ... back (most recently used)
//   by_owner_: (owner, creation seq) ─▶ Entry, the List order and cursor
//
// A waiter sleeps on its Entry's condition variable (with mu_ released) and
// wakes when granted the lock, when the session is deleted, or at its
// deadline. Leases and waiters keep their Entry alive; every lease must be
// gone before the store is destroyed (CHECKed).
//
// Expiry and eviction use the injected clock (tests advance a fake one). The
// cleanup thread runs RunCleanupOnce every cleanup_interval and stops on
// Stop() or destruction; cleanup_interval 0 starts no thread. A pass walks
// every session (O(sessions) under mu_, a few ms for 100k sessions).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "session/session_store.h"

namespace mneme::session {

struct MemorySessionStoreOptions {
  std::chrono::seconds default_ttl{3600};             // --session-ttl
  int64_t max_sessions = 100000;                      // --max-sessions, >= 1
  std::chrono::milliseconds cleanup_interval{10000};  // 0: no cleanup thread
  std::function<TimePoint()> clock;                   // empty: system_clock::now
  // Called by the cleanup thread after each pass, without mu_ held (tests
  // wait on it instead of sleeping).
  std::function<void()> after_cleanup_pass;
};

class MemorySessionStore final : public SessionStore {
 public:
  explicit MemorySessionStore(MemorySessionStoreOptions options);
  ~MemorySessionStore() override;  // Stop()s; no TurnLease may outlive the store
  MemorySessionStore(const MemorySessionStore&) = delete;
  MemorySessionStore& operator=(const MemorySessionStore&) = delete;

  // Stops and joins the cleanup thread (idempotent).
  void Stop();

  Result<Session> Create(SessionInit init) override;
  Result<Session> Get(std::string_view id, std::string_view owner) override;
  Result<SessionPage> List(std::string_view owner, std::string_view cursor, int limit) override;
  Status Delete(std::string_view id, std::string_view owner) override;
  Result<Session> Fork(std::string_view id, std::string_view owner) override;
  Result<std::unique_ptr<TurnLease>> BeginTurn(std::string_view id, std::string_view owner,
                                               BusyPolicy policy,
                                               std::chrono::milliseconds max_wait) override;
  void RunCleanupOnce() override;
  SessionStoreStats Stats() override;

  // Releases the session's turn lock as if its holder had lost it (what a
  // Redis lock expiry does): the next waiter gets it, and the old lease's
  // Commit is then fenced by the version check. For the contract tests.
  void BreakTurnLockForTesting(std::string_view id);

  // Maps, LRU list and counters agree. O(sessions).
  Status CheckInvariants();

 private:
  struct Entry;
  class Lease;
  struct Waiter {
    uint64_t token = 0;
    bool granted = false;
  };

  TimePoint Now() const;
  bool ExpiredLocked(const Entry& e, TimePoint now) const;
  // The live entry for (id, owner), or null (unknown, malformed, another
  // owner's, expired: an expired idle entry is removed on the way).
  std::shared_ptr<Entry> LookupLocked(std::string_view id, std::string_view owner, TimePoint now);
  void TouchLocked(Entry* e, TimePoint now);
  void RemoveLocked(Entry* e);
  // Evicts least recently used idle sessions until one more fits.
  Status MakeRoomLocked(TimePoint now);
  Result<Session> InsertLocked(Session s);
  // Frees the lock if `token` holds it and hands it to the next waiter.
  void ReleaseLocked(Entry* e, uint64_t token);
  Status CommitTurn(Lease* lease, TurnAppend append);
  void LeaseGone(Lease* lease);
  Status CheckInvariantsLocked() const;
  void CleanupLoop();

  const MemorySessionStoreOptions options_;

  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> sessions_;
  std::list<Entry*> lru_;
  std::map<std::pair<std::string, uint64_t>, Entry*> by_owner_;
  uint64_t next_seq_ = 1;
  uint64_t next_token_ = 1;
  int64_t num_turns_active_ = 0;
  int64_t num_turns_waiting_ = 0;
  int64_t num_expired_total_ = 0;
  int64_t num_evicted_total_ = 0;
  int64_t num_leases_ = 0;

  bool stopping_ = false;
  std::condition_variable stop_cv_;
  std::thread cleanup_thread_;
};

}  // namespace mneme::session
