// The in-memory SessionStore (see memory_session_store.h for the design).
#include "session/memory_session_store.h"

#include <algorithm>
#include <charconv>

namespace mneme::session {

namespace {

Status SessionNotFound() {
  return NotFound("session not found");
}

}  // namespace

struct MemorySessionStore::Entry {
  Session session;
  uint64_t seq = 0;  // creation order, the List order and cursor
  bool deleted = false;
  uint64_t holder = 0;        // token of the lease holding the turn lock; 0 = free
  std::deque<Waiter*> queue;  // turns waiting for the lock, in arrival order
  std::condition_variable cv;
  std::list<Entry*>::iterator lru;

  bool Busy() const { return holder != 0 || !queue.empty(); }
};

class MemorySessionStore::Lease final : public TurnLease {
 public:
  Lease(MemorySessionStore* store, std::shared_ptr<Entry> entry, uint64_t token)
      : TurnLease(entry->session), store_(store), entry_(std::move(entry)), token_(token) {}
  ~Lease() override { store_->LeaseGone(this); }

  Status Commit(TurnAppend append) override { return store_->CommitTurn(this, std::move(append)); }

 private:
  friend class MemorySessionStore;
  MemorySessionStore* store_;
  std::shared_ptr<Entry> entry_;
  uint64_t token_;
  bool done_ = false;  // committed (the lock is released)
};

MemorySessionStore::MemorySessionStore(MemorySessionStoreOptions options)
    : options_(std::move(options)) {
  CHECK(options_.max_sessions >= 1) << "max_sessions " << options_.max_sessions;
  CHECK(options_.default_ttl.count() >= 1) << "default_ttl " << options_.default_ttl.count();
  if (options_.cleanup_interval.count() > 0) {
    cleanup_thread_ = std::thread([this] { CleanupLoop(); });
  }
}

MemorySessionStore::~MemorySessionStore() {
  Stop();
  std::lock_guard lock(mu_);
  CHECK(num_leases_ == 0) << num_leases_ << " TurnLease(s) outlive the session store";
}

void MemorySessionStore::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (cleanup_thread_.joinable()) cleanup_thread_.join();
}

void MemorySessionStore::CleanupLoop() {
  std::unique_lock lock(mu_);
  while (true) {
    stop_cv_.wait_for(lock, options_.cleanup_interval, [this] { return stopping_; });
    if (stopping_) return;
    lock.unlock();
    RunCleanupOnce();
    if (options_.after_cleanup_pass) options_.after_cleanup_pass();
    lock.lock();
  }
}

TimePoint MemorySessionStore::Now() const {
  return options_.clock ? options_.clock() : std::chrono::system_clock::now();
}

bool MemorySessionStore::ExpiredLocked(const Entry& e, TimePoint now) const {
  return !e.Busy() && now - e.session.last_used >= std::chrono::seconds(e.session.ttl_seconds);
}

std::shared_ptr<MemorySessionStore::Entry> MemorySessionStore::LookupLocked(std::string_view id,
                                                                            std::string_view owner,
                                                                            TimePoint now) {
  if (!IsWellFormedSessionId(id)) return nullptr;
  auto it = sessions_.find(std::string(id));
  if (it == sessions_.end()) return nullptr;
  std::shared_ptr<Entry> e = it->second;
  if (ExpiredLocked(*e, now)) {
    RemoveLocked(e.get());
    ++num_expired_total_;
    return nullptr;
  }
  if (e->session.owner != owner) return nullptr;
  return e;
}

void MemorySessionStore::TouchLocked(Entry* e, TimePoint now) {
  e->session.last_used = std::max(e->session.last_used, now);
  if (!e->deleted) lru_.splice(lru_.end(), lru_, e->lru);
}

void MemorySessionStore::RemoveLocked(Entry* e) {
  CHECK(!e->deleted);
  e->deleted = true;
  lru_.erase(e->lru);
  by_owner_.erase({e->session.owner, e->seq});
  e->cv.notify_all();              // waiters fail with NOT_FOUND
  sessions_.erase(e->session.id);  // may free e: last
}

Status MemorySessionStore::MakeRoomLocked(TimePoint now) {
  auto it = lru_.begin();
  while (static_cast<int64_t>(sessions_.size()) >= options_.max_sessions && it != lru_.end()) {
    Entry* e = *it++;
    if (e->Busy()) continue;
    ++(ExpiredLocked(*e, now) ? num_expired_total_ : num_evicted_total_);
    RemoveLocked(e);
  }
  if (static_cast<int64_t>(sessions_.size()) >= options_.max_sessions) {
    return ResourceExhausted("too many sessions (max " + std::to_string(options_.max_sessions) +
                             "), all of them busy");
  }
  return Status::Ok();
}

Result<Session> MemorySessionStore::InsertLocked(Session s) {
  while (sessions_.count(s.id) != 0) {  // 2^-128: but never overwrite
    MNEME_ASSIGN_OR_RETURN(s.id, NewSessionId());
  }
  auto e = std::make_shared<Entry>();
  e->seq = next_seq_++;
  e->session = std::move(s);
  lru_.push_back(e.get());
  e->lru = std::prev(lru_.end());
  by_owner_.emplace(std::make_pair(e->session.owner, e->seq), e.get());
  Session copy = e->session;
  sessions_.emplace(copy.id, std::move(e));
  DCHECK(CheckInvariantsLocked().ok());
  return copy;
}

Result<Session> MemorySessionStore::Create(SessionInit init) {
  MNEME_ASSIGN_OR_RETURN(std::string id, NewSessionId());
  Session s;
  s.id = std::move(id);
  s.owner = std::move(init.owner);
  s.ttl_seconds = init.ttl_seconds > 0 ? init.ttl_seconds : options_.default_ttl.count();
  s.metadata = std::move(init.metadata);
  s.messages = std::move(init.messages);
  s.tokens = std::move(init.tokens);
  s.chunk_hashes = std::move(init.chunk_hashes);
  std::lock_guard lock(mu_);
  const TimePoint now = Now();
  s.created = s.last_used = now;
  MNEME_RETURN_IF_ERROR(MakeRoomLocked(now));
  return InsertLocked(std::move(s));
}

Result<Session> MemorySessionStore::Get(std::string_view id, std::string_view owner) {
  std::lock_guard lock(mu_);
  const TimePoint now = Now();
  std::shared_ptr<Entry> e = LookupLocked(id, owner, now);
  if (!e) return SessionNotFound();
  TouchLocked(e.get(), now);
  return e->session;
}

Result<SessionPage> MemorySessionStore::List(std::string_view owner, std::string_view cursor,
                                             int limit) {
  if (limit < 1) return InvalidArgument("limit must be at least 1");
  uint64_t after = 0;
  if (!cursor.empty()) {
    auto [end, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), after);
    if (ec != std::errc() || end != cursor.data() + cursor.size()) {
      return InvalidArgument("malformed session list cursor");
    }
  }
  std::lock_guard lock(mu_);
  const TimePoint now = Now();
  SessionPage page;
  const std::string key_owner(owner);
  uint64_t last_seq = 0;
  for (auto it = by_owner_.lower_bound({key_owner, after + 1});
       it != by_owner_.end() && it->first.first == key_owner; ++it) {
    const Entry& e = *it->second;
    if (ExpiredLocked(e, now)) continue;
    if (static_cast<int>(page.sessions.size()) == limit) {  // one more exists
      page.next_cursor = std::to_string(last_seq);
      break;
    }
    page.sessions.push_back(InfoOf(e.session));
    last_seq = e.seq;
  }
  return page;
}

Status MemorySessionStore::Delete(std::string_view id, std::string_view owner) {
  std::lock_guard lock(mu_);
  std::shared_ptr<Entry> e = LookupLocked(id, owner, Now());
  if (!e) return SessionNotFound();
  RemoveLocked(e.get());
  DCHECK(CheckInvariantsLocked().ok());
  return Status::Ok();
}

Result<Session> MemorySessionStore::Fork(std::string_view id, std::string_view owner) {
  MNEME_ASSIGN_OR_RETURN(std::string new_id, NewSessionId());
  std::lock_guard lock(mu_);
  const TimePoint now = Now();
  std::shared_ptr<Entry> src = LookupLocked(id, owner, now);
  if (!src) return SessionNotFound();
  TouchLocked(src.get(), now);  // the source is now the most recently used: not evicted below
  MNEME_RETURN_IF_ERROR(MakeRoomLocked(now));
  Session s = src->session;
  s.id = std::move(new_id);
  s.created = s.last_used = now;
  s.version = 0;
  return InsertLocked(std::move(s));
}

Result<std::unique_ptr<TurnLease>> MemorySessionStore::BeginTurn(
    std::string_view id, std::string_view owner, BusyPolicy policy,
    std::chrono::milliseconds max_wait) {
  // Clamped so that deadline arithmetic cannot overflow (a day is "forever").
  max_wait = std::clamp(max_wait, std::chrono::milliseconds(0),
                        std::chrono::milliseconds(std::chrono::hours(24)));
  const auto deadline = std::chrono::steady_clock::now() + max_wait;
  std::unique_lock lock(mu_);
  std::shared_ptr<Entry> e = LookupLocked(id, owner, Now());
  if (!e) return SessionNotFound();
  const uint64_t token = next_token_++;
  if (!e->Busy()) {
    e->holder = token;
    ++num_turns_active_;
  } else if (policy == BusyPolicy::kReject) {
    return Aborted("session busy: another turn on this session is in progress");
  } else {
    Waiter w{token, false};
    e->queue.push_back(&w);
    ++num_turns_waiting_;
    e->cv.wait_until(lock, deadline, [&] { return w.granted || e->deleted; });
    if (!w.granted) {  // deleted or timed out: leave the queue
      e->queue.erase(std::find(e->queue.begin(), e->queue.end(), &w));
      --num_turns_waiting_;
      if (e->deleted) return SessionNotFound();
      return Aborted("session busy: timed out after " + std::to_string(max_wait.count()) +
                     " ms waiting for the previous turn on this session");
    }
    if (e->deleted) {  // granted, then deleted before we woke
      ReleaseLocked(e.get(), token);
      return SessionNotFound();
    }
  }
  TouchLocked(e.get(), Now());
  ++num_leases_;
  DCHECK(CheckInvariantsLocked().ok());
  return std::unique_ptr<TurnLease>(new Lease(this, std::move(e), token));
}

void MemorySessionStore::ReleaseLocked(Entry* e, uint64_t token) {
  if (e->holder != token) return;  // the lock was taken away (BreakTurnLockForTesting)
  e->holder = 0;
  if (!e->deleted && !e->queue.empty()) {
    Waiter* next = e->queue.front();
    e->queue.pop_front();
    --num_turns_waiting_;
    next->granted = true;
    e->holder = next->token;
    e->cv.notify_all();
  } else {
    --num_turns_active_;
  }
}

Status MemorySessionStore::CommitTurn(Lease* lease, TurnAppend append) {
  std::lock_guard lock(mu_);
  if (lease->done_) return FailedPrecondition("this turn already committed");
  lease->done_ = true;
  Entry* e = lease->entry_.get();
  Status result;
  if (e->deleted) {
    result = SessionNotFound();
  } else if (e->session.version != lease->session().version) {
    result = Aborted("session changed since this turn began (version " +
                     std::to_string(lease->session().version) + ", now " +
                     std::to_string(e->session.version) + "): the turn lost its lock");
  } else {
    Session& s = e->session;
    // Reserve first so that the appends below cannot fail half-way.
    s.messages.reserve(s.messages.size() + append.messages.size());
    if (!append.replace_tokens) {
      s.tokens.reserve(s.tokens.size() + append.tokens.size());
      s.chunk_hashes.reserve(s.chunk_hashes.size() + append.chunk_hashes.size());
    }
    for (std::string& m : append.messages) s.messages.push_back(std::move(m));
    if (append.replace_tokens) {
      s.tokens = std::move(append.tokens);
      s.chunk_hashes = std::move(append.chunk_hashes);
    } else {
      s.tokens.insert(s.tokens.end(), append.tokens.begin(), append.tokens.end());
      s.chunk_hashes.insert(s.chunk_hashes.end(), append.chunk_hashes.begin(),
                            append.chunk_hashes.end());
    }
    if (append.metadata) s.metadata = std::move(*append.metadata);
    ++s.version;
    TouchLocked(e, Now());
  }
  ReleaseLocked(e, lease->token_);
  DCHECK(CheckInvariantsLocked().ok());
  return result;
}

void MemorySessionStore::LeaseGone(Lease* lease) {
  std::lock_guard lock(mu_);
  --num_leases_;
  if (lease->done_) return;
  Entry* e = lease->entry_.get();
  // The turn ended (failed or abandoned): its end counts as a use, so a long
  // turn does not find its session expired the moment it finishes.
  if (e->holder == lease->token_ && !e->deleted) TouchLocked(e, Now());
  ReleaseLocked(e, lease->token_);
  DCHECK(CheckInvariantsLocked().ok());
}

void MemorySessionStore::BreakTurnLockForTesting(std::string_view id) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(std::string(id));
  if (it != sessions_.end() && it->second->holder != 0) {
    ReleaseLocked(it->second.get(), it->second->holder);
  }
}

void MemorySessionStore::RunCleanupOnce() {
  std::lock_guard lock(mu_);
  const TimePoint now = Now();
  for (auto it = lru_.begin(); it != lru_.end();) {
    Entry* e = *it++;
    if (ExpiredLocked(*e, now)) {
      RemoveLocked(e);
      ++num_expired_total_;
    }
  }
  // Create and Fork keep the bound; this only matters if they could not
  // (every session was busy then).
  for (auto it = lru_.begin();
       static_cast<int64_t>(sessions_.size()) > options_.max_sessions && it != lru_.end();) {
    Entry* e = *it++;
    if (e->Busy()) continue;
    RemoveLocked(e);
    ++num_evicted_total_;
  }
  DCHECK(CheckInvariantsLocked().ok());
}

SessionStoreStats MemorySessionStore::Stats() {
  std::lock_guard lock(mu_);
  SessionStoreStats s;
  s.num_sessions = static_cast<int64_t>(sessions_.size());
  s.num_turns_active = num_turns_active_;
  s.num_turns_waiting = num_turns_waiting_;
  s.num_expired_total = num_expired_total_;
  s.num_evicted_total = num_evicted_total_;
  return s;
}

Status MemorySessionStore::CheckInvariants() {
  std::lock_guard lock(mu_);
  return CheckInvariantsLocked();
}

Status MemorySessionStore::CheckInvariantsLocked() const {
  if (lru_.size() != sessions_.size() || by_owner_.size() != sessions_.size()) {
    return Internal("session maps disagree in size");
  }
  int64_t holders = 0;
  int64_t queued = 0;
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    const Entry* e = *it;
    auto found = sessions_.find(e->session.id);
    if (found == sessions_.end() || found->second.get() != e)
      return Internal("LRU entry not in map");
    if (e->lru != it) return Internal("entry's LRU position is stale");
    if (e->deleted) return Internal("deleted entry still stored");
    auto owned = by_owner_.find({e->session.owner, e->seq});
    if (owned == by_owner_.end() || owned->second != e) return Internal("owner index disagrees");
    holders += e->holder != 0 ? 1 : 0;
    queued += static_cast<int64_t>(e->queue.size());
  }
  // Deleted entries may still have a holder or waiters (they are not stored).
  if (num_turns_active_ < holders || num_turns_waiting_ < queued) {
    return Internal("turn counters below the stored sessions' turns");
  }
  return Status::Ok();
}

}  // namespace mneme::session
