#!/usr/bin/env bash
# Engine speed, Mneme vs llama.cpp, on the same synthetic models with the
# same thread count (`make bench-engine` runs this). For each model (a 134M
# and a 1.1B-parameter llama, each in F16, Q8_0 and Q4_K; made by
# bench/engine/models.sh with `mneme make-model`, cached, never committed):
#   prompt processing: 512 tokens into an empty context (pp512)
#   generation:        128 single-token decode steps from BOS (tg128)
# measured for
#   Mneme      `mneme generate --timings` (pp: a 512-token prompt, -n 1;
#              tg: the BOS-only prompt, -n 129 = 128 decode steps), parsed
#              from its stderr timing line; load time is excluded
#   llama.cpp  tests/engine_oracle/llamacpp_bench.mjs (node-llama-cpp), or
#              llama-bench when LLAMA_BENCH=/path/to/llama-bench is given
# plus the machine's read bandwidth (bench/engine/bandwidth.cc, 1 GiB, 1 and
# 2 threads) and, per model, the bytes streamed per generated token and the
# bandwidth-bound tokens/s. Prints a table with the ratios and writes
# bench/results/engine.json. Method and numbers: docs/benchmarks.md.
#
# Knobs (environment): BUILD_DIR (build), THREADS (2), QUICK=1 (only the
# 134M models), SIZES ("100m 1b"), TYPES ("f16 q8_0 q4_k"), REPS (3 timed
# runs after a warm-up, both sides), MNEME_REPS (REPS; 1 while `mneme
# generate` still runs the scalar reference forward), PP (512), TG (128),
# MODEL_CACHE (~/.cache/mneme/bench-models), LLAMA_BENCH, OUT
# (bench/results/engine.json), RUN_TIMEOUT (900 s per process).
set -euo pipefail

cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
THREADS=${THREADS:-2}
QUICK=${QUICK:-0}
if [[ $QUICK == 1 ]]; then SIZES=${SIZES:-100m}; else SIZES=${SIZES:-"100m 1b"}; fi
TYPES=${TYPES:-"f16 q8_0 q4_k"}
REPS=${REPS:-3}
PP=${PP:-512}
TG=${TG:-128}
MODEL_CACHE=${MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mneme/bench-models}
LLAMA_BENCH=${LLAMA_BENCH:-}
OUT=${OUT:-bench/results/engine.json}
RUN_TIMEOUT=${RUN_TIMEOUT:-900}
SHARED_DIR=${MNEME_SHARED_DIR:-$(cd .. && pwd)/shared}
VOCAB=$SHARED_DIR/models/vocab/ggml-vocab-llama-spm.gguf
ORACLE_DIR=tests/oracle
mneme=$BUILD_DIR/bin/mneme

if [[ ! -x $mneme ]]; then
  echo "bench_engine: building $mneme"
  cmake --build "$BUILD_DIR" --target mneme
fi
if [[ -z $LLAMA_BENCH && ! -d $ORACLE_DIR/node_modules/node-llama-cpp ]]; then
  echo "bench_engine: $ORACLE_DIR/node_modules/node-llama-cpp is missing; run ./scripts/install_deps.sh" >&2
  exit 1
fi
if [[ ! -f $VOCAB ]]; then
  echo "bench_engine: $VOCAB is missing (set MNEME_SHARED_DIR)" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
load_start=$(cut -d' ' -f1 /proc/loadavg)
echo "bench_engine: $THREADS threads, pp$PP, tg$TG; load average $load_start"
if awk -v l="$load_start" 'BEGIN { exit !(l > 0.5) }'; then
  echo "bench_engine: WARNING: the machine is not idle (load average $load_start): multi-threaded" \
    "numbers, llama.cpp's spinning workers above all, will be low and noisy" >&2
fi

# Memory bandwidth.
g++ -O3 -march=native -pthread -o "$work/bandwidth" bench/engine/bandwidth.cc
bw_threads=1,2
[[ $THREADS -gt 2 ]] && bw_threads="1,2,$THREADS"
"$work/bandwidth" --mib 1024 --passes 5 --threads "$bw_threads" >"$work/bandwidth.json"
echo "bandwidth: $(cat "$work/bandwidth.json")"

bench/engine/models.sh "$mneme" "$VOCAB" "$MODEL_CACHE" "$SIZES" "$TYPES" >"$work/models.txt"

# Which forward pass `mneme generate` runs, the label every number carries:
# the engine build says so in its --timings output ("forward engine ...");
# a build without that line predates the engine and runs the scalar
# ReferenceForward.
first_model=$(head -n 1 "$work/models.txt" | cut -d' ' -f4)
mneme_path=$("$mneme" generate -m "$first_model" -p "" -n 2 --ids --timings --threads "$THREADS" 2>&1 \
               >/dev/null | sed -n 's/^mneme generate: forward //p' | head -n 1 || true)
mneme_path=${mneme_path:-"reference (scalar ReferenceForward; this build predates the engine)"}
if [[ $mneme_path == reference* ]]; then
  MNEME_REPS=${MNEME_REPS:-1}  # ~45 s per pp512 on the 134M model
else
  MNEME_REPS=${MNEME_REPS:-$REPS}
fi
echo "bench_engine: Mneme path: $mneme_path; reps: Mneme $MNEME_REPS, llama.cpp $REPS"

# A prompt of exactly PP tokens: BOS + (PP-1) x "the" (one SPM token each);
# the token count Mneme reports is checked by the report.
prompt=$(printf 'the %.0s' $(seq 1 $((PP - 1))))
prompt=${prompt% }

run_mneme() {  # model tag prompt n_predict -> the timing line appended to $work/mneme-TAG.log
  local model=$1 tag=$2 text=$3 n=$4 log=$work/run.log
  if timeout "$RUN_TIMEOUT" "$mneme" generate -m "$model" -p "$text" -n "$n" --ids --timings \
       --threads "$THREADS" >/dev/null 2>"$log"; then
    grep 'tok/s' "$log" | tail -n 1 >>"$work/mneme-$tag.log"
  else
    echo "   mneme generate failed (exit $?): $(tail -n 2 "$log")"
  fi
}

while read -r name size type path; do
  id=$name-$type
  echo "== $id ($(du -h "$path" | cut -f1))"
  "$mneme" info -m "$path" --json >"$work/info-$id.json"
  # llama.cpp
  if [[ -n $LLAMA_BENCH ]]; then
    timeout "$RUN_TIMEOUT" "$LLAMA_BENCH" -m "$path" -t "$THREADS" -p "$PP" -n "$TG" -r "$REPS" -o json \
      >"$work/llamabench-$id.json" 2>"$work/llama-$id.err" ||
      echo "   llama-bench failed: $(tail -n 2 "$work/llama-$id.err")"
  else
    timeout "$RUN_TIMEOUT" node tests/engine_oracle/llamacpp_bench.mjs -m "$path" --threads "$THREADS" \
      --pp "$PP" --tg "$TG" --reps "$REPS" --json >"$work/llamacpp-$id.json" 2>"$work/llama-$id.err" ||
      echo "   llamacpp_bench failed: $(tail -n 2 "$work/llama-$id.err")"
  fi
  [[ -s $work/llamacpp-$id.json ]] && echo "   llama.cpp: $(cat "$work/llamacpp-$id.json")"
  # Mneme: a short warm-up run pages the weights in, then the timed runs.
  run_mneme "$path" "$id-warmup" "" 2
  for ((r = 0; r < MNEME_REPS; r++)); do
    run_mneme "$path" "$id-pp" "$prompt" 1
    run_mneme "$path" "$id-tg" "" $((TG + 1))
  done
  sed 's/^/   mneme: /' "$work/mneme-$id-pp.log" "$work/mneme-$id-tg.log" 2>/dev/null || true
done <"$work/models.txt"

# What the numbers were measured on, for the results file.
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)
compiler=$(grep -m1 '^CMAKE_CXX_COMPILER:' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | cut -d= -f2- || true)
compiler_version=$("${compiler:-c++}" --version 2>/dev/null | head -n1 || true)
build_type=$(grep -m1 '^CMAKE_BUILD_TYPE:' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | cut -d= -f2- || true)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit (uncommitted changes)"
engine_dir=no
[[ -d src/engine ]] && engine_dir=yes
nlc_version=$(node -p "require('./$ORACLE_DIR/node_modules/node-llama-cpp/package.json').version" 2>/dev/null || echo unknown)

node bench/engine/report.mjs --dir "$work" --out "$OUT" \
  --meta "$(MNEME_CPU=$cpu node -e '
    const os = require("node:os");
    const [commit, compiler, buildType, path, engineDir, nlc, llamaBench, threads, pp, tg, reps, mreps, load0] =
      process.argv.slice(1);
    process.stdout.write(JSON.stringify({
      machine: {cpu: process.env.MNEME_CPU, logical_cpus: os.cpus().length,
                memory_gib: Math.round(os.totalmem() / 2 ** 30), os: `${os.type()} ${os.release()}`,
                load_average_1m_at_start: Number(load0), load_average_1m_at_end: os.loadavg()[0]},
      mneme: {commit, compiler, build_type: buildType, generate_path: path, src_engine_exists: engineDir === "yes"},
      llamacpp: {via: llamaBench ? `llama-bench (${llamaBench})` : `node-llama-cpp ${nlc} prebuilt linux-x64 CPU binaries`,
                 node: process.version},
      method: {threads: Number(threads), pp_tokens: Number(pp), tg_tokens: Number(tg),
               llamacpp_reps: Number(reps), mneme_reps: Number(mreps), warmup_runs: 1},
    }));' "$commit" "$compiler_version" "$build_type" "$mneme_path" "$engine_dir" "$nlc_version" \
    "$LLAMA_BENCH" "$THREADS" "$PP" "$TG" "$REPS" "$MNEME_REPS" "$load_start")"
