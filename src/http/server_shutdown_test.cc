// Graceful shutdown: in-flight streams finish before the deadline, idle
// keep-alive connections close at once, new connections are refused, late
// answers say Connection: close, and streams still open at the deadline are
// cut (OnClose fires). Writers may outlive the server safely.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "http/server.h"
#include "http/stream_test_util.h"
#include "http/test_client.h"

namespace mneme::http {
namespace {

using std::chrono::milliseconds;
using testing::Get;
using testing::Inbox;
using testing::StartStreamServer;
using testing::TestClient;

TEST(ShutdownTest, InFlightFinishesIdleClosesNewRefused) {
  Inbox inbox;
  auto server = StartStreamServer(ServerOptions(), &inbox);
  const int port = server->port();

  TestClient idle(port);
  ASSERT_TRUE(idle.Send(Get("/hello")));
  ASSERT_TRUE(idle.ReadResponse());  // now an idle keep-alive connection

  TestClient streaming(port);
  ASSERT_TRUE(streaming.Send(Get("/stream")));
  auto stream = inbox.Pop();
  ASSERT_TRUE(stream);
  std::atomic<bool> stream_closed_early{false};
  stream->SetOnClose([&] { stream_closed_early = true; });
  ASSERT_TRUE(stream->Write("data: 1\n\n"));

  TestClient deferred(port);
  ASSERT_TRUE(deferred.Send(Get("/defer")));
  auto late = inbox.Pop();
  ASSERT_TRUE(late);

  auto done = std::async(std::launch::async, [&] { server->Shutdown(milliseconds(20000)); });

  // Idle connections are closed at once; by then the listener is closed too.
  EXPECT_TRUE(idle.WaitClosed(milliseconds(10000)));
  EXPECT_TRUE(idle.buffer().empty());
  int fd = testing::ConnectTo(port);
  EXPECT_LT(fd, 0);
  EXPECT_EQ(errno, ECONNREFUSED);
  if (fd >= 0) ::close(fd);

  // A response that starts during shutdown announces the close.
  ASSERT_TRUE(late->Send(200, "text/plain", "late answer"));
  auto r = deferred.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->body, "late answer");
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_TRUE(deferred.WaitClosed());
  deferred.Reset();  // ends the server's lingering close early

  // The stream in flight continues and ends normally.
  EXPECT_NE(done.wait_for(milliseconds(0)), std::future_status::ready);
  ASSERT_TRUE(stream->Write("data: 2\n\n"));
  ASSERT_TRUE(stream->End());
  auto s = streaming.ReadResponse();
  ASSERT_TRUE(s && s->complete);
  EXPECT_EQ(s->chunks, (std::vector<std::string>{"data: 1\n\n", "data: 2\n\n"}));
  EXPECT_TRUE(streaming.WaitClosed());
  streaming.Reset();

  ASSERT_EQ(done.wait_for(std::chrono::seconds(15)),
            std::future_status::ready);  // well before the deadline
  EXPECT_FALSE(stream_closed_early.load());
  EXPECT_EQ(server->open_connections(), 0);
}

TEST(ShutdownTest, StreamStillOpenAtDeadlineIsClosed) {
  Inbox inbox;
  auto server = StartStreamServer(ServerOptions(), &inbox);
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/stream")));
  auto w = inbox.Pop();
  ASSERT_TRUE(w);
  std::promise<void> closed;
  w->SetOnClose([&closed] { closed.set_value(); });
  ASSERT_TRUE(w->Write("data: only\n\n"));
  auto start = testing::Clock::now();
  server->Shutdown(milliseconds(300));
  EXPECT_GE(testing::Clock::now() - start, milliseconds(250));
  ASSERT_EQ(closed.get_future().wait_for(milliseconds(0)), std::future_status::ready);
  EXPECT_TRUE(w->IsClosed());
  EXPECT_FALSE(w->Write("data: too late\n\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(r->body, "data: only\n\n");
  EXPECT_TRUE(c.WaitClosed());
}

TEST(ShutdownTest, WritersMayOutliveTheServer) {
  Inbox inbox;
  std::shared_ptr<ResponseWriter> w;
  std::shared_ptr<ResponseWriter> deferred;
  TestClient* c = nullptr;
  TestClient* d = nullptr;
  {
    auto server = StartStreamServer(ServerOptions(), &inbox);
    c = new TestClient(server->port());
    d = new TestClient(server->port());
    ASSERT_TRUE(c->Send(Get("/stream")));
    w = inbox.Pop();
    ASSERT_TRUE(d->Send(Get("/defer")));
    deferred = inbox.Pop();
    ASSERT_TRUE(w && deferred);
  }  // ~Server: Shutdown(0)
  EXPECT_TRUE(w->IsClosed());
  EXPECT_FALSE(w->Write("x"));
  EXPECT_FALSE(w->End());
  EXPECT_FALSE(deferred->Send(200, "text/plain", "x"));
  w.reset();
  deferred.reset();  // the last references: sockets and io_context go now
  EXPECT_TRUE(c->WaitClosed());
  EXPECT_TRUE(d->WaitClosed());
  delete c;
  delete d;
}

TEST(ShutdownTest, ShutdownIsIdempotentAndSafeBeforeStart) {
  auto server = Server::Create(ServerOptions(), Router());
  ASSERT_TRUE(server.ok());
  (*server)->Shutdown(milliseconds(10));  // never started: no-op
  ServerOptions o;
  o.port = 0;
  auto s2 = Server::Create(o, Router());
  ASSERT_TRUE(s2.ok());
  ASSERT_TRUE((*s2)->Start().ok());
  (*s2)->Shutdown(milliseconds(10));
  (*s2)->Shutdown(milliseconds(10));
  EXPECT_EQ((*s2)->open_connections(), 0);
}

}  // namespace
}  // namespace mneme::http
