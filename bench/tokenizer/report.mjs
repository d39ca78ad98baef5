// Puts the two halves of the tokenizer benchmark together: Mneme's Google
// Benchmark JSON (src/tokenizer/tokenizer_bench.cc) and llama.cpp's driver
// output (llamacpp_tokenize.mjs), per vocab. Prints a table, any id mismatch
// loudly, and writes the results JSON (bench/results/tokenizer.json).
//
//   node report.mjs --dir WORK --vocabs "llama-spm qwen2" --corpus C.txt
//        --out results.json [--meta meta.json]
//
// WORK holds mneme-<vocab>.json and llamacpp-<vocab>.json. MB = 10^6 bytes.
// Both sides are summarized by the same function (Summarize): headline MB/s
// from the median per-pass CPU time, plus the best CPU pass and the median
// wall time. Exit status 1 when a vocab failed or the ids differ.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

import {Summarize} from "./llamacpp_tokenize.mjs";

function ParseArgs(argv) {
  const args = {dir: "", vocabs: "", corpus: "", out: "", meta: ""};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in args) || i + 1 >= argv.length) throw new Error(`bad argument '${argv[i]}'`);
    args[key] = argv[i + 1];
  }
  return args;
}

function ReadJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    return {error: `${path.basename(file)}: ${e.message.split("\n")[0]}`};
  }
}

// Per-pass times of one vocab from Google Benchmark's JSON output
// (--benchmark_report_aggregates_only=false: one "iteration" run per pass).
function MnemeSide(file, bytes) {
  const json = ReadJson(file);
  if (json.error) return json;
  const runs = (json.benchmarks || []).filter((b) => b.run_type === "iteration");
  const failed = runs.find((b) => b.error_occurred);
  if (failed) return {error: failed.error_message};
  if (runs.length === 0) return {error: "no benchmark runs"};
  const toSeconds = {ns: 1e-9, us: 1e-6, ms: 1e-3, s: 1};
  const Seconds = (b, key) => b[key] * toSeconds[b.time_unit] / b.iterations;
  return {
    tokens: runs[0].tokens,
    chunks: runs[0].chunks,
    ...Summarize(bytes, runs.map((b) => Seconds(b, "cpu_time")), runs.map((b) => Seconds(b, "real_time"))),
  };
}

function Fixed(x, digits) {
  return typeof x === "number" && Number.isFinite(x) ? x.toFixed(digits) : "-";
}

function Times(x) {
  return typeof x === "number" && Number.isFinite(x) ? `${x.toFixed(2)}x` : "-";
}

function Main() {
  const args = ParseArgs(process.argv.slice(2));
  const corpus = fs.readFileSync(args.corpus);
  const meta = args.meta ? ReadJson(args.meta) : {};
  const rows = [];
  let failed = false;
  for (const vocab of args.vocabs.split(/\s+/).filter(Boolean)) {
    const mneme = MnemeSide(path.join(args.dir, `mneme-${vocab}.json`), corpus.length);
    const llamacpp = ReadJson(path.join(args.dir, `llamacpp-${vocab}.json`));
    if (llamacpp.error) {  // the driver's own message is the first line of its log
      const log = path.join(args.dir, `llamacpp-${vocab}.log`);
      if (fs.existsSync(log)) llamacpp.error = fs.readFileSync(log, "utf8").split("\n")[0] || llamacpp.error;
    }
    const row = {vocab, mneme, llamacpp};
    if (!mneme.error && !llamacpp.error) {
      row.ratio = mneme.mb_per_s / llamacpp.mb_per_s;
      row.wall_ratio = mneme.wall_mb_per_s / llamacpp.wall_mb_per_s;
    }
    if (mneme.error || llamacpp.error || llamacpp.match !== true) failed = true;
    rows.push(row);
  }

  const header = "| vocab | tokens | Mneme MB/s | llama.cpp MB/s | ratio | ratio (wall) | ids match |";
  const lines = [header, "|---|---:|---:|---:|---:|---:|---|"];
  for (const r of rows) {
    const match = r.llamacpp.match === true ? "yes" : r.llamacpp.match === false ? "**NO**" : "-";
    lines.push(`| ${r.vocab} | ${r.llamacpp.tokens ?? r.mneme.tokens ?? "-"} | ` +
               `${Fixed(r.mneme.mb_per_s, 2)} | ${Fixed(r.llamacpp.mb_per_s, 2)} | ` +
               `${Times(r.ratio)} | ${Times(r.wall_ratio)} | ${match} |`);
  }
  process.stdout.write(`\nTokenizer throughput (median CPU time of ${meta.method?.timed_passes ?? "?"} passes, ` +
                       `MB = 10^6 bytes; ratio = Mneme / llama.cpp, >1 means Mneme is faster)\n\n` +
                       lines.join("\n") + "\n");

  for (const r of rows) {
    if (r.mneme.error) process.stdout.write(`\n!! ${r.vocab}: Mneme failed: ${r.mneme.error}\n`);
    if (r.llamacpp.error) process.stdout.write(`\n!! ${r.vocab}: llama.cpp failed: ${r.llamacpp.error}\n`);
    if (r.llamacpp.mismatches) {
      process.stdout.write(
          `\n!!!!!!!! ${r.vocab}: MNEME AND LLAMA.CPP TOKENIZE THE CORPUS DIFFERENTLY !!!!!!!!\n` +
          `  ${r.llamacpp.chunks_differing} of ${r.llamacpp.chunks} chunks differ; ` +
          `the first difference of each (at most 5):\n`);
      for (const m of r.llamacpp.mismatches) {
        process.stdout.write(
            `  - ${m.what}\n` +
            (m.text_near !== undefined ? `    text near it: ${JSON.stringify(m.text_near)}\n` +
                                         `    llama.cpp: ${m.llamacpp.join(" ")}\n` +
                                         `    mneme:     ${m.mneme.join(" ")}\n` : ""));
      }
    }
  }

  const result = {
    what: "Tokenizer::Encode vs llama.cpp tokenize (node-llama-cpp), same vocab, same chunks",
    generated_by: "scripts/bench_tokenizer.sh",
    date: new Date().toISOString(),
    ...meta,
    corpus: {
      generator: "bench/tokenizer/make_corpus.mjs",
      bytes: corpus.length,
      sha256: crypto.createHash("sha256").update(corpus).digest("hex"),
    },
    results: rows,
  };
  if (args.out) {
    fs.mkdirSync(path.dirname(args.out), {recursive: true});
    fs.writeFileSync(args.out, JSON.stringify(result, null, 2) + "\n");
    process.stdout.write(`\nwrote ${args.out}\n`);
  }
  process.exit(failed ? 1 : 0);
}

Main();
