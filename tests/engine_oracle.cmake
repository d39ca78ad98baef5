# The llama.cpp generation oracle checks itself (label golden): greedy
# decoding of BOS on stories260K.gguf through node-llama-cpp must give the
# text documented in ../shared/models/README.md, with a full, normalized
# first-step distribution (tests/engine_oracle/selfcheck.mjs). Engine parity
# tests rely on tests/engine_oracle/llamacpp_generate.mjs; this one shows it
# is trustworthy.
find_program(MNEME_NODE node)
if(MNEME_NODE)
  add_test(NAME engine_oracle_selfcheck
           COMMAND ${MNEME_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/engine_oracle/selfcheck.mjs ${MNEME_SHARED_DIR}/models)
  set_tests_properties(engine_oracle_selfcheck PROPERTIES LABELS golden TIMEOUT 120)
endif()
