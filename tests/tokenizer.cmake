# `mneme tokenize` / `mneme detokenize` end to end (label e2e):
#  - tokenize_e2e_<VOCAB>: every case of ../shared/models/vocab/<VOCAB>.gguf.inp
#    piped through the binary (--no-bos --parse-special) must print the ids of
#    its .out line (llama.cpp's vectors), and detokenizing those ids must give
#    the case back byte for byte (tests/tokenize_e2e.sh).
#  - tokenize_cli_*: BOS by default, exact stdin bytes, and the error paths
#    (message on stderr, exit status 1).
set(tokenize_vocab_dir ${MNEME_SHARED_DIR}/models/vocab)
set(tokenize_spm ${tokenize_vocab_dir}/ggml-vocab-llama-spm.gguf)

file(GLOB tokenize_vocabs CONFIGURE_DEPENDS ${tokenize_vocab_dir}/*.gguf)
foreach(v ${tokenize_vocabs})
  if(EXISTS ${v}.inp AND EXISTS ${v}.out)
    get_filename_component(name ${v} NAME_WE)
    string(REPLACE "ggml-vocab-" "" name ${name})
    add_test(NAME tokenize_e2e_${name}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tokenize_e2e.sh ${MNEME_BIN} ${v})
    set_tests_properties(tokenize_e2e_${name} PROPERTIES LABELS e2e TIMEOUT 300)
  endif()
endforeach()

# BOS is added unless --no-bos (as llama.cpp's llama-tokenize does).
add_test(NAME tokenize_cli_adds_bos
         COMMAND bash -c "printf 'Hello world' | \"$1\" tokenize -m \"$2\"" _ ${MNEME_BIN} ${tokenize_spm})
set_tests_properties(tokenize_cli_adds_bos PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^1 15043 3186\n$")

# Every byte of stdin counts: the trailing newline is tokenized (13 = <0x0A>).
add_test(NAME tokenize_cli_keeps_trailing_newline
         COMMAND bash -c "printf 'Hello\\n' | \"$1\" tokenize -m \"$2\" --no-bos" _ ${MNEME_BIN} ${tokenize_spm})
set_tests_properties(tokenize_cli_keeps_trailing_newline PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^15043 13\n$")

# Special-token text is plain text unless --parse-special.
add_test(NAME tokenize_cli_parse_special
         COMMAND bash -c "printf '<s>Hi' | \"$1\" tokenize -m \"$2\" --no-bos --parse-special" _ ${MNEME_BIN} ${tokenize_spm})
set_tests_properties(tokenize_cli_parse_special PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^1 6324\n$")

add_test(NAME tokenize_cli_detokenize_render_special
         COMMAND bash -c "echo '1 15043 2' | \"$1\" detokenize -m \"$2\" --render-special; echo '|'" _ ${MNEME_BIN} ${tokenize_spm})
# The "|" marks the end of mneme's output: no newline may come before it.
set_tests_properties(tokenize_cli_detokenize_render_special PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^<s> Hello</s>[|]")

foreach(case "bad_id:15043 x" "out_of_range:15043 32000" "negative:15043 -1")
  string(REPLACE ":" ";" parts "${case}")
  list(GET parts 0 case_name)
  list(GET parts 1 case_input)
  add_test(NAME tokenize_cli_detokenize_${case_name}_fails
           COMMAND bash -c "echo '${case_input}' | \"$1\" detokenize -m \"$2\"" _ ${MNEME_BIN} ${tokenize_spm})
  set_tests_properties(tokenize_cli_detokenize_${case_name}_fails PROPERTIES LABELS e2e TIMEOUT 60 WILL_FAIL TRUE)
  add_test(NAME tokenize_cli_detokenize_${case_name}_message
           COMMAND bash -c "echo '${case_input}' | \"$1\" detokenize -m \"$2\" 2>&1 >/dev/null" _ ${MNEME_BIN} ${tokenize_spm})
  set_tests_properties(tokenize_cli_detokenize_${case_name}_message PROPERTIES LABELS e2e TIMEOUT 60
    PASS_REGULAR_EXPRESSION "^mneme detokenize: token 2")
endforeach()

add_test(NAME tokenize_cli_missing_file_fails
         COMMAND ${MNEME_BIN} tokenize -m ${tokenize_vocab_dir}/no-such-file.gguf)
set_tests_properties(tokenize_cli_missing_file_fails PROPERTIES LABELS e2e TIMEOUT 60 WILL_FAIL TRUE)
add_test(NAME tokenize_cli_missing_file_message
         COMMAND bash -c "\"$1\" tokenize -m \"$2\" < /dev/null 2>&1" _ ${MNEME_BIN} ${tokenize_vocab_dir}/no-such-file.gguf)
set_tests_properties(tokenize_cli_missing_file_message PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^mneme tokenize: [^\n]*no-such-file.gguf: cannot open")

# A file that is not GGUF (a llama2.c tokenizer).
add_test(NAME tokenize_cli_not_gguf_message
         COMMAND bash -c "\"$1\" tokenize -m \"$2\" < /dev/null 2>&1" _ ${MNEME_BIN} ${MNEME_SHARED_DIR}/models/tok512.bin)
set_tests_properties(tokenize_cli_not_gguf_message PROPERTIES LABELS e2e TIMEOUT 60
  PASS_REGULAR_EXPRESSION "^mneme tokenize: [^\n]*tok512.bin: bad magic")
