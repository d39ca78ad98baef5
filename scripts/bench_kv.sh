#!/usr/bin/env bash
# Prefix cache and continuous batching benchmark (`make bench-kv`): runs
# `mneme bench-kv` (src/app/cmd_bench_kv.cc) on the 134M-parameter synthetic
# llama (F16, 4096-token context; made with `mneme make-model`, cached, never
# committed), writes bench/results/kv.json and plots the per-turn time to
# first token, cache on vs off, to docs/img/kv_ttft.svg with gnuplot.
#
# Knobs (environment): BUILD_DIR (build), THREADS (2), TYPE (f16),
# MODEL_CACHE (~/.cache/mneme/bench-models), OUT (bench/results/kv.json),
# PLOT (docs/img/kv_ttft.svg), ARGS (extra bench-kv flags).
set -euo pipefail

cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
THREADS=${THREADS:-2}
TYPE=${TYPE:-f16}
MODEL_CACHE=${MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mneme/bench-models}
OUT=${OUT:-bench/results/kv.json}
PLOT=${PLOT:-docs/img/kv_ttft.svg}
SHARED_DIR=${MNEME_SHARED_DIR:-$(cd .. && pwd)/shared}
VOCAB=$SHARED_DIR/models/vocab/ggml-vocab-llama-spm.gguf
mneme=$BUILD_DIR/bin/mneme

[[ -x $mneme ]] || cmake --build "$BUILD_DIR" --target mneme
mkdir -p "$MODEL_CACHE" "$(dirname "$OUT")" "$(dirname "$PLOT")"
recipe=$(git hash-object src/model/synthetic_model.cc | cut -c1-8)
model=$MODEL_CACHE/llama-100m-ctx4096-$TYPE-$recipe.gguf
if [[ ! -s $model ]]; then
  echo "bench_kv: making $model" >&2
  "$mneme" make-model --arch llama --type "$TYPE" --vocab "$VOCAB" --dim 768 --layers 12 \
    --heads 12 --kv-heads 12 --ff 2048 --ctx 4096 --seed 1 -o "$model.tmp" >&2
  mv "$model.tmp" "$model"
fi

# shellcheck disable=SC2086  # ARGS are words
"$mneme" bench-kv -m "$model" --threads "$THREADS" --json "$OUT" ${ARGS:-}

if command -v gnuplot >/dev/null && command -v node >/dev/null; then
  data=$(mktemp)
  trap 'rm -f "$data"' EXIT
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const on = r.multiturn.find((c) => c.cache), off = r.multiturn.find((c) => !c.cache);
    for (let i = 0; i < on.turns.length; ++i) {
      console.log([on.turns[i].turn, on.turns[i].ttft_ms, on.turns[i].bound_ms,
                   off.turns[i].ttft_ms, off.turns[i].bound_ms].join(" "));
    }' "$OUT" > "$data"
  gnuplot <<GP
set terminal svg size 720,420 font "sans,12" background rgb "white"
set output "$PLOT"
set title "Time to first token per turn (134M F16 synthetic llama, $THREADS threads)"
set xlabel "turn (each adds ~200 user tokens + a 32-token answer)"
set ylabel "TTFT (ms)"
set key top left
set grid
plot "$data" using 1:4 with linespoints lw 2 title "prefix cache off (re-prefill history)", \
     "$data" using 1:2 with linespoints lw 2 title "prefix cache on (radix)", \
     "$data" using 1:3 with lines dt 2 lw 1 title "FLOP bound, cache on"
GP
  echo "bench_kv: plot written to $PLOT"
else
  echo "bench_kv: gnuplot or node missing, no plot" >&2
fi
