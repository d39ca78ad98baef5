#!/usr/bin/env bash
# The main job (`make run`): `mneme serve` on 127.0.0.1:${PORT:-8080}.
#
#   scripts/run_demo.sh [MODEL.gguf]
#
# Without a model it serves a demo model that `mneme make-model` writes to
# build/demo-model.gguf: random weights with a real tokenizer (llama SPM),
# so the API, sessions and the KV cache work end to end but the answers are
# gibberish. Serve a real model with `make run DEMO_MODEL=path/to/model.gguf`
# or `build/bin/mneme serve -m path/to/model.gguf`. Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."

mneme=${MNEME_BIN:-build/bin/mneme}
model=${1:-}
port=${PORT:-8080}
shared=${MNEME_SHARED_DIR:-../shared}
if [[ -z $model ]]; then
  model=build/demo-model.gguf
  if [[ ! -s $model ]]; then
    vocab=$shared/models/vocab/ggml-vocab-llama-spm.gguf
    [[ -f $vocab ]] || { echo "run_demo: no vocabulary at $vocab; pass a model: make run DEMO_MODEL=model.gguf" >&2; exit 1; }
    "$mneme" make-model --arch llama --type f16 --vocab "$vocab" --dim 256 --layers 4 --heads 4 \
      --kv-heads 2 --ff 768 --ctx 4096 --seed 1 -o "$model.tmp" >/dev/null
    mv "$model.tmp" "$model"
  fi
  cat <<MSG

  ============================================================================
   DEMO: $model has RANDOM weights (made by \`mneme make-model\`).
   The API, sessions and KV reuse are real; the answers are gibberish.
   Serve a real GGUF instead:  make run DEMO_MODEL=/path/to/model.gguf
                          or:  build/bin/mneme serve -m /path/to/model.gguf
  ============================================================================
MSG
fi
cat <<MSG

  Try it (another terminal):
    curl -s localhost:$port/v1/chat/completions -H 'content-type: application/json' \\
      -d '{"messages":[{"role":"user","content":"Hello!"}],"max_tokens":32}'
    # then continue the conversation with the returned session_id:
    curl -s localhost:$port/v1/chat/completions -H 'content-type: application/json' \\
      -d '{"session_id":"sess_...","messages":[{"role":"user","content":"And then?"}]}'

MSG
exec "$mneme" serve -m "$model" --host 127.0.0.1 --port "$port"
