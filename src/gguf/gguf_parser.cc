// The GGUF parser: turns untrusted bytes into a fully validated GgufFile.
//
// Everything a later accessor relies on is checked here, once:
//
//   header      magic, version (2 or 3), n_kv and n_tensors bounded by what
//               the remaining bytes could hold *before* anything is allocated
//   metadata    key and string lengths against the end of the file, known
//               value types, array counts bounded by remaining bytes / the
//               smallest element size, nesting depth, bools 0/1, unique keys,
//               general.alignment a UINT32 non-zero power of two
//   tensors     unique names, n_dims <= 4, known types, dimension products
//               without overflow, first dimension a multiple of the block
//               size, offsets aligned, data inside the file, no overlaps
//
// All reads go through Cursor, which never reads past the end; every failure
// becomes a DATA_LOSS (UNIMPLEMENTED for a version we do not speak) whose
// message starts with the file name and gives the offset where it went wrong.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

#include "gguf/gguf.h"

namespace mneme::gguf {

static_assert(std::endian::native == std::endian::little,
              "GGUF is read in place: little-endian hosts only");

namespace {

constexpr uint64_t kHeaderSize = 4 + 4 + 8 + 8;
constexpr uint64_t kMinKvSize = 8 + 4 + 1;              // empty key, type, one byte value
constexpr uint64_t kMinTensorInfoSize = 8 + 4 + 4 + 8;  // empty name, n_dims=0, type, offset
constexpr uint64_t kMaxInt64 = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// Printable, bounded rendering of a name from the file for error messages.
std::string Printable(std::string_view s) {
  std::string out = "'";
  size_t n = std::min<size_t>(s.size(), 80);
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f || c == '\'') {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (n < s.size()) out += "...";
  out += "'";
  return out;
}

// Smallest number of bytes one element of `t` can take in the file.
uint64_t MinElementSize(ValueType t) {
  switch (t) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kBool: return 1;
    case ValueType::kUint16:
    case ValueType::kInt16: return 2;
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32: return 4;
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64:
    case ValueType::kString: return 8;  // the length prefix
    case ValueType::kArray: return 4 + 8;
  }
  return 1;
}

bool IsKnownValueType(uint32_t t) {
  return t <= static_cast<uint32_t>(ValueType::kFloat64);
}

}  // namespace

// Bounds-checked little-endian reads over the file. Parser is a friend of
// GgufFile and fills its private fields.
class Parser {
 public:
  explicit Parser(GgufFile& file) : f_(file), bytes_(file.bytes_) {}

  Status Run();

 private:
  uint64_t remaining() const { return bytes_.size() - pos_; }

  Status Fail(std::string what) const { return f_.Error(StatusCode::kDataLoss, what); }
  Status Truncated(std::string_view what, uint64_t need) const {
    return Fail("truncated " + std::string(what) + ": need " + std::to_string(need) +
                " bytes at offset " + std::to_string(pos_) + " but the file ends at " +
                std::to_string(bytes_.size()));
  }

  template <typename T>
  T Load() {  // caller checked remaining() >= sizeof(T)
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  // `what` names the field for error messages; it is a string or a callable
  // returning one, so hot loops build no strings unless something fails.
  template <typename What>
  static std::string Describe(const What& what) {
    if constexpr (std::is_invocable_v<What>) {
      return what();
    } else {
      return std::string(what);
    }
  }
  template <typename T, typename What>
  Status Read(T* out, const What& what) {
    if (remaining() < sizeof(T)) return Truncated(Describe(what), sizeof(T));
    *out = Load<T>();
    return Status::Ok();
  }
  template <typename What>
  Status ReadString(std::string_view* out, const What& what);
  Status ReadValue(ValueType type, int depth, std::string_view key, Value* out);
  Status ReadArray(int depth, std::string_view key, Value* out);

  Status ReadHeader(uint64_t* n_tensors, uint64_t* n_kv);
  Status ReadMetadata(uint64_t n_kv);
  Status ReadAlignment();
  Status ReadTensorInfos(uint64_t n_tensors);
  Status ReadTensorInfo(size_t index, TensorInfo* t);
  Status CheckTensorData();

  GgufFile& f_;
  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
};

template <typename What>
Status Parser::ReadString(std::string_view* out, const What& what) {
  uint64_t start = pos_;
  if (remaining() < sizeof(uint64_t))
    return Truncated(Describe(what) + " length", sizeof(uint64_t));
  uint64_t len = Load<uint64_t>();
  if (len > remaining()) {
    return Fail(Describe(what) + " length " + std::to_string(len) + " at offset " +
                std::to_string(start) + " runs past the end of the file (" +
                std::to_string(remaining()) + " bytes left)");
  }
  *out = std::string_view(reinterpret_cast<const char*>(bytes_.data() + pos_), len);
  pos_ += len;
  return Status::Ok();
}

Status Parser::ReadHeader(uint64_t* n_tensors, uint64_t* n_kv) {
  if (bytes_.size() < 4) return Truncated("header (magic)", 4);
  if (std::memcmp(bytes_.data(), "GGUF", 4) != 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf,
                  "bad magic: expected \"GGUF\" (47 47 55 46), got %02x %02x %02x %02x", bytes_[0],
                  bytes_[1], bytes_[2], bytes_[3]);
    return Fail(buf);
  }
  pos_ = 4;
  uint32_t version = 0;
  MNEME_RETURN_IF_ERROR(Read(&version, "header (version)"));
  if (version != 2 && version != 3) {
    std::string what = "unsupported version " + std::to_string(version) + " (supported: 2 and 3)";
    if (version == 1) what += "; GGUF v1 is obsolete, convert the file with a current llama.cpp";
    if (version > 0xffff && __builtin_bswap32(version) <= 3) what += "; is this a big-endian file?";
    return f_.Error(StatusCode::kUnimplemented, what);
  }
  f_.version_ = version;
  if (bytes_.size() < kHeaderSize) return Truncated("header (counts)", kHeaderSize - pos_);
  *n_tensors = Load<uint64_t>();
  *n_kv = Load<uint64_t>();
  // Bound the counts by what the rest of the file could hold before we
  // reserve anything for them.
  uint64_t left = remaining();
  if (*n_kv > left / kMinKvSize) {
    return Fail("n_kv = " + std::to_string(*n_kv) + " is absurd: the " + std::to_string(left) +
                " bytes after the header could hold at most " + std::to_string(left / kMinKvSize) +
                " metadata entries");
  }
  if (*n_tensors > left / kMinTensorInfoSize) {
    return Fail("n_tensors = " + std::to_string(*n_tensors) + " is absurd: the " +
                std::to_string(left) + " bytes after the header could hold at most " +
                std::to_string(left / kMinTensorInfoSize) + " tensor infos");
  }
  if (*n_kv * kMinKvSize + *n_tensors * kMinTensorInfoSize > left) {
    return Fail("n_tensors = " + std::to_string(*n_tensors) + " is absurd: the " +
                std::to_string(left) + " bytes after the header cannot hold " +
                std::to_string(*n_kv) + " metadata entries and that many tensor infos");
  }
  return Status::Ok();
}

Status Parser::ReadArray(int depth, std::string_view key, Value* out) {
  if (depth >= kMaxArrayNesting) {
    return Fail("key " + Printable(key) + ": arrays nested deeper than " +
                std::to_string(kMaxArrayNesting) + " levels (nesting depth limit)");
  }
  uint64_t start = pos_;
  uint32_t raw_type = 0;
  uint64_t count = 0;
  MNEME_RETURN_IF_ERROR(
      Read(&raw_type, [&] { return "array element type of key " + Printable(key); }));
  if (!IsKnownValueType(raw_type)) {
    return Fail("key " + Printable(key) + ": unknown metadata value type " +
                std::to_string(raw_type) + " for array elements at offset " +
                std::to_string(start));
  }
  MNEME_RETURN_IF_ERROR(Read(&count, [&] { return "array count of key " + Printable(key); }));
  auto elem = static_cast<ValueType>(raw_type);
  uint64_t min_size = MinElementSize(elem);
  if (count > remaining() / min_size) {
    return Fail("key " + Printable(key) + ": array of " + std::to_string(count) + " " +
                std::string(ValueTypeName(elem)) + " at offset " + std::to_string(start) +
                " runs past the end of the file (" + std::to_string(remaining()) +
                " bytes left, each element needs at least " + std::to_string(min_size) + ")");
  }
  auto array = std::make_shared<Array>();
  array->element_type = elem;
  array->items.resize(count);
  for (Value& item : array->items) {
    MNEME_RETURN_IF_ERROR(ReadValue(elem, depth + 1, key, &item));
  }
  out->v = std::shared_ptr<const Array>(std::move(array));
  return Status::Ok();
}

Status Parser::ReadValue(ValueType type, int depth, std::string_view key, Value* out) {
  out->type = type;
  auto what = [&] { return "value of key " + Printable(key); };
  auto need = [&](uint64_t n) -> Status {
    return remaining() < n ? Truncated(what(), n) : Status::Ok();
  };
  switch (type) {
    case ValueType::kUint8:
      MNEME_RETURN_IF_ERROR(need(1));
      out->v = uint64_t{Load<uint8_t>()};
      break;
    case ValueType::kUint16:
      MNEME_RETURN_IF_ERROR(need(2));
      out->v = uint64_t{Load<uint16_t>()};
      break;
    case ValueType::kUint32:
      MNEME_RETURN_IF_ERROR(need(4));
      out->v = uint64_t{Load<uint32_t>()};
      break;
    case ValueType::kUint64:
      MNEME_RETURN_IF_ERROR(need(8));
      out->v = Load<uint64_t>();
      break;
    case ValueType::kInt8:
      MNEME_RETURN_IF_ERROR(need(1));
      out->v = int64_t{Load<int8_t>()};
      break;
    case ValueType::kInt16:
      MNEME_RETURN_IF_ERROR(need(2));
      out->v = int64_t{Load<int16_t>()};
      break;
    case ValueType::kInt32:
      MNEME_RETURN_IF_ERROR(need(4));
      out->v = int64_t{Load<int32_t>()};
      break;
    case ValueType::kInt64:
      MNEME_RETURN_IF_ERROR(need(8));
      out->v = Load<int64_t>();
      break;
    case ValueType::kFloat32:
      MNEME_RETURN_IF_ERROR(need(4));
      out->v = double{Load<float>()};
      break;
    case ValueType::kFloat64:
      MNEME_RETURN_IF_ERROR(need(8));
      out->v = Load<double>();
      break;
    case ValueType::kBool: {
      MNEME_RETURN_IF_ERROR(need(1));
      uint8_t b = Load<uint8_t>();
      if (b > 1) {
        return Fail("key " + Printable(key) + ": invalid bool value " + std::to_string(b) +
                    " at offset " + std::to_string(pos_ - 1) + " (must be 0 or 1)");
      }
      out->v = b == 1;
      break;
    }
    case ValueType::kString: {
      std::string_view s;
      MNEME_RETURN_IF_ERROR(ReadString(&s, [&] { return "string " + what(); }));
      out->v = s;
      break;
    }
    case ValueType::kArray: return ReadArray(depth, key, out);
  }
  return Status::Ok();
}

Status Parser::ReadMetadata(uint64_t n_kv) {
  f_.metadata_.reserve(n_kv);
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string_view key;
    MNEME_RETURN_IF_ERROR(ReadString(&key, [&] { return "metadata key #" + std::to_string(i); }));
    uint64_t type_at = pos_;
    uint32_t raw_type = 0;
    MNEME_RETURN_IF_ERROR(Read(&raw_type, [&] { return "value type of key " + Printable(key); }));
    if (!IsKnownValueType(raw_type)) {
      return Fail("key " + Printable(key) + ": unknown metadata value type " +
                  std::to_string(raw_type) + " at offset " + std::to_string(type_at));
    }
    Value value;
    MNEME_RETURN_IF_ERROR(ReadValue(static_cast<ValueType>(raw_type), 0, key, &value));
    if (!f_.metadata_index_.emplace(key, f_.metadata_.size()).second) {
      return Fail("duplicate metadata key " + Printable(key));
    }
    f_.metadata_.emplace_back(key, std::move(value));
  }
  return Status::Ok();
}

Status Parser::ReadAlignment() {
  const Value* a = f_.Find("general.alignment");
  if (a == nullptr) {
    f_.alignment_ = kDefaultAlignment;
    return Status::Ok();
  }
  if (a->type != ValueType::kUint32) {
    return Fail("general.alignment has type " + std::string(ValueTypeName(a->type)) +
                ", expected UINT32");
  }
  uint64_t v = *a->AsUint();
  if (v == 0 || !std::has_single_bit(v)) {
    return Fail("general.alignment = " + std::to_string(v) + " is not a non-zero power of two");
  }
  f_.alignment_ = v;
  return Status::Ok();
}

Status Parser::ReadTensorInfo(size_t index, TensorInfo* t) {
  MNEME_RETURN_IF_ERROR(
      ReadString(&t->name, [&] { return "name of tensor #" + std::to_string(index); }));
  std::string who = "tensor " + Printable(t->name);
  uint32_t n_dims = 0;
  MNEME_RETURN_IF_ERROR(Read(&n_dims, "n_dims of " + who));
  if (n_dims > kMaxDims) {
    return Fail(who + ": n_dims = " + std::to_string(n_dims) +
                " is too large (ggml allows at most " + std::to_string(kMaxDims) + " dimensions)");
  }
  t->shape.resize(n_dims);
  uint64_t n = 1;
  bool overflow = false;
  for (uint32_t d = 0; d < n_dims; ++d) {
    MNEME_RETURN_IF_ERROR(Read(&t->shape[d], "shape of " + who));
    uint64_t ne = t->shape[d];
    if (ne > kMaxInt64 || (ne != 0 && n > kMaxInt64 / ne)) overflow = true;
    if (!overflow) n *= ne;
  }
  uint64_t type_at = pos_;
  uint32_t raw_type = 0;
  MNEME_RETURN_IF_ERROR(Read(&raw_type, "type of " + who));
  MNEME_RETURN_IF_ERROR(Read(&t->offset, "data offset of " + who));
  std::string dims;
  for (uint64_t ne : t->shape) dims += (dims.empty() ? "" : ", ") + std::to_string(ne);
  if (overflow) {
    return Fail(who + ": dimensions [" + dims +
                "] overflow: the element count does not fit in int64");
  }
  const TensorTypeInfo* info = FindTensorTypeInfo(raw_type);
  if (info == nullptr) {
    return Fail(who + ": unknown tensor type " + std::to_string(raw_type) + " at offset " +
                std::to_string(type_at));
  }
  t->type = static_cast<TensorType>(raw_type);
  uint64_t ne0 = n_dims > 0 ? t->shape[0] : 1;
  if (ne0 % info->block_size != 0) {
    return Fail(who + ": first dimension " + std::to_string(ne0) + " is not a multiple of the " +
                std::string(info->name) + " block size " + std::to_string(info->block_size));
  }
  uint64_t blocks = n / info->block_size;
  if (blocks > kMaxInt64 / info->type_size) {
    return Fail(who + ": dimensions [" + dims + "] overflow: the byte size does not fit in int64");
  }
  t->num_elements = n;
  t->num_bytes = blocks * info->type_size;
  if (t->offset % f_.alignment_ != 0) {
    return Fail(who + ": data offset " + std::to_string(t->offset) +
                " is misaligned (not a multiple of the alignment " + std::to_string(f_.alignment_) +
                ")");
  }
  return Status::Ok();
}

Status Parser::ReadTensorInfos(uint64_t n_tensors) {
  f_.tensors_.resize(n_tensors);
  for (size_t i = 0; i < f_.tensors_.size(); ++i) {
    TensorInfo& t = f_.tensors_[i];
    MNEME_RETURN_IF_ERROR(ReadTensorInfo(i, &t));
    if (!f_.tensor_index_.emplace(t.name, i).second) {
      return Fail("duplicate tensor name " + Printable(t.name));
    }
  }
  return Status::Ok();
}

Status Parser::CheckTensorData() {
  // The data section starts at the first aligned offset after the infos. A
  // file without tensors may end before it (vocab-only files do).
  uint64_t a = f_.alignment_;
  f_.data_offset_ = (pos_ + a - 1) / a * a;  // pos_ <= 2^63, a <= 2^31: no overflow
  uint64_t size = bytes_.size();
  std::vector<size_t> order;
  order.reserve(f_.tensors_.size());
  for (size_t i = 0; i < f_.tensors_.size(); ++i) {
    const TensorInfo& t = f_.tensors_[i];
    bool fits = f_.data_offset_ <= size && t.offset <= size - f_.data_offset_ &&
                t.num_bytes <= size - f_.data_offset_ - t.offset;
    if (!fits) {
      return Fail("tensor " + Printable(t.name) +
                  ": data out of bounds: " + std::to_string(t.num_bytes) +
                  " bytes at data offset " + std::to_string(t.offset) + " (file offset " +
                  std::to_string(f_.data_offset_) + " + " + std::to_string(t.offset) +
                  ") run past the end of the file (size " + std::to_string(size) + ")");
    }
    if (t.num_bytes > 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return f_.tensors_[x].offset < f_.tensors_[y].offset; });
  const TensorInfo* furthest = nullptr;  // the tensor reaching furthest so far
  for (size_t i : order) {
    const TensorInfo& t = f_.tensors_[i];
    if (furthest != nullptr && t.offset < furthest->offset + furthest->num_bytes) {
      return Fail("tensors " + Printable(furthest->name) + " and " + Printable(t.name) +
                  " overlap in the data section (data offsets " + std::to_string(furthest->offset) +
                  "+" + std::to_string(furthest->num_bytes) + " and " + std::to_string(t.offset) +
                  ")");
    }
    if (furthest == nullptr || t.offset + t.num_bytes > furthest->offset + furthest->num_bytes) {
      furthest = &t;
    }
  }
  return Status::Ok();
}

Status Parser::Run() {
  uint64_t n_tensors = 0;
  uint64_t n_kv = 0;
  MNEME_RETURN_IF_ERROR(ReadHeader(&n_tensors, &n_kv));
  MNEME_RETURN_IF_ERROR(ReadMetadata(n_kv));
  MNEME_RETURN_IF_ERROR(ReadAlignment());
  MNEME_RETURN_IF_ERROR(ReadTensorInfos(n_tensors));
  return CheckTensorData();
}

Result<GgufFile> GgufFile::Parse(GgufFile file) {
  Parser parser(file);
  MNEME_RETURN_IF_ERROR(parser.Run());
  return file;
}

}  // namespace mneme::gguf
