// Compares mneme's first-step logits with llama.cpp's (the logits parity
// tests, tests/logits.cmake via tests/logits_oracle.sh):
//
//   node compare_logits.mjs --type TYPE [--tol T] [--floor -30] [--label TEXT]
//                           [--perturb D] OURS.json THEIRS.json
//
// OURS.json is `mneme generate --dump-logits` ({"n_vocab", "logits": raw
// float32 logits}); THEIRS.json is llamacpp_generate.mjs --logits output
// (first_step.log_softmax: llama.cpp's float32 softmax, logged; null where
// it underflowed). Ours are turned into log-softmax in float64, so both sides
// are "logit minus logsumexp" and the unknown per-position constant cancels.
//
// Compared ids: those where either side's log-probability is above --floor
// (-30, i.e. p > 1e-13). llama.cpp's float32 softmax keeps ~1e-7 absolute
// precision in log space down to about -87 (normal floats), so -30 is far
// inside the precise range; below it a token is irrelevant to any sampler.
// An id above the floor on our side but null on theirs fails. The
// differences are centred on their median first (see `offset` below).
// Prints max |Δ log-softmax| (and where), the mean, the raw logit range,
// top-1 agreement and the overlap of the two top-10 sets; exits 1 when
// max |Δ| > the tolerance of --type (or --tol).
//
// --perturb D (self-check): adds D to our logit of llama.cpp's 2nd most
// likely token before comparing, i.e. a single-logit bug of size D (its
// log-softmax moves by D(1 - p) > D/2). With D at 2x the tolerance this must
// fail (tests/logits.cmake, logits_selfcheck_perturb_*), so the threshold is
// shown to bite.
//
// Tolerances (max |Δ log-softmax| after centring, nats), per weight type.
// Both implementations round the same activations the same way (F16 K/V,
// Q rounded to F16 for K·Q and the softmax to F16 for P·V as ggml's
// non-flash attention does; F16/BF16 activations for F16/BF16 weights;
// Q8_0 / Q8_K for the quantized types), so a difference starts only as a
// last-bit difference of a float32 sum (e.g. llama.cpp's tinyBLAS sgemm order
// for F32/F16 prompt batches). It stays at that size (~1e-6, the oracle's own
// float32 noise) unless it pushes some value across a rounding boundary of
// the next activation rounding; then that value moves by a whole step (F16:
// 2^-11 relative, BF16: 2^-8, int8: amax/127) and the change spreads
// (measured, docs/engine.md: worst 2.1e-3 for F32/F16, 4.3e-2 for int8
// activations, which is as large as not rounding activations at all).
//   f32, f16   1e-2: ~5x the worst F16-rounding flip measured (2.1e-3,
//              stories260K, F32 weights; synthetic F16 6.3e-4).
//   bf16       2e-2: measured ~1e-6 (bit-identical paths today), but a BF16
//              flip is 8x an F16 one.
//   quantized  0.1: ~3x the worst on the test prompts (3.4e-2, Q4_K/Q5_K),
//              2.3x the worst on any prompt tried (4.3e-2).
// Self-checks (tests/logits.cmake): a logit moved by 2x the tolerance fails
// (--perturb), and so does evaluating a short prompt without its BOS
// (stories260K F32: 2.8; llama Q4_0: 0.48). A missing F16-KV or int8
// activation rounding is as large as a flip and cannot be told apart.
import fs from "node:fs";
import { parseArgs } from "node:util";

// Per weight type; see the header.
const TOLERANCES = {
  f32: 1e-2,
  f16: 1e-2,
  bf16: 2e-2,
  q8_0: 0.1,
  q4_0: 0.1,
  q4_k: 0.1,
  q5_k: 0.1,
  q6_k: 0.1,
};

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    type: { type: "string" },
    tol: { type: "string" },
    floor: { type: "string", default: "-30" },
    label: { type: "string", default: "" },
    perturb: { type: "string" },
  },
});
const usage = (why) => {
  console.error(`compare_logits.mjs: ${why}\nusage: compare_logits.mjs --type ` +
                `${Object.keys(TOLERANCES).join("|")} [--tol T] [--floor F] [--label TEXT] ` +
                "[--perturb D] OURS.json THEIRS.json");
  process.exit(2);
};
if (positionals.length !== 2) usage("need OURS.json and THEIRS.json");
if (args.tol === undefined && !(args.type in TOLERANCES)) usage(`unknown --type '${args.type}'`);
const tol = args.tol !== undefined ? Number(args.tol) : TOLERANCES[args.type];
const floor = Number(args.floor);
if (!(tol >= 0) || !Number.isFinite(floor)) usage("bad --tol or --floor");

const ours = JSON.parse(fs.readFileSync(positionals[0], "utf8"));
const theirs = JSON.parse(fs.readFileSync(positionals[1], "utf8"));
const theirLs = theirs.first_step?.log_softmax;
if (!Array.isArray(theirLs)) usage(`${positionals[1]}: no first_step.log_softmax (run the oracle with --logits)`);
const n = ours.n_vocab;
if (ours.logits.length !== n || theirs.n_vocab !== n || theirLs.length !== n) {
  console.error(`FAIL ${args.label}: vocabulary sizes differ: ours ${n} (${ours.logits.length} logits), ` +
                `llama.cpp ${theirs.n_vocab} (${theirLs.length})`);
  process.exit(1);
}
const logits = ours.logits.slice();
if (logits.some((x) => x === null)) {
  console.error(`FAIL ${args.label}: our logits contain non-finite values`);
  process.exit(1);
}

// llama.cpp's ranking (null last); its top-1 and top-10.
const theirOrder = [...theirLs.keys()].sort((a, b) =>
  (theirLs[b] ?? -Infinity) - (theirLs[a] ?? -Infinity) || a - b);
if (args.perturb !== undefined) logits[theirOrder[1]] += Number(args.perturb);

// Ours as log-softmax, in float64.
let max = -Infinity, min = Infinity;
for (const x of logits) { max = Math.max(max, x); min = Math.min(min, x); }
let sum = 0;
for (const x of logits) sum += Math.exp(x - max);
const lse = max + Math.log(sum);
const ourLs = logits.map((x) => x - lse);
const ourOrder = [...ourLs.keys()].sort((a, b) => ourLs[b] - ourLs[a] || a - b);

// llama.cpp sums its float32 softmax over the whole vocabulary in float32,
// which shifts all its log-probabilities by one constant (its logsumexp
// error: ~1e-5 for 152k ids). A constant shift changes no probability, so the
// differences are compared after removing their median (`offset`, printed).
const ids = [], diffs = [];
let missing = 0;
for (let i = 0; i < n; ++i) {
  const t = theirLs[i];
  if (!(ourLs[i] > floor || (t !== null && t > floor))) continue;
  if (t === null) { ++missing; continue; }
  ids.push(i);
  diffs.push(ourLs[i] - t);
}
const compared = ids.length;
const sorted = Float64Array.from(diffs).sort();
const offset = compared ? (sorted[(compared - 1) >> 1] + sorted[compared >> 1]) / 2 : 0;
let worst = 0, worstId = -1, total = 0;
for (let k = 0; k < compared; ++k) {
  const d = Math.abs(diffs[k] - offset);
  total += d;
  if (d > worst) { worst = d; worstId = ids[k]; }
}
const top10 = new Set(theirOrder.slice(0, 10));
const overlap = ourOrder.slice(0, 10).filter((id) => top10.has(id)).length;
const fail = worst > tol || missing > 0 || compared === 0;
const fmt = (x) => x.toExponential(2);
console.log(`${fail ? "FAIL" : "ok"} ${args.label}: max|Δ log-softmax| ${fmt(worst)} ` +
            `(tol ${fmt(tol)}, id ${worstId}), mean ${fmt(compared ? total / compared : 0)}, ` +
            `offset ${fmt(offset)}, ` +
            `${compared}/${n} ids above ${floor}` + (missing ? `, ${missing} null in llama.cpp` : "") +
            `; logits [${min.toFixed(3)}, ${max.toFixed(3)}]; top-1 ` +
            (ourOrder[0] === theirOrder[0] ? "same" : `differs (ours ${ourOrder[0]}, llama.cpp ${theirOrder[0]})`) +
            `; top-10 overlap ${overlap}/10`);
process.exit(fail ? 1 : 0);
