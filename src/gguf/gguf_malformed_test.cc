// Malformed GGUF files: each test hand-builds (or mutates) a broken file and
// checks that the reader refuses it with the right code and a message that
// names the file and says what is wrong. None of them may crash, hang or
// allocate absurdly (the sanitizer build and the fuzzer watch for that).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <limits>

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"

namespace mneme::gguf {
namespace {

constexpr uint32_t kU8 = 0, kU32 = 4, kBool = 7, kStr = 8, kArr = 9;

// Little-endian byte builder for hand-made files.
struct Bytes {
  std::vector<uint8_t> b;
  Bytes& Raw(std::string_view s) {
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  template <typename T>
  Bytes& Put(T v) {
    uint8_t buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));
    b.insert(b.end(), buf, buf + sizeof(T));
    return *this;
  }
  Bytes& U8(uint8_t v) { return Put(v); }
  Bytes& U32(uint32_t v) { return Put(v); }
  Bytes& U64(uint64_t v) { return Put(v); }
  Bytes& Str(std::string_view s) { return U64(s.size()).Raw(s); }
  Bytes& Header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return Raw("GGUF").U32(version).U64(n_tensors).U64(n_kv);
  }
  // One tensor info: name, dims, type, offset.
  Bytes& Tensor(std::string_view name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    Str(name).U32(static_cast<uint32_t>(ne.size()));
    for (uint64_t n : ne) U64(n);
    return U32(type).U64(offset);
  }
  Bytes& PadTo(size_t size) {
    b.resize(size, 0);
    return *this;
  }
};

// The file name used in errors: the test's own name, so a message from the
// wrong case cannot pass.
std::string CaseName() {
  return std::string(testing::UnitTest::GetInstance()->current_test_info()->name()) + ".gguf";
}

void ExpectError(const std::vector<uint8_t>& bytes, StatusCode code, std::string_view phrase) {
  std::string name = CaseName();
  Result<GgufFile> f = GgufFile::FromBytes(bytes, name);
  ASSERT_FALSE(f.ok()) << "accepted a malformed file";
  const std::string m = f.status().message();
  testing::Test::RecordProperty("message", m);  // visible with --gtest_output=xml
  EXPECT_EQ(f.status().code(), code) << f.status().ToString();
  EXPECT_EQ(m.rfind(name + ": ", 0), 0u) << "message does not start with the file name: " << m;
  EXPECT_NE(m.find(phrase), std::string::npos) << "missing '" << phrase << "' in: " << m;
}

void ExpectDataLoss(const Bytes& bytes, std::string_view phrase) {
  ExpectError(bytes.b, StatusCode::kDataLoss, phrase);
}

// ---- header ----

TEST(GgufMalformedTest, EmptyFile) {
  ExpectDataLoss(Bytes{}, "truncated header");
}

TEST(GgufMalformedTest, ShorterThanMagic) {
  ExpectDataLoss(Bytes{}.Raw("GGU"), "truncated header");
}

TEST(GgufMalformedTest, BadMagic) {
  ExpectDataLoss(Bytes{}.Raw("GGML").U32(3).U64(0).U64(0), "bad magic: expected \"GGUF\"");
}

TEST(GgufMalformedTest, VersionOneIsUnsupported) {
  ExpectError(Bytes{}.Header(0, 0, 1).b, StatusCode::kUnimplemented, "unsupported version 1");
}

TEST(GgufMalformedTest, FutureVersionIsUnsupported) {
  ExpectError(Bytes{}.Header(0, 0, 4).b, StatusCode::kUnimplemented, "unsupported version 4");
}

TEST(GgufMalformedTest, BigEndianVersion) {
  ExpectError(Bytes{}.Header(0, 0, 0x03000000).b, StatusCode::kUnimplemented, "big-endian");
}

TEST(GgufMalformedTest, TruncatedCounts) {
  ExpectDataLoss(Bytes{}.Raw("GGUF").U32(3).U64(0), "truncated header (counts)");
}

TEST(GgufMalformedTest, AbsurdKvCount) {
  ExpectDataLoss(Bytes{}.Header(0, uint64_t{1} << 60).Str("a").U32(kU8).U8(1),
                 "n_kv = 1152921504606846976 is absurd");
}

TEST(GgufMalformedTest, AbsurdTensorCount) {
  ExpectDataLoss(Bytes{}.Header(std::numeric_limits<uint64_t>::max(), 0).PadTo(200),
                 "n_tensors = 18446744073709551615 is absurd: the 176 bytes after the header could "
                 "hold at most 7 tensor infos");
}

TEST(GgufMalformedTest, CountsTogetherTooLarge) {
  // Each count alone could fit in 100 bytes, both together cannot.
  ExpectDataLoss(
      Bytes{}.Header(3, 5).PadTo(24 + 100),
      "n_tensors = 3 is absurd: the 100 bytes after the header cannot hold 5 metadata entries");
}

// ---- metadata ----

TEST(GgufMalformedTest, KeyLengthPastEnd) {
  ExpectDataLoss(Bytes{}.Header(0, 1).U64(1000).Raw("abc").PadTo(40),
                 "metadata key #0 length 1000 at offset 24 runs past the end of the file");
}

TEST(GgufMalformedTest, StringValuePastEnd) {
  ExpectDataLoss(Bytes{}.Header(0, 1).Str("name").U32(kStr).U64(uint64_t{1} << 63).Raw("x"),
                 "string value of key 'name' length 9223372036854775808");
}

TEST(GgufMalformedTest, ArrayCountPastEnd) {
  ExpectDataLoss(Bytes{}.Header(0, 1).Str("tokens").U32(kArr).U32(kStr).U64(1000).Str("a").Str("b"),
                 "key 'tokens': array of 1000 STRING");
}

TEST(GgufMalformedTest, HugeByteArrayAllocatesNothing) {
  ExpectDataLoss(Bytes{}.Header(0, 1).Str("blob").U32(kArr).U32(kU8).U64(uint64_t{1} << 62).U8(0),
                 "runs past the end of the file");
}

TEST(GgufMalformedTest, TruncatedScalarValue) {
  ExpectDataLoss(Bytes{}.Header(0, 1).Str("n").U32(10).U32(7), "truncated value of key 'n'");
}

TEST(GgufMalformedTest, UnknownValueType) {
  ExpectDataLoss(Bytes{}.Header(0, 1).Str("k").U32(13).U64(0),
                 "key 'k': unknown metadata value type 13");
}

TEST(GgufMalformedTest, UnknownArrayElementType) {
  ExpectDataLoss(Bytes{}.Header(0, 1).Str("k").U32(kArr).U32(0xdead).U64(0),
                 "unknown metadata value type 57005 for array elements");
}

TEST(GgufMalformedTest, ArraysNestedTooDeep) {
  Bytes b;
  b.Header(0, 1).Str("deep").U32(kArr);
  for (int i = 0; i < 20; ++i) b.U32(kArr).U64(1);
  b.U32(kU8).U64(0);
  ExpectDataLoss(b, "arrays nested deeper than 8 levels");
}

TEST(GgufMalformedTest, NestedArraysAtTheLimitAreFine) {
  Bytes b;
  b.Header(0, 1).Str("deep").U32(kArr);
  for (int i = 0; i < kMaxArrayNesting - 1; ++i) b.U32(kArr).U64(1);
  b.U32(kU8).U64(1).U8(42);
  Result<GgufFile> f = GgufFile::FromBytes(b.b, CaseName());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
}

TEST(GgufMalformedTest, DuplicateKey) {
  ExpectDataLoss(Bytes{}.Header(0, 2).Str("a").U32(kU8).U8(1).Str("a").U32(kU8).U8(2),
                 "duplicate metadata key 'a'");
}

TEST(GgufMalformedTest, InvalidBool) {
  ExpectDataLoss(Bytes{}.Header(0, 1).Str("flag").U32(kBool).U8(2), "invalid bool value 2");
}

TEST(GgufMalformedTest, AlignmentOfWrongType) {
  ExpectDataLoss(Bytes{}.Header(0, 1).Str("general.alignment").U32(kStr).Str("32"),
                 "general.alignment has type STRING, expected UINT32");
}

TEST(GgufMalformedTest, AlignmentZero) {
  ExpectDataLoss(Bytes{}.Header(0, 1).Str("general.alignment").U32(kU32).U32(0),
                 "general.alignment = 0 is not a non-zero power of two");
}

TEST(GgufMalformedTest, AlignmentNotPowerOfTwo) {
  ExpectDataLoss(Bytes{}.Header(0, 1).Str("general.alignment").U32(kU32).U32(48),
                 "general.alignment = 48 is not a non-zero power of two");
}

TEST(GgufMalformedTest, BinaryKeyIsEscapedInMessage) {
  ExpectDataLoss(Bytes{}.Header(0, 1).Str(std::string_view("a\n\x01", 3)).U32(99),
                 "key 'a\\x0a\\x01': unknown metadata value type 99");
}

// ---- tensor infos ----

TEST(GgufMalformedTest, TooManyDims) {
  ExpectDataLoss(Bytes{}.Header(1, 0).Tensor("t", {1, 1, 1, 1, 1}, 0, 0).PadTo(128),
                 "tensor 't': n_dims = 5 is too large (ggml allows at most 4 dimensions)");
}

TEST(GgufMalformedTest, UnknownTensorType) {
  ExpectDataLoss(Bytes{}.Header(1, 0).Tensor("t", {4}, 99, 0).PadTo(128),
                 "tensor 't': unknown tensor type 99");
}

TEST(GgufMalformedTest, RemovedTensorTypeQ4_2IsUnknown) {
  ExpectDataLoss(Bytes{}.Header(1, 0).Tensor("t", {32}, 4, 0).PadTo(128), "unknown tensor type 4");
}

TEST(GgufMalformedTest, DimensionProductOverflows) {
  ExpectDataLoss(
      Bytes{}.Header(1, 0).Tensor("t", {uint64_t{1} << 32, uint64_t{1} << 32}, 0, 0).PadTo(128),
      "dimensions [4294967296, 4294967296] overflow");
}

TEST(GgufMalformedTest, NegativeDimensionOverflows) {
  ExpectDataLoss(
      Bytes{}.Header(1, 0).Tensor("t", {std::numeric_limits<uint64_t>::max()}, 0, 0).PadTo(128),
      "overflow");
}

TEST(GgufMalformedTest, ByteSizeOverflows) {
  // 2^62 F32 elements fit in int64, their 2^64 bytes do not.
  ExpectDataLoss(
      Bytes{}.Header(1, 0).Tensor("t", {uint64_t{1} << 31, uint64_t{1} << 31}, 0, 0).PadTo(128),
      "the byte size does not fit in int64");
}

TEST(GgufMalformedTest, RowNotMultipleOfBlockSize) {
  ExpectDataLoss(Bytes{}.Header(1, 0).Tensor("q", {16, 2}, 2, 0).PadTo(128),
                 "tensor 'q': first dimension 16 is not a multiple of the Q4_0 block size 32");
}

TEST(GgufMalformedTest, DuplicateTensorName) {
  ExpectDataLoss(Bytes{}.Header(2, 0).Tensor("t", {4}, 0, 0).Tensor("t", {4}, 0, 32).PadTo(256),
                 "duplicate tensor name 't'");
}

TEST(GgufMalformedTest, MisalignedOffset) {
  ExpectDataLoss(Bytes{}.Header(1, 0).Tensor("t", {4}, 0, 4).PadTo(128),
                 "tensor 't': data offset 4 is misaligned (not a multiple of the alignment 32)");
}

TEST(GgufMalformedTest, TruncatedTensorInfo) {
  Bytes b;
  b.Header(1, 0).Tensor("t", {4, 4}, 0, 0);
  b.b.resize(b.b.size() - 10);  // cut inside the type/offset fields
  ExpectDataLoss(b, "truncated");
}

TEST(GgufMalformedTest, TensorDataPastEnd) {
  // 64 floats need 256 bytes; the file ends 16 bytes into the data section.
  Bytes b;
  b.Header(1, 0).Tensor("w", {64}, 0, 0);
  size_t data_start = (b.b.size() + 31) / 32 * 32;
  ExpectDataLoss(b.PadTo(data_start + 16),
                 "tensor 'w': data out of bounds: 256 bytes at data offset 0");
}

TEST(GgufMalformedTest, TensorOffsetFarPastEnd) {
  // An aligned offset near 2^64 must not wrap around in the bounds check.
  ExpectDataLoss(Bytes{}
                     .Header(1, 0)
                     .Tensor("w", {1}, 0, std::numeric_limits<uint64_t>::max() - 31)
                     .PadTo(256),
                 "data out of bounds");
}

TEST(GgufMalformedTest, OverlappingTensors) {
  // a: bytes [0, 64), b: bytes [32, 96) of the data section.
  ExpectDataLoss(Bytes{}.Header(2, 0).Tensor("a", {16}, 0, 0).Tensor("b", {16}, 0, 32).PadTo(512),
                 "tensors 'a' and 'b' overlap in the data section");
}

TEST(GgufMalformedTest, TensorInsideAnother) {
  // big covers [0, 256); small at 64 and c at 128 both sit inside it.
  ExpectDataLoss(Bytes{}
                     .Header(3, 0)
                     .Tensor("small", {4}, 0, 64)
                     .Tensor("big", {64}, 0, 0)
                     .Tensor("c", {4}, 0, 128)
                     .PadTo(1024),
                 "tensors 'big' and 'small' overlap");
}

// ---- mutations of a valid writer output ----

std::vector<uint8_t> ValidModel() {
  GgufWriter w;
  w.Set("general.architecture", MetaValue::String("llama"));
  std::vector<float> v(8, 1.0f);
  EXPECT_TRUE(w.AddTensorF32("a", {8}, v).ok());
  EXPECT_TRUE(w.AddTensorF32("b", {8}, v).ok());
  return w.Serialize();
}

TEST(GgufMalformedTest, ValidModelParses) {
  Result<GgufFile> f = GgufFile::FromBytes(ValidModel(), CaseName());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
}

TEST(GgufMalformedTest, EveryTruncationOfAValidModelFails) {
  std::vector<uint8_t> good = ValidModel();
  // b's 32 bytes end exactly at the end of the file (no padding needed), so
  // every proper prefix is broken somewhere.
  ASSERT_EQ(good.size(), 224u);
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + static_cast<ptrdiff_t>(n));
    Result<GgufFile> f = GgufFile::FromBytes(cut, CaseName());
    ASSERT_FALSE(f.ok()) << "accepted a file cut at " << n;
    EXPECT_EQ(f.status().code(), StatusCode::kDataLoss) << n;
    EXPECT_EQ(f.status().message().rfind(CaseName() + ": ", 0), 0u) << f.status().message();
  }
}

TEST(GgufMalformedTest, MutatedTensorTypeInValidModel) {
  std::vector<uint8_t> bytes = ValidModel();
  // Tensor "a" info follows the header and the one kv pair: name (8+1),
  // n_dims (4), ne (8), then the type.
  size_t kv = 8 + 20 + 4 + 8 + 5;
  size_t type_at = 24 + kv + 9 + 4 + 8;
  ASSERT_EQ(bytes[type_at], 0);  // F32
  bytes[type_at] = 77;
  ExpectError(bytes, StatusCode::kDataLoss, "tensor 'a': unknown tensor type 77");
}

// ---- through the file system: the path is the name ----

TEST(GgufMalformedTest, OpenNamesThePath) {
  std::string path = testing::TempDir() + "gguf_malformed_" + std::to_string(::getpid()) + ".gguf";
  std::vector<uint8_t> bytes = Bytes{}.Raw("NOPE").U32(3).U64(0).U64(0).b;
  ASSERT_TRUE(WriteStringToFile(
                  path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()))
                  .ok());
  Result<GgufFile> f = GgufFile::Open(path);
  std::remove(path.c_str());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(f.status().message(),
            path + ": bad magic: expected \"GGUF\" (47 47 55 46), got 4e 4f 50 45");
}

TEST(GgufMalformedTest, MissingRequiredKey) {
  Result<GgufFile> f = GgufFile::FromBytes(Bytes{}.Header(0, 0).b, CaseName());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  Result<std::string_view> s = f->GetString("general.architecture");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(s.status().message(), CaseName() + ": missing required key 'general.architecture'");
  EXPECT_EQ(f->GetStringArray("tokenizer.ggml.tokens").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace mneme::gguf
