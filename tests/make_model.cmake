# `mneme make-model` end to end (label e2e): synthetic models of each
# architecture, in several weight types, must load and run in llama.cpp
# (node-llama-cpp, tests/make_model/run_model.mjs): every architecture and
# every weight type at least once, 32 greedy tokens, and the
# gap between the two most likely tokens at every step at least 1 logit (the
# recipe's "far from ties" promise; see docs/engine.md). The tied model only
# has to load and run (tied embeddings make it repeat the last token). Plus
# the error paths for bad flags. Small dims and vocabularies keep each test
# around a second.
set(mm_vocab ${MNEME_SHARED_DIR}/models/vocab)
set(mm_out ${CMAKE_CURRENT_BINARY_DIR}/make_model)
file(MAKE_DIRECTORY ${mm_out})

find_program(MNEME_NODE node)
if(MNEME_NODE)
  # name | arch | type | vocab | extra flags | minimum top-2 gap
  set(mm_cases
    "llama_q4_k|llama|q4_k|llama-spm|--dim 256 --ff 512 --layers 2|1.0"
    "qwen2_q8_0|qwen2|q8_0|gpt-2|--dim 128 --ff 256 --layers 2|1.0"
    "qwen3_f16|qwen3|f16|llama-spm|--dim 128 --ff 256 --layers 2 --heads 2 --kv-heads 1|1.0"
    "llama_q6_k|llama|q6_k|phi-3|--dim 256 --ff 256 --layers 1|1.0"
    "qwen2_q5_k|qwen2|q5_k|llama-spm|--dim 256 --ff 256 --layers 1|1.0"
    "qwen3_q4_0|qwen3|q4_0|gpt-2|--dim 128 --ff 256 --layers 2|1.0"
    "llama_f32|llama|f32|llama-spm|--dim 64 --ff 128 --layers 2|1.0"
    "qwen3_bf16_tied|qwen3|bf16|llama-spm|--dim 64 --ff 128 --layers 2 --tied|0")
  foreach(c ${mm_cases})
    string(REPLACE "|" ";" f "${c}")
    list(GET f 0 name)
    list(GET f 1 arch)
    list(GET f 2 type)
    list(GET f 3 vocab)
    list(GET f 4 extra)
    list(GET f 5 min_gap)
    set(model ${mm_out}/${name}.gguf)
    add_test(NAME make_model_${name}
             COMMAND sh -c "\"$1\" make-model --arch ${arch} --type ${type} --vocab \"$2\" ${extra} --seed 7 -o \"$3\" && \"$4\" \"$5\" \"$3\" 32 ${min_gap}"
                     sh ${MNEME_BIN} ${mm_vocab}/ggml-vocab-${vocab}.gguf ${model} ${MNEME_NODE}
                     ${CMAKE_CURRENT_SOURCE_DIR}/make_model/run_model.mjs)
    set_tests_properties(make_model_${name} PROPERTIES LABELS e2e TIMEOUT 120)
  endforeach()
else()
  message(WARNING "node not found: make-model llama.cpp tests are not registered")
endif()

add_test(NAME make_model_bad_type
         COMMAND ${MNEME_BIN} make-model --type q3_k --vocab ${mm_vocab}/ggml-vocab-llama-spm.gguf -o ${mm_out}/bad.gguf)
set_tests_properties(make_model_bad_type PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^mneme make-model: unknown weight type 'q3_k'")
add_test(NAME make_model_bad_dims
         COMMAND ${MNEME_BIN} make-model --type q4_k --dim 384 --vocab ${mm_vocab}/ggml-vocab-llama-spm.gguf -o ${mm_out}/bad.gguf)
set_tests_properties(make_model_bad_dims PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^mneme make-model: q4_K packs rows in blocks of 256: --dim and --ff must be multiples of 256 \\(got 384 and 768\\)")
add_test(NAME make_model_bad_vocab_fails
         COMMAND ${MNEME_BIN} make-model --vocab ${MNEME_SHARED_DIR}/models/tok512.bin -o ${mm_out}/bad.gguf)
set_tests_properties(make_model_bad_vocab_fails PROPERTIES LABELS e2e TIMEOUT 60 WILL_FAIL TRUE)
