// Route matching and the exception boundary around handlers (see router.h).
#include "http/router.h"

#include <exception>

#include "http/error.h"

namespace mneme::http {

void Router::Add(std::string method, std::string path, Handler handler) {
  AddRoute({std::move(method), std::move(path), false, std::move(handler)});
}

void Router::AddPrefix(std::string method, std::string prefix, Handler handler) {
  AddRoute({std::move(method), std::move(prefix), true, std::move(handler)});
}

void Router::AddRoute(Route route) {
  for (Route& r : routes_) {
    if (r.method == route.method && r.path == route.path && r.prefix == route.prefix) {
      r.handler = std::move(route.handler);
      return;
    }
  }
  routes_.push_back(std::move(route));
}

void Router::Dispatch(const Request& request, const std::shared_ptr<ResponseWriter>& writer) const {
  // The best path match: exact beats prefix, longer prefix beats shorter.
  auto matches = [&](const Route& r) {
    return r.prefix ? request.path.compare(0, r.path.size(), r.path) == 0 : request.path == r.path;
  };
  const Route* best_path = nullptr;
  for (const Route& r : routes_) {
    if (!matches(r)) continue;
    if (best_path == nullptr || (best_path->prefix && !r.prefix) ||
        (best_path->prefix == r.prefix && r.path.size() > best_path->path.size())) {
      best_path = &r;
    }
  }
  if (best_path == nullptr) {
    writer->SendError(404, "Unknown request URL: " + request.method + " " + request.path,
                      "not_found");
    return;
  }
  // Among routes with that same path: the method, or GET for HEAD.
  const Route* chosen = nullptr;
  const Route* get_route = nullptr;
  std::string allow;
  for (const Route& r : routes_) {
    if (r.prefix != best_path->prefix || r.path != best_path->path) continue;
    if (r.method == request.method) chosen = &r;
    if (r.method == "GET") get_route = &r;
    if (!allow.empty()) allow += ", ";
    allow += r.method;
  }
  if (chosen == nullptr && request.method == "HEAD") chosen = get_route;
  if (chosen == nullptr) {
    if (get_route != nullptr && allow.find("HEAD") == std::string::npos) allow += ", HEAD";
    HeaderList extra = {{"Allow", allow}};
    writer->Send(405, "application/json",
                 ErrorBody("Method " + request.method + " not allowed for " + request.path +
                               " (allowed: " + allow + ")",
                           ErrorTypeForStatus(405), "method_not_allowed"),
                 extra);
    return;
  }
  try {
    chosen->handler(request, writer);
  } catch (const std::exception& e) {
    if (!writer->answered()) {
      writer->SendError(500, std::string("internal error: ") + e.what(), "internal_error");
    } else {
      writer->Abort();  // a half-sent stream must not look complete
    }
  } catch (...) {
    if (!writer->answered()) {
      writer->SendError(500, "internal error", "internal_error");
    } else {
      writer->Abort();
    }
  }
}

}  // namespace mneme::http
