# First-step logits of `mneme generate` (the engine, F16 KV) against
# llama.cpp's (label golden, needs node): tests/logits_oracle.sh dumps our
# logits after the prompt (hidden flag --dump-logits), runs
# tests/engine_oracle/llamacpp_generate.mjs --logits, and
# tests/engine_oracle/compare_logits.mjs requires max |Δ log-softmax| within
# the weight type's tolerance (justified in compare_logits.mjs and
# docs/engine.md, "First-step logits vs llama.cpp"):
#  - logits_oracle_<arch>_<type>: small random models of each architecture
#    and each weight type, made as tests/generate_oracle.sh makes them but
#    with an output matrix (not --tied, whose logits are one-hot: nothing is
#    left above the floor to compare) and, for speed, all with the llama-spm
#    vocabulary (32,000 ids; the qwen2 one has 151,936 and makes each
#    llama.cpp run ~4x slower; the architectures' numerics do not depend on
#    it); one 30-token prompt (a prefill Gemm and attention over 30
#    positions).
#  - logits_oracle_qwen2_vocab: qwen3 / F16 with the qwen2 vocabulary (a
#    152k-id output and BPE prompt), 2 prompts.
#  - logits_oracle_stories260K: the trained model, 2 prompts.
#  - logits_selfcheck_* must report FAIL: a logit moved by 2x the tolerance
#    (--perturb) and a prompt evaluated without its BOS (a context bug).
# Skipped (exit 77) when node-llama-cpp is not installed.
find_program(MNEME_NODE node)
set(logits_oracle_dir ${CMAKE_CURRENT_SOURCE_DIR}/engine_oracle)
set(logits_vocab_dir ${MNEME_SHARED_DIR}/models/vocab)
set(logits_stories ${MNEME_SHARED_DIR}/models/stories260K.gguf)
# (no ';' in prompts: CMake would split the argument there)
set(logits_long_prompt
    "The quick brown fox jumps over the lazy dog. In 1969, astronauts landed on the Moon and returned safely, and 3 + 4 = 7.")

function(logits_oracle_test name model type)
  add_test(NAME ${name}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/logits_oracle.sh ${MNEME_BIN} ${MNEME_NODE}
                   ${logits_oracle_dir} ${model} ${type} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS golden TIMEOUT 120 SKIP_RETURN_CODE 77)
endfunction()

if(MNEME_NODE AND EXISTS ${logits_oracle_dir}/llamacpp_generate.mjs)
  set(logits_spm ${logits_vocab_dir}/ggml-vocab-llama-spm.gguf)
  foreach(arch llama qwen2 qwen3)
    # K-quants need dim and ff multiples of 256 (dims as in generate.cmake).
    foreach(type_dims "f32|64|160" "f16|64|160" "bf16|64|160" "q8_0|64|160" "q4_0|64|160"
                      "q4_k|256|256" "q5_k|256|256" "q6_k|256|512")
      string(REPLACE "|" ";" parts "${type_dims}")
      list(GET parts 0 type)
      list(GET parts 1 dim)
      list(GET parts 2 ff)
      logits_oracle_test(logits_oracle_${arch}_${type} synthetic:${arch}:${logits_spm}:${type}:${dim}:${ff}
                         ${type} "${logits_long_prompt}")
    endforeach()
  endforeach()
  logits_oracle_test(logits_oracle_qwen2_vocab
                     synthetic:qwen3:${logits_vocab_dir}/ggml-vocab-qwen2.gguf:f16:64:160 f16
                     "def main():" "${logits_long_prompt}")
  logits_oracle_test(logits_oracle_stories260K ${logits_stories} f32
                     "Once upon a time" "Tim and Lily went to the park. They saw a big dog and")

  # Self-checks: the comparison must fail, with its statistics line (so a
  # crash or a missing oracle does not count as the expected failure).
  foreach(check "perturb_f32|${logits_stories}|f32|MNEME_LOGITS_COMPARE=--perturb 0.02"
                "perturb_q4_k|synthetic:qwen3:${logits_spm}:q4_k:256:256|q4_k|MNEME_LOGITS_COMPARE=--perturb 0.2"
                "no_bos_f32|${logits_stories}|f32|MNEME_LOGITS_FLAGS=--no-bos"
                "no_bos_q4_0|synthetic:llama:${logits_spm}:q4_0:64:160|q4_0|MNEME_LOGITS_FLAGS=--no-bos")
    string(REPLACE "|" ";" parts "${check}")
    list(GET parts 0 name)
    list(GET parts 1 model)
    list(GET parts 2 type)
    list(GET parts 3 env)
    logits_oracle_test(logits_selfcheck_${name} ${model} ${type} "Once upon a time")
    set_tests_properties(logits_selfcheck_${name} PROPERTIES ENVIRONMENT "${env}"
                         PASS_REGULAR_EXPRESSION "FAIL [^\n]*log-softmax")
  endforeach()
else()
  message(WARNING "node or tests/engine_oracle missing: logits oracle tests (label golden) are not registered")
endif()
