# `mneme info` end to end (label e2e):
#  - gguf_info_*: facts about stories260K.gguf that ../shared/models/README.md
#    documents, and the error path for a missing file and for a file that is
#    not GGUF (message on stderr, exit status 1).
#  - gguf_oracle_*: `mneme info --json` against node-llama-cpp's own GGUF
#    parser (tests/gguf/info_oracle.mjs) on every model and vocab file in
#    ../shared/models and on the writer-made valid files of the fuzz corpus.
set(gguf_stories ${MNEME_SHARED_DIR}/models/stories260K.gguf)

add_test(NAME gguf_info_stories260k COMMAND ${MNEME_BIN} info -m ${gguf_stories})
# One regex over the whole output: every fact must be there, in this order.
set_tests_properties(gguf_info_stories260k PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "gguf version +3\n.*alignment +32\n.*tensor data offset +14176\n.*metadata keys +19\n.*architecture +llama\n.*embedding_length +64\n.*block_count +5\n.*feed_forward_length +172\n.*attention.head_count +8\n.*attention.head_count_kv +4\n.*rope.dimension_count +8\n.*tensors +48 \\(F32: 48\\)\n.*tokenizer model +llama\n.*vocabulary size +512 tokens\n.*bos token id +1\n.*eos token id +2\n.*chat template +no")

add_test(NAME gguf_info_tensors_flag COMMAND ${MNEME_BIN} info -m ${gguf_stories} --tensors --metadata)
set_tests_properties(gguf_info_tensors_flag PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "tokenizer.ggml.eos_token_id +UINT32 +2\n.*token_embd.weight +F32 +\\[64, 512\\]")

add_test(NAME gguf_info_missing_file_fails COMMAND ${MNEME_BIN} info -m ${MNEME_SHARED_DIR}/models/no-such-file.gguf)
set_tests_properties(gguf_info_missing_file_fails PROPERTIES LABELS e2e TIMEOUT 60 WILL_FAIL TRUE)
add_test(NAME gguf_info_missing_file_message COMMAND ${MNEME_BIN} info -m ${MNEME_SHARED_DIR}/models/no-such-file.gguf)
set_tests_properties(gguf_info_missing_file_message PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^mneme info: [^\n]*no-such-file.gguf: cannot open")

# tok512.bin is a llama2.c tokenizer, not GGUF.
add_test(NAME gguf_info_not_gguf_fails COMMAND ${MNEME_BIN} info -m ${MNEME_SHARED_DIR}/models/tok512.bin)
set_tests_properties(gguf_info_not_gguf_fails PROPERTIES LABELS e2e TIMEOUT 60 WILL_FAIL TRUE)
add_test(NAME gguf_info_not_gguf_message COMMAND ${MNEME_BIN} info -m ${MNEME_SHARED_DIR}/models/tok512.bin)
set_tests_properties(gguf_info_not_gguf_message PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^mneme info: [^\n]*tok512.bin: bad magic")

find_program(MNEME_NODE node)
if(MNEME_NODE)
  file(GLOB gguf_oracle_files CONFIGURE_DEPENDS
       ${MNEME_SHARED_DIR}/models/*.gguf ${MNEME_SHARED_DIR}/models/vocab/*.gguf
       ${CMAKE_SOURCE_DIR}/src/gguf/fuzz_corpus/valid_*.gguf)
  foreach(f ${gguf_oracle_files})
    get_filename_component(name ${f} NAME_WLE)
    string(REPLACE "ggml-vocab-" "vocab_" name ${name})
    add_test(NAME gguf_oracle_${name}
             COMMAND ${MNEME_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/gguf/info_oracle.mjs ${MNEME_BIN} ${f})
    set_tests_properties(gguf_oracle_${name} PROPERTIES LABELS e2e TIMEOUT 300)
  endforeach()
else()
  message(WARNING "node not found: GGUF oracle tests are not registered")
endif()
