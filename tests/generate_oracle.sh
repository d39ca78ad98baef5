#!/usr/bin/env bash
# Greedy parity of `mneme generate` (the engine, or with
# MNEME_GENERATE_FLAGS=--reference the scalar ReferenceForward) with
# llama.cpp (node-llama-cpp, tests/engine_oracle/llamacpp_generate.mjs):
#
#   [MNEME_GENERATE_FLAGS="..."] [MNEME_ORACLE_SEED=S]
#   generate_oracle.sh MNEME_BIN NODE ORACLE_MJS MODEL MATCH N PROMPT...
#
# MODEL is a GGUF path, or "synthetic:ARCH:VOCAB.gguf:TYPE:DIM:FF" for a
# small random model that `mneme make-model` writes to a temp dir (2 layers,
# 4 heads, 2 KV heads, seed 11, an output matrix (not --tied: a tied model
# just repeats the last prompt token) and no successor bonus
# (--successor 0), so every step depends on the whole network and context;
# K-quants need DIM and FF multiples of 256). For each prompt both tools
# generate N greedy tokens from BOS + prompt; ours come from the hidden flag
# --dump-steps (each step's token and our next best ids with their logit
# margins below it; an end-of-generation token counts as a step on both
# sides).
#
# MATCH "exact": the ids must be identical, token for token (trained models:
# stories260K). Otherwise MATCH is the model's weight type and picks the
# near-tie tolerance, the same per-type tolerances as the first-step logits
# test (tests/engine_oracle/compare_logits.mjs, which justifies them): f32
# and f16 1e-2, bf16 2e-2, quantized 0.1. Both tools compute the same
# products, but a last-bit difference in a float32 sum can flip one rounding
# of an activation to F16 / Q8 and move logits by up to about those
# amounts; a random model has near ties that small within 64 steps. So:
#   - identical ids: "ok: identical N tokens";
#   - first difference at step k: ok only if llama.cpp's token there is
#     one of our next best ids at step k AND our logit for it is within the
#     tolerance of our chosen token's (usually our runner-up: the two best
#     swapped; but a near tie can be three-way, seen twice, e.g. llama /
#     Q4_K: our 2nd and 3rd 0.0046 and 0.0061 below our 1st, and llama.cpp
#     put our 3rd first, 0.024 above our 1st, a flip's size). The tokens
#     after k are not compared (the continuations legitimately differ after
#     a flip);
#   - anything else (a confident step that differs, a token that is not
#     within the tolerance of our top, different lengths) is a MISMATCH.
# And per model (all the PROMPTs of one run): at least half of all the
# tokens must have been compared before any divergence, i.e. the sum over
# prompts of k (or the whole length when identical) >= half the sum of the
# lengths, so a run where every prompt flips early fails instead of passing
# vacuously. Prints one line per prompt and the total compared.
#
# MNEME_ORACLE_SEED (self-check only) makes llama.cpp run a synthetic model
# made with that seed instead of 11: a different model, which must fail.
# Exits 1 on any mismatch, 2 on bad usage.
set -euo pipefail

if [[ $# -lt 7 ]]; then
  echo "usage: $0 MNEME_BIN NODE ORACLE_MJS MODEL exact|TYPE N PROMPT..." >&2
  exit 2
fi
bin=$1 node=$2 oracle=$3 model=$4 match=$5 n=$6
shift 6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The tolerances of compare_logits.mjs (TOLERANCES there).
case $match in
  exact) tol=0 ;;
  f32 | f16) tol=1e-2 ;;
  bf16) tol=2e-2 ;;
  q8_0 | q4_0 | q4_k | q5_k | q6_k) tol=0.1 ;;
  *) echo "$0: MATCH must be exact or a weight type, not '$match'" >&2; exit 2 ;;
esac

theirs_model=$model
if [[ $model == synthetic:* ]]; then
  IFS=: read -r _ arch vocab type dim ff <<< "$model"
  make_model() {
    "$bin" make-model --arch "$arch" --type "$type" --vocab "$vocab" --dim "$dim" \
      --layers 2 --heads 4 --kv-heads 2 --ff "$ff" --successor 0 --seed "$1" -o "$2"
  }
  model=$tmp/$arch.gguf
  make_model 11 "$model"
  theirs_model=$model
  if [[ -n ${MNEME_ORACLE_SEED:-} ]]; then
    theirs_model=$tmp/${arch}_oracle.gguf
    make_model "$MNEME_ORACLE_SEED" "$theirs_model"
  fi
fi

# Compares one prompt: prints one line and appends "compared total" to
# $tmp/counts; exits 1 on a mismatch.
compare=$(cat <<'EOF'
const fs = require("fs");
const [stepsFile, theirsFile, tolText, label, countsFile] = process.argv.slice(1);
const tol = Number(tolText);
const steps = fs.readFileSync(stepsFile, "utf8").trim().split("\n").filter((l) => l).map((l) => JSON.parse(l));
const ours = steps.map((s) => s.token);
const theirs = JSON.parse(fs.readFileSync(theirsFile, "utf8")).generated_ids;
const total = Math.max(ours.length, theirs.length);
let k = 0;
while (k < ours.length && k < theirs.length && ours[k] === theirs[k]) ++k;
const fmt = (m) => (m === null ? "null" : m.toPrecision(3));
let ok = false, line;
if (k === total) {
  ok = true;
  line = `ok: ${label}: identical ${total} tokens`;
} else if (k === ours.length || k === theirs.length) {
  line = `MISMATCH: ${label}: identical for ${k} tokens, then mneme has ${ours.length} tokens ` +
         `and llama.cpp ${theirs.length}`;
} else {
  const s = steps[k];
  // Where llama.cpp's token is among our next best ids, and its margin.
  const rank = s.next.findIndex(([id]) => id === theirs[k]);
  const m = rank < 0 ? null : s.next[rank][1];
  ok = tol > 0 && m !== null && m < tol;
  const which = rank === 0 ? "our runner-up" : `our choice #${rank + 2}`;
  const what = `identical for ${k} tokens, then mneme ${s.token} (margin ${fmt(s.margin)} over ` +
               `runner-up ${s.runner_up}), llama.cpp ${theirs[k]} ` +
               (rank < 0 ? `(not in our top ${s.next.length + 1})` : `(${which}, margin ${fmt(m)})`);
  if (ok) {
    line = `ok: ${label}: identical for ${k} tokens, then a near tie (margin ${fmt(m)} < ` +
           `${tol}), llama.cpp took ${which}`;
  } else if (tol === 0) {
    line = `MISMATCH: ${label}: ${what} (exact comparison)`;
  } else {
    line = `MISMATCH: ${label}: ${what}: not a near tie (margin >= ${tol} or unknown)`;
  }
  if (!ok) {
    line += `\n  mneme:     ${ours.join(" ")}\n  llama.cpp: ${theirs.join(" ")}`;
  }
}
console.log(line);
fs.appendFileSync(countsFile, `${k} ${total}\n`);
process.exit(ok ? 0 : 1);
EOF
)

failures=0
: > "$tmp/counts"
for prompt in "$@"; do
  # shellcheck disable=SC2086  # the flags are words
  "$bin" generate -m "$model" -p "$prompt" -n "$n" --ids --dump-steps "$tmp/steps.jsonl" \
    ${MNEME_GENERATE_FLAGS:-} > /dev/null
  "$node" "$oracle" -m "$theirs_model" -p "$prompt" -n "$n" --top 0 > "$tmp/theirs.json"
  if ! "$node" -e "$compare" -- "$tmp/steps.jsonl" "$tmp/theirs.json" "$tol" "'$prompt'" \
       "$tmp/counts"; then
    failures=$((failures + 1))
  fi
done

read -r compared total < <(awk '{c += $1; t += $2} END {print c + 0, t + 0}' "$tmp/counts")
if ((2 * compared < total)); then
  echo "MISMATCH: only $compared of $total tokens were compared before a divergence (need half)"
  failures=$((failures + 1))
else
  echo "compared $compared of $total tokens before any divergence"
fi
exit $((failures > 0))
