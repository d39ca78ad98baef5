#!/usr/bin/env bash
# Tokenizer throughput, Mneme vs llama.cpp, on the same vocab, the same text
# and the same chunks (`make bench` runs this). For each vocab it runs
#   build/bin/tokenizer_bench            Mneme's Tokenizer::Encode (Google Benchmark)
#   bench/tokenizer/llamacpp_tokenize.mjs llama.cpp's tokenizer via node-llama-cpp
# then prints  vocab | tokens | Mneme MB/s | llama.cpp MB/s | ratio | ids match,
# writes bench/results/tokenizer.json, and cross-checks that both produced the
# same token ids on the whole corpus (a large extra oracle; a difference is
# printed loudly with the text around it and makes the script exit 1).
#
# The corpus is generated here (bench/tokenizer/make_corpus.mjs, seeded), never
# committed. Method and recorded numbers: docs/benchmarks.md.
#
# Knobs (environment): BUILD_DIR (build), VOCABS (all eight test vocabs:
# "llama-spm llama-bpe qwen2 gpt-2 phi-3 deepseek-coder falcon starcoder"),
# CORPUS_BYTES (2000000), SEED (42), STYLE (english; "stress" mixes
# in scripts, emoji and whitespace runs: a harder cross-check, not the speed
# numbers), CHUNK (65536 bytes, 0 = whole text in one call), REPS (5 timed
# passes), OUT (bench/results/tokenizer.json).
set -euo pipefail

cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
VOCABS=${VOCABS:-"llama-spm llama-bpe qwen2 gpt-2 phi-3 deepseek-coder falcon starcoder"}
CORPUS_BYTES=${CORPUS_BYTES:-2000000}
SEED=${SEED:-42}
STYLE=${STYLE:-english}
CHUNK=${CHUNK:-65536}
REPS=${REPS:-5}
OUT=${OUT:-bench/results/tokenizer.json}
SHARED_DIR=${MNEME_SHARED_DIR:-$(cd .. && pwd)/shared}
VOCAB_DIR=$SHARED_DIR/models/vocab
ORACLE_DIR=tests/oracle

bench_bin=$BUILD_DIR/bin/tokenizer_bench
if [[ ! -x $bench_bin ]]; then
  echo "bench_tokenizer: building $bench_bin"
  cmake --build "$BUILD_DIR" --target tokenizer_bench
fi
if [[ ! -d $ORACLE_DIR/node_modules/node-llama-cpp ]]; then
  echo "bench_tokenizer: $ORACLE_DIR/node_modules/node-llama-cpp is missing; run ./scripts/install_deps.sh" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

node bench/tokenizer/make_corpus.mjs --bytes "$CORPUS_BYTES" --seed "$SEED" --style "$STYLE" >"$work/corpus.txt"
echo "corpus: $(wc -c <"$work/corpus.txt") bytes (make_corpus.mjs --seed $SEED --style $STYLE)," \
  "chunk $CHUNK, $REPS timed passes"

for v in $VOCABS; do
  gguf=$VOCAB_DIR/ggml-vocab-$v.gguf
  echo "== $v"
  # Mneme first; its warm-up pass writes the ids for the cross-check.
  MNEME_BENCH_CORPUS=$work/corpus.txt MNEME_BENCH_VOCABS=$gguf MNEME_BENCH_CHUNK=$CHUNK \
    MNEME_BENCH_REPS=$REPS MNEME_BENCH_IDS_DIR=$work \
    "$bench_bin" --benchmark_out="$work/mneme-$v.json" --benchmark_out_format=json \
    --benchmark_report_aggregates_only=false >"$work/mneme-$v.log" 2>&1 ||
    echo "   tokenizer_bench failed (exit $?): $(tail -n 3 "$work/mneme-$v.log")"
  compare=()
  [[ -s $work/ggml-vocab-$v.ids ]] && compare=(--compare "$work/ggml-vocab-$v.ids")
  node bench/tokenizer/llamacpp_tokenize.mjs --vocab "$gguf" --corpus "$work/corpus.txt" \
    --chunk "$CHUNK" --reps "$REPS" --oracle-dir "$ORACLE_DIR" "${compare[@]}" \
    >"$work/llamacpp-$v.json" 2>"$work/llamacpp-$v.log" ||
    echo "   llamacpp_tokenize failed: $(head -n 1 "$work/llamacpp-$v.log")"
done

# What the numbers were measured on, for the results file.
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)
compiler=$(grep -m1 '^CMAKE_CXX_COMPILER:' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | cut -d= -f2- || true)
compiler_version=$("${compiler:-c++}" --version 2>/dev/null | head -n1 || true)
build_type=$(grep -m1 '^CMAKE_BUILD_TYPE:' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null | cut -d= -f2- || true)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit (uncommitted changes)"
nlc_version=$(node -p "require('./$ORACLE_DIR/node_modules/node-llama-cpp/package.json').version")
llama_commit=$(git bundle list-heads "$ORACLE_DIR/node_modules/node-llama-cpp/llama/gitRelease.bundle" 2>/dev/null |
               awk '/HEAD/ {print $1; exit}' || true)
MNEME_CPU=$cpu MNEME_COMPILER=$compiler_version MNEME_BUILD_TYPE=$build_type MNEME_COMMIT=$commit \
  NLC_VERSION=$nlc_version LLAMA_COMMIT=$llama_commit CHUNK=$CHUNK REPS=$REPS SEED=$SEED STYLE=$STYLE node -e '
const os = require("node:os");
const e = process.env;
const meta = {
  machine: {cpu: e.MNEME_CPU, logical_cpus: os.cpus().length, memory_gib: Math.round(os.totalmem() / 2 ** 30),
            os: `${os.type()} ${os.release()}`, load_average_1m_at_end: os.loadavg()[0]},
  mneme: {commit: e.MNEME_COMMIT, compiler: e.MNEME_COMPILER, build_type: e.MNEME_BUILD_TYPE},
  llamacpp: {via: `node-llama-cpp ${e.NLC_VERSION} prebuilt linux-x64 CPU binaries`,
             llama_cpp_commit: e.LLAMA_COMMIT, node: process.version},
  method: {chunk_bytes: Number(e.CHUNK), timed_passes: Number(e.REPS), warmup_passes: 1,
           seed: Number(e.SEED), corpus_style: e.STYLE, summary: "MB/s from the median per-pass CPU time (best CPU pass and median wall time also recorded)",
           encode_options: "add_special=false, parse_special=false; single thread"},
};
require("node:fs").writeFileSync(process.argv[1], JSON.stringify(meta));
' "$work/meta.json"

node bench/tokenizer/report.mjs --dir "$work" --vocabs "$VOCABS" --corpus "$work/corpus.txt" \
  --meta "$work/meta.json" --out "$OUT"
