// GGUF reader oracle test: `mneme info --json -m FILE` must agree with
// node-llama-cpp's independent GGUF parser (readGgufFileInfo) on everything
// both expose: version, tensor count, where the tensor data starts, every
// metadata key and value (full arrays: every token, score, merge), and every
// tensor's name, ggml type, dimensions and offsets.
//
//   node tests/gguf/info_oracle.mjs MNEME_BIN FILE.gguf
//
// Exits 0 on agreement, 1 with the first differences otherwise.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [mneme, file] = process.argv.slice(2);
if (!mneme || !file) {
  console.error("usage: node info_oracle.mjs MNEME_BIN FILE.gguf");
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const entry = path.resolve(here, "../oracle/node_modules/node-llama-cpp/dist/index.js");
const { readGgufFileInfo } = await import(pathToFileURL(entry).href);

const run = spawnSync(mneme, ["info", "--json", "-m", file], { maxBuffer: 1 << 30, encoding: "utf8" });
if (run.status !== 0) {
  console.error(`mneme info failed (${run.status}): ${run.stderr}`);
  process.exit(1);
}
const ours = JSON.parse(run.stdout);
const theirs = await readGgufFileInfo(file, { logWarnings: false, spliceSplitFiles: false });

const problems = [];
const check = (ok, what) => {
  if (!ok) problems.push(what);
};

// Integers may come back as bigint from node-llama-cpp; ours are JSON numbers
// (exact below 2^53, which covers every value in the test files).
const same = (a, b) => {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  }
  if (typeof a === "bigint" || typeof b === "bigint") return BigInt(a) === BigInt(b);
  return a === b;
};
const show = (v) => {
  const s = JSON.stringify(v, (_, x) => (typeof x === "bigint" ? x.toString() : x));
  return s.length > 200 ? s.slice(0, 200) + "..." : s;
};

check(ours.version === theirs.version, `version: ${ours.version} vs ${theirs.version}`);
check(same(ours.tensors.length, theirs.tensorCount), `tensor count: ${ours.tensors.length} vs ${theirs.tensorCount}`);
check(same(ours.data_offset, theirs.infoEndOffset), `data offset: ${ours.data_offset} vs ${theirs.infoEndOffset}`);

// Metadata: node-llama-cpp nests "a.b.c" as metadata.a.b.c.
const lookup = (key) => key.split(".").reduce((o, k) => (o != null && typeof o === "object" && !Array.isArray(o) ? o[k] : undefined), theirs.metadata);
let leaves = 0;
const countLeaves = (o) => {
  for (const v of Object.values(o)) {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) countLeaves(v);
    else leaves++;
  }
};
countLeaves(theirs.metadata);
check(ours.metadata.length === leaves, `metadata key count: ${ours.metadata.length} vs ${leaves}`);
let values = 0;
for (const { key, value } of ours.metadata) {
  const ref = lookup(key);
  check(ref !== undefined, `key ${key}: missing in node-llama-cpp`);
  if (ref === undefined) continue;
  if (!same(value, ref)) {
    const i = Array.isArray(value) && Array.isArray(ref) ? value.findIndex((x, j) => !same(x, ref[j])) : -1;
    problems.push(i >= 0 ? `key ${key}[${i}]: ${show(value[i])} vs ${show(ref[i])}` : `key ${key}: ${show(value)} vs ${show(ref)}`);
  }
  values += Array.isArray(value) ? value.length : 1;
}

// Tensors, in file order.
const refTensors = theirs.tensorInfo ?? [];
for (let i = 0; i < Math.min(ours.tensors.length, refTensors.length); i++) {
  const a = ours.tensors[i];
  const b = refTensors[i];
  check(a.name === b.name, `tensor #${i}: name ${a.name} vs ${b.name}`);
  check(a.type_id === Number(b.ggmlType), `tensor ${a.name}: type ${a.type_id} vs ${b.ggmlType}`);
  check(same(a.shape, [...b.dimensions]), `tensor ${a.name}: shape ${show(a.shape)} vs ${show(b.dimensions)}`);
  check(same(a.offset, b.offset), `tensor ${a.name}: offset ${a.offset} vs ${b.offset}`);
  check(same(ours.data_offset + a.offset, b.fileOffset), `tensor ${a.name}: file offset vs ${b.fileOffset}`);
}

const name = path.basename(file);
if (problems.length > 0) {
  console.error(`${name}: ${problems.length} differences from node-llama-cpp:`);
  for (const p of problems.slice(0, 20)) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`${name}: agrees with node-llama-cpp: ${ours.metadata.length} keys (${values} values), ${ours.tensors.length} tensors`);
