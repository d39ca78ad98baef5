// Checks the generation oracle itself against a fact documented outside
// llama.cpp: the temperature-0 continuation of BOS on stories260K.gguf
// (../shared/models/README.md, "Functional check", which equals karpathy's
// llama2.c doc/stories260K.md). If this fails, llama.cpp parity failures mean
// nothing: fix the oracle first.
//
//   node tests/engine_oracle/selfcheck.mjs [/path/to/shared/models]
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const models = process.argv[2] ?? path.resolve(here, "../../../shared/models");
const expected =
  "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. " +
  "One day, she saw a big, red ball. She wanted to play with it, but it was too high.\n" +
  "Lily's mom said, \"Lily, let's go to the park.\" Lily was sad and didn't know what to do. " +
  "She said, \"I want to play with your ball, but";

let failures = 0;
const fail = (msg) => {
  console.error(`FAIL: ${msg}`);
  failures++;
};
const generate = (extra) => {
  const run = spawnSync(process.execPath,
    [path.join(here, "llamacpp_generate.mjs"), "-m", path.join(models, "stories260K.gguf"), ...extra],
    { encoding: "utf8", maxBuffer: 1 << 26 });
  if (run.status !== 0) throw new Error(`llamacpp_generate.mjs failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout);
};

// 1. ids [1] (BOS), greedy: the documented story.
const a = generate(["--ids", "1", "-n", "160", "--decode", "--logits"]);
if (JSON.stringify(a.prompt_ids) !== "[1]") fail(`prompt_ids ${JSON.stringify(a.prompt_ids)}`);
if (a.generated_ids.length !== 160) fail(`generated ${a.generated_ids.length} tokens, wanted 160`);
if (!a.text.startsWith(expected)) {
  fail(`greedy text differs from the README:\n  got:  ${JSON.stringify(a.text.slice(0, expected.length))}\n` +
       `  want: ${JSON.stringify(expected)}`);
}
// 2. First-step distribution: a full, normalized log-softmax whose argmax is
//    the first generated token.
const ls = a.first_step.log_softmax;
if (ls.length !== a.n_vocab || a.n_vocab !== 512) fail(`log_softmax has ${ls.length} entries, n_vocab ${a.n_vocab}`);
const mass = ls.reduce((s, v) => s + (v === null ? 0 : Math.exp(v)), 0);
if (Math.abs(mass - 1) > 1e-5) fail(`probabilities sum to ${mass}`);
const argmax = ls.reduce((best, v, i) => (v !== null && v > ls[best] ? i : best), 0);
if (argmax !== a.generated_ids[0] || a.first_step.argmax !== argmax) {
  fail(`argmax ${argmax} vs first token ${a.generated_ids[0]} vs first_step.argmax ${a.first_step.argmax}`);
}
// 3. Text prompt: tokenized with BOS prepended, the continuation picks up the
//    same story (greedy decoding is a function of the token prefix).
const b = generate(["-p", "Once upon a time", "-n", "8"]);
const prefix = a.generated_ids.slice(0, b.prompt_ids.length - 1);
if (b.prompt_ids[0] !== 1 || JSON.stringify(b.prompt_ids.slice(1)) !== JSON.stringify(prefix)) {
  fail(`"Once upon a time" tokenized to ${JSON.stringify(b.prompt_ids)}, story starts ${JSON.stringify(prefix)}`);
} else {
  const cont = a.generated_ids.slice(prefix.length, prefix.length + 8);
  if (JSON.stringify(b.generated_ids) !== JSON.stringify(cont)) {
    fail(`continuation ${JSON.stringify(b.generated_ids)} != story tokens ${JSON.stringify(cont)}`);
  }
}
// 4. --no-bos really omits it.
const c = generate(["-p", "Once upon a time", "-n", "1", "--no-bos"]);
if (JSON.stringify(c.prompt_ids) !== JSON.stringify(b.prompt_ids.slice(1))) {
  fail(`--no-bos prompt_ids ${JSON.stringify(c.prompt_ids)}`);
}

if (failures) process.exit(1);
console.log(`ok: oracle reproduces the documented stories260K greedy text (${a.generated_ids.length} tokens)`);
