// llama.cpp's corrections of token attributes by token text (the end of
// llama_vocab::impl::load), in llama.cpp's order. Converted GGUF files often
// type chat-control tokens as plain or user-defined tokens; llama.cpp patches
// them up by their text, and since the attributes decide how text is split
// and rendered, we must patch them the same way to get the same ids.
//
// Where llama.cpp picks "the first" of several matching tokens it walks a
// hash map, so its choice is unspecified; we take the first text in list
// order for EOT and the lowest id for the fill-in-the-middle roles. Only the
// chosen ids differ; the end-of-generation set is the same either way.
#include "tokenizer/vocab_fixups.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace mneme {
namespace {

bool OneOf(std::string_view s, std::initializer_list<std::string_view> options) {
  return std::find(options.begin(), options.end(), s) != options.end();
}

// Texts llama.cpp recognizes as "end of turn", in order of preference when
// a vocabulary has several (llama.cpp takes whichever its hash map yields
// first; this order gives the ids its logs show for Phi-3, Qwen2, Llama 3).
constexpr std::string_view kEotTexts[] = {
    "<|eot_id|>",        "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|end_of_text|>",   "<EOT>",      "_<EOT>",  "[EOT]",         "<｜end▁of▁sentence｜>",
    "<end_of_utterance>"};

// Texts that end generation.
bool IsEogText(std::string_view t) {
  return OneOf(t, {"<|eot_id|>",
                   "<|im_end|>",
                   "<|end|>",
                   "<|return|>",
                   "<|call|>",
                   "<|flush|>",
                   "<|calls|>",
                   "<end_of_turn>",
                   "<|endoftext|>",
                   "</s>",
                   "<|eom_id|>",
                   "<EOT>",
                   "_<EOT>",
                   "[EOT]",
                   "[EOS]",
                   "<|end_of_text|>",
                   "<end_of_utterance>",
                   "<eos>",
                   "<turn|>",
                   "<|tool_response>",
                   "<｜end▁of▁sentence｜>",
                   "[e~["});
}

// Fill-in-the-middle texts by role (prefix, suffix, middle, pad, repo, sep).
bool IsFimText(int role, std::string_view t) {
  switch (role) {
    case 0:
      return OneOf(t, {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>",
                       "▁<PRE>", "<|code_prefix|>", "<|prefix|>"});
    case 1:
      return OneOf(t, {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>",
                       "▁<SUF>", "<|code_suffix|>", "<|suffix|>"});
    case 2:
      return OneOf(t, {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>",
                       "▁<MID>", "<|code_middle|>", "<|middle|>"});
    case 3: return OneOf(t, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"});
    case 4:
      return OneOf(t, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"});
    case 5: return t == "<|file_sep|>";
  }
  return false;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

void ApplyLlamaCppFixups(const FixupInput& input, Vocab* vocab) {
  Vocab& v = *vocab;
  TokenId fim[6];
  for (int i = 0; i < 6; ++i) fim[i] = input.fim[i];
  const size_t n = v.size();
  std::vector<TokenId> eog;
  if (v.eot_id == kNoToken) {
    for (std::string_view text : kEotTexts) {
      TokenId id = v.Find(text);
      if (id == kNoToken) continue;
      v.eot_id = id;
      v.attrs[id] |= kAttrControl;
      break;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const std::string& t = v.tokens[i];
    if (v.eom_id == kNoToken && t == "<|eom_id|>") {
      v.eom_id = static_cast<TokenId>(i);
      v.attrs[i] |= kAttrControl;
    }
    for (int k = 0; k < 6; ++k) {
      if (fim[k] == kNoToken && IsFimText(k, t)) {
        fim[k] = static_cast<TokenId>(i);
        v.attrs[i] |= kAttrControl;
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if ((v.attrs[i] & kAttrControl) && v.tokens[i].find("unused") != std::string::npos) {
      v.attrs[i] |= kAttrUnused;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (IsEogText(v.tokens[i])) {
      eog.push_back(static_cast<TokenId>(i));
      v.attrs[i] |= kAttrControl;
    }
  }
  // gpt-oss: these are rendered like text.
  for (std::string_view t : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
    TokenId id = v.Find(t);
    if (id != kNoToken) v.attrs[id] = kAttrUserDefined;
  }
  for (TokenId id : {fim[3], fim[4], fim[5], v.eos_id, v.eot_id, v.eom_id}) {
    if (id != kNoToken) eog.push_back(id);
  }
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
  auto erase_eog = [&](TokenId id) {
    eog.erase(std::remove(eog.begin(), eog.end(), id), eog.end());
  };
  auto eog_has = [&](std::string_view text) {
    TokenId id = v.Find(text);
    return id != kNoToken && std::binary_search(eog.begin(), eog.end(), id);
  };
  // o200k_harmony / solar-open: "<|end|>" ends a message, not generation.
  if ((eog_has("<|return|>") && (eog_has("<|call|>") || eog_has("<|calls|>")) &&
       eog_has("<|end|>")) ||
      ((eog_has("<|call|>") || eog_has("<|calls|>")) && eog_has("<|flush|>") &&
       eog_has("<|end|>"))) {
    TokenId end = v.Find("<|end|>");
    erase_eog(end);
    v.attrs[end] = kAttrUserDefined;
  }
  // gemma4 / paddleocr: "</s>" is ordinary text there.
  if (eog_has("<|tool_response>") && eog_has("</s>")) {
    TokenId s = v.Find("</s>");
    erase_eog(s);
    v.attrs[s] = kAttrNormal;
  }
  v.eog_ids = std::move(eog);

  // Per-model strip attributes, keyed by name as in llama.cpp.
  const std::string name = Lower(input.general_name);
  const std::string& arch = input.architecture;
  auto contains = [](std::string_view s, std::initializer_list<std::string_view> subs) {
    for (std::string_view sub : subs) {
      if (s.find(sub) != std::string_view::npos) return true;
    }
    return false;
  };
  auto set_attr = [&](std::string_view text, uint32_t attr, bool on) {
    TokenId id = v.Find(text);
    if (id == kNoToken) return;
    v.attrs[id] = on ? (v.attrs[id] | attr) : (v.attrs[id] & ~attr);
  };
  if (contains(v.pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
      contains(arch, {"nomic-bert-moe", "jina-bert-v3"})) {
    set_attr("<mask>", kAttrLstrip, true);
  } else if (contains(name, {"phi-3", "phi3"})) {
    for (size_t i = 0; i < n; ++i) {
      if (v.attrs[i] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) v.attrs[i] |= kAttrRstrip;
    }
    set_attr("</s>", kAttrRstrip, true);
    for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) set_attr(t, kAttrRstrip, false);
  } else if (contains(name, {"modern-bert"})) {
    set_attr("[MASK]", kAttrLstrip, true);
  }
}

}  // namespace mneme
