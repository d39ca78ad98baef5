// SessionService: the /v1/sessions endpoints (create, get, list, delete,
// fork) over the SessionStore. Conversations themselves advance through
// ChatService; this is the management surface.
//
//   POST   /v1/sessions              {system_prompt?, messages?, metadata?, ttl_seconds?}
//   GET    /v1/sessions?limit=&after= the caller's sessions, oldest first;
//                                     `after` takes the `next_after` of a page
//   GET    /v1/sessions/{id}          with its messages
//   DELETE /v1/sessions/{id}
//   POST   /v1/sessions/{id}/fork     a new session with a copy of the history;
//                                     its first turn reuses the parent's KV
//                                     through the radix cache (same tokens)
//
// A session belongs to the API key that created it; other keys get 404,
// exactly as for an unknown id.
#pragma once

#include <memory>
#include <string>

#include "http/request.h"
#include "http/response_writer.h"
#include "server/chat_service.h"
#include "session/session_store.h"

namespace mneme::server {

class SessionService {
 public:
  // `chat` authorizes requests (same keys); both must outlive this.
  SessionService(ChatService* chat, session::SessionStore* store, std::string model_name);

  void HandleCreate(const http::Request& request, std::shared_ptr<http::ResponseWriter> writer);
  void HandleList(const http::Request& request, std::shared_ptr<http::ResponseWriter> writer);
  // /v1/sessions/{id} and /v1/sessions/{id}/fork (a prefix route).
  void HandleOne(const http::Request& request, std::shared_ptr<http::ResponseWriter> writer);

 private:
  ChatService* chat_;
  session::SessionStore* store_;
  std::string model_name_;
};

}  // namespace mneme::server
