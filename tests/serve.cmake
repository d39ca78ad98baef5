# `mneme serve` end to end (label e2e): tests/serve/serve_e2e.mjs starts the
# real server on a free loopback port with stories260K.gguf and drives it with
# Node's fetch (a pooling keep-alive client): chat with and without
# streaming, a three-turn session whose cached tokens cover the history,
# 50 concurrent turns on one session serialized (exactly 50 exchanges), 200
# sessions x 3 turns at once, a client gone mid-stream leaving its session
# unchanged, /v1/sessions, the Responses API, raw completions, metrics,
# --session-busy reject (409), SIGTERM draining a running turn, context
# overflow (400 or truncate), session TTL, OpenAI-schema errors, API keys
# and session ownership, clean exit on SIGTERM.
find_program(MNEME_NODE node)
if(MNEME_NODE)
  add_test(NAME serve_e2e
           COMMAND ${MNEME_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/serve/serve_e2e.mjs ${MNEME_BIN}
                   ${MNEME_SHARED_DIR}/models/stories260K.gguf
                   ${MNEME_SHARED_DIR}/models/vocab/ggml-vocab-llama-spm.gguf)
  set_tests_properties(serve_e2e PROPERTIES LABELS e2e TIMEOUT 180)
endif()

# The same server driven by the official OpenAI SDK (npm `openai`, installed
# by scripts/install_deps.sh into tests/oracle): chat, streaming, a session,
# the Responses API with previous_response_id, the SDK's error classes.
if(MNEME_NODE AND EXISTS ${MNEME_ORACLE_DIR}/node_modules/openai)
  add_test(NAME serve_openai_sdk
           COMMAND ${MNEME_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/serve/openai_sdk.mjs ${MNEME_BIN}
                   ${MNEME_SHARED_DIR}/models/stories260K.gguf)
  set_tests_properties(serve_openai_sdk PROPERTIES LABELS e2e TIMEOUT 180)
endif()

# Bounded loopback load (tests/serve/load.mjs): 1,000 concurrent streaming
# requests (most queued) all complete, 48 users x 5 session rounds through a
# pooling keep-alive client with zero dropped; prints RSS per idle session
# and per open stream.
if(MNEME_NODE)
  add_test(NAME serve_load
           COMMAND ${MNEME_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/serve/load.mjs ${MNEME_BIN}
                   ${MNEME_SHARED_DIR}/models/stories260K.gguf)
  set_tests_properties(serve_load PROPERTIES LABELS e2e TIMEOUT 600)
endif()
