#!/usr/bin/env bash
# The synthetic models of the engine speed benchmark (scripts/bench_engine.sh),
# made with `mneme make-model` into a cache directory and reused while the
# flags and the synthetic-model recipe (src/model/synthetic_model.cc) are
# unchanged. Never committed.
#
#   bench/engine/models.sh MNEME_BIN VOCAB_GGUF CACHE_DIR "SIZES" "TYPES"
#
# SIZES: any of 100m 1b; TYPES: any of f16 q8_0 q4_k (or the other
# make-model types). Prints one line per model: NAME SIZE TYPE PATH.
#   100m: dim 768, 12 layers, 12 heads (MHA), ff 2048 + 32k vocab = 134M
#         parameters, the shape of llama.cpp's reference figure in issue 3.
#   1b:   TinyLlama-1.1B's shape: dim 2048, 22 layers, 32 heads, 4 KV heads
#         (GQA), ff 5632 + 32k vocab = 1.10B parameters. make-model builds
#         the file in memory: the F16 one is 2.2 GB (peak ~2x that).
set -euo pipefail

mneme=$1 vocab=$2 cache=$3 sizes=$4 types=$5
mkdir -p "$cache"
recipe=$(git hash-object src/model/synthetic_model.cc 2>/dev/null | cut -c1-8 || echo none)
vocab_name=$(basename "$vocab" .gguf)

for size in $sizes; do
  case $size in
    100m) flags=(--dim 768 --layers 12 --heads 12 --kv-heads 12 --ff 2048) ;;
    1b) flags=(--dim 2048 --layers 22 --heads 32 --kv-heads 4 --ff 5632) ;;
    *) echo "models.sh: unknown size $size (100m or 1b)" >&2; exit 2 ;;
  esac
  for type in $types; do
    key=$(echo "llama ${flags[*]} $type seed1 $vocab_name $recipe" | md5sum | cut -c1-12)
    path=$cache/llama-$size-$type-$key.gguf
    if [[ ! -s $path ]]; then
      echo "models.sh: making $size $type -> $path" >&2
      "$mneme" make-model --arch llama --type "$type" --vocab "$vocab" "${flags[@]}" --seed 1 \
        -o "$path.tmp" >&2
      mv "$path.tmp" "$path"
    fi
    echo "llama-$size $size $type $path"
  done
done
