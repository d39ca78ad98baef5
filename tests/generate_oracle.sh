#!/usr/bin/env bash
# Greedy parity of `mneme generate` (the engine, or with
# MNEME_GENERATE_FLAGS=--reference the scalar ReferenceForward) with
# llama.cpp (node-llama-cpp, tests/engine_oracle/llamacpp_generate.mjs):
#
#   [MNEME_GENERATE_FLAGS="..."] generate_oracle.sh MNEME_BIN NODE ORACLE_MJS MODEL N PROMPT...
#
# MODEL is a GGUF path, or "synthetic:ARCH:VOCAB.gguf[:TYPE:DIM:FF]" for a
# small random model (default F32, dim 64, ff 160; K-quants need dim and ff
# multiples of 256) that `mneme make-model` writes to a temp dir (no
# successor bonus, so the continuation depends on the whole network, not
# just the last token).
# For each prompt, the N generated ids (BOS first, as both tools do unless
# --no-bos) must be identical. Prints every mismatch; exits 1 if any.
set -euo pipefail

if [[ $# -lt 6 ]]; then
  echo "usage: $0 MNEME_BIN NODE ORACLE_MJS MODEL N PROMPT..." >&2
  exit 2
fi
bin=$1 node=$2 oracle=$3 model=$4 n=$5
shift 5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [[ $model == synthetic:* ]]; then
  IFS=: read -r _ arch vocab type dim ff <<< "$model"
  model=$tmp/$arch.gguf
  "$bin" make-model --arch "$arch" --type "${type:-f32}" --vocab "$vocab" --dim "${dim:-64}" \
    --layers 2 --heads 4 --kv-heads 2 --ff "${ff:-160}" --tied --successor 0 --seed 11 -o "$model"
fi

failures=0
for prompt in "$@"; do
  # shellcheck disable=SC2086  # the flags are words
  ours=$("$bin" generate -m "$model" -p "$prompt" -n "$n" --ids ${MNEME_GENERATE_FLAGS:-})
  theirs=$("$node" "$oracle" -m "$model" -p "$prompt" -n "$n" |
    "$node" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
      const r=JSON.parse(s); let ids=r.generated_ids;
      if (r.stopped_at_eog) ids=ids.slice(0,-1);  // mneme does not print the EOG token
      console.log(ids.join(" "));})')
  if [[ $ours != "$theirs" ]]; then
    echo "MISMATCH for prompt '$prompt':" >&2
    echo "  mneme:     $ours" >&2
    echo "  llama.cpp: $theirs" >&2
    failures=$((failures + 1))
  else
    echo "ok: '$prompt' -> $(wc -w <<< "$ours") tokens"
  fi
done
exit $((failures > 0))
