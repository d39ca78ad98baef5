// End-to-end checks of `mneme serve` over real HTTP (Node's fetch, a pooling
// keep-alive client): chat completions with and without streaming, a
// three-turn session that sends only the new message each turn (prompt
// tokens grow, cached tokens cover the previous turns), concurrent turns on
// one session serialized (each prompt contains every earlier exchange),
// errors in OpenAI's schema, API keys, and a clean exit on SIGTERM.
//
//   node serve_e2e.mjs MNEME_BIN MODEL.gguf VOCAB.gguf
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import assert from "node:assert/strict";

const [bin, model, vocab] = process.argv.slice(2);
if (!bin || !model || !vocab) {
  console.error("usage: serve_e2e.mjs MNEME_BIN MODEL.gguf VOCAB.gguf");
  process.exit(2);
}

async function startServer(extra = [], modelPath = model) {
  const child = spawn(bin, ["serve", "-m", modelPath, "--port", "0", "--threads", "1", "--kv-mem", "64",
                            ...extra], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("server did not start: " + log)), 30000);
    child.stderr.on("data", (d) => {
      log += d;
      const m = /on http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    child.on("exit", (code) => reject(new Error(`server exited ${code}: ${log}`)));
  });
  return { child, base: `http://127.0.0.1:${port}`, log: () => log };
}

async function stop(server) {
  const exited = new Promise((resolve) => server.child.on("exit", (code, sig) => resolve({ code, sig })));
  server.child.kill("SIGTERM");
  const { code } = await exited;
  assert.equal(code, 0, "clean exit on SIGTERM");
}

async function chat(base, body, headers = {}) {
  const r = await fetch(`${base}/v1/chat/completions`, {
    method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: r.status, headers: r.headers, json: await r.json() };
}

const checks = [];
function check(name, fn) { checks.push([name, fn]); }

const server = await startServer();
const base = server.base;

check("health and models", async () => {
  assert.deepEqual(await (await fetch(`${base}/health`)).json(), { status: "ok" });
  const models = await (await fetch(`${base}/v1/models`)).json();
  assert.equal(models.object, "list");
  assert.equal(models.data.length, 1);
});

check("non-streaming chat creates a session", async () => {
  const r = await chat(base, { messages: [{ role: "user", content: "Once upon a time" }], max_tokens: 8 });
  assert.equal(r.status, 200);
  assert.equal(r.json.object, "chat.completion");
  assert.match(r.json.session_id, /^sess_[0-9a-f]{32}$/);
  assert.equal(r.headers.get("x-session-id"), r.json.session_id);
  assert.equal(r.json.choices[0].message.role, "assistant");
  assert.equal(r.json.usage.completion_tokens, 8);
  assert.equal(r.json.choices[0].finish_reason, "length");
});

check("three turns send only the new message; the cache covers history", async () => {
  let session, last = null;
  for (let turn = 1; turn <= 3; ++turn) {
    const body = { messages: [{ role: "user", content: `Tell me more, part ${turn}.` }], max_tokens: 12 };
    if (session) body.session_id = session;
    const r = await chat(base, body);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    session = r.json.session_id;
    const u = r.json.usage;
    if (last) {
      assert.ok(u.prompt_tokens > last.prompt_tokens + last.completion_tokens,
                `turn ${turn}: prompt ${u.prompt_tokens} must contain the previous exchange`);
      // Everything the previous turn computed, in whole 16-token blocks.
      const prev = last.prompt_tokens + last.completion_tokens - 1;
      assert.equal(u.prompt_tokens_details.cached_tokens, Math.floor(prev / 16) * 16, `turn ${turn}`);
    } else {
      assert.equal(u.prompt_tokens_details.cached_tokens, 0);
    }
    last = u;
  }
});

check("streaming: role, deltas, finish, usage, [DONE]", async () => {
  const r = await fetch(`${base}/v1/chat/completions`, { method: "POST",
    body: JSON.stringify({ messages: [{ role: "user", content: "Hi" }], max_tokens: 6, stream: true,
                           stream_options: { include_usage: true } }) });
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type"), /text\/event-stream/);
  const text = await r.text();
  const events = text.split("\n\n").filter((e) => e.length > 0);
  assert.equal(events.at(-1), "data: [DONE]");
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, "")));
  assert.equal(chunks[0].choices[0].delta.role, "assistant");
  assert.equal(chunks.at(-2).choices[0].finish_reason, "length");
  assert.equal(chunks.at(-1).usage.completion_tokens, 6);
  const content = chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? "")).join("");
  assert.ok(content.length > 0);
});

check("50 concurrent turns on one session: 50 exchanges, each saw all earlier ones", async () => {
  // 50 exchanges outgrow stories260K's 2048-token context: a small random
  // model with an 8192-token context (mneme make-model) serves this one.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mneme-e2e-"));
  const long = path.join(dir, "long.gguf");
  execFileSync(bin, ["make-model", "--arch", "llama", "--type", "f32", "--vocab", vocab, "--dim", "64",
                     "--layers", "2", "--heads", "4", "--kv-heads", "2", "--ff", "128", "--ctx", "8192",
                     "--seed", "3", "-o", long]);
  const server2 = await startServer([], long);
  try {
    await fiftyTurns(server2.base);
  } finally {
    await stop(server2);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

async function fiftyTurns(base) {
  const first = await chat(base, { messages: [{ role: "user", content: "Start." }], max_tokens: 2 });
  const session = first.json.session_id;
  const n = 50;
  const results = await Promise.all(Array.from({ length: n }, (_, i) =>
    chat(base, { session_id: session, messages: [{ role: "user", content: `Turn ${i}` }], max_tokens: 2 })));
  for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.json));
  // Each turn's prompt holds every earlier exchange: all prompt sizes differ
  // and each exceeds the previous one by at least that turn's exchange.
  const sizes = results.map((r) => r.json.usage.prompt_tokens).sort((a, b) => a - b);
  for (let i = 1; i < n; ++i) assert.ok(sizes[i] > sizes[i - 1] + 2, `prompt sizes ${sizes}`);
  const history = (await (await fetch(`${base}/v1/sessions/${session}`)).json()).messages;
  assert.equal(history.length, 2 + 2 * n);
  const users = history.filter((m) => m.role === "user").map((m) => m.content);
  assert.equal(new Set(users).size, n + 1, "every turn landed exactly once");
}

check("200 sessions x 3 turns concurrently", async () => {
  const sessions = 200;
  const run = async (k) => {
    let id;
    for (let t = 0; t < 3; ++t) {
      const body = { messages: [{ role: "user", content: `s${k} t${t}` }], max_tokens: 2 };
      if (id) body.session_id = id;
      const r = await chat(base, body);
      assert.equal(r.status, 200, JSON.stringify(r.json));
      id = r.json.session_id;
    }
    return id;
  };
  const ids = await Promise.all(Array.from({ length: sessions }, (_, k) => run(k)));
  assert.equal(new Set(ids).size, sessions);
  const one = await (await fetch(`${base}/v1/sessions/${ids[7]}`)).json();
  assert.deepEqual(one.messages.filter((m) => m.role === "user").map((m) => m.content), ["s7 t0", "s7 t1", "s7 t2"]);
});

check("a client that disconnects mid-stream leaves its session unchanged", async () => {
  const first = await chat(base, { messages: [{ role: "user", content: "Keep this." }], max_tokens: 2 });
  const session = first.json.session_id;
  const before = await (await fetch(`${base}/v1/sessions/${session}`)).json();
  const abort = new AbortController();
  const r = await fetch(`${base}/v1/chat/completions`, { method: "POST", signal: abort.signal,
    body: JSON.stringify({ session_id: session, stream: true, max_tokens: 1500,
                           messages: [{ role: "user", content: "A long story, please." }] }) });
  const reader = r.body.getReader();
  await reader.read();  // the first chunk: generation has started
  abort.abort();
  await reader.closed.catch(() => {});
  // The next turn waits for the cancelled one to end, then sees the old history.
  const next = await chat(base, { session_id: session, messages: [{ role: "user", content: "Next." }], max_tokens: 2 });
  assert.equal(next.status, 200);
  const after = await (await fetch(`${base}/v1/sessions/${session}`)).json();
  assert.deepEqual(after.messages.slice(0, before.messages.length), before.messages);
  assert.equal(after.messages.length, before.messages.length + 2);
  assert.ok(!after.messages.some((m) => m.content === "A long story, please."));
});

check("sessions: create with a system prompt, get, list, fork, delete", async () => {
  const json = async (r) => ({ status: r.status, body: await r.json() });
  const created = await json(await fetch(`${base}/v1/sessions`, { method: "POST",
    body: JSON.stringify({ system_prompt: "You tell stories.", metadata: { user: "e2e" } }) }));
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const id = created.body.id;
  assert.match(id, /^sess_[0-9a-f]{32}$/);
  const t1 = await chat(base, { session_id: id, messages: [{ role: "user", content: "A dragon." }], max_tokens: 5 });
  assert.equal(t1.status, 200, JSON.stringify(t1.json));
  const got = await json(await fetch(`${base}/v1/sessions/${id}`));
  assert.equal(got.status, 200);
  assert.deepEqual(got.body.messages.map((m) => m.role), ["system", "user", "assistant"]);
  assert.equal(got.body.messages[2].content, t1.json.choices[0].message.content);
  assert.equal(got.body.token_count, t1.json.usage.prompt_tokens + t1.json.usage.completion_tokens);
  // Fork: the copy continues independently and reuses the parent's KV.
  const fork = await json(await fetch(`${base}/v1/sessions/${id}/fork`, { method: "POST" }));
  assert.equal(fork.status, 200, JSON.stringify(fork.body));
  assert.notEqual(fork.body.id, id);
  const f1 = await chat(base, { session_id: fork.body.id, messages: [{ role: "user", content: "Go on." }], max_tokens: 5 });
  assert.equal(f1.status, 200);
  assert.ok(f1.json.usage.prompt_tokens_details.cached_tokens >= 16, JSON.stringify(f1.json.usage));
  assert.equal((await json(await fetch(`${base}/v1/sessions/${id}`))).body.messages.length, 3);
  // List pages through everything this caller created.
  const seen = new Set();
  let after = "";
  for (let guard = 0; guard < 100; ++guard) {
    const page = await json(await fetch(`${base}/v1/sessions?limit=100${after ? `&after=${after}` : ""}`));
    assert.equal(page.status, 200, JSON.stringify(page.body));
    for (const s of page.body.data) seen.add(s.id);
    if (!page.body.has_more) break;
    after = page.body.next_after;
  }
  assert.ok(seen.has(id) && seen.has(fork.body.id));
  const del = await json(await fetch(`${base}/v1/sessions/${id}`, { method: "DELETE" }));
  assert.deepEqual(del.body, { id, object: "session.deleted", deleted: true });
  assert.equal((await fetch(`${base}/v1/sessions/${id}`)).status, 404);
  const after_delete = await chat(base, { session_id: id, messages: [{ role: "user", content: "x" }] });
  assert.equal(after_delete.status, 404);
});

check("errors in OpenAI's schema", async () => {
  const bad = await chat(base, { messages: [] });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.param, "messages");
  const unknown = await chat(base, { session_id: "sess_00000000000000000000000000000000",
                                     messages: [{ role: "user", content: "x" }] });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.json.error.code, "session_not_found");
  const junk = await fetch(`${base}/v1/chat/completions`, { method: "POST", body: "{not json" });
  assert.equal(junk.status, 400);
  assert.equal((await junk.json()).error.type, "invalid_request_error");
  const model = await chat(base, { model: "no-such-model", messages: [{ role: "user", content: "x" }] });
  assert.equal(model.status, 404);
  const route = await fetch(`${base}/v1/nothing`);
  assert.equal(route.status, 404);
  // A declared body over the 8 MiB limit is refused from its headers alone
  // (a raw socket: fetch would still be uploading when the server answers).
  const huge = await new Promise((resolve, reject) => {
    const sock = net.connect(Number(new URL(base).port), "127.0.0.1", () => {
      sock.write("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
                 `Content-Length: ${9 << 20}\r\n\r\n{"messages":`);
    });
    let data = "";
    sock.on("data", (d) => { data += d; });
    sock.on("end", () => resolve(data));
    sock.on("error", reject);
    setTimeout(() => { sock.destroy(); resolve(data); }, 5000);
  });
  assert.match(huge, /^HTTP\/1\.1 413 /);
  assert.match(huge, /"error":\{"message":/);
});

check("responses: previous_response_id chains and branches, get, delete, store=false, streaming", async () => {
  const post = async (body) => {
    const r = await fetch(`${base}/v1/responses`, { method: "POST", body: JSON.stringify(body) });
    return { status: r.status, body: await r.json() };
  };
  const r1 = await post({ input: "Once upon a time", instructions: "Tell a story.", max_output_tokens: 6 });
  assert.equal(r1.status, 200, JSON.stringify(r1.body));
  assert.equal(r1.body.object, "response");
  assert.match(r1.body.id, /^resp_/);
  assert.equal(r1.body.status, "incomplete");  // stopped by max_output_tokens
  const text1 = r1.body.output[0].content[0].text;
  assert.equal(r1.body.output_text ?? text1, text1);
  const r2 = await post({ input: "What next?", previous_response_id: r1.body.id, max_output_tokens: 6 });
  assert.equal(r2.status, 200, JSON.stringify(r2.body));
  assert.ok(r2.body.usage.input_tokens_details.cached_tokens > 0, JSON.stringify(r2.body.usage));
  // Branch from r1 again: same history as r2's, not r2's answer.
  const r3 = await post({ input: "What next?", previous_response_id: r1.body.id, max_output_tokens: 6 });
  assert.equal(r3.body.usage.input_tokens, r2.body.usage.input_tokens);
  const got = await (await fetch(`${base}/v1/responses/${r2.body.id}`)).json();
  assert.equal(got.id, r2.body.id);
  assert.equal(got.output[0].content[0].text, r2.body.output[0].content[0].text);
  const del = await (await fetch(`${base}/v1/responses/${r2.body.id}`, { method: "DELETE" })).json();
  assert.equal(del.deleted, true);
  assert.equal((await fetch(`${base}/v1/responses/${r2.body.id}`)).status, 404);
  assert.equal((await post({ input: "x", previous_response_id: r2.body.id })).status, 404);
  const unstored = await post({ input: "x", store: false, max_output_tokens: 2 });
  assert.equal(unstored.status, 200);
  assert.equal((await post({ input: "y", previous_response_id: unstored.body.id })).status, 404);
  // Streaming: the Responses events in order, ending with response.incomplete.
  const s = await fetch(`${base}/v1/responses`, { method: "POST",
    body: JSON.stringify({ input: "Hi", stream: true, max_output_tokens: 4 }) });
  const events = (await s.text()).split("\n\n").filter((e) => e).map((e) => /^event: (\S+)/.exec(e)[1]);
  assert.deepEqual(events.slice(0, 4), ["response.created", "response.in_progress",
                                        "response.output_item.added", "response.content_part.added"]);
  assert.ok(events.includes("response.output_text.delta"));
  assert.equal(events.at(-1), "response.incomplete");
});

check("raw completions continue the prompt (stories260K's documented greedy text)", async () => {
  const post = async (body) => {
    const r = await fetch(`${base}/v1/completions`, { method: "POST", body: JSON.stringify(body) });
    return { status: r.status, body: await r.json() };
  };
  const r = await post({ prompt: "Once upon a time, there was a little girl named", max_tokens: 10,
                         temperature: 0 });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.object, "text_completion");
  assert.match(r.body.choices[0].text, /^ Lily\. She loved to play/);
  const s = await fetch(`${base}/v1/completions`, { method: "POST", body: JSON.stringify(
    { prompt: "Once upon a time, there was a little girl named", max_tokens: 10, temperature: 0, stream: true }) });
  const chunks = (await s.text()).split("\n\n").filter((e) => e && e !== "data: [DONE]")
    .map((e) => JSON.parse(e.replace(/^data: /, "")));
  assert.equal(chunks.map((c) => c.choices[0].text).join(""), r.body.choices[0].text);
  assert.equal((await post({ prompt: [[1, 2], [3]] })).status, 400);
});

check("metrics in Prometheus text", async () => {
  const r = await fetch(`${base}/metrics`);
  assert.equal(r.status, 200);
  const text = await r.text();
  const value = (name) => {
    const m = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
    assert.ok(m, `${name} missing`);
    return Number(m[1]);
  };
  assert.ok(value("mneme_generations_total") >= 5);
  assert.ok(value("mneme_cached_tokens_total") > 0);
  assert.ok(value("mneme_prompt_tokens_total") > value("mneme_cached_tokens_total"));
  assert.ok(value("mneme_kv_blocks_total") > 0);
  assert.ok(value("mneme_sessions") >= 3);
  assert.ok(value('mneme_errors_total\\{class="4xx"\\}') >= 3);
  assert.equal(value('mneme_time_to_first_token_seconds_bucket\\{le="\\+Inf"\\}'),
               value("mneme_time_to_first_token_seconds_count"));
});

let failures = 0;
for (const [name, fn] of checks) {
  try {
    await fn();
    console.log(`ok: ${name}`);
  } catch (e) {
    ++failures;
    console.log(`FAIL: ${name}: ${e.message}`);
  }
}
await stop(server);

// API keys: a second server.
const keyed = await startServer(["--api-key", "k1,k2"]);
try {
  const none = await chat(keyed.base, { messages: [{ role: "user", content: "x" }], max_tokens: 1 });
  assert.equal(none.status, 401);
  const wrong = await chat(keyed.base, { messages: [{ role: "user", content: "x" }], max_tokens: 1 },
                           { authorization: "Bearer nope" });
  assert.equal(wrong.status, 401);
  const right = await chat(keyed.base, { messages: [{ role: "user", content: "x" }], max_tokens: 1 },
                           { authorization: "Bearer k2" });
  assert.equal(right.status, 200);
  // A session belongs to the key that made it.
  const other = await chat(keyed.base, { session_id: right.json.session_id,
                                         messages: [{ role: "user", content: "y" }], max_tokens: 1 },
                           { authorization: "Bearer k1" });
  assert.equal(other.status, 404);
  console.log("ok: api keys and session ownership");
} catch (e) {
  ++failures;
  console.log(`FAIL: api keys: ${e.message}`);
}
await stop(keyed);

// Idle expiry: a server whose sessions live 1 s.
const shortTtl = await startServer(["--session-ttl", "1"]);
try {
  const r = await chat(shortTtl.base, { messages: [{ role: "user", content: "x" }], max_tokens: 1 });
  assert.equal(r.status, 200);
  assert.equal((await fetch(`${shortTtl.base}/v1/sessions/${r.json.session_id}`)).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 2100));  // the TTL must pass: a real wait
  assert.equal((await fetch(`${shortTtl.base}/v1/sessions/${r.json.session_id}`)).status, 404);
  const late = await chat(shortTtl.base, { session_id: r.json.session_id,
                                           messages: [{ role: "user", content: "y" }] });
  assert.equal(late.status, 404);
  assert.equal(late.json.error.code, "session_not_found");
  console.log("ok: an idle session expires after --session-ttl; its id is then a 404");
} catch (e) {
  ++failures;
  console.log(`FAIL: session TTL: ${e.message}`);
}
await stop(shortTtl);

// --session-busy reject: a turn on a session whose turn is running is a 409.
const rejecting = await startServer(["--session-busy", "reject"]);
try {
  const first = await chat(rejecting.base, { messages: [{ role: "user", content: "Hi" }], max_tokens: 1 });
  const session = first.json.session_id;
  const abort = new AbortController();
  const running = await fetch(`${rejecting.base}/v1/chat/completions`, { method: "POST", signal: abort.signal,
    body: JSON.stringify({ session_id: session, stream: true, max_tokens: 1500,
                           messages: [{ role: "user", content: "A long one." }] }) });
  const reader = running.body.getReader();
  await reader.read();  // that turn holds the session now
  const busy = await chat(rejecting.base, { session_id: session, messages: [{ role: "user", content: "Me too" }] });
  assert.equal(busy.status, 409);
  assert.equal(busy.json.error.type, "invalid_request_error");
  abort.abort();
  await reader.closed.catch(() => {});
  console.log("ok: --session-busy reject answers 409 while a turn runs");
} catch (e) {
  ++failures;
  console.log(`FAIL: session busy reject: ${e.message}`);
}
await stop(rejecting);

// SIGTERM while a turn streams: the turn finishes, then the server exits 0.
const draining = await startServer();
try {
  const r = await fetch(`${draining.base}/v1/chat/completions`, { method: "POST",
    body: JSON.stringify({ stream: true, max_tokens: 40, messages: [{ role: "user", content: "Go" }] }) });
  const reader = r.body.getReader();
  let text = new TextDecoder().decode((await reader.read()).value);
  const exited = new Promise((resolve) => draining.child.on("exit", (code) => resolve(code)));
  draining.child.kill("SIGTERM");
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  assert.ok(text.endsWith("data: [DONE]\n\n"), "the running turn completed");
  assert.equal(await exited, 0);
  console.log("ok: SIGTERM lets a running turn finish, then exits 0");
} catch (e) {
  ++failures;
  console.log(`FAIL: graceful shutdown: ${e.message}`);
  draining.child.kill("SIGKILL");
}

// A conversation that outgrows the context: 400 by default; with
// --context-overflow truncate the oldest turns leave the prompt instead.
for (const mode of ["error", "truncate"]) {
  const small = await startServer(["--ctx-size", "256", "--context-overflow", mode]);
  try {
    let session, status = 200, last;
    const long = "and then the little dog ran to the park to play with a big red ball ".repeat(2);
    for (let turn = 0; turn < 8 && status === 200; ++turn) {
      const body = { messages: [{ role: "user", content: long }], max_tokens: 8 };
      if (session) body.session_id = session;
      const r = await chat(small.base, body);
      status = r.status;
      last = r.json;
      if (r.status === 200) session = r.json.session_id;
    }
    if (mode === "error") {
      assert.equal(status, 400);
      assert.equal(last.error.code, "context_length_exceeded");
    } else {
      assert.equal(status, 200, JSON.stringify(last));
      assert.ok(last.usage.prompt_tokens < 256);
      const history = (await (await fetch(`${small.base}/v1/sessions/${session}`)).json()).messages;
      assert.equal(history.length, 16, "the stored history keeps every turn");
    }
    console.log(`ok: context overflow (${mode})`);
  } catch (e) {
    ++failures;
    console.log(`FAIL: context overflow (${mode}): ${e.message}`);
  }
  await stop(small);
}
process.exit(failures > 0 ? 1 : 0);
