#!/usr/bin/env bash
# First-step logits parity of `mneme generate` (the engine, or with
# MNEME_LOGITS_FLAGS=--reference the scalar ReferenceForward) with llama.cpp
# (node-llama-cpp, tests/engine_oracle/llamacpp_generate.mjs --logits):
#
#   [MNEME_LOGITS_FLAGS="..."] logits_oracle.sh MNEME_BIN NODE ENGINE_ORACLE_DIR MODEL TYPE PROMPT...
#
# MODEL is a GGUF path, or "synthetic:ARCH:VOCAB.gguf:TYPE:DIM:FF" for the
# same small random model as tests/generate_oracle.sh (`mneme make-model`,
# 2 layers, 4 heads, 2 KV heads, no successor bonus, seed 11; K-quants
# need dim and ff multiples of 256). TYPE picks the tolerance
# (compare_logits.mjs). For each prompt, mneme's logits after the prompt
# (hidden flag --dump-logits) and llama.cpp's first-step log-softmax are
# compared by ENGINE_ORACLE_DIR/compare_logits.mjs; exits 1 if any prompt
# is out of tolerance. MNEME_LOGITS_COMPARE adds flags to compare_logits.mjs
# (the self-check tests use --perturb). Exits 77 (CTest SKIP_RETURN_CODE)
# when node-llama-cpp is not installed under tests/oracle/node_modules.
set -euo pipefail

if [[ $# -lt 6 ]]; then
  echo "usage: $0 MNEME_BIN NODE ENGINE_ORACLE_DIR MODEL TYPE PROMPT..." >&2
  exit 2
fi
bin=$1 node=$2 dir=$3 model=$4 type=$5
shift 5
if [[ ! -d $dir/../oracle/node_modules/node-llama-cpp ]]; then
  echo "node-llama-cpp is not installed under tests/oracle/node_modules: skipped" >&2
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

label=$(basename "$model")
if [[ $model == synthetic:* ]]; then
  IFS=: read -r _ arch vocab mtype dim ff <<< "$model"
  label=$arch/$mtype
  model=$tmp/$arch.gguf
  "$bin" make-model --arch "$arch" --type "$mtype" --vocab "$vocab" --dim "$dim" \
    --layers 2 --heads 4 --kv-heads 2 --ff "$ff" --successor 0 --seed 11 -o "$model"
fi

failures=0
for prompt in "$@"; do
  # shellcheck disable=SC2086  # the flags are words
  "$bin" generate -m "$model" -p "$prompt" -n 1 --ids --threads 1 \
    --dump-logits "$tmp/ours.json" ${MNEME_LOGITS_FLAGS:-} > /dev/null
  "$node" "$dir/llamacpp_generate.mjs" -m "$model" -p "$prompt" -n 1 --logits --top 0 > "$tmp/theirs.json"
  # shellcheck disable=SC2086
  if ! "$node" "$dir/compare_logits.mjs" --type "$type" --label "$label '$prompt'" \
       ${MNEME_LOGITS_COMPARE:-} "$tmp/ours.json" "$tmp/theirs.json"; then
    failures=$((failures + 1))
  fi
done
exit $((failures > 0))
