// llama.cpp speed reference for the engine benchmark: prompt processing and
// generation throughput of a GGUF model through node-llama-cpp 3.21.1 (CPU),
// measured the way llama-bench measures pp512 / tg128.
//
//   node tests/engine_oracle/llamacpp_bench.mjs -m MODEL.gguf [--threads 2]
//        [--pp 512] [--tg 128] [--reps 3] [--json]
//
// pp: one batch of `--pp` seeded random token ids evaluated into an empty
//     sequence (batch size = pp, logits for the last position only, as
//     llama-bench), timed from submission to the sampled next token.
// tg: `--tg` single-token decode steps from an empty sequence, each computing
//     the full output row and taking the greedy token (llama-bench decodes
//     without sampling; the greedy argmax over the vocabulary is noise next to
//     the output matmul).
// Each test runs once as warm-up, then `--reps` times; the KV cache is cleared
// between runs. Prints mean and standard deviation of tokens/s.
//
// Threads: node-llama-cpp's thread count is a hint, and ggml's worker threads
// spin at barriers, so on a loaded machine (other builds running) asking for
// as many threads as there are cores can be much slower than one thread.
// Benchmark on an idle machine.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    model: { type: "string", short: "m" },
    threads: { type: "string", short: "t", default: "2" },
    pp: { type: "string", default: "512" },
    tg: { type: "string", default: "128" },
    reps: { type: "string", short: "r", default: "3" },
    json: { type: "boolean", default: false },
  },
});
const threads = Number.parseInt(args.threads, 10);
const nPp = Number.parseInt(args.pp, 10);
const nTg = Number.parseInt(args.tg, 10);
const reps = Number.parseInt(args.reps, 10);
if (!args.model || !(threads >= 1) || !(nPp >= 0) || !(nTg >= 0) || !(reps >= 1)) {
  console.error("usage: llamacpp_bench.mjs -m MODEL.gguf [--threads T] [--pp 512] [--tg 128] [--reps 3] [--json]");
  process.exit(2);
}

const here = path.dirname(fileURLToPath(import.meta.url));
const entry = path.resolve(here, "../oracle/node_modules/node-llama-cpp/dist/index.js");
const { getLlama, LlamaLogLevel } = await import(pathToFileURL(entry).href);

const llama = await getLlama({ gpu: false, build: "never", skipDownload: true, progressLogs: false,
                               logLevel: LlamaLogLevel.error, logger: () => {} });
const model = await llama.loadModel({ modelPath: args.model, gpuLayers: 0 });
const nVocab = model.fileInfo.metadata?.tokenizer?.ggml?.tokens?.length;
if (!Number.isInteger(nVocab)) throw new Error("no tokenizer.ggml.tokens in the GGUF metadata");
const context = await model.createContext({
  contextSize: Math.max(64, nPp + nTg + 16), batchSize: Math.max(32, nPp), sequences: 1,
  threads: { ideal: threads, min: threads }, flashAttention: false,
});
const sequence = context.getSequence();

// Seeded random prompt ids (a 32-bit LCG); llama-bench also feeds uniformly
// random ids.
let state = 0x9e3779b9;
const nextId = () => {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  return state % nVocab;
};
const ppTokens = Array.from({ length: nPp }, nextId);
const startToken = model.tokens.bos ?? ppTokens[0] ?? 0;

async function runPp() {
  await sequence.clearHistory();
  const input = ppTokens.map((t, i) => (i === ppTokens.length - 1
    ? [t, { generateNext: { token: true, options: { temperature: 0 } } }] : t));
  const t0 = process.hrtime.bigint();
  await sequence.controlledEvaluate(input);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function runTg() {
  await sequence.clearHistory();
  let n = 0;
  const t0 = process.hrtime.bigint();
  // Each yielded token costs one decode step (the first decodes startToken).
  for await (const _ of sequence.evaluate([startToken], { temperature: 0, yieldEogToken: true })) {
    if (++n >= nTg) break;
  }
  if (n < nTg) throw new Error(`generation ended after ${n} of ${nTg} tokens`);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function measure(fn, nTokens) {
  if (nTokens === 0) return null;
  await fn();  // warm-up
  const rates = [];
  for (let i = 0; i < reps; i++) rates.push(nTokens / await fn());
  const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
  const sd = Math.sqrt(rates.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, rates.length - 1));
  return { tokens: nTokens, tokens_per_s: mean, stddev: sd, reps };
}

const pp = await measure(runPp, nPp);
const tg = await measure(runTg, nTg);
const result = { engine: "llama.cpp (node-llama-cpp 3.21.1, CPU)", model: args.model, threads, pp, tg };
if (args.json) {
  process.stdout.write(JSON.stringify(result) + "\n");
} else {
  const fmt = (r, name) => (r ? `${name}${r.tokens}: ${r.tokens_per_s.toFixed(2)} ± ${r.stddev.toFixed(2)} tokens/s` : "");
  console.log(`${path.basename(args.model)}  threads=${threads}  ${fmt(pp, "pp")}  ${fmt(tg, "tg")}`);
}

await context.dispose();
await model.dispose();
await llama.dispose();
