// `mneme serve` driven by the official OpenAI SDK (npm `openai`, pinned in
// tests/oracle/package.json): chat completions with and without streaming, a
// three-turn session that sends only the new message (session_id as an extra
// body field) with usage.prompt_tokens growing and cached_tokens covering the
// previous turns, the Responses API with previous_response_id (plain and
// streamed), and the SDK's error classes for 400/401/404.
//
//   node openai_sdk.mjs MNEME_BIN MODEL.gguf
import { spawn } from "node:child_process";
import path from "node:path";
import assert from "node:assert/strict";
import { fileURLToPath, pathToFileURL } from "node:url";

const [bin, model] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const { default: OpenAI } = await import(
  pathToFileURL(path.resolve(here, "../oracle/node_modules/openai/index.mjs")).href);

const child = spawn(bin, ["serve", "-m", model, "--port", "0", "--threads", "1", "--kv-mem", "64",
                          "--api-key", "sk-test"], { stdio: ["ignore", "ignore", "pipe"] });
let log = "";
const port = await new Promise((resolve, reject) => {
  child.stderr.on("data", (d) => {
    log += d;
    const m = /on http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
    if (m) resolve(Number(m[1]));
  });
  child.on("exit", (code) => reject(new Error(`server exited ${code}: ${log}`)));
});
const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "sk-test", maxRetries: 0 });
const modelId = (await client.models.list()).data[0].id;

let failures = 0;
async function check(name, fn) {
  try {
    await fn();
    console.log(`ok: ${name}`);
  } catch (e) {
    ++failures;
    console.log(`FAIL: ${name}: ${e.stack ?? e}`);
  }
}

await check("chat completion", async () => {
  const r = await client.chat.completions.create({ model: modelId, max_tokens: 8,
    messages: [{ role: "user", content: "Once upon a time" }] });
  assert.equal(r.choices[0].message.role, "assistant");
  assert.equal(r.usage.completion_tokens, 8);
  assert.match(r.session_id, /^sess_/);
});

await check("streamed chat completion with usage", async () => {
  const stream = await client.chat.completions.create({ model: modelId, max_tokens: 6, stream: true,
    stream_options: { include_usage: true }, messages: [{ role: "user", content: "Hi" }] });
  let text = "", usage = null, finish = null;
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      text += c.delta?.content ?? "";
      finish = c.finish_reason ?? finish;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(finish, "length");
  assert.equal(usage.completion_tokens, 6);
  assert.ok(text.length > 0);
});

await check("a three-turn session sends only the new message", async () => {
  let session, last;
  for (let turn = 1; turn <= 3; ++turn) {
    const params = { model: modelId, max_tokens: 10,
                     messages: [{ role: "user", content: `Part ${turn}, please.` }] };
    if (session) params.session_id = session;
    const r = await client.chat.completions.create(params);
    session = r.session_id;
    const u = r.usage;
    if (last) {
      assert.ok(u.prompt_tokens > last.prompt_tokens + last.completion_tokens, JSON.stringify(u));
      assert.ok(u.prompt_tokens_details.cached_tokens >= last.prompt_tokens - 16, JSON.stringify(u));
    }
    last = u;
  }
});

await check("responses with previous_response_id, plain and streamed", async () => {
  const r1 = await client.responses.create({ model: modelId, input: "Once upon a time",
                                             instructions: "Tell a story.", max_output_tokens: 6 });
  assert.equal(r1.object, "response");
  assert.ok(r1.output_text.length > 0);
  const r2 = await client.responses.create({ model: modelId, input: "And then?",
                                             previous_response_id: r1.id, max_output_tokens: 6 });
  assert.ok(r2.usage.input_tokens_details.cached_tokens > 0);
  const stream = await client.responses.create({ model: modelId, input: "Go on.", stream: true,
                                                 previous_response_id: r2.id, max_output_tokens: 4 });
  const types = [];
  let text = "";
  for await (const event of stream) {
    types.push(event.type);
    if (event.type === "response.output_text.delta") text += event.delta;
  }
  assert.equal(types[0], "response.created");
  assert.ok(types.includes("response.output_text.done"));
  assert.ok(text.length > 0);
  const fetched = await client.responses.retrieve(r2.id);
  assert.equal(fetched.output_text, r2.output_text);
});

await check("SDK error classes", async () => {
  await assert.rejects(client.chat.completions.create({ model: modelId, messages: [] }),
                       (e) => e instanceof OpenAI.BadRequestError && e.status === 400);
  await assert.rejects(client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "x" }] }),
                       (e) => e instanceof OpenAI.NotFoundError);
  const bad = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "wrong", maxRetries: 0 });
  await assert.rejects(bad.models.list(), (e) => e instanceof OpenAI.AuthenticationError);
  await assert.rejects(client.responses.retrieve("resp_doesnotexist"),
                       (e) => e instanceof OpenAI.NotFoundError);
});

child.kill("SIGTERM");
await new Promise((resolve) => child.on("exit", resolve));
process.exit(failures > 0 ? 1 : 0);
