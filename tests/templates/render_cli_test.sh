#!/usr/bin/env bash
# `mneme render` on the paths the oracle comparison does not reach: templates
# that do not parse or raise, bad input files, and a model without a chat
# template (the documented ChatML fallback, docs/chat-templates.md).
#
#   render_cli_test.sh MNEME SHARED_DIR CASE
#
# CASE: bad_template | raising_template | fallback | bad_inputs.
# Expected outputs are written here by hand from the documented formats.
set -u
mneme=$1
shared=$2
case_name=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# run NAME ARGS...: runs mneme render, leaving $tmp/NAME.{out,err} and $rc.
run() {
  local name=$1
  shift
  "$mneme" render "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  rc=$?
  echo "== $name: exit $rc; stderr: $(head -c 300 "$tmp/$name.err")"
  if [ "$rc" -ge 128 ]; then fail "$name: killed by signal $((rc - 128)) (crash)"; fi
}

expect_rc() {  # expect_rc NAME WANT
  if [ "$rc" -ne "$2" ]; then fail "$1: exit $rc, want $2"; fi
}
expect_err() {  # expect_err NAME TEXT
  if ! grep -qF -- "$2" "$tmp/$1.err"; then fail "$1: stderr lacks '$2'"; fi
}
expect_no_stdout() {
  if [ -s "$tmp/$1.out" ]; then fail "$1: wrote to stdout"; fi
}

printf '[{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"}]' >"$tmp/msgs.json"

case "$case_name" in
  bad_template)
    for src in '{% for m in messages %}{{ m.content }}' '{{ messages[0] }' '{% if %}x{% endif %}' \
               '{% endif %}' '{{ 1 + }}'; do
      printf '%s' "$src" >"$tmp/bad.jinja"
      run bad --template "$tmp/bad.jinja" --messages "$tmp/msgs.json"
      expect_rc bad 1
      expect_err bad "mneme render: "
      expect_err bad "bad.jinja"
      expect_err bad "does not parse"
      expect_no_stdout bad
    done
    ;;
  raising_template)
    printf "{%% if messages[0].role == 'system' %%}{{ raise_exception('No system role here, sorry') }}{%% endif %%}ok" \
      >"$tmp/raise.jinja"
    run raise --template "$tmp/raise.jinja" --messages "$tmp/msgs.json"
    expect_rc raise 3
    expect_err raise "mneme render: "
    expect_err raise "No system role here, sorry"
    expect_no_stdout raise
    printf '[{"role": "user", "content": "Hi"}]' >"$tmp/user.json"
    run fine --template "$tmp/raise.jinja" --messages "$tmp/user.json"
    expect_rc fine 0
    if [ "$(cat "$tmp/fine.out")" != "ok" ]; then fail "fine: stdout '$(cat "$tmp/fine.out")', want 'ok'"; fi
    ;;
  fallback)
    # stories260K.gguf has no tokenizer.chat_template (../shared/models/README.md).
    model="$shared/models/stories260K.gguf"
    run chatml -m "$model" --messages "$tmp/msgs.json"
    expect_rc chatml 0
    expect_err chatml "warning"
    expect_err chatml "no tokenizer.chat_template"
    expect_err chatml "ChatML"
    printf '<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n' \
      >"$tmp/want.txt"
    cmp "$tmp/chatml.out" "$tmp/want.txt" || fail "chatml: output differs from the ChatML format"
    run chatml_no_prompt -m "$model" --messages "$tmp/msgs.json" --no-generation-prompt
    expect_rc chatml_no_prompt 0
    printf '<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n' >"$tmp/want2.txt"
    cmp "$tmp/chatml_no_prompt.out" "$tmp/want2.txt" || fail "chatml_no_prompt: output differs"
    ;;
  bad_inputs)
    printf '{{ bos_token }}' >"$tmp/t.jinja"
    printf '[{"role": "user", "content": ' >"$tmp/truncated.json"
    printf '{"messages": []}' >"$tmp/object.json"
    run missing_template --template "$tmp/nope.jinja" --messages "$tmp/msgs.json"
    expect_rc missing_template 1
    expect_err missing_template "nope.jinja"
    run missing_messages --template "$tmp/t.jinja" --messages "$tmp/nope.json"
    expect_rc missing_messages 1
    run truncated --template "$tmp/t.jinja" --messages "$tmp/truncated.json"
    expect_rc truncated 1
    expect_err truncated "not valid JSON"
    run not_array --template "$tmp/t.jinja" --messages "$tmp/object.json"
    expect_rc not_array 1
    expect_err not_array "array"
    run tools_object --template "$tmp/t.jinja" --messages "$tmp/msgs.json" --tools "$tmp/object.json"
    expect_rc tools_object 1
    run not_gguf -m "$tmp/t.jinja" --messages "$tmp/msgs.json"
    expect_rc not_gguf 1
    expect_no_stdout not_gguf
    run both -m "$shared/models/stories260K.gguf" --template "$tmp/t.jinja" --messages "$tmp/msgs.json"
    if [ "$rc" -eq 0 ]; then fail "both: -m with --template accepted"; fi
    run neither --messages "$tmp/msgs.json"
    expect_rc neither 1
    ;;
  *)
    echo "unknown case $case_name"
    exit 2
    ;;
esac

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
