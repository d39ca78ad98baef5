// Bounded load on `mneme serve` over loopback (a test, not a benchmark: it
// checks that nothing is dropped and reports memory, it times nothing):
//   1. 1,000 concurrent streaming chat requests, most of them queued by the
//      engine, each read to [DONE];
//   2. 48 users x 5 rounds of a session through Node's pooling keep-alive
//      client (undici): zero failed requests;
//   3. memory: server RSS per idle session (5,000 created first) and per
//      open (mostly queued) streaming connection.
//
//   node load.mjs MNEME_BIN MODEL.gguf
import { spawn } from "node:child_process";
import fs from "node:fs";
import assert from "node:assert/strict";

const [bin, model] = process.argv.slice(2);
const child = spawn(bin, ["serve", "-m", model, "--port", "0", "--threads", "2", "--kv-mem", "256"],
                    { stdio: ["ignore", "ignore", "pipe"] });
let log = "";
const port = await new Promise((resolve, reject) => {
  child.stderr.on("data", (d) => {
    log += d;
    const m = /on http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
    if (m) resolve(Number(m[1]));
  });
  child.on("exit", (code) => reject(new Error(`server exited ${code}: ${log}`)));
});
const base = `http://127.0.0.1:${port}`;
const rssKiB = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, "utf8"))[1]);
const post = (path, body) => fetch(`${base}${path}`, { method: "POST", body: JSON.stringify(body) });

// Warm up (tokenizer tables, first allocations).
await (await post("/v1/chat/completions", { messages: [{ role: "user", content: "warm" }], max_tokens: 2 })).json();
// Idle sessions first, on a fresh heap (measured before the streams grow it).
const rss1 = rssKiB();
const sessions = 5000;
for (let i = 0; i < sessions; i += 100) {
  await Promise.all(Array.from({ length: 100 }, () =>
    post("/v1/sessions", { system_prompt: "You are a helpful assistant." }).then((r) => r.json())));
}
const rss2 = rssKiB();
console.log(`ok: ${sessions} idle sessions, ~${((rss2 - rss1) / sessions).toFixed(2)} KiB each ` +
            `(RSS ${(rss1 / 1024).toFixed(1)} -> ${(rss2 / 1024).toFixed(1)} MiB)`);

const rss0 = rssKiB();

// 1. 1,000 concurrent streams. Each client reads its first bytes, then the
// test samples RSS while most are still queued, then reads everything.
const n = 1000;
let peak = 0;
const sampler = setInterval(() => { peak = Math.max(peak, rssKiB()); }, 20);
const streams = await Promise.all(Array.from({ length: n }, (_, i) =>
  post("/v1/chat/completions", { stream: true, max_tokens: 3,
                                 messages: [{ role: "user", content: `Stream ${i}` }] })));
for (const r of streams) assert.equal(r.status, 200);
const bodies = await Promise.all(streams.map((r) => r.text()));
clearInterval(sampler);
let complete = 0;
for (const b of bodies) if (b.endsWith("data: [DONE]\n\n")) ++complete;
assert.equal(complete, n, "every stream ended with [DONE]");
console.log(`ok: ${n} concurrent streams, all complete; peak RSS +${((peak - rss0) / 1024).toFixed(1)} MiB ` +
            `(~${((peak - rss0) / n).toFixed(1)} KiB per open stream, queue and KV included)`);

// 2. 48 users x 5 rounds with sessions, pooled keep-alive connections.
let failed = 0, ok = 0;
await Promise.all(Array.from({ length: 48 }, async (_, u) => {
  let session;
  for (let round = 0; round < 5; ++round) {
    const body = { messages: [{ role: "user", content: `user ${u} round ${round}` }], max_tokens: 4 };
    if (session) body.session_id = session;
    try {
      const r = await post("/v1/chat/completions", body);
      const j = await r.json();
      if (r.status !== 200) throw new Error(JSON.stringify(j));
      session = j.session_id;
      ++ok;
    } catch (e) {
      ++failed;
      console.log(`FAIL: user ${u} round ${round}: ${e.message}`);
    }
  }
}));
assert.equal(failed, 0);
console.log(`ok: 48 users x 5 rounds, ${ok} requests, 0 dropped`);

child.kill("SIGTERM");
const code = await new Promise((resolve) => child.on("exit", resolve));
assert.equal(code, 0);
