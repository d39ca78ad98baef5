// Router and handler-boundary tests through a real server: 404/405 in
// OpenAI's error schema, prefix routes, HEAD fallback, handlers that throw,
// forget to answer, or answer later from another thread. Also ErrorBody.
#include "http/router.h"

#include <gtest/gtest.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "http/error.h"
#include "http/server.h"
#include "http/test_client.h"

namespace mneme::http {
namespace {

using testing::Get;
using testing::Post;
using testing::TestClient;

std::unique_ptr<Server> StartServer(Router router) {
  ServerOptions o;
  o.port = 0;
  auto server = Server::Create(o, std::move(router));
  EXPECT_TRUE(server.ok());
  auto s = std::move(server).value();
  EXPECT_TRUE(s->Start().ok());
  return s;
}

// Threads started by handlers, joined when the test ends.
struct ThreadBag {
  std::mutex mu;
  std::vector<std::thread> threads;
  ~ThreadBag() {
    for (auto& t : threads) t.join();
  }
};

Router TestRouter(ThreadBag* bag = nullptr) {
  Router r;
  r.Add("GET", "/v1/models", [](const Request&, std::shared_ptr<ResponseWriter> w) {
    w->Send(200, "application/json", "{\"data\":[]}");
  });
  r.Add("POST", "/v1/models", [](const Request&, std::shared_ptr<ResponseWriter> w) {
    w->Send(201, "text/plain", "created");
  });
  r.AddPrefix("GET", "/v1/sessions/", [](const Request& req, std::shared_ptr<ResponseWriter> w) {
    w->Send(200, "text/plain", "session " + req.path.substr(13));
  });
  r.AddPrefix("GET", "/v1/sessions/special/",
              [](const Request&, std::shared_ptr<ResponseWriter> w) {
                w->Send(200, "text/plain", "longer prefix");
              });
  r.Add("GET", "/throw",
        [](const Request&, std::shared_ptr<ResponseWriter>) { throw std::runtime_error("boom"); });
  r.Add("GET", "/throw-mid-stream", [](const Request&, std::shared_ptr<ResponseWriter> w) {
    w->StartStream(200, "text/event-stream");
    w->Write("data: a\n\n");
    throw std::runtime_error("boom");
  });
  r.Add("GET", "/forget", [](const Request&, std::shared_ptr<ResponseWriter>) {});
  r.Add("GET", "/later", [bag](const Request&, std::shared_ptr<ResponseWriter> w) {
    std::lock_guard<std::mutex> lock(bag->mu);
    bag->threads.emplace_back([w] { w->Send(200, "text/plain", "from another thread"); });
  });
  r.Add("GET", "/twice", [](const Request&, std::shared_ptr<ResponseWriter> w) {
    bool first = w->Send(200, "text/plain", "first");
    bool second = w->Send(500, "text/plain", "second");
    EXPECT_TRUE(first);
    EXPECT_FALSE(second);
  });
  r.Add("GET", "/headers", [](const Request&, std::shared_ptr<ResponseWriter> w) {
    w->Send(200, "text/plain", "x",
            {{"X-Good", "yes"},
             {"X-Bad", "a\r\nInjected: 1"},
             {"Content-Length", "999"},
             {"Bad Name", "v"}});
  });
  return r;
}

nlohmann::json Json(const std::string& s) {
  return nlohmann::json::parse(s);
}

TEST(RouterTest, UnknownPathIs404InOpenAiSchema) {
  auto server = StartServer(TestRouter());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/v2/nothing")));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->Header("Content-Type"), "application/json");
  auto j = Json(r->body);
  EXPECT_TRUE(j["error"]["message"].is_string());
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["code"], "not_found");
  // The connection stays usable after an error answer.
  ASSERT_TRUE(c.Send(Get("/v1/models")));
  auto r2 = c.ReadResponse();
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->status, 200);
}

TEST(RouterTest, WrongMethodIs405WithAllow) {
  auto server = StartServer(TestRouter());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send("DELETE /v1/models HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->Header("Allow"), "GET, POST, HEAD");
  EXPECT_EQ(Json(r->body)["error"]["code"], "method_not_allowed");
}

TEST(RouterTest, PrefixRoutesLongestWins) {
  auto server = StartServer(TestRouter());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/v1/sessions/abc123")));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "session abc123");
  ASSERT_TRUE(c.Send(Get("/v1/sessions/special/x")));
  r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "longer prefix");
  ASSERT_TRUE(c.Send(Get("/v1/sessions")));  // the prefix needs its slash
  r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
}

TEST(RouterTest, HeadFallsBackToGet) {
  auto server = StartServer(TestRouter());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send("HEAD /v1/models HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto r = c.ReadResponse(/*head_request=*/true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("Content-Length"), "11");
}

TEST(RouterTest, ThrowingHandlerIs500) {
  auto server = StartServer(TestRouter());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/throw")));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(Json(r->body)["error"]["type"], "server_error");
}

TEST(RouterTest, ThrowMidStreamTruncatesTheStream) {
  auto server = StartServer(TestRouter());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/throw-mid-stream")));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "data: a\n\n");  // what was written arrives...
  EXPECT_FALSE(r->complete);          // ...but no clean end
  EXPECT_TRUE(c.WaitClosed());
  EXPECT_EQ(server->active_streams(), 0);
}

TEST(RouterTest, HandlerThatNeverAnswersIs500NotAHang) {
  auto server = StartServer(TestRouter());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/forget")));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->status, 500);
}

TEST(RouterTest, AnswerFromAnotherThread) {
  ThreadBag bag;
  auto server = StartServer(TestRouter(&bag));
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/later") + Get("/later")));
  for (int i = 0; i < 2; ++i) {
    auto r = c.ReadResponse();
    ASSERT_TRUE(r && r->complete);
    EXPECT_EQ(r->body, "from another thread");
  }
}

TEST(RouterTest, SecondAnswerIsRefused) {
  auto server = StartServer(TestRouter());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/twice") + Get("/v1/models")));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "first");
  auto r2 = c.ReadResponse();  // framing intact: the next response follows
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->body, "{\"data\":[]}");
}

TEST(RouterTest, UnsafeExtraHeadersAreDropped) {
  auto server = StartServer(TestRouter());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/headers")));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->Header("X-Good"), "yes");
  EXPECT_FALSE(r->HasHeader("X-Bad"));
  EXPECT_FALSE(r->HasHeader("Injected"));
  EXPECT_EQ(r->Header("Content-Length"), "1");
  EXPECT_EQ(r->body, "x");
}

TEST(ErrorBodyTest, IsValidJsonEvenForHostileMessages) {
  std::string msg = std::string("quote\" backslash\\ newline\n ctrl\x01 bad utf8 \xff\xfe end");
  auto j = Json(ErrorBody(msg, "invalid_request_error", ""));
  EXPECT_TRUE(j["error"]["code"].is_null());
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["message"],
            "quote\" backslash\\ newline\n ctrl\x01 bad utf8 \xEF\xBF\xBD\xEF\xBF\xBD end");
  EXPECT_EQ(Json(ErrorBody("caf\xC3\xA9", "t", "c"))["error"]["message"], "caf\xC3\xA9");
}

TEST(RequestTest, HeaderLookupIgnoresCase) {
  Request r;
  r.headers = {{"Content-Type", "a"}, {"X-Session-Id", "s1"}, {"x-session-id", "s2"}};
  EXPECT_EQ(r.Header("content-type"), "a");
  EXPECT_EQ(r.Header("X-SESSION-ID"), "s1");
  EXPECT_EQ(r.Header("missing"), "");
  EXPECT_TRUE(r.HasHeader("CONTENT-TYPE"));
  EXPECT_FALSE(r.HasHeader("Content-Typ"));
}

}  // namespace
}  // namespace mneme::http
