// Server tests over real sockets: keep-alive, limits, timeouts, pipelining,
// HTTP/1.0, HEAD, 100-continue, malformed input, bind errors.
#include "http/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "http/test_client.h"

namespace mneme::http {
namespace {

using std::chrono::milliseconds;
using testing::Get;
using testing::Post;
using testing::TestClient;

ServerOptions TestOptions() {
  ServerOptions o;
  o.port = 0;
  o.header_timeout = milliseconds(2000);
  o.keep_alive_timeout = milliseconds(2000);
  return o;
}

Router EchoRouter() {
  Router r;
  r.Add("GET", "/hello", [](const Request&, std::shared_ptr<ResponseWriter> w) {
    w->Send(200, "text/plain", "hello");
  });
  r.Add("POST", "/echo", [](const Request& req, std::shared_ptr<ResponseWriter> w) {
    w->Send(200, "text/plain", req.body, {{"X-Path", req.path}, {"X-Query", req.query}});
  });
  r.Add("GET", "/path", [](const Request& req, std::shared_ptr<ResponseWriter> w) {
    w->Send(200, "text/plain", req.path + "?" + req.query + " " + std::string(req.Header("x-ID")));
  });
  return r;
}

std::unique_ptr<Server> StartServer(ServerOptions options, Router router = EchoRouter()) {
  auto server = Server::Create(std::move(options), std::move(router));
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  auto s = std::move(server).value();
  Status st = s->Start();
  EXPECT_TRUE(st.ok()) << st.ToString();
  return s;
}

TEST(ServerTest, KeepAliveReusesOneConnection) {
  auto server = StartServer(TestOptions());
  TestClient c(server->port());
  ASSERT_TRUE(c.connected());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(c.Send(Get("/path?i=" + std::to_string(i), "X-Id: " + std::to_string(i) + "\r\n")));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r && r->complete);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "/path?i=" + std::to_string(i) + " " + std::to_string(i));
    EXPECT_EQ(r->Header("Server"), "mneme");
    EXPECT_EQ(r->Header("Keep-Alive"), "timeout=2");
    EXPECT_FALSE(r->HasHeader("Connection"));
  }
  EXPECT_EQ(server->requests_total(), 5);
  EXPECT_EQ(server->open_connections(), 1);
}

TEST(ServerTest, LastRequestPerConnectionSaysCloseThenCloses) {
  ServerOptions o = TestOptions();
  o.max_requests_per_connection = 3;
  auto server = StartServer(o);
  TestClient c(server->port());
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(c.Send(Get("/hello")));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r && r->complete);
    EXPECT_EQ(r->body, "hello");
    if (i < 3) {
      EXPECT_FALSE(r->HasHeader("Connection")) << i;
    } else {
      EXPECT_EQ(r->Header("Connection"), "close");
      EXPECT_FALSE(r->HasHeader("Keep-Alive"));
    }
  }
  EXPECT_TRUE(c.WaitClosed());
  EXPECT_TRUE(c.buffer().empty());
}

TEST(ServerTest, ClientConnectionCloseIsHonoured) {
  auto server = StartServer(TestOptions());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/hello", "Connection: close\r\n")));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_TRUE(c.WaitClosed());
}

TEST(ServerTest, IdleKeepAliveConnectionTimesOut) {
  ServerOptions o = TestOptions();
  o.keep_alive_timeout = milliseconds(200);
  auto server = StartServer(o);
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/hello")));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->Header("Keep-Alive"), "timeout=0");  // sub-second: "do not reuse"
  auto start = testing::Clock::now();
  EXPECT_TRUE(c.WaitClosed(milliseconds(5000)));
  EXPECT_GE(testing::Clock::now() - start, milliseconds(100));
  EXPECT_TRUE(c.buffer().empty());  // closed silently, no stray response
}

TEST(ServerTest, HeaderTooLargeIs431) {
  ServerOptions o = TestOptions();
  o.max_header_bytes = 1024;
  auto server = StartServer(o);
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/hello", "X-Big: " + std::string(4000, 'a') + "\r\n")));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->status, 431);
  EXPECT_EQ(r->Header("Connection"), "close");
  auto j = nlohmann::json::parse(r->body);
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_TRUE(c.WaitClosed());
}

TEST(ServerTest, BodyTooLargeIs413WithoutReadingIt) {
  ServerOptions o = TestOptions();
  o.max_body_bytes = 1024;
  auto server = StartServer(o);
  TestClient c(server->port());
  // Announce 100 MiB, send only the head and a little: the answer must not
  // wait for the rest.
  ASSERT_TRUE(c.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 104857600\r\n\r\n" +
                     std::string(100, 'x')));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_EQ(nlohmann::json::parse(r->body)["error"]["code"], "body_too_large");
  EXPECT_TRUE(c.WaitClosed());
}

TEST(ServerTest, ChunkedBodyTooLargeIs413) {
  ServerOptions o = TestOptions();
  o.max_body_bytes = 1024;
  auto server = StartServer(o);
  TestClient c(server->port());
  std::string req = "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 4; ++i) req += "200\r\n" + std::string(512, 'y') + "\r\n";
  ASSERT_TRUE(c.Send(req));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->status, 413);
  EXPECT_TRUE(c.WaitClosed());
}

TEST(ServerTest, ChunkedRequestBodyIsDechunked) {
  auto server = StartServer(TestOptions());
  TestClient c(server->port());
  ASSERT_TRUE(
      c.Send("POST /echo?x=1 HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
             "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello world");
  EXPECT_EQ(r->Header("X-Path"), "/echo");
  EXPECT_EQ(r->Header("X-Query"), "x=1");
}

TEST(ServerTest, SlowlorisIsClosedAfterHeaderTimeoutWhileOthersAreServed) {
  ServerOptions o = TestOptions();
  o.header_timeout = milliseconds(200);
  auto server = StartServer(o);
  TestClient slow(server->port());
  ASSERT_TRUE(slow.Send("GET /hello HTTP/1.1\r\nHost: t\r\nX-Slow: "));
  auto start = testing::Clock::now();
  TestClient fast(server->port());
  ASSERT_TRUE(fast.Send(Get("/hello")));
  auto r = fast.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->body, "hello");
  EXPECT_TRUE(slow.WaitClosed(milliseconds(5000)));
  EXPECT_GE(testing::Clock::now() - start, milliseconds(100));
  EXPECT_TRUE(slow.buffer().empty());
}

TEST(ServerTest, PipelinedRequestsAreAnsweredInOrder) {
  auto server = StartServer(TestOptions());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/path?a") + Post("/echo", "second") + Get("/path?c") + Get("/nope")));
  auto r1 = c.ReadResponse();
  auto r2 = c.ReadResponse();
  auto r3 = c.ReadResponse();
  auto r4 = c.ReadResponse();
  ASSERT_TRUE(r1 && r2 && r3 && r4);
  EXPECT_EQ(r1->body, "/path?a ");
  EXPECT_EQ(r2->body, "second");
  EXPECT_EQ(r3->body, "/path?c ");
  EXPECT_EQ(r4->status, 404);
}

TEST(ServerTest, Expect100ContinueGetsInterimResponse) {
  auto server = StartServer(TestOptions());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(
      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"));
  auto interim = c.ReadResponse();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(c.Send("ping"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ping");
}

TEST(ServerTest, HeadSendsHeadersOnly) {
  auto server = StartServer(TestOptions());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto r = c.ReadResponse(/*head_request=*/true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("Content-Length"), "5");
  // No body bytes may follow: the next response must start right away.
  ASSERT_TRUE(c.Send(Get("/hello")));
  auto r2 = c.ReadResponse();
  ASSERT_TRUE(r2 && r2->complete);
  EXPECT_EQ(r2->status, 200);
  EXPECT_EQ(r2->body, "hello");
}

TEST(ServerTest, Http10ClosesUnlessKeepAliveAsked) {
  auto server = StartServer(TestOptions());
  {
    TestClient c(server->port());
    ASSERT_TRUE(c.Send("GET /hello HTTP/1.0\r\n\r\n"));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r && r->complete);
    EXPECT_EQ(r->body, "hello");
    EXPECT_EQ(r->Header("Connection"), "close");
    EXPECT_TRUE(c.WaitClosed());
  }
  TestClient c(server->port());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(c.Send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r && r->complete);
    EXPECT_EQ(r->Header("Connection"), "keep-alive");
    EXPECT_EQ(r->body, "hello");
  }
}

TEST(ServerTest, MalformedRequestIs400AndClose) {
  auto server = StartServer(TestOptions());
  TestClient c(server->port());
  ASSERT_TRUE(c.Send("GET /hello HTTP/1.1\r\nBad Header Without Colon\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_EQ(nlohmann::json::parse(r->body)["error"]["type"], "invalid_request_error");
  EXPECT_TRUE(c.WaitClosed());
}

TEST(ServerTest, PortInUseIsAClearError) {
  auto first = StartServer(TestOptions());
  ServerOptions o = TestOptions();
  o.port = first->port();
  auto second = Server::Create(o, Router());
  ASSERT_TRUE(second.ok());
  Status st = (*second)->Start();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIo);
  EXPECT_NE(st.message().find("127.0.0.1:" + std::to_string(first->port())), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("in use"), std::string::npos) << st.message();
}

TEST(ServerTest, BadOptionsAreRejected) {
  ServerOptions o;
  o.io_threads = 0;
  EXPECT_EQ(Server::Create(o, Router()).status().code(), StatusCode::kInvalidArgument);
  o = ServerOptions();
  o.header_timeout = milliseconds(0);
  EXPECT_EQ(Server::Create(o, Router()).status().code(), StatusCode::kInvalidArgument);
}

TEST(ServerTest, ConnectionLimitAnswers503) {
  ServerOptions o = TestOptions();
  o.max_connections = 2;
  auto server = StartServer(o);
  TestClient a(server->port()), b(server->port());
  for (TestClient* c : {&a, &b}) {  // both surely accepted and counted
    ASSERT_TRUE(c->Send(Get("/hello")));
    ASSERT_TRUE(c->ReadResponse());
  }
  TestClient third(server->port());
  ASSERT_TRUE(third.Send(Get("/hello")));
  auto r = third.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_EQ(nlohmann::json::parse(r->body)["error"]["type"], "server_error");
  EXPECT_TRUE(third.WaitClosed());
}

TEST(ServerTest, TwoIoThreadsServeConcurrentClients) {
  ServerOptions o = TestOptions();
  o.io_threads = 2;
  auto server = StartServer(o);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      TestClient c(server->port());
      for (int i = 0; i < 50; ++i) {
        std::string body = std::to_string(t) + ":" + std::to_string(i);
        if (!c.Send(Post("/echo", body))) return;
        auto r = c.ReadResponse();
        if (r && r->body == body) ok.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 200);
  EXPECT_EQ(server->requests_total(), 200);
}

}  // namespace
}  // namespace mneme::http
