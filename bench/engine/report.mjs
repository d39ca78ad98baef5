// Report of the engine speed benchmark (scripts/bench_engine.sh): reads the
// per-model results the script left in --dir, prints the comparison table
// (Markdown, so it can go straight into docs/benchmarks.md) and writes the
// JSON results file.
//
//   node bench/engine/report.mjs --dir WORK --out bench/results/engine.json --meta JSON
//
// In WORK: models.txt (NAME SIZE TYPE PATH per line), info-ID.json (`mneme
// info --json`), llamacpp-ID.json (llamacpp_bench.mjs --json) or
// llamabench-ID.json (llama-bench -o json), mneme-ID-pp.log and
// mneme-ID-tg.log (one `mneme generate --timings` line per run) and
// bandwidth.json (bench/engine/bandwidth.cc). ID is NAME-TYPE.
//
// Bytes streamed per generated token: every tensor's bytes except the token
// embedding, of which one row is read (the whole table when the output is
// tied to it), plus the F16 K and V cache rows attention reads, averaged over
// the TG decode steps (context 1..TG). Bandwidth bound = best measured read
// bandwidth (any thread count) / those bytes.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: { dir: { type: "string" }, out: { type: "string" }, meta: { type: "string", default: "{}" } },
});
const dir = args.dir;
const meta = JSON.parse(args.meta);
const threads = meta.method?.threads ?? 2;
const tgTokens = meta.method?.tg_tokens ?? 128;
const ppTokens = meta.method?.pp_tokens ?? 512;

const readJson = (f) => { try { return JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")); } catch { return null; } };
const readLines = (f) => { try { return fs.readFileSync(path.join(dir, f), "utf8").split("\n").filter(Boolean); } catch { return []; } };
const stats = (xs) => {
  if (xs.length === 0) return null;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = xs.length > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1)) : 0;
  return { tokens_per_s: mean, stddev: sd, reps: xs.length };
};

// `mneme generate --timings` prints e.g. "mneme generate: load 8.3 ms;
// prompt 512 tokens in 44000.0 ms (11.6 tok/s); generation 129 tokens in
// 977.5 ms (8.2 tok/s); 2 threads" (generation tok/s = decode steps / time).
function parseMneme(line) {
  const p = /prompt\D*?(\d+)\s*tokens?\s*in\s*([\d.]+)\s*ms/i.exec(line);
  const g = /generat\w*\D*?(\d+)\s*tokens?\s*in\s*([\d.]+)\s*ms(?:\s*\(([\d.]+)\s*tok)?/i.exec(line);
  return {
    prompt_tokens: p ? Number(p[1]) : null,
    prompt_tps: p && Number(p[2]) > 0 ? Number(p[1]) / (Number(p[2]) / 1e3) : null,
    gen_tokens: g ? Number(g[1]) : null,
    gen_tps: g ? (g[3] !== undefined ? Number(g[3]) : (Number(g[1]) - 1) / (Number(g[2]) / 1e3)) : null,
  };
}

function llamaResult(id) {
  const nlc = readJson(`llamacpp-${id}.json`);
  if (nlc) return { pp: nlc.pp, tg: nlc.tg };
  const lb = readJson(`llamabench-${id}.json`);
  if (!Array.isArray(lb)) return { pp: null, tg: null };
  const pick = (pred) => {
    const r = lb.find(pred);
    return r ? { tokens: r.n_prompt || r.n_gen, tokens_per_s: r.avg_ts, stddev: r.stddev_ts, reps: r.samples_ts?.length } : null;
  };
  return { pp: pick((r) => r.n_prompt > 0 && r.n_gen === 0), tg: pick((r) => r.n_gen > 0 && r.n_prompt === 0) };
}

function modelFacts(info) {
  const md = Object.fromEntries((info.metadata ?? []).map((e) => [e.key, e.value]));
  const arch = md["general.architecture"];
  const tensors = info.tensors ?? [];
  const params = tensors.reduce((a, t) => a + t.num_elements, 0);
  const embd = tensors.find((t) => t.name === "token_embd.weight");
  const tied = !tensors.some((t) => t.name === "output.weight");
  const vocab = embd ? embd.shape[1] : 0;
  let weightBytes = tensors.reduce((a, t) => a + t.num_bytes, 0);
  if (embd && !tied) weightBytes -= embd.num_bytes - embd.num_bytes / vocab;
  const layers = md[`${arch}.block_count`];
  const kvDim = md[`${arch}.attention.head_count_kv`] * (md[`${arch}.attention.key_length`] ??
    md[`${arch}.embedding_length`] / md[`${arch}.attention.head_count`]);
  const meanCtx = (tgTokens + 1) / 2;
  const kvBytes = layers * 2 * kvDim * 2 * meanCtx;
  // Prompt-processing work per token: 2 flops per block-matrix weight plus
  // attention (QK^T and AV: 4 * context * q_dim per layer, mean context
  // (PP+1)/2, causal); the output matrix runs for the last position only.
  const blockParams = tensors.filter((t) => t.name.startsWith("blk.") && t.shape.length === 2)
    .reduce((a, t) => a + t.num_elements, 0);
  const qDim = md[`${arch}.attention.head_count`] * (md[`${arch}.attention.key_length`] ??
    md[`${arch}.embedding_length`] / md[`${arch}.attention.head_count`]);
  const ppFlops = 2 * blockParams + layers * 4 * ((ppTokens + 1) / 2) * qDim;
  const types = [...new Set(tensors.filter((t) => t.shape.length === 2).map((t) => t.type))];
  return { params, matrix_types: types, weight_bytes_per_token: Math.round(weightBytes),
           kv_bytes_per_token: Math.round(kvBytes), bytes_per_token: Math.round(weightBytes + kvBytes),
           pp_flops_per_token: Math.round(ppFlops) };
}

const bandwidth = readJson("bandwidth.json");
// The bound uses the best bandwidth measured at any thread count: one core
// may not saturate memory, and a probe run on a busy machine reads low.
const bw = bandwidth?.results?.reduce((a, b) => (b.best_gb_s > (a?.best_gb_s ?? 0) ? b : a), null);
const rows = [];
for (const line of readLines("models.txt")) {
  const [name, size, type] = line.split(/\s+/);
  const id = `${name}-${type}`;
  const facts = modelFacts(readJson(`info-${id}.json`) ?? {});
  const pp = readLines(`mneme-${id}-pp.log`).map(parseMneme);
  const tg = readLines(`mneme-${id}-tg.log`).map(parseMneme);
  const mneme = {
    pp: stats(pp.map((r) => r.prompt_tps).filter((x) => x !== null)),
    tg: stats(tg.map((r) => r.gen_tps).filter((x) => x !== null)),
    pp_prompt_tokens: pp[0]?.prompt_tokens ?? null,
    tg_generated_tokens: tg[0]?.gen_tokens ?? null,
  };
  const llama = llamaResult(id);
  const bound = bw ? (bw.best_gb_s * 1e9) / facts.bytes_per_token : null;
  const ratio = (a, b) => (a && b ? a.tokens_per_s / b.tokens_per_s : null);
  rows.push({
    model: name, size, type, ...facts, mneme, llamacpp: llama,
    pp_ratio: ratio(mneme.pp, llama.pp), tg_ratio: ratio(mneme.tg, llama.tg),
    mneme_pp_gflops: mneme.pp ? (mneme.pp.tokens_per_s * facts.pp_flops_per_token) / 1e9 : null,
    llamacpp_pp_gflops: llama.pp ? (llama.pp.tokens_per_s * facts.pp_flops_per_token) / 1e9 : null,
    bandwidth_bound_tg_tokens_per_s: bound,
    mneme_tg_fraction_of_bound: mneme.tg && bound ? mneme.tg.tokens_per_s / bound : null,
    llamacpp_tg_fraction_of_bound: llama.tg && bound ? llama.tg.tokens_per_s / bound : null,
  });
  if (mneme.pp_prompt_tokens !== null && mneme.pp_prompt_tokens !== ppTokens) {
    console.error(`warning: ${id}: Mneme's prompt was ${mneme.pp_prompt_tokens} tokens, not ${ppTokens}`);
  }
  if (mneme.tg_generated_tokens !== null && mneme.tg_generated_tokens !== tgTokens + 1) {
    console.error(`warning: ${id}: Mneme generated ${mneme.tg_generated_tokens} tokens (stopped at an end-of-generation token?), not ${tgTokens + 1}`);
  }
}

const f = (x, d = 1) => (x === null || x === undefined || Number.isNaN(x) ? "-" : x.toFixed(d));
const r = (x) => (x ? x.tokens_per_s : null);
const fmtParams = (n) => (n >= 1e9 ? `${(n / 1e9).toFixed(2)}B` : `${(n / 1e6).toFixed(0)}M`);
const lines = [
  `Mneme: ${meta.mneme?.generate_path ?? "?"}, commit ${meta.mneme?.commit ?? "?"}; ${threads} threads; ` +
  `pp${ppTokens} / tg${tgTokens}; read bandwidth ${bandwidth?.results?.map((b) => `${f(b.best_gb_s)} GB/s (${b.threads} thr)`).join(", ") ?? "-"}`,
  "",
  "| model | type | params | Mneme pp t/s | llama.cpp pp t/s | ratio | Mneme tg t/s | llama.cpp tg t/s | ratio | MB/token | bandwidth bound t/s | Mneme % of bound | llama.cpp % of bound |",
  "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ...rows.map((x) => `| ${x.model} | ${x.type} | ${fmtParams(x.params)} | ${f(r(x.mneme.pp))} | ${f(r(x.llamacpp.pp))} | ` +
    `${f(x.pp_ratio, 2)} | ${f(r(x.mneme.tg))} | ${f(r(x.llamacpp.tg))} | ${f(x.tg_ratio, 2)} | ` +
    `${f(x.bytes_per_token / 1e6)} | ${f(x.bandwidth_bound_tg_tokens_per_s)} | ` +
    `${f(x.mneme_tg_fraction_of_bound === null ? null : 100 * x.mneme_tg_fraction_of_bound, 0)} | ` +
    `${f(x.llamacpp_tg_fraction_of_bound === null ? null : 100 * x.llamacpp_tg_fraction_of_bound, 0)} |`),
  "",
  "Targets (issue 3): tg ratio >= 0.9, pp ratio >= 0.8. " +
  `Met: pp ${rows.filter((x) => x.pp_ratio >= 0.8).length}/${rows.length}, tg ${rows.filter((x) => x.tg_ratio >= 0.9).length}/${rows.length}.`,
];
console.log(lines.join("\n"));

const result = { generated_at: new Date().toISOString(), ...meta, bandwidth, results: rows,
                 targets: { pp_ratio_min: 0.8, tg_ratio_min: 0.9 } };
fs.mkdirSync(path.dirname(args.out), { recursive: true });
fs.writeFileSync(args.out, JSON.stringify(result, null, 2) + "\n");
console.log(`wrote ${args.out}`);
