// Writes the tokenizer benchmark corpus: seeded pseudo-English prose, so the
// benchmark needs no download and every machine tokenizes the same bytes.
//
//   node make_corpus.mjs [--bytes N] [--seed S] > corpus.txt
//
// Why generated text: the repository has too little prose to reach megabytes,
// and committing megabytes of someone else's text is worse. What matters for
// tokenizer speed is the *shape* of the text, so the generator imitates it:
//   - words drawn from a Zipf distribution over ~400 common English words, so
//     short frequent words dominate and a long tail needs many BPE merges;
//   - sentences of 4..28 words, capitalized, with commas, semicolons, colons,
//     parentheses, quotes, and . ? ! endings;
//   - contractions (don't, it's, we'll: the BPE pre-tokenizers split these),
//     hyphenated words, capitalized names;
//   - numbers: years, decimals, prices, percentages, thousands separators, times;
//   - about 1% non-ASCII (accented words, curly quotes, em dashes) so the
//     UTF-8 paths run too;
//   - paragraphs of 2..7 sentences separated by blank lines, occasional
//     headings and bullet lists, and code-like identifiers.
// The output is a pure function of (bytes, seed, style); it ends on a
// paragraph boundary at or just past `bytes`.
//
// --style stress (not used for the speed numbers) replaces 30% of the words
// with CJK, Cyrillic, Arabic, Devanagari, combining marks, emoji (ZWJ, skin
// tones, flags), astral code points (assigned before Unicode 14, or never),
// whitespace runs (tabs, NBSP, CR LF), digit runs and odd apostrophes: a
// harder corpus for the id cross-check.

import path from "node:path";
import {pathToFileURL} from "node:url";

const kWords = `
the of and to a in is that it for was on are as with he be at by this had not
but from or have an they which one you were her all she there would their we
him been has when who will more no if out so said what up its about into than
them can only other new some could time these two may then do first any my now
such like our over man me even most made after also did many before must
through back years where much your way well down should because each just
those people how too little state good very make world still own see men work
long get here between both life being under never day same another know while
last might us great old year off come since against go came right used take
three himself few house use during without again place american around however
home small found thought went say part once general high upon school every
does got united left number course war until always away something fact
though water less public put think almost hand enough far took head yet
government system better set told nothing night end why called didn't eyes
find going look asked later knew point next city business give group toward
young let room president side social given present several order national
possible rather second face per among form important often things looked
early white case john become large big need four within felt along children
saw best church ever least power development light thing seemed family
interest want members mind country area others done turned although open god
service certain kind problem began different door thus help sense means whole
matter perhaps itself york it's times law human line above name example
action company hands local show whether five history gave today either act
feet across taken past quite anything seen having death experience body word
half really field am car words already themselves i'm information tell
together college shall money period held keep sure free seems real behind
cannot miss political air question making office brought whose special major
heard problems ago became federal study available known result street
economic boy position reason change south board individual job areas society
west close turn love community true court force full seem am policy
tokenizer inference throughput benchmark conversation session prefix cache
attention transformer embedding vocabulary merges sentencepiece probability
`.trim().split(/\s+/);

const kRareWords = `
antidisestablishmentarianism photosynthesis incomprehensibility
serendipitous quintessential juxtaposition indefatigable phenomenological
electroencephalography thermodynamically counterintuitive
hyperparameterization internationalization misunderstandings
uncharacteristically overgeneralization decentralization
`.trim().split(/\s+/);

const kNames = `
Alice Bob Carol Dmitri Elena Farid Grace Hiroshi Ingrid Jamal Katarzyna Luis
Mneme London Paris Berlin Tokyo Lagos Toronto Monday Friday January October
Llama Qwen GitHub Linux Redis
`.trim().split(/\s+/);

const kContractions = `
don't it's we'll I'm they've you're can't wouldn't she'd isn't that's there's
let's we're he's won't didn't o'clock
`.trim().split(/\s+/);

const kNonAscii = `
café naïve résumé façade coöperate Zürich São Málaga Ångström déjà-vu
“quoted” — … ½ €12 ±0.5 °C
`.trim().split(/\s+/);

const kCode = `
std::vector<int> foo_bar() snake_case_name CamelCaseName kMaxTokens
/usr/local/bin x86_64 utf-8 https://example.com/a?b=1 0x7fff user@example.org
`.trim().split(/\s+/);

// Small, fast, seedable PRNG (mulberry32): deterministic across platforms.
function Mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function ParseArgs(argv) {
  const args = {bytes: 2 * 1000 * 1000, seed: 42, style: "english"};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in args) || i + 1 >= argv.length) {
      throw new Error(`usage: make_corpus.mjs [--bytes N] [--seed S] [--style english|stress] ` +
                      `(bad argument '${argv[i]}')`);
    }
    args[key] = key === "style" ? argv[i + 1] : Number(argv[i + 1]);
  }
  if (args.style !== "english" && args.style !== "stress") throw new Error(`unknown style '${args.style}'`);
  return args;
}

// Stress style only: strings that exercise the pre-tokenizers' Unicode
// classes (letters, marks, numbers, whitespace runs) and byte fallback.
function MakeStressToken(rand, Int) {
  const Range = (lo, hi, n) => {
    let out = "";
    for (let i = 0; i < n; ++i) out += String.fromCodePoint(Int(lo, hi));
    return out;
  };
  // Only blocks whose categories are the same in Unicode 14 (Debian 12's
  // PCRE2) and in llama.cpp's newer tables; code points added later (e.g.
  // Kaktovik numerals, Kawi: Unicode 15) differ by design, see
  // docs/benchmarks.md. Planes 4-13 are unassigned in every version.
  const kAstralBlocks = [
    [0x10330, 0x1034a],  // Gothic (Lo, Nl)
    [0x1d400, 0x1d7ff],  // Mathematical Alphanumeric Symbols (L, Nd; a few holes)
    [0x1d100, 0x1d126],  // Musical Symbols (So)
    [0x1f300, 0x1f5ff],  // Miscellaneous Symbols and Pictographs (So)
    [0x20000, 0x2a6df],  // CJK Extension B (Lo)
    [0x40000, 0xdffff],  // unassigned (Cn)
  ];
  const kEmoji = ["😀", "👍🏽", "👩‍💻", "🇫🇷", "❤️", "🦙", "✅", "🙂‍↕️"];
  const kSpaces = ["  ", "   ", "\t", " \t ", "\u00a0", "\u3000", "\r\n", "\n \n", "\u2009"];
  return () => {
    switch (Int(0, 11)) {
      case 0: return Range(0x4e00, 0x9fff, Int(1, 6));            // CJK ideographs
      case 1: return Range(0x3041, 0x3096, Int(1, 5));            // Hiragana
      case 2: return Range(0x0430, 0x044f, Int(2, 9));            // Cyrillic
      case 3: return Range(0x0627, 0x064a, Int(2, 7));            // Arabic
      case 4: return Range(0x0915, 0x0939, Int(1, 4)) + "\u094d"; // Devanagari + virama
      case 5: return "e\u0301" + Range(0x61, 0x7a, Int(0, 3)) + "\u0308";  // combining marks
      case 6: return kEmoji[Int(0, kEmoji.length - 1)];
      case 7: return kSpaces[Int(0, kSpaces.length - 1)];
      case 8: return String(Int(0, 9)).repeat(Int(4, 12));        // digit runs
      case 9: return ["'S", "'LL", "’s", "'VE", "n't", "''", "'"][Int(0, 6)];
      case 10: return Range(0x21, 0x2f, Int(2, 5));               // ASCII punctuation runs
      default: {  // astral code points from blocks older than Unicode 14
        const [lo, hi] = kAstralBlocks[Int(0, kAstralBlocks.length - 1)];
        return Range(lo, hi, Int(1, 3));
      }
    }
  };
}

function MakeGenerator(seed, style) {
  const rand = Mulberry32(seed);
  const Int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));  // inclusive
  const Pick = (list) => list[Math.floor(rand() * list.length)];

  // Zipf weights 1/(rank + 2.7), as cumulative sums for binary search.
  const cumulative = [];
  let total = 0;
  for (let r = 0; r < kWords.length; ++r) {
    total += 1 / (r + 2.7);
    cumulative.push(total);
  }
  const ZipfWord = () => {
    const x = rand() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1; else hi = mid;
    }
    return kWords[lo];
  };

  const Number_ = () => {
    switch (Int(0, 6)) {
      case 0: return String(Int(1900, 2030));                                  // year
      case 1: return `${Int(0, 99)}.${Int(0, 99)}`;                            // decimal
      case 2: return `$${Int(1, 999)}.${String(Int(0, 99)).padStart(2, "0")}`;  // price
      case 3: return `${Int(1, 100)}%`;                                         // percentage
      case 4: return `${Int(1, 999)},${String(Int(0, 999)).padStart(3, "0")}`;  // thousands
      case 5: return `${Int(1, 12)}:${String(Int(0, 59)).padStart(2, "0")}`;    // time
      default: return String(Int(0, 100000));
    }
  };

  const Stress = style === "stress" ? MakeStressToken(rand, Int) : null;
  const Token = () => {
    const x = rand();
    if (Stress && x < 0.3) return Stress();
    if (x < 0.015) return Number_();
    if (x < 0.030) return Pick(kContractions);
    if (x < 0.045) return Pick(kNames);
    if (x < 0.050) return Pick(kRareWords);
    if (x < 0.055) return Pick(kNonAscii);
    if (x < 0.058) return Pick(kCode);
    if (x < 0.065) return `${ZipfWord()}-${ZipfWord()}`;
    return ZipfWord();
  };

  const Sentence = () => {
    const n = Int(4, 28);
    const words = [];
    for (let i = 0; i < n; ++i) {
      let w = Token();
      const p = rand();
      if (i + 1 < n) {
        if (p < 0.08) w += ",";
        else if (p < 0.09) w += ";";
        else if (p < 0.095) w += ":";
      }
      words.push(w);
    }
    if (n > 6 && rand() < 0.08) {  // a parenthetical or quoted span
      const a = Int(1, n - 3);
      const b = Int(a, Math.min(n - 2, a + 4));
      const [open, close] = rand() < 0.5 ? ["(", ")"] : ['"', '"'];
      words[a] = open + words[a];
      words[b] = words[b].replace(/[,;:]$/, "") + close;
    }
    words[0] = words[0].charAt(0).toUpperCase() + words[0].slice(1);
    const end = rand();
    return words.join(" ") + (end < 0.85 ? "." : end < 0.95 ? "?" : "!");
  };

  const Paragraph = () => {
    const x = rand();
    if (x < 0.04) {  // heading
      const title = Sentence().replace(/[.?!]$/, "");
      return `${"#".repeat(Int(1, 3))} ${title.split(" ").slice(0, Int(2, 6)).join(" ")}`;
    }
    if (x < 0.10) {  // bullet list
      const items = [];
      for (let i = Int(2, 5); i > 0; --i) items.push(`- ${Sentence()}`);
      return items.join("\n");
    }
    const sentences = [];
    for (let i = Int(2, 7); i > 0; --i) sentences.push(Sentence());
    return sentences.join(" ");
  };

  return {Paragraph};
}

// The corpus text for (bytes, seed, style); also imported by the tokenizer
// oracle test (tests/tokenizer_oracle/compare.mjs).
export function MakeCorpus({bytes, seed, style}) {
  const gen = MakeGenerator(seed, style);
  const parts = [];
  let size = 0;
  while (size < bytes) {
    const p = gen.Paragraph() + "\n\n";
    parts.push(p);
    size += Buffer.byteLength(p, "utf8");
  }
  return parts.join("");
}

// Run only as a program, not when imported.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  process.stdout.write(MakeCorpus(ParseArgs(process.argv.slice(2))));
}
