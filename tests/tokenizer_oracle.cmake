# Tokenizer golden tests against llama.cpp (label golden):
#  - tokenizer_oracle_<VOCAB>: for every vocab GGUF in ../shared/models/vocab,
#    a seeded corpus (about 160 KB, half English, half scripts/emoji/whitespace
#    "stress" text, from bench/tokenizer/make_corpus.mjs), about 50 adversarial
#    snippets and the vocab's own special tokens in context are tokenized by
#    llama.cpp (node-llama-cpp, tests/oracle) and by `mneme tokenize --no-bos`,
#    with and without --parse-special where it matters; every id must match.
#    A difference prints the case, the first differing token and byte, both
#    id sequences and a smaller repro (tests/tokenizer_oracle/compare.mjs).
# Known limit, not tested: code points new in Unicode 15+ (the system PCRE2
# has Unicode 14 tables; docs/benchmarks.md), and invalid UTF-8 (no way to
# hand raw bytes to llama.cpp through node-llama-cpp; see cases.mjs).
find_program(MNEME_NODE node)

if(MNEME_NODE)
  file(GLOB oracle_vocabs CONFIGURE_DEPENDS ${MNEME_SHARED_DIR}/models/vocab/*.gguf)
  foreach(v ${oracle_vocabs})
    get_filename_component(name ${v} NAME_WE)
    string(REPLACE "ggml-vocab-" "" name ${name})
    add_test(NAME tokenizer_oracle_${name}
             COMMAND ${MNEME_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/tokenizer_oracle/compare.mjs
                     --mneme ${MNEME_BIN} --vocab ${v} --oracle-dir ${MNEME_ORACLE_DIR} --jobs 2)
    # Two mneme processes at a time inside the test.
    set_tests_properties(tokenizer_oracle_${name} PROPERTIES LABELS golden TIMEOUT 300 PROCESSORS 2)
  endforeach()
else()
  message(WARNING "node not found: tokenizer oracle tests (label golden) are not registered")
endif()

# `mneme tokenize --jsonl` (the batch mode compare.mjs uses): a line that is
# not a JSON string is an error naming the line, not a crash (label e2e).
add_test(NAME tokenize_cli_jsonl_bad_line_message
         COMMAND bash -c "printf '\"ok\"\\nnot json\\n' | \"$1\" tokenize -m \"$2\" --jsonl 2>&1 >/dev/null"
                 _ ${MNEME_BIN} ${MNEME_SHARED_DIR}/models/vocab/ggml-vocab-llama-spm.gguf)
set_tests_properties(tokenize_cli_jsonl_bad_line_message PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^mneme tokenize: --jsonl: line 2 is not a JSON string\n$")
add_test(NAME tokenize_cli_jsonl_bad_line_fails
         COMMAND bash -c "printf '\"ok\"\\nnot json\\n' | \"$1\" tokenize -m \"$2\" --jsonl"
                 _ ${MNEME_BIN} ${MNEME_SHARED_DIR}/models/vocab/ggml-vocab-llama-spm.gguf)
set_tests_properties(tokenize_cli_jsonl_bad_line_fails PROPERTIES LABELS e2e TIMEOUT 60 WILL_FAIL TRUE)
