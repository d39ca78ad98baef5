// Router: maps (method, path) to a Handler.
//
// Exact paths ("/v1/chat/completions") win over prefixes ("/v1/sessions/",
// which matches "/v1/sessions/abc" and "/v1/sessions/abc/fork"); among
// prefixes the longest wins. A path that matches with the wrong method gets
// 405 with an Allow header; no match gets 404. HEAD falls back to the GET
// handler (the writer drops the body). Errors use OpenAI's schema (error.h).
//
// Handlers run on an io thread and must not block: answer at once or keep the
// writer and answer later from another thread. An exception escaping a
// handler is caught at this boundary and answered with 500 (if nothing was
// sent yet; an open stream is aborted).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/request.h"
#include "http/response_writer.h"

namespace mneme::http {

using Handler = std::function<void(const Request&, std::shared_ptr<ResponseWriter>)>;

class Router {
 public:
  // Exact path. A later Add for the same method and path replaces the handler.
  void Add(std::string method, std::string path, Handler handler);
  // Every path that starts with `prefix`.
  void AddPrefix(std::string method, std::string prefix, Handler handler);

  // Runs the matching handler, or answers 404 / 405. Never throws.
  void Dispatch(const Request& request, const std::shared_ptr<ResponseWriter>& writer) const;

 private:
  struct Route {
    std::string method;
    std::string path;
    bool prefix = false;
    Handler handler;
  };
  void AddRoute(Route route);

  std::vector<Route> routes_;
};

}  // namespace mneme::http
