// The chat-template oracle test: every template x every conversation,
// rendered by @huggingface/jinja (render_reference.mjs, in this process) and
// by `mneme render` (a child process), compared byte for byte.
//
//   node compare.mjs --mneme PATH/TO/mneme (--templates DIR | --gguf FILE...)
//                    [--template NAME]... [--conversation NAME]... [--verbose]
//
// NAME is a file name without its extension (.jinja / .json); without
// --template every *.jinja in DIR is tested, without --conversation every
// conversations/*.json next to this script. MNEME_BIN and MNEME_TEMPLATES
// stand in for --mneme and --templates. With --gguf, the template and the
// bos/eos token text come from the model file: the reference side reads them
// with node-llama-cpp's GGUF reader, mneme with `mneme render -m FILE`.
//
// One line per case, then "N passed, M failed"; the exit status is 1 when
// anything failed. Outcomes:
//   ok              both rendered, identical bytes
//   ok (raise)      both raised; for raise_exception() the message matches
//                   (interpreter errors are worded differently; --verbose
//                   shows both messages)
//   ok (parse error) neither could parse the template
//   DIFF            both rendered, different bytes: first differing offset and
//                   the text around it on both sides
//   RAISE-MISMATCH  one side raised and the other did not, or the
//                   raise_exception() message differs
//   PARSE-MISMATCH  the reference could not parse the template, mneme could
//   MNEME-ERROR     mneme failed with exit 1 (e.g. could not parse the
//                   template) where the reference parsed it
//   CRASH           mneme died from a signal or timed out
//
// `mneme render` exit codes (docs/chat-templates.md): 0 rendered, 3 the
// template raised while rendering, 1 any other error (including a template
// that does not parse). Both sides receive the template file's bytes as they
// are, the same bos/eos (special_tokens.json) and the same context.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { renderReference } from "./render_reference.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const args = {
    mneme: process.env.MNEME_BIN,
    templates: process.env.MNEME_TEMPLATES,
    conversationsDir: path.join(here, "conversations"),
    onlyTemplates: [],
    onlyConversations: [],
    ggufs: [],
    verbose: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--mneme") args.mneme = argv[++i];
    else if (a === "--templates") args.templates = argv[++i];
    else if (a === "--conversations") args.conversationsDir = argv[++i];
    else if (a === "--template") args.onlyTemplates.push(argv[++i]);
    else if (a === "--conversation") args.onlyConversations.push(argv[++i]);
    else if (a === "--gguf") args.ggufs.push(argv[++i]);
    else if (a === "--verbose") args.verbose = true;
    else throw new Error(`unknown argument: ${a}`);
  }
  if (!args.mneme || (!args.templates && args.ggufs.length === 0)) {
    throw new Error("need --mneme PATH and --templates DIR or --gguf FILE (or MNEME_BIN / MNEME_TEMPLATES)");
  }
  return args;
}

function listStems(dir, ext, only) {
  const stems = readdirSync(dir)
    .filter((f) => f.endsWith(ext))
    .map((f) => f.slice(0, -ext.length))
    .sort();
  for (const name of only) {
    if (!stems.includes(name)) throw new Error(`no ${name}${ext} in ${dir}`);
  }
  return only.length ? stems.filter((s) => only.includes(s)) : stems;
}

// Shows `width` bytes around `offset`, escaped so whitespace is visible.
function excerpt(buf, offset, width = 40) {
  const start = Math.max(0, offset - width);
  const before = buf.subarray(start, offset).toString("utf8");
  const after = buf.subarray(offset, offset + width).toString("utf8");
  return `${start > 0 ? "..." : ""}${JSON.stringify(before)} | ${JSON.stringify(after)}`;
}

function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

// One template under test: its source and tokens for the reference, and the
// arguments that make `mneme render` use the same.
function templateCases(args) {
  const cases = [];
  if (args.templates) {
    const tokenTable = JSON.parse(readFileSync(path.join(here, "special_tokens.json"), "utf8"));
    for (const t of listStems(args.templates, ".jinja", args.onlyTemplates)) {
      const templatePath = path.join(args.templates, `${t}.jinja`);
      const tokens = tokenTable[t] ?? { bos: "<s>", eos: "</s>" };
      cases.push({
        name: t,
        source: readFileSync(templatePath, "utf8"),
        bos: tokens.bos,
        eos: tokens.eos,
        mnemeArgs: ["--template", templatePath, "--bos", tokens.bos, "--eos", tokens.eos],
      });
    }
  }
  return cases;
}

async function ggufCases(args) {
  if (args.ggufs.length === 0) return [];
  const entry = path.resolve(here, "../oracle/node_modules/node-llama-cpp/dist/index.js");
  const { readGgufFileInfo } = await import(pathToFileURL(entry).href);
  const cases = [];
  for (const file of args.ggufs) {
    const info = await readGgufFileInfo(file, { readTensorInfo: false });
    const tok = info.metadata.tokenizer;
    if (typeof tok?.chat_template !== "string") throw new Error(`${file}: no tokenizer.chat_template`);
    const text = (id) => (id !== undefined && id < tok.ggml.tokens.length ? tok.ggml.tokens[id] : "");
    cases.push({
      name: path.basename(file),
      source: tok.chat_template,
      bos: text(tok.ggml.bos_token_id),
      eos: text(tok.ggml.eos_token_id),
      mnemeArgs: ["-m", file],
    });
  }
  return cases;
}

function runMneme(args, templateArgs, conversation, tmp) {
  const messagesPath = path.join(tmp, "messages.json");
  writeFileSync(messagesPath, JSON.stringify(conversation.messages));
  const argv = ["render", ...templateArgs, "--messages", messagesPath];
  if (conversation.tools !== undefined) {
    const toolsPath = path.join(tmp, "tools.json");
    writeFileSync(toolsPath, JSON.stringify(conversation.tools));
    argv.push("--tools", toolsPath);
  }
  if (conversation.extra !== undefined) {
    const contextPath = path.join(tmp, "context.json");
    writeFileSync(contextPath, JSON.stringify(conversation.extra));
    argv.push("--context", contextPath);
  }
  if (conversation.add_generation_prompt === false) argv.push("--no-generation-prompt");
  const r = spawnSync(args.mneme, argv, { timeout: 20000, maxBuffer: 64 << 20 });
  return {
    argv,
    status: r.status,
    signal: r.signal,
    error: r.error,
    stdout: r.stdout ?? Buffer.alloc(0),
    stderr: (r.stderr ?? Buffer.alloc(0)).toString("utf8").trim(),
  };
}

// Returns { outcome, pass, details: [lines] }.
function judge(ref, mine) {
  if (mine.error || mine.signal || mine.status === null) {
    const why = mine.error ? String(mine.error.message) : `signal ${mine.signal}`;
    return { outcome: "CRASH", pass: false, details: [`mneme: ${why}`, mine.stderr].filter(Boolean) };
  }
  const refText =
    ref.kind === "ok" ? `rendered ${Buffer.byteLength(ref.output)} bytes`
    : ref.kind === "raise" ? `raised: ${ref.message}`
    : `parse error: ${ref.message}`;
  const mineText =
    mine.status === 0 ? `rendered ${mine.stdout.length} bytes`
    : mine.status === 3 ? `raised: ${mine.stderr}`
    : `exit ${mine.status}: ${mine.stderr}`;
  const both = [`reference ${refText}`, `mneme     ${mineText}`];

  if (ref.kind === "parse-error" || (mine.status !== 0 && mine.status !== 3)) {
    const refParsed = ref.kind !== "parse-error";
    const mineParsed = mine.status === 0 || mine.status === 3;
    if (refParsed === mineParsed) return { outcome: "ok (parse error)", pass: true, details: [] };
    return { outcome: refParsed ? "MNEME-ERROR" : "PARSE-MISMATCH", pass: false, details: both };
  }
  if (ref.kind === "raise") {
    if (mine.status !== 3) return { outcome: "RAISE-MISMATCH", pass: false, details: both };
    if (ref.deliberate && !mine.stderr.includes(ref.message)) {
      return { outcome: "RAISE-MISMATCH", pass: false,
               details: [...both, "(raise_exception message differs)"] };
    }
    return { outcome: "ok (raise)", pass: true, details: [], info: both };
  }
  if (mine.status !== 0) return { outcome: "RAISE-MISMATCH", pass: false, details: both };
  const expected = Buffer.from(ref.output, "utf8");
  if (expected.equals(mine.stdout)) return { outcome: "ok", pass: true, details: [] };
  const at = firstDifference(expected, mine.stdout);
  return {
    outcome: "DIFF",
    pass: false,
    details: [
      `first difference at byte ${at} (reference ${expected.length} bytes, mneme ${mine.stdout.length})`,
      `reference: ${excerpt(expected, at)}`,
      `mneme:     ${excerpt(mine.stdout, at)}`,
    ],
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const cases = [...templateCases(args), ...(await ggufCases(args))];
  const templates = cases.map((c) => c.name);
  const conversations = listStems(args.conversationsDir, ".json", args.onlyConversations);
  const tmp = mkdtempSync(path.join(os.tmpdir(), "mneme-templates-"));
  const rows = [];
  try {
    for (const { name: t, source, bos, eos, mnemeArgs } of cases) {
      for (const c of conversations) {
        const conversation = JSON.parse(readFileSync(path.join(args.conversationsDir, `${c}.json`), "utf8"));
        // Reference and mneme run back to back, so strftime_now sees the same date.
        const ref = renderReference(source, conversation, bos, eos);
        const mine = runMneme(args, mnemeArgs, conversation, tmp);
        const verdict = judge(ref, mine);
        rows.push({ t, c, ...verdict });
        console.log(`${verdict.pass ? "  " : "✗ "}${t.padEnd(48)} ${c.padEnd(30)} ${verdict.outcome}`);
        for (const line of verdict.details) console.log(`      ${line}`);
        if (args.verbose && verdict.info) for (const line of verdict.info) console.log(`      ${line}`);
        if (!verdict.pass && args.verbose) {
          console.log(`      command: ${[args.mneme, ...mine.argv].join(" ")}`);
          if (ref.kind === "ok") console.log(`      reference output: ${JSON.stringify(ref.output)}`);
          console.log(`      mneme output:     ${JSON.stringify(mine.stdout.toString("utf8"))}`);
        }
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  if (templates.length > 1) {
    console.log("\nper template:");
    for (const t of templates) {
      const mine = rows.filter((r) => r.t === t);
      const passed = mine.filter((r) => r.pass).length;
      console.log(`  ${t.padEnd(48)} ${passed}/${mine.length}`);
    }
  }
  const passed = rows.filter((r) => r.pass).length;
  console.log(`\n${passed} passed, ${rows.length - passed} failed`);
  return passed === rows.length ? 0 : 1;
}

try {
  process.exitCode = await main();
} catch (e) {
  console.error(`compare.mjs: ${e.message}`);
  process.exitCode = 2;
}
