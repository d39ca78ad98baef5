// Writes the fuzzer's seed corpus (src/gguf/fuzz_corpus): small valid GGUFs
// made with GgufWriter, covering every value type, nested arrays, several
// tensor types and alignments, plus a few broken variants. Run once and check
// the files in:  build/bin/gguf_make_corpus src/gguf/fuzz_corpus
#include <cstdio>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"
#include "util/mapped_file.h"

namespace mneme::gguf {
namespace {

std::vector<uint8_t> AllValueTypes() {
  GgufWriter w;
  w.Set("u8", MetaValue::Uint8(7));
  w.Set("i8", MetaValue::Int8(-7));
  w.Set("u16", MetaValue::Uint16(700));
  w.Set("i16", MetaValue::Int16(-700));
  w.Set("u32", MetaValue::Uint32(70000));
  w.Set("i32", MetaValue::Int32(-70000));
  w.Set("u64", MetaValue::Uint64(uint64_t{1} << 40));
  w.Set("i64", MetaValue::Int64(-(int64_t{1} << 40)));
  w.Set("f32", MetaValue::Float32(0.5f));
  w.Set("f64", MetaValue::Float64(0.25));
  w.Set("b", MetaValue::Bool(true));
  w.Set("s", MetaValue::String("hello"));
  w.Set("nested",
        MetaValue::Array(ValueType::kArray,
                         {MetaValue::Array(ValueType::kUint8, {MetaValue::Uint8(1)}),
                          MetaValue::Array(ValueType::kArray, {MetaValue::StringArray({"x"})})}));
  return w.Serialize();
}

std::vector<uint8_t> TinyVocab(uint32_t version) {
  GgufWriter w(version);
  w.Set("general.architecture", MetaValue::String("llama"));
  w.Set("tokenizer.ggml.model", MetaValue::String("llama"));
  w.Set("tokenizer.ggml.tokens", MetaValue::StringArray({"<unk>", "<s>", "</s>", "a",
                                                         "\xe2\x96\x81"
                                                         "b"}));
  const float scores[] = {0, 0, 0, -1, -2};
  w.Set("tokenizer.ggml.scores", MetaValue::Float32Array(scores));
  const int32_t types[] = {2, 3, 3, 1, 1};
  w.Set("tokenizer.ggml.token_type", MetaValue::Int32Array(types));
  w.Set("tokenizer.ggml.bos_token_id", MetaValue::Uint32(1));
  w.Set("tokenizer.ggml.add_bos_token", MetaValue::Bool(true));
  return w.Serialize();
}

std::vector<uint8_t> TinyModel(uint32_t alignment) {
  GgufWriter w;
  w.SetAlignment(alignment);
  w.Set("general.architecture", MetaValue::String("llama"));
  w.Set("llama.embedding_length", MetaValue::Uint32(8));
  w.Set("llama.block_count", MetaValue::Uint32(1));
  std::vector<float> v(8 * 4, 0.5f);
  CHECK(w.AddTensorF32("token_embd.weight", {8, 4}, v).ok());
  CHECK(w.AddTensorF32("output_norm.weight", {8}, std::span(v).first(8)).ok());
  std::vector<uint8_t> q8(34, 1);
  CHECK(w.AddTensor("blk.0.attn_q.weight", {32}, TensorType::kQ8_0, q8).ok());
  std::vector<uint8_t> f16(4 * 2, 0);
  CHECK(w.AddTensor("blk.0.attn_norm.weight", {2, 2}, TensorType::kF16, f16).ok());
  return w.Serialize();
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files = {
      {"valid_all_value_types.gguf", AllValueTypes()}, {"valid_vocab_v3.gguf", TinyVocab(3)},
      {"valid_vocab_v2.gguf", TinyVocab(2)},           {"valid_model_align32.gguf", TinyModel(32)},
      {"valid_model_align8.gguf", TinyModel(8)},
  };
  // Broken variants: truncated data, a bad tensor type, a bad version.
  std::vector<uint8_t> truncated = TinyModel(32);
  truncated.resize(truncated.size() - 40);
  files.emplace_back("bad_truncated_model.gguf", truncated);
  std::vector<uint8_t> bad_version = TinyVocab(3);
  bad_version[4] = 1;
  files.emplace_back("bad_version1.gguf", bad_version);
  std::vector<uint8_t> cut_header = TinyVocab(3);
  cut_header.resize(60);
  files.emplace_back("bad_cut_in_metadata.gguf", cut_header);
  for (const auto& [name, bytes] : files) {
    std::string path = dir + "/" + name;
    Status s = WriteStringToFile(
        path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
  }
  return 0;
}

}  // namespace
}  // namespace mneme::gguf

int main(int argc, char** argv) {
  return mneme::gguf::Main(argc, argv);
}
