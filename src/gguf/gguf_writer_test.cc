// Writer round trips: every value type, nested arrays, tensors of several
// types and alignments go through Serialize / WriteFile and come back from the
// reader unchanged. Also pins the byte layout of a tiny file against a hand
// encoding, so the writer is not only checked against its own reader.
#include "gguf/gguf_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace mneme::gguf {
namespace {

GgufFile Parse(const GgufWriter& w, std::string name = "roundtrip.gguf") {
  std::vector<uint8_t> bytes = w.Serialize();
  Result<GgufFile> f = GgufFile::FromBytes(bytes, std::move(name));
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(f).value();
}

TEST(GgufWriterTest, EveryScalarTypeRoundTrips) {
  GgufWriter w;
  w.Set("u8", MetaValue::Uint8(255));
  w.Set("i8", MetaValue::Int8(-128));
  w.Set("u16", MetaValue::Uint16(65535));
  w.Set("i16", MetaValue::Int16(-32768));
  w.Set("u32", MetaValue::Uint32(4294967295u));
  w.Set("i32", MetaValue::Int32(std::numeric_limits<int32_t>::min()));
  w.Set("u64", MetaValue::Uint64(std::numeric_limits<uint64_t>::max()));
  w.Set("i64", MetaValue::Int64(std::numeric_limits<int64_t>::min()));
  w.Set("f32", MetaValue::Float32(1e-5f));
  w.Set("f64", MetaValue::Float64(-2.5e300));
  w.Set("t", MetaValue::Bool(true));
  w.Set("f", MetaValue::Bool(false));
  w.Set("s", MetaValue::String("h\xc3\xa9llo\n"));
  w.Set("empty", MetaValue::String(""));
  GgufFile f = Parse(w);

  ASSERT_EQ(f.metadata().size(), 14u);
  EXPECT_EQ(f.metadata()[0].first, "u8");  // file order is kept
  EXPECT_EQ(f.Find("u8")->type, ValueType::kUint8);
  EXPECT_EQ(*f.GetUint("u8"), 255u);
  EXPECT_EQ(*f.GetInt("i8"), -128);
  EXPECT_EQ(*f.GetUint("u16"), 65535u);
  EXPECT_EQ(*f.GetInt("i16"), -32768);
  EXPECT_EQ(*f.GetUint("u32"), 4294967295u);
  EXPECT_EQ(*f.GetInt("i32"), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(*f.GetUint("u64"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(*f.GetInt("i64"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(static_cast<float>(*f.GetFloat("f32")), 1e-5f);
  EXPECT_EQ(*f.GetFloat("f64"), -2.5e300);
  EXPECT_TRUE(*f.GetBool("t"));
  EXPECT_FALSE(*f.GetBool("f"));
  EXPECT_EQ(*f.GetString("s"), "h\xc3\xa9llo\n");
  EXPECT_EQ(*f.GetString("empty"), "");
  for (const char* k :
       {"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "t", "s"}) {
    EXPECT_EQ(ValueTypeName(f.Find(k)->type).empty(), false);
  }
  EXPECT_EQ(f.Find("f64")->type, ValueType::kFloat64);
  EXPECT_EQ(f.Find("i16")->type, ValueType::kInt16);

  // Conversions never truncate silently.
  EXPECT_FALSE(f.GetUint("i8").ok());  // negative
  EXPECT_FALSE(f.GetInt("u64").ok());  // > INT64_MAX
  EXPECT_FALSE(f.Find("i8")->AsUint().has_value());
  EXPECT_EQ(*f.GetInt("u32"), 4294967295);  // fits
  EXPECT_EQ(*f.GetFloat("u16"), 65535.0);   // integers are numbers
  EXPECT_FALSE(f.Find("t")->AsUint().has_value());
  EXPECT_FALSE(f.Find("u8")->AsBool().has_value());
}

TEST(GgufWriterTest, ArraysAndNestedArraysRoundTrip) {
  GgufWriter w;
  w.Set("tokens", MetaValue::StringArray({"<unk>", "a", "\xe2\x96\x81the", ""}));
  const float scores[] = {0.0f, -1.5f, 3.25f};
  w.Set("scores", MetaValue::Float32Array(scores));
  const int32_t types[] = {2, 1, -7};
  w.Set("types", MetaValue::Int32Array(types));
  w.Set("u8s", MetaValue::Array(ValueType::kUint8, {MetaValue::Uint8(1), MetaValue::Uint8(200)}));
  w.Set("empty", MetaValue::Array(ValueType::kUint64, {}));
  // [[1, 2], [], [["x"]]] — arrays of arrays of different element types.
  w.Set("nested",
        MetaValue::Array(
            ValueType::kArray,
            {MetaValue::Array(ValueType::kInt16, {MetaValue::Int16(1), MetaValue::Int16(2)}),
             MetaValue::Array(ValueType::kBool, {}),
             MetaValue::Array(ValueType::kArray, {MetaValue::StringArray({"x"})})}));
  GgufFile f = Parse(w);

  EXPECT_EQ(*f.GetStringArray("tokens"),
            (std::vector<std::string_view>{"<unk>", "a", "\xe2\x96\x81the", ""}));
  EXPECT_EQ(*f.GetFloatArray("scores"), (std::vector<float>{0.0f, -1.5f, 3.25f}));
  EXPECT_EQ(*f.GetInt32Array("types"), (std::vector<int32_t>{2, 1, -7}));
  EXPECT_EQ(*f.GetInt32Array("u8s"), (std::vector<int32_t>{1, 200}));  // any integer that fits
  EXPECT_TRUE(f.GetInt32Array("empty")->empty());
  EXPECT_FALSE(f.GetInt32Array("tokens").ok());

  const Array* nested = f.Find("nested")->AsArray();
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->element_type, ValueType::kArray);
  ASSERT_EQ(nested->items.size(), 3u);
  const Array* first = nested->items[0].AsArray();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->element_type, ValueType::kInt16);
  ASSERT_EQ(first->items.size(), 2u);
  EXPECT_EQ(*first->items[1].AsInt(), 2);
  EXPECT_EQ(nested->items[1].AsArray()->element_type, ValueType::kBool);
  EXPECT_TRUE(nested->items[1].AsArray()->items.empty());
  const Array* third = nested->items[2].AsArray();
  ASSERT_EQ(third->items.size(), 1u);
  EXPECT_EQ(*third->items[0].AsArray()->items[0].AsString(), "x");
  EXPECT_EQ(f.Find("nested")->DebugString(),
            "[[1, 2] (2 x INT16), [] (0 x BOOL), [[\"x\"] (1 x STRING)] (1 x ARRAY)] (3 x ARRAY)");
}

TEST(GgufWriterTest, SetReplacesInPlace) {
  GgufWriter w;
  w.Set("a", MetaValue::Uint32(1));
  w.Set("b", MetaValue::Uint32(2));
  w.Set("a", MetaValue::String("one"));
  GgufFile f = Parse(w);
  ASSERT_EQ(f.metadata().size(), 2u);
  EXPECT_EQ(f.metadata()[0].first, "a");
  EXPECT_EQ(*f.GetString("a"), "one");
}

TEST(GgufWriterTest, TensorsRoundTripWithAlignment) {
  for (uint32_t alignment : {1u, 8u, 32u, 64u, 4096u}) {
    GgufWriter w(2);
    w.SetAlignment(alignment);
    std::vector<float> a = {1.0f, 2.0f, 3.0f};
    std::vector<float> b(4 * 5);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 0.5f;
    std::vector<uint8_t> q(2 * 34);  // two Q8_0 blocks
    for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<uint8_t>(i * 7);
    ASSERT_TRUE(w.AddTensorF32("a", {3}, a).ok());
    ASSERT_TRUE(w.AddTensorF32("b", {4, 5}, b).ok());
    ASSERT_TRUE(w.AddTensor("q", {32, 2}, TensorType::kQ8_0, q).ok());
    ASSERT_TRUE(w.AddTensor("empty", {0, 3}, TensorType::kF16, {}).ok());
    GgufFile f = Parse(w);

    EXPECT_EQ(f.version(), 2u);
    EXPECT_EQ(f.alignment(), alignment);
    EXPECT_EQ(f.data_offset() % alignment, 0u);
    ASSERT_EQ(f.tensors().size(), 4u);
    const TensorInfo* ta = f.FindTensor("a");
    const TensorInfo* tb = f.FindTensor("b");
    const TensorInfo* tq = f.FindTensor("q");
    ASSERT_TRUE(ta && tb && tq);
    EXPECT_EQ(tb->shape, (std::vector<uint64_t>{4, 5}));
    EXPECT_EQ(tb->num_elements, 20u);
    EXPECT_EQ(tq->type, TensorType::kQ8_0);
    EXPECT_EQ(tq->num_elements, 64u);
    EXPECT_EQ(tq->num_bytes, 68u);
    for (const TensorInfo& t : f.tensors()) EXPECT_EQ(t.offset % alignment, 0u) << t.name;
    auto da = f.TensorData(*ta);
    ASSERT_EQ(da.size(), 12u);
    EXPECT_EQ(std::memcmp(da.data(), a.data(), 12), 0);
    auto db = f.TensorData(*tb);
    ASSERT_EQ(db.size(), 80u);
    EXPECT_EQ(std::memcmp(db.data(), b.data(), 80), 0);
    auto dq = f.TensorData(*tq);
    EXPECT_EQ(std::vector<uint8_t>(dq.begin(), dq.end()), q);
    EXPECT_TRUE(f.TensorData(*f.FindTensor("empty")).empty());
  }
}

TEST(GgufWriterTest, AddTensorRejectsBadInput) {
  GgufWriter w;
  std::vector<float> three(3);
  EXPECT_EQ(w.AddTensorF32("x", {4}, three).code(), StatusCode::kInvalidArgument);  // size
  EXPECT_TRUE(w.AddTensorF32("x", {3}, three).ok());
  EXPECT_EQ(w.AddTensorF32("x", {3}, three).code(), StatusCode::kInvalidArgument);  // duplicate
  EXPECT_EQ(w.AddTensorF32("y", {1, 1, 1, 1, 3}, three).code(), StatusCode::kInvalidArgument);
  std::vector<uint8_t> q(18);
  EXPECT_EQ(w.AddTensor("q", {16}, TensorType::kQ4_0, q).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(w.AddTensor("q", {32}, static_cast<TensorType>(99), q).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(w.AddTensor("q", {32}, TensorType::kQ4_0, q).ok());
}

// The exact bytes of a tiny file, encoded by hand from the GGUF layout.
TEST(GgufWriterTest, ByteLayoutMatchesHandEncoding) {
  GgufWriter w;
  w.Set("k", MetaValue::Uint32(7));
  const float x = 1.0f;
  ASSERT_TRUE(w.AddTensorF32("t", {1}, std::span(&x, 1)).ok());
  std::vector<uint8_t> got = w.Serialize();
  std::vector<uint8_t> want = {
      'G', 'G', 'U', 'F', 3, 0, 0, 0,                // magic, version 3
      1,   0,   0,   0,   0, 0, 0, 0,                // n_tensors
      1,   0,   0,   0,   0, 0, 0, 0,                // n_kv
      1,   0,   0,   0,   0, 0, 0, 0, 'k',           // key
      4,   0,   0,   0,   7, 0, 0, 0,                // UINT32 7
      1,   0,   0,   0,   0, 0, 0, 0, 't',           // tensor name
      1,   0,   0,   0,   1, 0, 0, 0, 0,   0, 0, 0,  // n_dims 1, ne[0] = 1
      0,   0,   0,   0,                              // F32
      0,   0,   0,   0,   0, 0, 0, 0,                // offset 0
  };
  ASSERT_EQ(want.size(), 74u);  // 24 header + 17 kv + 33 tensor info
  want.resize(96, 0);           // pad to 32
  for (uint8_t b : {0x00, 0x00, 0x80, 0x3f}) want.push_back(b);  // 1.0f
  want.resize(128, 0);                                           // pad the tensor
  EXPECT_EQ(got, want);
}

TEST(GgufWriterTest, WriteFileThenOpen) {
  std::string path =
      ::testing::TempDir() + "gguf_writer_test_" + std::to_string(::getpid()) + ".gguf";
  GgufWriter w;
  w.Set("general.architecture", MetaValue::String("llama"));
  std::vector<float> v = {4.0f, 5.0f};
  ASSERT_TRUE(w.AddTensorF32("v", {2}, v).ok());
  ASSERT_TRUE(w.WriteFile(path).ok());
  Result<GgufFile> f = GgufFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->name(), path);
  EXPECT_EQ(*f->GetString("general.architecture"), "llama");
  float back[2];
  std::memcpy(back, f->TensorData(*f->FindTensor("v")).data(), 8);
  EXPECT_EQ(back[1], 5.0f);
  std::remove(path.c_str());
}

TEST(GgufWriterTest, DebugStrings) {
  GgufWriter w;
  w.Set("f", MetaValue::Float32(1e-5f));
  w.Set("s", MetaValue::String("a\"b\n"));
  w.Set("long", MetaValue::String(std::string(200, 'x')));
  std::vector<int32_t> many(20, 3);
  w.Set("many", MetaValue::Int32Array(many));
  GgufFile f = Parse(w);
  EXPECT_EQ(f.Find("f")->DebugString(), "1e-05");
  EXPECT_EQ(f.Find("s")->DebugString(), "\"a\\\"b\\n\"");
  EXPECT_EQ(f.Find("long")->DebugString(), "\"" + std::string(120, 'x') + "\"... (200 bytes)");
  EXPECT_EQ(f.Find("many")->DebugString(2), "[3, 3, ...] (20 x INT32)");
}

}  // namespace
}  // namespace mneme::gguf
