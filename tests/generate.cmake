# `mneme generate` end to end (label e2e), on the engine (src/engine/, F16
# KV by default); the *_reference tests run the same checks on the scalar
# ReferenceForward (hidden flag --reference), and *_kv_f32 on F32 KV:
#  - generate_stories_*: greedy decoding from BOS on stories260K.gguf prints
#    the text documented in ../shared/models/README.md (and upstream in
#    karpathy/llama2.c doc/stories260K.md); --ids prints the same tokens as
#    ids; a fixed seed replays the same sampled text.
#  - generate_cli_*: the error paths (message on stderr, exit status 1): a
#    prompt longer than the context, an unsupported architecture, a model
#    file without tensors, nothing to continue from.
#  - generate_oracle_* (label golden, needs node): greedy ids equal
#    llama.cpp's (tests/generate_oracle.sh) for stories260K and several
#    prompts, for small random F32 models of each architecture, and for
#    F16 / BF16 / Q8_0 / Q4_0 / Q4_K / Q5_K / Q6_K models (engine only).
set(generate_stories ${MNEME_SHARED_DIR}/models/stories260K.gguf)
set(generate_vocab_dir ${MNEME_SHARED_DIR}/models/vocab)

add_test(NAME generate_stories_greedy_golden
         COMMAND ${MNEME_BIN} generate -m ${generate_stories} -p "" -n 60)
set_tests_properties(generate_stories_greedy_golden PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^Once upon a time, there was a little girl named Lily\\. She loved to play outside in the park\\. One day, she saw a big, red ball\\. She wanted to play with it, but")

# The ids of the same 60 tokens detokenize to the same text.
add_test(NAME generate_stories_ids_match_text
         COMMAND bash -c "text=$(\"$1\" generate -m \"$2\" -p '' -n 60) && ids=$(\"$1\" generate -m \"$2\" -p '' -n 60 --ids) && [[ $ids =~ ^[0-9]+( [0-9]+){59}$ ]] && [[ $(echo \"$ids\" | \"$1\" detokenize -m \"$2\") == \"$text\" ]]"
                 _ ${MNEME_BIN} ${generate_stories})
set_tests_properties(generate_stories_ids_match_text PROPERTIES LABELS e2e TIMEOUT 60)

# A prompt's continuation keeps its leading space.
add_test(NAME generate_stories_continuation
         COMMAND ${MNEME_BIN} generate -m ${generate_stories} -p "Once upon a time, there was a little girl named" -n 8)
set_tests_properties(generate_stories_continuation PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^ Lily\\. She loved to play")

add_test(NAME generate_stories_seed_replays
         COMMAND bash -c "a=$(\"$1\" generate -m \"$2\" -p 'Tim' -n 40 --temp 1 --seed 7) && b=$(\"$1\" generate -m \"$2\" -p 'Tim' -n 40 --temp 1 --seed 7 --threads 1) && [[ -n $a && $a == \"$b\" ]]"
                 _ ${MNEME_BIN} ${generate_stories})
set_tests_properties(generate_stories_seed_replays PROPERTIES LABELS e2e TIMEOUT 60)

# Error paths: each prints "mneme generate: <why>" and exits 1.
foreach(case
    "prompt_too_long|the prompt is 2102 tokens, longer than the model's context of 2048 tokens|${generate_stories}|$(printf 'a %.0s' {1..2100})"
    "unsupported_arch|model architecture 'gpt2' is not supported \\(supported: llama, qwen2, qwen3\\)|${generate_vocab_dir}/ggml-vocab-gpt-2.gguf|hi"
    "missing_tensor|missing tensor 'token_embd\\.weight'|${generate_vocab_dir}/ggml-vocab-llama-spm.gguf|hi"
    "missing_file|no-such-model\\.gguf|${generate_vocab_dir}/no-such-model.gguf|hi")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 message)
  list(GET parts 2 model)
  list(GET parts 3 prompt)
  add_test(NAME generate_cli_${name}_message
           COMMAND bash -c "\"$1\" generate -m \"$2\" -p \"${prompt}\" -n 1 2>&1 >/dev/null" _ ${MNEME_BIN} ${model})
  set_tests_properties(generate_cli_${name}_message PROPERTIES LABELS e2e TIMEOUT 60
    PASS_REGULAR_EXPRESSION "^mneme generate: [^\n]*${message}")
  add_test(NAME generate_cli_${name}_fails
           COMMAND bash -c "\"$1\" generate -m \"$2\" -p \"${prompt}\" -n 1 >/dev/null 2>&1" _ ${MNEME_BIN} ${model})
  set_tests_properties(generate_cli_${name}_fails PROPERTIES LABELS e2e TIMEOUT 60 WILL_FAIL TRUE)
endforeach()

# The same golden text from the reference forward and from F32 KV.
foreach(variant "reference|--reference" "kv_f32|--kv-type;f32")
  string(REPLACE "|" ";" parts "${variant}")
  list(GET parts 0 name)
  list(SUBLIST parts 1 -1 flags)
  add_test(NAME generate_stories_greedy_golden_${name}
           COMMAND ${MNEME_BIN} generate -m ${generate_stories} -p "" -n 60 ${flags})
  set_tests_properties(generate_stories_greedy_golden_${name} PROPERTIES LABELS e2e TIMEOUT 60
    PASS_REGULAR_EXPRESSION "^Once upon a time, there was a little girl named Lily\\. She loved to play outside in the park\\. One day, she saw a big, red ball\\. She wanted to play with it, but")
endforeach()

# --timings reports prompt and generation speed (the benchmark parses it).
add_test(NAME generate_stories_timings
         COMMAND bash -c "\"$1\" generate -m \"$2\" -p 'Once upon a time' -n 16 --timings 2>&1 >/dev/null" _ ${MNEME_BIN} ${generate_stories})
set_tests_properties(generate_stories_timings PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "prompt [0-9]+ tokens in [0-9.]+ ms \\([0-9.]+ tok/s\\); generation 16 tokens in [0-9.]+ ms \\([0-9.]+ tok/s\\)[^\n]*\nmneme generate: forward engine")

# A KV budget too small for the prompt is a clear error (1 MiB of F16 KV
# holds 1638 stories260K positions; the prompt is ~1800 tokens, within the
# 2048 context).
add_test(NAME generate_cli_kv_mem_too_small_message
         COMMAND bash -c "\"$1\" generate -m \"$2\" -p \"$(printf 'a %.0s' {1..1800})\" -n 1 --kv-mem 1 2>&1 >/dev/null" _ ${MNEME_BIN} ${generate_stories})
set_tests_properties(generate_cli_kv_mem_too_small_message PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^mneme generate: the KV cache \\([0-9]+ blocks of 16 tokens\\) cannot hold [0-9]+ tokens; raise --kv-mem")

add_test(NAME generate_cli_nothing_to_continue_message
         COMMAND bash -c "\"$1\" generate -m \"$2\" -p '' --no-bos 2>&1 >/dev/null" _ ${MNEME_BIN} ${generate_stories})
set_tests_properties(generate_cli_nothing_to_continue_message PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^mneme generate: the prompt is empty and no BOS token is added")

find_program(MNEME_NODE node)
set(generate_oracle_mjs ${CMAKE_CURRENT_SOURCE_DIR}/engine_oracle/llamacpp_generate.mjs)
if(MNEME_NODE AND EXISTS ${generate_oracle_mjs})
  add_test(NAME generate_oracle_stories260K
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/generate_oracle.sh ${MNEME_BIN} ${MNEME_NODE}
                   ${generate_oracle_mjs} ${generate_stories} 100
                   "" "Once upon a time" "Tim and Lily went to the" "The little dog was sad because")
  set_tests_properties(generate_oracle_stories260K PROPERTIES LABELS golden TIMEOUT 300)
  add_test(NAME generate_oracle_stories260K_reference
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/generate_oracle.sh ${MNEME_BIN} ${MNEME_NODE}
                   ${generate_oracle_mjs} ${generate_stories} 100 "" "Tim and Lily went to the")
  set_tests_properties(generate_oracle_stories260K_reference PROPERTIES LABELS golden TIMEOUT 300
                       ENVIRONMENT "MNEME_GENERATE_FLAGS=--reference")
  foreach(spec "llama|ggml-vocab-llama-spm" "qwen2|ggml-vocab-qwen2" "qwen3|ggml-vocab-qwen2")
    string(REPLACE "|" ";" parts "${spec}")
    list(GET parts 0 arch)
    list(GET parts 1 vocab)
    add_test(NAME generate_oracle_synthetic_${arch}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/generate_oracle.sh ${MNEME_BIN} ${MNEME_NODE}
                     ${generate_oracle_mjs} synthetic:${arch}:${generate_vocab_dir}/${vocab}.gguf 32
                     "Hello world, this is" "def main():" "1, 2, 3,")
    set_tests_properties(generate_oracle_synthetic_${arch} PROPERTIES LABELS golden TIMEOUT 300)
  endforeach()
  # Half and quantized weights through the engine, which rounds activations
  # as llama.cpp does (the reference does not, so it is not run on these).
  foreach(spec "llama|ggml-vocab-llama-spm|f16|64|160" "llama|ggml-vocab-llama-spm|q8_0|64|160"
               "llama|ggml-vocab-llama-spm|q6_k|256|512" "qwen2|ggml-vocab-qwen2|bf16|64|160"
               "qwen2|ggml-vocab-qwen2|q4_0|64|160" "qwen3|ggml-vocab-qwen2|q4_k|256|256"
               "qwen3|ggml-vocab-qwen2|q5_k|256|256")
    string(REPLACE "|" ";" parts "${spec}")
    list(GET parts 0 arch)
    list(GET parts 1 vocab)
    list(GET parts 2 type)
    list(GET parts 3 dim)
    list(GET parts 4 ff)
    add_test(NAME generate_oracle_synthetic_${arch}_${type}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/generate_oracle.sh ${MNEME_BIN} ${MNEME_NODE}
                     ${generate_oracle_mjs}
                     synthetic:${arch}:${generate_vocab_dir}/${vocab}.gguf:${type}:${dim}:${ff} 32
                     "Hello world, this is" "def main():")
    set_tests_properties(generate_oracle_synthetic_${arch}_${type} PROPERTIES LABELS golden TIMEOUT 300)
  endforeach()
else()
  message(WARNING "node or tests/engine_oracle missing: generate oracle tests (label golden) are not registered")
endif()
