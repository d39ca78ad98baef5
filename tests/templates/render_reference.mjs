// The reference side of the chat-template oracle: renders a chat template
// with @huggingface/jinja (the npm package installed under tests/oracle), the
// implementation Mneme's Jinja interpreter must agree with byte for byte.
//
// As a module it exports renderReference() (compare.mjs calls it in-process,
// which keeps a full run to one node process). As a program:
//
//   node render_reference.mjs TEMPLATE.jinja CONVERSATION.json --bos STR --eos STR
//
// prints the rendered prompt to stdout (exactly, no newline added) and exits 0;
// when the template raises it prints "RAISE: <message>" and exits 3; when the
// template does not parse it prints "PARSE-ERROR: <message>" and exits 1.
//
// The template source is passed exactly as read from the file: no trailing
// newline is stripped here. (@huggingface/jinja itself drops one trailing "\n"
// like Python Jinja's keep_trailing_newline=False; Mneme must do the same.)
//
// The context is the one Mneme's ChatTemplate builds (docs/chat-templates.md):
//   messages, tools (the conversation's tools, or null when it has none),
//   add_generation_prompt, bos_token, eos_token, then the conversation's
//   "extra" variables (e.g. enable_thinking).
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const jinjaEntry = path.resolve(here, "../oracle/node_modules/@huggingface/jinja/dist/index.js");
const { Template, Environment } = await import(pathToFileURL(jinjaEntry).href);

// Thrown by raise_exception so that a deliberate raise in the template can be
// told apart from an interpreter error (both are plain Errors otherwise).
// @huggingface/jinja declares raise_exception itself and refuses a second
// declaration, so we swap the function at declaration time; it behaves the
// same (throws with the given message) apart from the error's class.
export class TemplateRaise extends Error {}
const declare = Environment.prototype.set;
Environment.prototype.set = function (name, value) {
  if (name === "raise_exception") {
    value = (message) => {
      throw new TemplateRaise(message);
    };
  }
  return declare.call(this, name, value);
};

// Builds the global variables of one render. Same order and same rules as
// mneme::ChatTemplate::Render.
export function buildContext(conversation, bos, eos) {
  const context = {
    messages: conversation.messages,
    tools: conversation.tools === undefined ? null : conversation.tools,
    add_generation_prompt: conversation.add_generation_prompt ?? true,
    bos_token: bos,
    eos_token: eos,
  };
  for (const [key, value] of Object.entries(conversation.extra ?? {})) {
    context[key] = value;
  }
  return context;
}

// Returns one of
//   { kind: "ok", output }
//   { kind: "raise", message, deliberate }   deliberate: raise_exception()
//   { kind: "parse-error", message }
export function renderReference(source, conversation, bos, eos) {
  let template;
  try {
    template = new Template(source);
  } catch (e) {
    return { kind: "parse-error", message: String(e?.message ?? e) };
  }
  const context = buildContext(conversation, bos, eos);
  try {
    return { kind: "ok", output: template.render(context) };
  } catch (e) {
    return {
      kind: "raise",
      message: String(e?.message ?? e),
      deliberate: e instanceof TemplateRaise,
    };
  }
}

function main(argv) {
  const positional = [];
  let bos = "";
  let eos = "";
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--bos") bos = argv[++i];
    else if (argv[i] === "--eos") eos = argv[++i];
    else positional.push(argv[i]);
  }
  if (positional.length !== 2 || bos === undefined || eos === undefined) {
    process.stderr.write(
      "usage: node render_reference.mjs TEMPLATE.jinja CONVERSATION.json --bos STR --eos STR\n",
    );
    return 2;
  }
  const source = readFileSync(positional[0], "utf8");
  const conversation = JSON.parse(readFileSync(positional[1], "utf8"));
  const result = renderReference(source, conversation, bos, eos);
  switch (result.kind) {
    case "ok":
      process.stdout.write(result.output);
      return 0;
    case "raise":
      process.stdout.write(`RAISE: ${result.message}`);
      return 3;
    default:
      process.stdout.write(`PARSE-ERROR: ${result.message}`);
      return 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
