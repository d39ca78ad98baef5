#!/usr/bin/env bash
# End-to-end check of `mneme tokenize` / `mneme detokenize` against llama.cpp's
# tokenizer vectors for one vocab:
#
#   tokenize_e2e.sh MNEME_BIN VOCAB.gguf
#
# VOCAB.gguf.inp holds the cases separated by "\n__ggml_vocab_test__\n";
# VOCAB.gguf.out has one line per case, " id id ..." (tokenized without BOS,
# as llama.cpp's test-tokenizer-0 writes them). Each case is piped byte for
# byte through `mneme tokenize --no-bos --parse-special` and compared with its
# line; then its expected ids go through `mneme detokenize` and must give the
# case text back exactly. Prints every mismatch; exits 1 if there is any.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 MNEME_BIN VOCAB.gguf" >&2
  exit 2
fi
bin=$1
vocab=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One file per case, exact bytes (awk's RS may be a regex; records may be
# empty; the text after the last separator is empty and makes no record).
awk -v RS='\n__ggml_vocab_test__\n' -v dir="$tmp" \
  '{ f = sprintf("%s/case%03d", dir, NR - 1); printf "%s", $0 > f; close(f) }' "$vocab.inp"

n_cases=$(find "$tmp" -name 'case*' | wc -l)
n_lines=$(wc -l < "$vocab.out")
if [[ $n_cases -ne $n_lines || $n_cases -eq 0 ]]; then
  echo "FAIL: $vocab: $n_cases cases in .inp but $n_lines lines in .out" >&2
  exit 1
fi

failures=0
i=0
while IFS= read -r expected || [[ -n $expected ]]; do
  case_file=$(printf '%s/case%03d' "$tmp" "$i")
  expected=${expected# }
  if ! got=$("$bin" tokenize -m "$vocab" --no-bos --parse-special < "$case_file"); then
    echo "FAIL case $i: mneme tokenize exited with an error" >&2
    failures=$((failures + 1))
  elif [[ $got != "$expected" ]]; then
    echo "FAIL case $i: tokenize" >&2
    echo "  expected: $expected" >&2
    echo "  got:      $got" >&2
    failures=$((failures + 1))
  fi
  if ! printf '%s\n' "$expected" | "$bin" detokenize -m "$vocab" > "$tmp/decoded"; then
    echo "FAIL case $i: mneme detokenize exited with an error" >&2
    failures=$((failures + 1))
  elif ! cmp -s "$tmp/decoded" "$case_file"; then
    echo "FAIL case $i: detokenize does not give the text back" >&2
    failures=$((failures + 1))
  fi
  i=$((i + 1))
done < "$vocab.out"

if [[ $failures -ne 0 ]]; then
  echo "$(basename "$vocab"): $failures failure(s) in $n_cases cases" >&2
  exit 1
fi
echo "$(basename "$vocab"): all $n_cases cases match"
