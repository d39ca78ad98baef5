// ResponseWriter streaming over real sockets: chunked framing from another
// thread, slow and stalled readers, client disconnects, pipelining behind a
// stream, HTTP/1.0 streams, a writer dropped mid-stream.
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <thread>
#include <vector>

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

// Reads until the head of a response arrived (stream started).
bool ReadHead(TestClient& c) {
  auto deadline = testing::Clock::now() + milliseconds(5000);
  while (c.buffer().find("\r\n\r\n") == std::string::npos) {
    if (c.ReadSome(deadline) <= 0) return false;
  }
  return true;
}

TEST(StreamTest, EventsFromAnotherThreadArriveInOrderWithChunkedFraming) {
  Inbox inbox;
  auto server = StartStreamServer(ServerOptions(), &inbox);
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/stream")));
  auto w = inbox.Pop();
  ASSERT_TRUE(w);
  EXPECT_EQ(server->active_streams(), 1);
  std::vector<std::string> expected;
  for (int i = 0; i < 300; ++i) expected.push_back("data: {\"i\":" + std::to_string(i) + "}\n\n");
  expected.push_back(std::string(70000, 'z'));  // a chunk bigger than one write slice of the client
  std::thread producer([&] {
    for (const auto& e : expected) EXPECT_TRUE(w->Write(e));
    EXPECT_TRUE(w->Write(""));  // no-op, must not end the stream
    EXPECT_TRUE(w->End());
    EXPECT_FALSE(w->Write("after end"));
  });
  auto r = c.ReadResponse();
  producer.join();
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->complete);
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(r->chunked);
  EXPECT_EQ(r->Header("Content-Type"), "text/event-stream");
  EXPECT_EQ(r->Header("Cache-Control"), "no-cache");
  EXPECT_EQ(r->Header("X-Accel-Buffering"), "no");
  EXPECT_FALSE(r->HasHeader("Content-Length"));
  EXPECT_EQ(r->chunks, expected);
  EXPECT_EQ(server->active_streams(), 0);
  // The connection is kept alive after a completed stream.
  ASSERT_TRUE(c.Send(Get("/hello")));
  auto r2 = c.ReadResponse();
  ASSERT_TRUE(r2 && r2->complete);
  EXPECT_EQ(r2->body, "hello");
}

TEST(StreamTest, StalledReaderIsCutOffAtBufferLimitWhileOthersAreServed) {
  Inbox inbox;
  ServerOptions o;
  o.max_stream_buffer_bytes = 1 << 20;
  auto server = StartStreamServer(o, &inbox);
  TestClient stalled(server->port(), /*rcvbuf=*/4096);
  ASSERT_TRUE(stalled.connected());
  ASSERT_TRUE(stalled.Send(Get("/stream")));  // and never reads again
  auto w = inbox.Pop();
  ASSERT_TRUE(w);
  std::promise<void> closed;
  w->SetOnClose([&closed] { closed.set_value(); });

  const std::string piece(64 * 1024, 'x');
  std::promise<void> started;
  std::promise<void> resume;
  std::atomic<bool> refused{false};
  std::thread producer([&] {
    for (int i = 0; i < 8; ++i) EXPECT_TRUE(w->Write(piece));  // 512 KiB: within the limit
    started.set_value();
    resume.get_future().wait();
    // At most 1.25 GiB: the kernel buffers (a few MiB here) cannot absorb that,
    // so the queue must pass 1 MiB and Write must refuse, never block.
    for (int i = 0; i < 20000 && !refused; ++i) {
      if (!w->Write(piece)) refused = true;
    }
  });
  ASSERT_EQ(started.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  // Meanwhile another client is served normally.
  TestClient other(server->port());
  ASSERT_TRUE(other.Send(Get("/hello")));
  auto r = other.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_EQ(r->body, "hello");
  resume.set_value();
  producer.join();
  EXPECT_TRUE(refused.load());
  ASSERT_EQ(closed.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(w->IsClosed());
  EXPECT_FALSE(w->Write("more"));
  EXPECT_EQ(server->active_streams(), 0);
}

TEST(StreamTest, WriteWithoutProgressTimesOut) {
  Inbox inbox;
  ServerOptions o;
  o.write_timeout = milliseconds(300);
  o.max_stream_buffer_bytes = 256 << 20;
  auto server = StartStreamServer(o, &inbox);
  TestClient stalled(server->port(), /*rcvbuf=*/4096);
  ASSERT_TRUE(stalled.Send(Get("/stream")));
  auto w = inbox.Pop();
  ASSERT_TRUE(w);
  std::promise<void> closed;
  w->SetOnClose([&closed] { closed.set_value(); });
  // 32 MiB: more than the kernel buffers take (4 MiB send buffer here), so
  // the server's write stalls on a reader that never reads.
  const std::string piece(64 * 1024, 'x');
  for (int i = 0; i < 512; ++i) {
    if (!w->Write(piece)) break;
  }
  ASSERT_EQ(closed.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_FALSE(w->Write(piece));
  EXPECT_EQ(w->queued_bytes(), 0u);
}

TEST(StreamTest, ClientDisconnectFiresOnCloseAndWriteFails) {
  Inbox inbox;
  auto server = StartStreamServer(ServerOptions(), &inbox);
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/stream")));
  auto w = inbox.Pop();
  ASSERT_TRUE(w);
  std::promise<void> closed;
  std::atomic<int> calls{0};
  w->SetOnClose([&] {
    if (calls.fetch_add(1) == 0) closed.set_value();
  });
  ASSERT_TRUE(w->Write("data: first\n\n"));
  ASSERT_TRUE(ReadHead(c));
  c.Reset();  // the client goes away while the stream is idle
  ASSERT_EQ(closed.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(w->IsClosed());
  EXPECT_FALSE(w->Write("data: second\n\n"));
  EXPECT_FALSE(w->End());
  EXPECT_EQ(calls.load(), 1);
  // A callback set after the close runs at once.
  bool late = false;
  w->SetOnClose([&late] { late = true; });
  EXPECT_FALSE(late);  // fired once already: not again
  EXPECT_EQ(server->active_streams(), 0);
}

TEST(StreamTest, OnCloseSetAfterDisconnectRunsImmediately) {
  Inbox inbox;
  auto server = StartStreamServer(ServerOptions(), &inbox);
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/stream")));
  auto w = inbox.Pop();
  ASSERT_TRUE(w);
  ASSERT_TRUE(ReadHead(c));
  c.Reset();
  // Wait (bounded) until the server noticed, without a callback installed.
  auto deadline = testing::Clock::now() + std::chrono::seconds(10);
  while (server->open_connections() != 0 && testing::Clock::now() < deadline)
    std::this_thread::yield();
  ASSERT_EQ(server->open_connections(), 0);
  bool ran = false;
  w->SetOnClose([&ran] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(StreamTest, DroppedWriterMidStreamClosesWithoutTerminator) {
  Inbox inbox;
  auto server = StartStreamServer(ServerOptions(), &inbox);
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/stream")));
  {
    auto w = inbox.Pop();
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->Write("partial"));
  }  // the producer vanished without End
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->complete);  // the client can tell it was cut short
  EXPECT_EQ(r->body, "partial");
  EXPECT_TRUE(c.WaitClosed());
}

TEST(StreamTest, RequestPipelinedBehindAStreamWaitsForItsEnd) {
  Inbox inbox;
  auto server = StartStreamServer(ServerOptions(), &inbox);
  TestClient c(server->port());
  ASSERT_TRUE(c.Send(Get("/stream") + Get("/hello")));
  auto w = inbox.Pop();
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->Write("data: 1\n\n"));
  ASSERT_TRUE(ReadHead(c));
  // The server has read the pipelined request by now (or will); it must not
  // answer it before the stream ends, and must not mistake it for a close.
  EXPECT_FALSE(w->IsClosed());
  ASSERT_TRUE(w->Write("data: 2\n\n"));
  ASSERT_TRUE(w->End());
  auto r1 = c.ReadResponse();
  ASSERT_TRUE(r1 && r1->complete);
  EXPECT_EQ(r1->chunks, (std::vector<std::string>{"data: 1\n\n", "data: 2\n\n"}));
  auto r2 = c.ReadResponse();
  ASSERT_TRUE(r2 && r2->complete);
  EXPECT_EQ(r2->body, "hello");
}

TEST(StreamTest, Http10StreamIsCloseDelimited) {
  Inbox inbox;
  auto server = StartStreamServer(ServerOptions(), &inbox);
  TestClient c(server->port());
  ASSERT_TRUE(c.Send("GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  auto w = inbox.Pop();
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->Write("data: a\n\n"));
  EXPECT_TRUE(w->Write("data: b\n\n"));
  EXPECT_TRUE(w->End());
  auto r = c.ReadResponse();
  ASSERT_TRUE(r && r->complete);
  EXPECT_FALSE(r->HasHeader("Transfer-Encoding"));
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_EQ(r->body, "data: a\n\ndata: b\n\n");
}

}  // namespace
}  // namespace mneme::http
