// llama.cpp generation oracle for the engine parity tests: what llama.cpp
// (through node-llama-cpp 3.21.1, CPU build) produces for a prompt, as JSON.
//
//   node tests/engine_oracle/llamacpp_generate.mjs -m MODEL.gguf
//        (-p TEXT | --ids "1 15043 29892") [-n 64] [--threads 1] [--no-bos]
//        [--special] [--logits] [--top 10] [--ignore-eos] [--decode]
//
// Output (one JSON object on stdout):
//   n_vocab         vocabulary size
//   prompt_ids      the prompt tokens evaluated (BOS first unless --no-bos or
//                   --ids; with --ids the list is used exactly as given)
//   generated_ids   greedy continuation: llama.cpp's greedy sampler (argmax,
//                   ties -> lowest id) with no penalties, no bias and no other
//                   samplers. Generation stops after an end-of-generation token
//                   (which is included) unless --ignore-eos.
//   stopped_at_eog  whether the last generated id is an end-of-generation id
//   text            (--decode) detokenized generated_ids
//   first_step      for the distribution after the last prompt token:
//     argmax        the greedy token
//     top           [[id, log_softmax], ...] the --top most likely (default 10)
//     log_softmax   (--logits) n_vocab numbers: logit[i] - logsumexp(logits),
//                   null where llama.cpp's float32 softmax underflowed to 0
//
// Why log-softmax and not raw logits: node-llama-cpp exposes no raw-logit
// getter. With `probabilities: true` its addon copies the full-vocabulary
// candidate array after the sampler chain (greedy leaves logits untouched),
// and returns p[i] = expf(l[i] - max) / sum in float32. log(p[i]) is therefore
// the raw logit shifted by one constant per position (logsumexp); compare
// log-softmax (or logits after subtracting their max) on both sides. The
// float32 round trip costs ~1e-7 absolute in log space; values below about
// -87 (denormal p) lose precision and below about -103 become null.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    model: { type: "string", short: "m" },
    prompt: { type: "string", short: "p" },
    ids: { type: "string" },
    n: { type: "string", short: "n", default: "64" },
    threads: { type: "string", short: "t", default: "1" },
    "no-bos": { type: "boolean", default: false },
    special: { type: "boolean", default: false },
    logits: { type: "boolean", default: false },
    top: { type: "string", default: "10" },
    "ignore-eos": { type: "boolean", default: false },
    decode: { type: "boolean", default: false },
  },
});
const usage = () => {
  console.error("usage: llamacpp_generate.mjs -m MODEL.gguf (-p TEXT | --ids \"1 2 3\") [-n N] " +
                "[--threads T] [--no-bos] [--special] [--logits] [--top K] [--ignore-eos] [--decode]");
  process.exit(2);
};
if (!args.model || (args.prompt === undefined) === (args.ids === undefined)) usage();
const nGenerate = Number.parseInt(args.n, 10);
const threads = Number.parseInt(args.threads, 10);
const topK = Number.parseInt(args.top, 10);
if (!(nGenerate >= 0) || !(threads >= 1) || !(topK >= 0)) usage();

const here = path.dirname(fileURLToPath(import.meta.url));
const entry = path.resolve(here, "../oracle/node_modules/node-llama-cpp/dist/index.js");
const { getLlama, LlamaLogLevel } = await import(pathToFileURL(entry).href);

const llama = await getLlama({ gpu: false, build: "never", skipDownload: true, progressLogs: false,
                               logLevel: LlamaLogLevel.error, logger: () => {} });
const model = await llama.loadModel({ modelPath: args.model, gpuLayers: 0 });
// node-llama-cpp has no n_vocab getter; the GGUF token list gives it.
const nVocab = model.fileInfo.metadata?.tokenizer?.ggml?.tokens?.length;
if (!Number.isInteger(nVocab)) throw new Error("no tokenizer.ggml.tokens in the GGUF metadata");

let promptIds;
if (args.ids !== undefined) {
  promptIds = args.ids.trim().split(/[\s,]+/).filter((s) => s.length > 0).map((s) => Number.parseInt(s, 10));
  if (promptIds.some((t) => !Number.isInteger(t) || t < 0)) usage();
} else {
  promptIds = model.tokenize(args.prompt, args.special);
  if (!args["no-bos"]) {
    if (model.tokens.bos == null) throw new Error("model has no BOS token; use --no-bos");
    promptIds = [model.tokens.bos, ...promptIds];
  }
}
if (promptIds.length === 0) {
  console.error("empty prompt: llama.cpp needs at least one token to evaluate");
  process.exit(2);
}

// Room for the prompt and the whole continuation: no context shift ever.
const contextSize = Math.max(32, promptIds.length + nGenerate + 8);
const context = await model.createContext({ contextSize, batchSize: Math.max(32, promptIds.length),
                                            sequences: 1, threads, flashAttention: false });
const sequence = context.getSequence();

// temperature 0 selects node-llama-cpp's greedy chain; repeatPenalty and
// tokenBias left undefined add no penalty/bias sampler (see README.md).
const options = { temperature: 0, yieldEogToken: true };
const generated = [];
let firstStep = null;
let stoppedAtEog = false;
if (nGenerate > 0) {
  const it = sequence.evaluateWithMetadata(promptIds, { probabilities: true }, options);
  for await (const out of it) {
    if (firstStep === null) {
      const entries = [...out.probabilities.entries()];  // sorted, most likely first
      if (entries.length !== nVocab) {
        throw new Error(`expected ${nVocab} probabilities, got ${entries.length} (a sampler truncated them)`);
      }
      const logSoftmax = new Array(nVocab).fill(null);
      for (const [id, p] of entries) logSoftmax[id] = p > 0 ? Math.log(p) : null;
      firstStep = {
        argmax: out.token,
        top: entries.slice(0, topK).map(([id, p]) => [id, Math.log(p)]),
      };
      if (args.logits) firstStep.log_softmax = logSoftmax;
    }
    generated.push(out.token);
    if (model.isEogToken(out.token)) {
      stoppedAtEog = true;
      if (!args["ignore-eos"]) break;
    } else {
      stoppedAtEog = false;
    }
    if (generated.length >= nGenerate) break;
  }
}

const result = { n_vocab: nVocab, prompt_ids: promptIds, generated_ids: generated, stopped_at_eog: stoppedAtEog };
if (args.decode) result.text = model.detokenize(generated, false, promptIds);
if (firstStep !== null) result.first_step = firstStep;
process.stdout.write(JSON.stringify(result) + "\n");

await context.dispose();
await model.dispose();
await llama.dispose();
