// Runs the SessionStore contract (session_store_contract.h and
// session_turn_contract.h) on MemorySessionStore, with a fake clock and no
// cleanup thread (the cases call RunCleanupOnce themselves).
#include "session/session_store_contract.h"

#include "session/memory_session_store.h"
#include "session/session_turn_contract.h"

namespace mneme::session {
namespace {

struct MemoryStoreFactory {
  static ContractStore Make(const ContractOptions& options) {
    ContractStore c;
    c.clock = std::make_shared<FakeClock>();
    MemorySessionStoreOptions o;
    o.default_ttl = options.default_ttl;
    o.max_sessions = options.max_sessions;
    o.cleanup_interval = std::chrono::milliseconds(0);
    o.clock = c.clock->AsFunction();
    auto store = std::make_unique<MemorySessionStore>(std::move(o));
    MemorySessionStore* raw = store.get();
    c.break_turn_lock = [raw](std::string_view id) { raw->BreakTurnLockForTesting(id); };
    c.store = std::move(store);
    return c;
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(Memory, SessionStoreContractTest,
                               ::testing::Types<MemoryStoreFactory>);
INSTANTIATE_TYPED_TEST_SUITE_P(Memory, SessionTurnContractTest,
                               ::testing::Types<MemoryStoreFactory>);

}  // namespace
}  // namespace mneme::session
