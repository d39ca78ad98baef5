// Tokenizer golden test against llama.cpp: every case of cases.mjs (seeded
// corpus, adversarial snippets, special-token snippets) is tokenized by
// llama.cpp (node-llama-cpp, vocab-only load) and by the real `mneme
// tokenize` binary, and the ids must be identical. Each corpus chunk goes to
// the binary on stdin as raw bytes (one process per chunk, as a script would
// use it); the many short snippets go to one `mneme tokenize --jsonl` process
// per parse_special setting (one vocab load instead of one per snippet: the
// big BPE vocabs take a good part of a second to load, and the whole golden
// set has to stay within about a minute on two cores).
//
//   node compare.mjs --mneme MNEME_BIN --vocab VOCAB.gguf [--oracle-dir DIR]
//        [--bytes 160000] [--seed 1234] [--chunk 65536] [--jobs 2]
//
// Neither side adds BOS/EOS: node-llama-cpp's native tokenize calls
// common_tokenize(vocab, text, add_special = false, parse_special), and
// mneme runs with --no-bos. A case whose text holds a control token's text is
// run twice, with and without parse_special (--parse-special for mneme);
// elsewhere parse_special cannot change the result and it runs once, without.
//
// On a difference it prints, per differing case, the first differing token
// position, the byte offset in the text near it, both id sequences around it
// with the vocab text of each id, and, for long texts, whether the line around
// the difference reproduces it on its own (a smaller repro). Exit status 0
// when every case matches, 1 on any difference or error, 2 on bad usage.
import {spawn} from "node:child_process";
import os from "node:os";
import path from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

import {MakeCases, SpecialTokens} from "./cases.mjs";

const kMaxReported = 8;  // differing cases described in full

function ParseArgs(argv) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const args = {mneme: "", vocab: "", "oracle-dir": path.resolve(here, "../oracle"),
                bytes: 160000, seed: 1234, chunk: 65536, jobs: Math.min(2, os.cpus().length)};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in args) || i + 1 >= argv.length) {
      console.error(`compare.mjs: bad argument '${argv[i]}' (see the header of compare.mjs)`);
      process.exit(2);
    }
    args[key] = typeof args[key] === "number" ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!args.mneme || !args.vocab) {
    console.error("usage: node compare.mjs --mneme MNEME_BIN --vocab VOCAB.gguf [--oracle-dir DIR]");
    process.exit(2);
  }
  return args;
}

// Runs the binary with `input` on stdin; resolves to Parse(stdout).
function RunMneme(bin, argv, input, Parse) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, argv, {stdio: ["pipe", "pipe", "pipe"]});
    const out = [];
    const err = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => err.push(d));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code !== 0) {
        reject(new Error(`mneme ${argv.join(" ")} exited with ${code ?? signal}: ` +
                         Buffer.concat(err).toString("utf8").trim()));
        return;
      }
      try {
        resolve(Parse(Buffer.concat(out).toString("utf8")));
      } catch (e) {
        reject(e);
      }
    });
    child.stdin.on("error", () => {});  // a crash shows up in "close"
    child.stdin.end(input);
  });
}

// `mneme tokenize` on `text` (UTF-8 on stdin); resolves to an Int32Array.
function MnemeTokenize(bin, vocab, text, parseSpecial) {
  const argv = ["tokenize", "-m", vocab, "--no-bos", ...(parseSpecial ? ["--parse-special"] : [])];
  return RunMneme(bin, argv, Buffer.from(text, "utf8"), (stdout) => {
    if (!/^(\d+( \d+)*)?\n$/.test(stdout)) {
      throw new Error(`mneme tokenize printed ${JSON.stringify(stdout.slice(0, 200))}`);
    }
    const words = stdout.trim();
    return Int32Array.from(words ? words.split(" ").map(Number) : []);
  });
}

// `mneme tokenize --jsonl` on `texts`; resolves to one Int32Array per text.
function MnemeTokenizeBatch(bin, vocab, texts, parseSpecial) {
  const argv = ["tokenize", "-m", vocab, "--no-bos", "--jsonl", ...(parseSpecial ? ["--parse-special"] : [])];
  const input = texts.map((t) => JSON.stringify(t) + "\n").join("");
  return RunMneme(bin, argv, Buffer.from(input, "utf8"), (stdout) => {
    const lines = stdout.split("\n");
    if (lines.pop() !== "" || lines.length !== texts.length || !lines.every((l) => /^(\d+( \d+)*)?$/.test(l))) {
      throw new Error(`mneme ${argv.join(" ")}: expected ${texts.length} lines of ids, got ` +
                      JSON.stringify(stdout.slice(0, 200)));
    }
    return lines.map((l) => Int32Array.from(l ? l.split(" ").map(Number) : []));
  });
}

// Runs `work` (async functions) with at most `jobs` in flight.
async function RunAll(work, jobs) {
  const results = new Array(work.length);
  let next = 0;
  const worker = async () => {
    while (next < work.length) {
      const i = next++;
      try {
        results[i] = {value: await work[i]()};
      } catch (e) {
        results[i] = {error: e};
      }
    }
  };
  await Promise.all(Array.from({length: Math.max(1, jobs)}, worker));
  return results;
}

function FirstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) ++i;
  return i === n && a.length === b.length ? -1 : i;
}

// Describes the first difference of one case; `oracle` tokenizes with
// llama.cpp, `mneme` with the binary (for the smaller repro).
async function Describe(c, parseSpecial, theirs, ours, at, tools) {
  const {native, isSpm} = tools;
  const Show = (ids, from, to) => Array.from(ids.slice(from, to)).map(
      (id) => `${id}:${JSON.stringify(native.getTokenString(id) ?? "?")}`).join(" ");
  const bytes = Buffer.from(c.text, "utf8");
  // Byte offset of the difference: the length of llama.cpp's common prefix,
  // detokenized (SPM's leading dummy space is not in the text).
  let offset = at === 0 ? 0 : Buffer.byteLength(native.detokenize(Uint32Array.from(theirs.slice(0, at)), true));
  if (isSpm && offset > 0 && bytes[0] !== 0x20) offset -= 1;
  offset = Math.max(0, Math.min(offset, bytes.length));
  const lines = [
    `MISMATCH ${tools.vocabName}: case "${c.name}", parse_special=${parseSpecial}`,
    `  first difference at token ${at} (near byte ${offset} of ${bytes.length}); ` +
        `llama.cpp ${theirs.length} tokens, mneme ${ours.length}`,
  ];
  if (bytes.length <= 300) {
    lines.push(`  text:      ${JSON.stringify(c.text)}`);
    lines.push(`  llama.cpp: [${Array.from(theirs).join(", ")}]`);
    lines.push(`  mneme:     [${Array.from(ours).join(", ")}]`);
  } else {
    const from = Math.max(0, offset - 60);
    lines.push(`  text near: ${JSON.stringify(bytes.subarray(from, offset).toString("utf8"))} ` +
               `⟪HERE⟫ ${JSON.stringify(bytes.subarray(offset, offset + 60).toString("utf8"))}`);
  }
  const lo = Math.max(0, at - 3);
  lines.push(`  llama.cpp ids from token ${lo}: ${Show(theirs, lo, at + 6)}`);
  lines.push(`  mneme ids from token ${lo}:     ${Show(ours, lo, at + 6)}`);
  if (bytes.length > 300) {
    // The line around the difference, alone: a smaller repro if it differs too.
    const start = bytes.lastIndexOf(0x0a, Math.max(0, offset - 1)) + 1;
    let end = bytes.indexOf(0x0a, offset);
    end = end < 0 ? bytes.length : end + 1;
    const line = bytes.subarray(start, end).toString("utf8");
    const a = Int32Array.from(native.tokenize(line, parseSpecial));
    try {
      const b = await MnemeTokenize(tools.mneme, tools.vocab, line, parseSpecial);
      if (FirstDifference(a, b) < 0) {
        lines.push(`  (the line around it, bytes ${start}..${end}, alone tokenizes the same on both sides)`);
      } else {
        lines.push(`  smaller repro, the line around it alone (bytes ${start}..${end}):`);
        lines.push(`    text:      ${JSON.stringify(line.length > 400 ? line.slice(0, 400) + "…" : line)}`);
        lines.push(`    llama.cpp: [${Array.from(a).join(", ")}]`);
        lines.push(`    mneme:     [${Array.from(b).join(", ")}]`);
      }
    } catch (e) {
      lines.push(`  (repro attempt failed: ${e.message})`);
    }
  }
  return lines.join("\n");
}

async function Main() {
  const args = ParseArgs(process.argv.slice(2));
  const started = Date.now();
  const index = path.join(args["oracle-dir"], "node_modules/node-llama-cpp/dist/index.js");
  const {getLlama, LlamaLogLevel, readGgufFileInfo} = await import(pathToFileURL(index).href);
  const llama = await getLlama({gpu: false, build: "never", skipDownload: true, progressLogs: false,
                                logLevel: LlamaLogLevel.error, logger: () => {}});
  const model = await llama.loadModel({modelPath: args.vocab, vocabOnly: true});
  const native = model._model;
  const info = await readGgufFileInfo(args.vocab, {logWarnings: false});
  const numTokens = info.metadata?.tokenizer?.ggml?.tokens?.length ?? 0;
  if (numTokens === 0) throw new Error(`${args.vocab}: no tokenizer.ggml.tokens`);

  const tools = {native, isSpm: native.getVocabularyType() === 1,  // LLAMA_VOCAB_TYPE_SPM
                 mneme: args.mneme, vocab: args.vocab, vocabName: path.basename(args.vocab)};
  const cases = MakeCases({specialTokens: SpecialTokens(native, numTokens)}, args);
  const runs = [];
  for (const c of cases) {
    for (const parseSpecial of c.special ? [false, true] : [false]) runs.push({c, parseSpecial});
  }

  // llama.cpp in this process, mneme in `jobs` child processes at a time.
  for (const r of runs) r.theirs = Int32Array.from(native.tokenize(r.c.text, r.parseSpecial));
  const work = [];
  const batches = [];  // [parseSpecial, indices into runs]
  for (const parseSpecial of [false, true]) {
    const indices = [];
    runs.forEach((r, k) => {
      if (r.parseSpecial !== parseSpecial) return;
      if (r.c.corpus) {
        work.push({k, Run: () => MnemeTokenize(args.mneme, args.vocab, r.c.text, parseSpecial)});
      } else {
        indices.push(k);
      }
    });
    if (indices.length) batches.push([parseSpecial, indices]);
  }
  for (const [parseSpecial, indices] of batches) {
    work.push({indices, Run: () => MnemeTokenizeBatch(args.mneme, args.vocab,
                                                      indices.map((k) => runs[k].c.text), parseSpecial)});
  }
  const results = new Array(runs.length);
  (await RunAll(work.map((w) => w.Run), args.jobs)).forEach((result, w) => {
    if (work[w].indices === undefined) {
      results[work[w].k] = result;
    } else {
      work[w].indices.forEach((k, i) => {
        results[k] = result.error ? result : {value: result.value[i]};
      });
    }
  });

  let failed = 0;
  let reported = 0;
  let tokens = 0;
  let bytes = 0;
  const errors = new Map();  // message -> runs it failed
  for (let k = 0; k < runs.length; ++k) {
    const {c, parseSpecial, theirs} = runs[k];
    tokens += theirs.length;
    bytes += Buffer.byteLength(c.text, "utf8");
    if (results[k].error) {  // a failed batch fails all its cases: say it once
      ++failed;
      const message = results[k].error.message;
      if (!errors.has(message)) console.log(`ERROR ${tools.vocabName}: ${message}`);
      errors.set(message, (errors.get(message) ?? 0) + 1);
      continue;
    }
    const ours = results[k].value;
    const at = FirstDifference(theirs, ours);
    if (at < 0) continue;
    ++failed;
    if (reported++ < kMaxReported) {
      console.log(await Describe(c, parseSpecial, theirs, ours, at, tools));
    } else {
      console.log(`MISMATCH ${tools.vocabName}: case "${c.name}", parse_special=${parseSpecial} ` +
                  `(first difference at token ${at})`);
    }
  }
  const specialRuns = runs.filter((r) => r.parseSpecial).length;
  console.log(`${tools.vocabName}: ${runs.length - failed} of ${runs.length} runs match llama.cpp ` +
              `(${cases.length} cases, ${specialRuns} also with parse_special; ${bytes} bytes, ` +
              `${tokens} llama.cpp tokens; ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  await model.dispose();
  await llama.dispose();
  process.exit(failed ? 1 : 0);
}

Main().catch((e) => {
  console.error(`compare.mjs: ${e.stack || e}`);
  process.exit(1);
});
