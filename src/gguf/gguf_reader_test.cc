// Reader tests on real files: the stories260K model and every vocab GGUF in
// /work/shared/models. Expected values come from /work/shared/models/README.md
// (written from the files' provenance, not from this reader).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "gguf/gguf.h"

namespace mneme::gguf {
namespace {

const std::string kModels = std::string(MNEME_SHARED_DIR) + "/models";

GgufFile OpenOrDie(const std::string& path) {
  Result<GgufFile> f = GgufFile::Open(path);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(f).value();
}

TEST(GgufReaderTest, Stories260KHeader) {
  GgufFile f = OpenOrDie(kModels + "/stories260K.gguf");
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.file_size(), 1185376u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.data_offset(), 14176u);
  EXPECT_EQ(f.metadata().size(), 19u);
  EXPECT_EQ(f.tensors().size(), 48u);
}

TEST(GgufReaderTest, Stories260KMetadata) {
  GgufFile f = OpenOrDie(kModels + "/stories260K.gguf");
  EXPECT_EQ(*f.GetString("general.architecture"), "llama");
  EXPECT_EQ(*f.GetString("general.name"), "llama");
  EXPECT_EQ(*f.GetUint("llama.context_length"), 2048u);
  EXPECT_EQ(*f.GetUint("llama.embedding_length"), 64u);
  EXPECT_EQ(*f.GetUint("llama.feed_forward_length"), 172u);
  EXPECT_EQ(*f.GetUint("llama.block_count"), 5u);
  EXPECT_EQ(*f.GetUint("llama.attention.head_count"), 8u);
  EXPECT_EQ(*f.GetUint("llama.attention.head_count_kv"), 4u);
  EXPECT_EQ(*f.GetUint("llama.rope.dimension_count"), 8u);
  EXPECT_FLOAT_EQ(static_cast<float>(*f.GetFloat("llama.attention.layer_norm_rms_epsilon")), 1e-5f);
  EXPECT_EQ(f.Find("llama.rope.freq_base"), nullptr);
  EXPECT_EQ(*f.GetString("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(*f.GetUint("tokenizer.ggml.unknown_token_id"), 0u);
  EXPECT_EQ(*f.GetUint("tokenizer.ggml.bos_token_id"), 1u);
  EXPECT_EQ(*f.GetUint("tokenizer.ggml.eos_token_id"), 2u);
  EXPECT_EQ(*f.GetUint("tokenizer.ggml.padding_token_id"), 4294967295u);
  EXPECT_EQ(f.Find("tokenizer.ggml.add_bos_token"), nullptr);

  Result<std::vector<std::string_view>> tokens = f.GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  ASSERT_EQ(tokens->size(), 512u);
  EXPECT_EQ((*tokens)[0], "<unk>");
  EXPECT_EQ((*tokens)[3], "<0x00>");
  EXPECT_EQ((*tokens)[258], "<0xFF>");
  const char* expected[] = {"▁t",   "he", "▁a",  "▁s", "▁w",   "nd",
                            "▁the", "ed", "▁to", "▁b", "▁and", "▁h"};
  for (int i = 0; i < 12; ++i) EXPECT_EQ((*tokens)[259 + i], expected[i]) << i;
  // Views point into the mapping, not into copies.
  const auto* base = reinterpret_cast<const char*>(f.bytes().data());
  EXPECT_GE((*tokens)[100].data(), base);
  EXPECT_LT((*tokens)[100].data(), base + f.file_size());

  Result<std::vector<float>> scores = f.GetFloatArray("tokenizer.ggml.scores");
  ASSERT_TRUE(scores.ok()) << scores.status().ToString();
  EXPECT_EQ(scores->size(), 512u);
  Result<std::vector<int32_t>> types = f.GetInt32Array("tokenizer.ggml.token_type");
  ASSERT_TRUE(types.ok()) << types.status().ToString();
  ASSERT_EQ(types->size(), 512u);
  for (int32_t t : *types) EXPECT_TRUE(t == 1 || t == 2 || t == 3 || t == 6) << t;
  EXPECT_EQ((*types)[0], 2);  // <unk> is UNKNOWN
  EXPECT_EQ((*types)[3], 6);  // <0x00> is BYTE
}

TEST(GgufReaderTest, Stories260KTensors) {
  GgufFile f = OpenOrDie(kModels + "/stories260K.gguf");
  uint64_t total = 0;
  for (const TensorInfo& t : f.tensors()) {
    EXPECT_EQ(t.type, TensorType::kF32) << t.name;
    EXPECT_EQ(t.num_bytes, t.num_elements * 4) << t.name;
    EXPECT_EQ(t.offset % 32, 0u) << t.name;
    total += t.num_elements;
  }
  // 2 x 64*512 embeddings + 64 norm + 5 layers of (2*64 norms + 2*64*64 + 2*64*32 + 3*64*172).
  EXPECT_EQ(total, 2u * 64 * 512 + 64 + 5u * (2 * 64 + 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 172));

  const TensorInfo* embd = f.FindTensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->shape, (std::vector<uint64_t>{64, 512}));
  const TensorInfo* down = f.FindTensor("blk.4.ffn_down.weight");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->shape, (std::vector<uint64_t>{172, 64}));
  const TensorInfo* norm = f.FindTensor("output_norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->shape, (std::vector<uint64_t>{64}));
  for (int i = 0; i < 5; ++i) {
    std::string p = "blk." + std::to_string(i) + ".";
    EXPECT_EQ(f.FindTensor(p + "attn_k.weight")->shape, (std::vector<uint64_t>{64, 32}));
    EXPECT_EQ(f.FindTensor(p + "ffn_gate.weight")->shape, (std::vector<uint64_t>{64, 172}));
  }
  EXPECT_EQ(f.FindTensor("no.such.tensor"), nullptr);

  // output.weight is an explicit copy of token_embd.weight (README): the two
  // zero-copy views must hold identical bytes at different places.
  const TensorInfo* out = f.FindTensor("output.weight");
  ASSERT_NE(out, nullptr);
  std::span<const uint8_t> a = f.TensorData(*embd);
  std::span<const uint8_t> b = f.TensorData(*out);
  ASSERT_EQ(a.size(), 64u * 512 * 4);
  ASSERT_EQ(b.size(), a.size());
  EXPECT_NE(a.data(), b.data());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size()), 0);
  EXPECT_EQ(a.data(), f.bytes().data() + f.data_offset() + embd->offset);
}

TEST(GgufReaderTest, FromBytesMatchesOpen) {
  Result<std::string> raw = ReadFileToString(kModels + "/stories260K.gguf");
  ASSERT_TRUE(raw.ok());
  auto bytes = std::span(reinterpret_cast<const uint8_t*>(raw->data()), raw->size());
  Result<GgufFile> f = GgufFile::FromBytes(bytes, "copy.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->name(), "copy.gguf");
  EXPECT_EQ(f->tensors().size(), 48u);
  EXPECT_EQ(f->data_offset(), 14176u);
  // Moving the file keeps every view valid.
  GgufFile moved = std::move(f).value();
  EXPECT_EQ(*moved.GetString("general.architecture"), "llama");
  EXPECT_EQ(moved.GetStringArray("tokenizer.ggml.tokens")->at(1), "<s>");
}

struct VocabCase {
  const char* file;
  const char* model;
  const char* pre;  // nullptr: no tokenizer.ggml.pre expected to be checked
  size_t n_tokens;
  size_t n_merges;  // 0: no merges key
  uint64_t bos;
  uint64_t eos;
};

class GgufVocabTest : public testing::TestWithParam<VocabCase> {};

TEST_P(GgufVocabTest, Parses) {
  const VocabCase& c = GetParam();
  GgufFile f = OpenOrDie(kModels + "/vocab/" + c.file);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_TRUE(f.tensors().empty());
  EXPECT_EQ(*f.GetString("tokenizer.ggml.model"), c.model);
  if (c.pre != nullptr) {
    EXPECT_EQ(*f.GetString("tokenizer.ggml.pre"), c.pre);
  }
  Result<std::vector<std::string_view>> tokens = f.GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  if (c.n_tokens > 0) {
    EXPECT_EQ(tokens->size(), c.n_tokens);
  }
  if (c.n_merges > 0) {
    Result<std::vector<std::string_view>> merges = f.GetStringArray("tokenizer.ggml.merges");
    ASSERT_TRUE(merges.ok()) << merges.status().ToString();
    EXPECT_EQ(merges->size(), c.n_merges);
  }
  if (c.n_tokens > 0) {
    EXPECT_EQ(*f.GetUint("tokenizer.ggml.bos_token_id"), c.bos);
    EXPECT_EQ(*f.GetUint("tokenizer.ggml.eos_token_id"), c.eos);
  }
  Result<std::vector<int32_t>> types = f.GetInt32Array("tokenizer.ggml.token_type");
  ASSERT_TRUE(types.ok()) << types.status().ToString();
  EXPECT_EQ(types->size(), tokens->size());
  // Every value is reachable and printable.
  for (const auto& [key, value] : f.metadata()) EXPECT_FALSE(value.DebugString().empty()) << key;
}

// Table from /work/shared/models/README.md; llama-bpe and qwen2 list only
// their tokenizer model / pre there.
INSTANTIATE_TEST_SUITE_P(
    AllVocabs, GgufVocabTest,
    testing::Values(VocabCase{"ggml-vocab-llama-spm.gguf", "llama", nullptr, 32000, 0, 1, 2},
                    VocabCase{"ggml-vocab-phi-3.gguf", "llama", nullptr, 32064, 0, 1, 32000},
                    VocabCase{"ggml-vocab-gpt-2.gguf", "gpt2", "gpt-2", 50257, 50000, 50256, 50256},
                    VocabCase{"ggml-vocab-falcon.gguf", "gpt2", "falcon", 65024, 64784, 11, 11},
                    VocabCase{"ggml-vocab-deepseek-coder.gguf", "gpt2", "deepseek-coder", 32256,
                              31757, 32013, 32014},
                    VocabCase{"ggml-vocab-starcoder.gguf", "gpt2", "starcoder", 49152, 48872, 0, 0},
                    VocabCase{"ggml-vocab-llama-bpe.gguf", "gpt2", "llama-bpe", 0, 0, 0, 0},
                    VocabCase{"ggml-vocab-qwen2.gguf", "gpt2", "qwen2", 0, 0, 0, 0}),
    [](const testing::TestParamInfo<VocabCase>& info) {
      std::string n = info.param.file;
      n = n.substr(std::strlen("ggml-vocab-"));
      n = n.substr(0, n.find('.'));
      for (char& ch : n) {
        if (ch == '-') ch = '_';
      }
      return n;
    });

TEST(GgufReaderTest, LlamaSpmHyperparameters) {
  GgufFile f = OpenOrDie(kModels + "/vocab/ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(*f.GetUint("llama.block_count"), 32u);
  EXPECT_EQ(*f.GetUint("llama.embedding_length"), 4096u);
  EXPECT_EQ(*f.GetUint("llama.context_length"), 4096u);
  EXPECT_EQ(*f.GetUint("llama.vocab_size"), 32000u);
  EXPECT_TRUE(*f.GetBool("tokenizer.ggml.add_bos_token"));
}

TEST(GgufReaderTest, GetterErrorsNameFileAndKey) {
  GgufFile f = OpenOrDie(kModels + "/stories260K.gguf");
  Result<uint64_t> missing = f.GetUint("llama.no_such_key");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("stories260K.gguf"), std::string::npos);
  EXPECT_NE(missing.status().message().find("missing required key 'llama.no_such_key'"),
            std::string::npos);

  Result<uint64_t> wrong = f.GetUint("general.name");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(wrong.status().message().find("key 'general.name' has type STRING"), std::string::npos);

  Result<std::vector<float>> not_floats = f.GetFloatArray("tokenizer.ggml.tokens");
  ASSERT_FALSE(not_floats.ok());
  EXPECT_NE(not_floats.status().message().find("ARRAY of STRING, expected ARRAY of FLOAT32"),
            std::string::npos);
  EXPECT_FALSE(f.GetStringArray("general.name").ok());
  EXPECT_FALSE(f.GetInt32Array("tokenizer.ggml.scores").ok());
  EXPECT_FALSE(f.GetBool("llama.block_count").ok());
  EXPECT_FALSE(f.GetString("llama.block_count").ok());
}

TEST(GgufReaderTest, MissingFileIsIoError) {
  Result<GgufFile> f = GgufFile::Open("/nonexistent/dir/model.gguf");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kIo);
  EXPECT_NE(f.status().message().find("/nonexistent/dir/model.gguf"), std::string::npos);
}

}  // namespace
}  // namespace mneme::gguf
