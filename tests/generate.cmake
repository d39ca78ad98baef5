# `mneme generate` end to end (label e2e), on the scalar ReferenceForward:
#  - generate_stories_*: greedy decoding from BOS on stories260K.gguf prints
#    the text documented in ../shared/models/README.md (and upstream in
#    karpathy/llama2.c doc/stories260K.md); --ids prints the same tokens as
#    ids; a fixed seed replays the same sampled text.
#  - generate_cli_*: the error paths (message on stderr, exit status 1): a
#    prompt longer than the context, an unsupported architecture, a model
#    file without tensors, nothing to continue from.
#  - generate_oracle_* (label golden, needs node): greedy ids equal
#    llama.cpp's (tests/generate_oracle.sh) for stories260K and several
#    prompts, and for small random F32 models of each architecture.
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
else()
  message(WARNING "node or tests/engine_oracle missing: generate oracle tests (label golden) are not registered")
endif()
