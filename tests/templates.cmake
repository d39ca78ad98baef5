# Chat templates, end to end (label e2e):
#  - templates_oracle_<NAME>: every conversation in tests/templates/conversations
#    rendered with ../shared/templates/<NAME>.jinja by @huggingface/jinja (the
#    npm oracle) and by `mneme render`, compared byte for byte
#    (tests/templates/compare.mjs; run it by hand for the whole matrix).
#  - templates_gguf_<MODEL>: the same with the template and bos/eos read from a
#    GGUF file (reference: node-llama-cpp's GGUF reader; mneme: render -m).
#  - templates_synthetic: the same for tests/templates/synthetic/*.jinja.
#  - render_cli_<CASE>: error paths and the ChatML fallback of `mneme render`.
find_program(MNEME_NODE node)
set(templates_dir ${CMAKE_CURRENT_SOURCE_DIR}/templates)

if(MNEME_NODE)
  file(GLOB shared_templates CONFIGURE_DEPENDS ${MNEME_SHARED_DIR}/templates/*.jinja)
  foreach(t ${shared_templates})
    get_filename_component(name ${t} NAME_WLE)
    add_test(NAME templates_oracle_${name}
             COMMAND ${MNEME_NODE} ${templates_dir}/compare.mjs --mneme ${MNEME_BIN}
                     --templates ${MNEME_SHARED_DIR}/templates --template ${name})
    set_tests_properties(templates_oracle_${name} PROPERTIES LABELS e2e TIMEOUT 300)
  endforeach()

  # Synthetic templates for what real ones rarely exercise: trailing newlines,
  # CRLF, whitespace control, the generation tag, filters, value printing, a
  # template that does not parse.
  add_test(NAME templates_synthetic
           COMMAND ${MNEME_NODE} ${templates_dir}/compare.mjs --mneme ${MNEME_BIN}
                   --templates ${templates_dir}/synthetic)
  set_tests_properties(templates_synthetic PROPERTIES LABELS e2e TIMEOUT 300)

  # The vocab-only GGUFs of ../shared/models that carry a chat template.
  foreach(model qwen2 phi-3)
    set(gguf ${MNEME_SHARED_DIR}/models/vocab/ggml-vocab-${model}.gguf)
    add_test(NAME templates_gguf_${model}
             COMMAND ${MNEME_NODE} ${templates_dir}/compare.mjs --mneme ${MNEME_BIN} --gguf ${gguf})
    set_tests_properties(templates_gguf_${model} PROPERTIES LABELS e2e TIMEOUT 300)
  endforeach()
else()
  message(WARNING "node not found: chat-template oracle tests are not registered")
endif()

foreach(case bad_template raising_template fallback bad_inputs)
  add_test(NAME render_cli_${case}
           COMMAND bash ${templates_dir}/render_cli_test.sh ${MNEME_BIN} ${MNEME_SHARED_DIR} ${case})
  set_tests_properties(render_cli_${case} PROPERTIES LABELS e2e TIMEOUT 120)
endforeach()
