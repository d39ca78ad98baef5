#!/usr/bin/env bash
# Runs a libFuzzer target for a bounded time on a scratch copy of a seed
# corpus (the checked-in corpus is never modified).
#
#   scripts/run_fuzz.sh FUZZER CORPUS_DIR SECONDS
#
# Exits 0 when the fuzzer ran the whole time without finding anything, and
# non-zero on a crash, leak, timeout or out-of-memory, printing the input that
# triggered it (as a path and a hex dump) so it can be turned into a test.
# Ends with a one-line summary: executions, rate, corpus size.
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 FUZZER CORPUS_DIR SECONDS" >&2
  exit 2
fi
fuzzer=$1
seed_corpus=$2
seconds=$3

if [[ ! -x "$fuzzer" ]]; then
  echo "run_fuzz: $fuzzer is not an executable (build it with 'make fuzz')" >&2
  exit 2
fi
if [[ ! -d "$seed_corpus" ]]; then
  echo "run_fuzz: corpus directory $seed_corpus does not exist" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/mneme-fuzz.XXXXXX")
cleanup_ok=1
trap '[[ $cleanup_ok == 1 ]] && rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"
cp -r "$seed_corpus"/. "$work/corpus/"
log="$work/fuzz.log"

echo "run_fuzz: $(basename "$fuzzer") for ${seconds}s on a copy of $seed_corpus ($(ls "$work/corpus" | wc -l) seeds)"
set +e
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  "$fuzzer" "$work/corpus" \
  -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 >"$log" 2>&1
rc=$?
set -e

execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
rate=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
corpus_size=$(ls "$work/corpus" | wc -l)
artifacts=$(ls "$work/artifacts" 2>/dev/null || true)

if [[ $rc -ne 0 || -n "$artifacts" ]]; then
  cleanup_ok=0  # keep the evidence
  echo "run_fuzz: FAILED (exit code $rc) after ${execs:-?} executions; last lines of the log:" >&2
  tail -n 40 "$log" >&2
  for a in $artifacts; do
    echo "run_fuzz: crashing input: $work/artifacts/$a" >&2
    od -A d -t x1 "$work/artifacts/$a" | head -n 32 >&2
  done
  echo "run_fuzz: full log: $log" >&2
  exit 1
fi

echo "run_fuzz: OK: ${execs:-?} executions in ${seconds}s (${rate:-?}/s), no crashes; corpus grew to $corpus_size inputs"
