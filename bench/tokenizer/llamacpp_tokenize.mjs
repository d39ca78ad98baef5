// The llama.cpp half of the tokenizer benchmark: times llama.cpp's tokenizer
// (through node-llama-cpp, vocab-only load) on the benchmark corpus, in the
// same chunks as Mneme's tokenizer_bench, and cross-checks Mneme's ids.
//
//   node llamacpp_tokenize.mjs --vocab V.gguf --corpus C.txt [--chunk 65536]
//        [--reps 5] [--compare mneme.ids] [--oracle-dir tests/oracle]
//
// Prints one JSON object on stdout:
//   {vocab, bytes, chunk, chunks, tokens, reps, cpu_s: [...], wall_s: [...],
//    mb_per_s (median CPU time, 1 MB = 10^6 bytes), best_mb_per_s (best CPU
//    time), wall_mb_per_s (median wall time), match, chunks_differing?,
//    mismatches?: the first difference of each differing chunk, at most 5}
//
// Method: one untimed warm-up pass (its ids are the reference for --compare),
// then `reps` timed passes over every chunk; load time is excluded. CPU time
// is the process's user + system time (process.cpuUsage); the tokenizer runs
// on the main thread only. Each chunk is one call of the native tokenize
// (llama.cpp's common_tokenize with add_special=false, parse_special=false);
// the JS side only converts the chunk string to UTF-8 and receives a
// Uint32Array, which at 64 KB chunks is a small share of the time (measured:
// see docs/benchmarks.md).
//
// Chunking (shared with src/tokenizer/tokenizer_bench.cc, keep them equal):
// a chunk ends just after the last '\n' within `chunk` bytes of its start; if
// there is none it ends at `chunk` bytes, moved back to a UTF-8 boundary.
// chunk 0 means the whole corpus in one call.
//
// --compare reads Mneme's ids (per chunk: int32 count, then count int32 ids,
// little-endian) and reports where they differ (the first difference in each
// of up to 5 chunks), with the surrounding text and the vocab text of the
// tokens on both sides.
import fs from "node:fs";
import path from "node:path";
import {pathToFileURL} from "node:url";

function ParseArgs(argv) {
  const args = {vocab: "", corpus: "", chunk: 65536, reps: 5, compare: "", "oracle-dir": ""};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in args) || i + 1 >= argv.length) {
      throw new Error(`bad argument '${argv[i]}' (see the header of llamacpp_tokenize.mjs)`);
    }
    args[key] = typeof args[key] === "number" ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!args.vocab || !args.corpus) throw new Error("--vocab and --corpus are required");
  if (!args["oracle-dir"]) {
    args["oracle-dir"] = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../../tests/oracle");
  }
  return args;
}

// Returns [begin, end) byte ranges; see the header for the rule.
export function SplitChunks(bytes, chunk) {
  const ranges = [];
  if (chunk <= 0) return bytes.length ? [[0, bytes.length]] : [];
  let begin = 0;
  while (begin < bytes.length) {
    let end = Math.min(begin + chunk, bytes.length);
    if (end < bytes.length) {
      const nl = bytes.lastIndexOf(0x0a, end - 1);
      if (nl >= begin) {
        end = nl + 1;
      } else {
        while (end > begin + 1 && (bytes[end] & 0xc0) === 0x80) --end;
      }
    }
    ranges.push([begin, end]);
    begin = end;
  }
  return ranges;
}

function ReadIds(file) {
  const buf = fs.readFileSync(file);
  const chunks = [];
  let off = 0;
  while (off + 4 <= buf.length) {
    const n = buf.readInt32LE(off);
    off += 4;
    if (n < 0 || off + 4 * n > buf.length) throw new Error(`${file}: truncated at byte ${off}`);
    const ids = new Int32Array(n);
    for (let i = 0; i < n; ++i) ids[i] = buf.readInt32LE(off + 4 * i);
    off += 4 * n;
    chunks.push(ids);
  }
  return chunks;
}

function Median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// The same summary report.mjs makes of Mneme's passes. MB = 10^6 bytes; the
// headline mb_per_s is from the median CPU time (see docs/benchmarks.md).
export function Summarize(bytes, cpu_s, wall_s) {
  return {
    reps: cpu_s.length,
    cpu_s,
    wall_s,
    mb_per_s: bytes / 1e6 / Median(cpu_s),
    best_mb_per_s: bytes / 1e6 / Math.min(...cpu_s),
    wall_mb_per_s: bytes / 1e6 / Median(wall_s),
  };
}

// The number of text bytes a token stands for, from its vocab text:
// byte-level BPE maps every byte to one code point; SPM writes spaces as
// U+2581 and raw bytes as <0xXX>. (Special tokens never occur here: the
// corpus is tokenized with parse_special = false.)
function PieceBytes(native, id, isSpm) {
  const text = native.getTokenString(id) ?? "";
  if (!isSpm) return [...text].length;
  if (/^<0x[0-9A-Fa-f]{2}>$/.test(text)) return 1;
  return Buffer.byteLength(text.replaceAll("\u2581", " "), "utf8");
}

// Describes the differences between llama.cpp's and Mneme's ids: the first
// one of each differing chunk (at most `limit`), where it is in the text (the
// common prefix's byte length, counted from the vocab text of its tokens) and
// the raw vocab text of the tokens around it. Returns [] when all ids match.
function FindMismatches(model, texts, ours, theirs, limit = 5) {
  if (ours.length !== theirs.length) {
    return [{what: `chunk count differs: llama.cpp ${theirs.length}, mneme ${ours.length}`}];
  }
  const native = model._model;
  const isSpm = native.getVocabularyType() === 1;  // LLAMA_VOCAB_TYPE_SPM
  const found = [];
  let global = 0;
  for (let c = 0; c < theirs.length; ++c) {
    const a = theirs[c];
    const b = ours[c];
    const n = Math.min(a.length, b.length);
    let i = 0;
    while (i < n && a[i] === b[i]) ++i;
    const chunkStart = global;
    global += a.length;
    if (i === n && a.length === b.length) continue;
    if (found.length >= limit) {
      found.push(null);  // counted, not described
      continue;
    }
    const around = (ids) => Array.from(ids.slice(Math.max(0, i - 3), i + 5)).map(
        (id) => `${id}:${JSON.stringify(native.getTokenString(id) ?? "?")}`);
    let prefix = 0;
    for (let k = 0; k < i; ++k) prefix += PieceBytes(native, a[k], isSpm);
    // SPM prepends one space (the dummy prefix) that is not in the text.
    if (isSpm && i > 0 && (native.getTokenString(a[0]) ?? "").startsWith("\u2581")) prefix -= 1;
    const text = Buffer.from(texts[c], "utf8");
    prefix = Math.max(0, Math.min(prefix, text.length));
    const from = Math.max(0, prefix - 40);
    found.push({
      what: `chunk ${c}, token ${i} of the chunk (token ${chunkStart + i} overall, byte ${prefix} ` +
          `of the chunk): llama.cpp has ${a.length} tokens in the chunk, mneme ${b.length}`,
      chunk: c,
      token_in_chunk: i,
      token_overall: chunkStart + i,
      byte_in_chunk: prefix,
      // "⟪HERE⟫" marks where the common prefix ends.
      text_near: text.subarray(from, prefix).toString("utf8") + "⟪HERE⟫" +
          text.subarray(prefix, Math.min(text.length, prefix + 40)).toString("utf8"),
      llamacpp: around(a),
      mneme: around(b),
    });
  }
  return found;
}

async function Main() {
  const args = ParseArgs(process.argv.slice(2));
  const index = path.join(args["oracle-dir"], "node_modules/node-llama-cpp/dist/index.js");
  const {getLlama, LlamaLogLevel} = await import(pathToFileURL(index).href);
  const llama = await getLlama({
    gpu: false, build: "never", skipDownload: true, progressLogs: false,
    logLevel: LlamaLogLevel.error, logger: () => {},
  });
  const model = await llama.loadModel({modelPath: args.vocab, vocabOnly: true});

  const bytes = fs.readFileSync(args.corpus);
  const ranges = SplitChunks(bytes, args.chunk);
  const texts = ranges.map(([b, e]) => bytes.subarray(b, e).toString("utf8"));
  // The native call behind model.tokenize(text, false), without the
  // Array.from copy of its result (see header).
  const native = model._model;
  const Tokenize = (text) => native.tokenize(text, false);

  const reference = texts.map((t) => Int32Array.from(Tokenize(t)));  // warm-up
  const tokens = reference.reduce((n, ids) => n + ids.length, 0);
  const cpu_s = [];
  const wall_s = [];
  for (let r = 0; r < args.reps; ++r) {
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    let n = 0;
    for (const t of texts) n += Tokenize(t).length;
    wall_s.push(Number(process.hrtime.bigint() - t0) / 1e9);
    const cpu = process.cpuUsage(cpu0);
    cpu_s.push((cpu.user + cpu.system) / 1e6);
    if (n !== tokens) throw new Error(`nondeterministic token count: ${n} vs ${tokens}`);
  }

  const result = {
    vocab: path.basename(args.vocab),
    bytes: bytes.length,
    chunk: args.chunk,
    chunks: ranges.length,
    tokens,
    ...Summarize(bytes.length, cpu_s, wall_s),
  };
  if (args.compare) {
    const found = FindMismatches(model, texts, ReadIds(args.compare), reference);
    result.match = found.length === 0;
    if (found.length) {
      result.chunks_differing = found.length;
      result.mismatches = found.filter((m) => m !== null);
    }
  }
  process.stdout.write(JSON.stringify(result) + "\n");
  await model.dispose();
  await llama.dispose();
}

// Run only as a program, not when report.mjs imports Summarize.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  Main().catch((e) => {
    process.stderr.write(`llamacpp_tokenize: ${e.stack || e}\n`);
    process.exit(1);
  });
}
