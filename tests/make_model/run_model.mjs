// Loads a `mneme make-model` GGUF in llama.cpp (node-llama-cpp 3.21.1, CPU
// build) and decodes greedily: proof that llama.cpp accepts the file (keys,
// tensor names, shapes, types) and can run it, plus a measure of how far
// greedy decoding is from ties (the gap between the two most likely tokens).
//
//   node tests/make_model/run_model.mjs MODEL.gguf [N=32] [MIN_GAP=0]
//
// Prints one JSON object: {n_vocab, generated, distinct, min_gap,
// median_gap} (gaps in logits: log p1 - log p2 = l1 - l2). Exits 1 if fewer
// than N tokens come out, an id is out of range, or min_gap < MIN_GAP.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [modelPath, nArg = "32", minGapArg = "0"] = process.argv.slice(2);
if (!modelPath) {
  console.error("usage: run_model.mjs MODEL.gguf [N] [MIN_GAP]");
  process.exit(2);
}
const n = Number.parseInt(nArg, 10);
const minGapWanted = Number.parseFloat(minGapArg);

const here = path.dirname(fileURLToPath(import.meta.url));
const entry = path.resolve(here, "../oracle/node_modules/node-llama-cpp/dist/index.js");
const { getLlama, LlamaLogLevel } = await import(pathToFileURL(entry).href);

const llama = await getLlama({ gpu: false, build: "never", skipDownload: true, progressLogs: false,
                               logLevel: LlamaLogLevel.error, logger: () => {} });
const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
const nVocab = model.fileInfo.metadata?.tokenizer?.ggml?.tokens?.length;
const context = await model.createContext({ contextSize: 128, batchSize: 32, sequences: 1,
                                            threads: 1, flashAttention: false });
const sequence = context.getSequence();

// A fixed prompt of ids (no tokenizer involved): BOS-like 1, then a few ids.
const prompt = [1, 5, 17, 42, 99].map((t) => t % nVocab);
const generated = [];
const gaps = [];
const it = sequence.evaluateWithMetadata(prompt, { probabilities: true },
                                         { temperature: 0, yieldEogToken: true });
for await (const out of it) {
  const entries = [...out.probabilities.entries()];  // most likely first
  gaps.push(Math.log(entries[0][1]) - Math.log(entries[1][1]));
  generated.push(out.token);
  if (generated.length >= n) break;
}
await context.dispose();
await model.dispose();
await llama.dispose();

const sorted = [...gaps].sort((a, b) => a - b);
const result = {
  n_vocab: nVocab,
  generated,
  distinct: new Set(generated).size,
  min_gap: sorted[0],
  median_gap: sorted[Math.floor(sorted.length / 2)],
};
process.stdout.write(JSON.stringify(result) + "\n");
const bad = generated.length < n || generated.some((t) => !(t >= 0 && t < nVocab)) ||
            !(result.min_gap >= minGapWanted);
process.exit(bad ? 1 : 0);
