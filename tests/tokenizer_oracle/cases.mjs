// The texts the tokenizer oracle test (compare.mjs) feeds to Mneme and to
// llama.cpp: a seeded corpus, fixed adversarial snippets, and snippets built
// from the special tokens of the vocab under test.
//
// Why these: the corpus (bench/tokenizer/make_corpus.mjs, half English, half
// "stress": CJK, Cyrillic, Arabic, emoji, combining marks, whitespace and
// digit runs) covers the common paths in bulk; the snippets cover what a
// corpus rarely hits but real prompts do: the start and end of a text (SPM's
// dummy-prefix space, trailing whitespace runs), a text that is only
// whitespace, very long words and runs (BPE merge queues, regex
// backtracking), and special-token text next to spaces, newlines and other
// special tokens (llama.cpp's tokenizer_st_partition, lstrip/rstrip).
//
// Not covered, by necessity: invalid UTF-8. node-llama-cpp takes a JS string
// (UTF-16) and converts it with N-API, which turns anything invalid into
// U+FFFD before llama.cpp sees it, so there is no oracle for raw bad bytes
// (U+FFFD itself is a case). Code points newer than Unicode 14 are left out
// too: PCRE2 10.42 (Debian 12) has Unicode 14 tables, a documented limit (see
// docs/benchmarks.md, "Known difference").
//
// Every case is {name, text, corpus, special}; `corpus` marks the corpus
// chunks, `special` says whether the text holds
// the text of a control or unknown-type token, the only case where
// parse_special changes the result (user-defined tokens are always matched),
// so compare.mjs runs it both with and without parse_special.
import {MakeCorpus} from "../../bench/tokenizer/make_corpus.mjs";
import {SplitChunks} from "../../bench/tokenizer/llamacpp_tokenize.mjs";

// llama.cpp's llama_token_attr bits (llama.h).
const kAttrUnknown = 1 << 0;
const kAttrControl = 1 << 3;
const kAttrUserDefined = 1 << 4;

// The corpus, cut in chunks the way the tokenizer benchmark cuts it (each
// chunk is one tokenize call on both sides).
function CorpusCases({bytes, seed, chunk}) {
  const cases = [];
  for (const style of ["english", "stress"]) {
    const corpus = Buffer.from(MakeCorpus({bytes: Math.ceil(bytes / 2), seed, style}), "utf8");
    const ranges = SplitChunks(corpus, chunk);
    ranges.forEach(([begin, end], i) => {
      cases.push({name: `corpus ${style} seed ${seed}, chunk ${i + 1}/${ranges.length} ` +
                        `(bytes ${begin}..${end})`,
                  text: corpus.subarray(begin, end).toString("utf8"), corpus: true});
    });
  }
  return cases;
}

// Fixed snippets, each tokenized as a whole text (so start and end count).
const kSnippets = [
  ["empty", ""],
  ["one space", " "],
  ["two spaces", "  "],
  ["lone LF", "\n"],
  ["two LF", "\n\n"],
  ["lone CRLF", "\r\n"],
  ["lone CR", "\r"],
  ["lone tab", "\t"],
  ["mixed whitespace", " \t\n \r\n\t "],
  ["word", "Hello"],
  ["leading space", " Hello"],
  ["leading spaces", "   Hello world"],
  ["trailing space", "Hello "],
  ["trailing spaces", "Hello world   "],
  ["both", "  Hello  world  "],
  ["LF around", "\nHello\n"],
  ["CRLF lines", "Hello\r\nworld\r\n\r\nend"],
  ["tabs", "\tindented\tline\t\t"],
  ["code", "def f(x):\n    if x:\n        return x  # done\n\treturn None\n"],
  ["5000 spaces", " ".repeat(5000)],
  ["5000 spaces inside", "a" + " ".repeat(5000) + "b"],
  ["300 LF", "\n".repeat(300)],
  ["spaces then LF", "x" + "   \n".repeat(200) + "y"],
  ["long word", "supercalifragilistic".repeat(150)],
  ["long pair run", "ab".repeat(2500)],
  ["long letter run", "a".repeat(4000)],
  ["long non-ASCII word", "ü".repeat(1500)],
  ["long CJK run", "漢字仮名交じり文".repeat(300)],
  ["long digit run", "1234567890".repeat(300)],
  ["digit groups", "0 1 12 123 1234 12345 3.14159265358979 1,000,000 2024-01-31 0x7fff 1e-9"],
  ["contractions", "don't I'M we'll they'VE it’s ''quoted'' 's 'S 'll"],
  ["punctuation runs", "!!!??? ... --- *** <<>> <| |> < > <s s> ((([[[{{{"],
  ["url and email", "https://example.com/a/b?c=1&d=%20#frag user.name+tag@example.org"],
  ["NUL and controls", "a\u0000b\u0001c\u007fd\u001be"],
  ["BOM, ZWSP, NBSP", "\ufeffstart\u200bzero\u00a0nbsp\u3000ideographic\u2009thin"],
  ["replacement char", "\ufffd\ufffdx\ufffd"],
  ["combining marks", "e\u0301\u0301\u0301 a\u0308o\u0308 n\u0303 \u0301start"],
  ["emoji", "🦙🦙🦙 👩‍💻 👍🏽 🇫🇷🇩🇪 ❤️ 🙂‍↕️"],
  ["math alphanumerics", "𝕳𝖊𝖑𝖑𝖔 𝟏𝟐𝟑 𝐀𝐁𝐂"],
  ["mixed scripts", "日本語のテキスト 한국어 Привет мир مرحبا 123 नमस्ते ελληνικά"],
  // Where PCRE2's \s, \p{L}, \p{N} could disagree with llama.cpp's tables.
  ["unicode whitespace", "a\u000bb\u000cc\u0085d\u1680e\u180ef\u2000\u2005\u200ag\u2028h\u2029i" +
                         "\u202fj\u205fk\u3000l\u200cm\u200dn\u2060o \u000b\u000c \u2028\n"],
  ["number categories", "x²³ ½¾ ①② ⅫⅣ ٣٤٥ ۱۲۳ १२३ ๑๒ 𝟘𝟙 ¹⁰ 12½"],
  ["letter categories", "ʰʲ ª º ǅǈ ᾈ ﬁ ꟸ ſt ß ẞ İı"],
  ["private and unassigned", "\ue000\uf8ff\u0378\ufdd0\uffff\u{10ffff}\u{e0001}\u{f0000}x"],
  ["newline and tab runs", "a\n\n\n\n\nb\t\t\t\tc\r\r\n\n\r\nd" + "    ".repeat(8) + "e\n\n"],
  ["indented code", "class A:\n    def f(self):\n        return [x ** 2 for x in range(10)]\n\n\n"],
  ["long emoji run", "🦙".repeat(600)],
  ["long mark run", "a" + "\u0301".repeat(800)],
  ["long punctuation", "=".repeat(3000) + "\n" + "-.".repeat(1000)],
  ["special-like fragments", "<<s>> <s><s> </s<s>> <|im_start|im_end|> <|<|endoftext|>|> <||> <s\n>"],
  ["specials inside words", "Hello<|im_end|>world don't<s>stop a<|endoftext|>'s x</s>."],
];

// Special-token texts of several model families; each is plain text in a
// vocab that lacks it, which is worth checking too.
const kCommonSpecials = ["<s>", "</s>", "<unk>", "<|im_start|>", "<|im_end|>", "<|endoftext|>",
                         "<|begin_of_text|>", "<|eot_id|>"];

// `tokens` in five settings, one text each: at the very start, between
// spaces, between newlines, back to back, and cut in half (must stay text).
function SpecialContextCases(label, tokens) {
  return [
    [`${label} at start`, tokens.map((t) => `${t}Hello`).join("")],
    [`${label} between spaces`, tokens.map((t) => ` ${t} world  `).join("")],
    [`${label} between newlines`, tokens.map((t) => `\n${t}\n`).join("") + "end"],
    [`${label} back to back`, tokens.join("")],
    [`${label} broken`, tokens.map((t) => `a${t.slice(0, -1)} ${t.slice(1)}b`).join("")],
  ];
}

// The vocab's own special tokens (from llama.cpp's attributes): a few alone
// as a whole text, a few in the five settings above (control tokens first,
// then user-defined ones), and all of them packed into one text with
// rotating neighbours.
function VocabSpecialCases(model) {
  const own = model.specialTokens.filter((t) => t.text.length > 0);
  const control = own.filter((t) => t.attributes & (kAttrControl | kAttrUnknown)).map((t) => t.text);
  const userDefined = own.filter((t) => !(t.attributes & (kAttrControl | kAttrUnknown))).map((t) => t.text);
  const cases = [];
  for (const t of [...control.slice(0, 4), ...userDefined.slice(0, 2)]) {
    cases.push([`own special ${JSON.stringify(t)} alone`, t]);
    cases.push([`own special ${JSON.stringify(t)} with spaces`, ` ${t} `]);
  }
  const neighbours = ["", " ", "x", "\n", "  ", "Hi ", " 12"];
  if (own.length > 0) {
    cases.push(["all own specials packed",
                own.map((t, i) => neighbours[i % neighbours.length] + t.text).join("") + " end"]);
    cases.push(...SpecialContextCases("own specials", [...control.slice(0, 10), ...userDefined.slice(0, 6)]));
  }
  return cases;
}

// Returns every case for one vocab. `model` = {specialTokens: [{id, text,
// attributes}]}, the vocab's control, user-defined and unknown tokens.
export function MakeCases(model, {bytes, seed, chunk}) {
  const controlTexts = model.specialTokens
      .filter((t) => t.attributes & (kAttrControl | kAttrUnknown))
      .map((t) => t.text)
      .filter((t) => t.length > 0);
  const named = [
    ...CorpusCases({bytes, seed, chunk}),
    ...kSnippets.map(([name, text]) => ({name, text})),
    ...SpecialContextCases("common specials", kCommonSpecials).map(([name, text]) => ({name, text})),
    ...VocabSpecialCases(model).map(([name, text]) => ({name, text})),
  ];
  return named.map((c) => ({...c, special: controlTexts.some((t) => c.text.includes(t))}));
}

// The vocab's special tokens as llama.cpp sees them, from the loaded model
// (node-llama-cpp's native handle) and the token count of the GGUF.
export function SpecialTokens(native, numTokens) {
  const tokens = [];
  for (let id = 0; id < numTokens; ++id) {
    const attributes = native.getTokenAttributes(id);
    if (attributes & (kAttrUnknown | kAttrControl | kAttrUserDefined)) {
      tokens.push({id, text: native.getTokenString(id) ?? "", attributes});
    }
  }
  return tokens;
}
