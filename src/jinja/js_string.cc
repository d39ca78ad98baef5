// See js_string.h. Case mapping tables cover the scripts a chat template is
// likely to upper/lower-case; anything else passes through unchanged.
#include "jinja/js_string.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace mneme::jinja {

char32_t DecodeUtf8(std::string_view s, size_t* i) {
  const auto b0 = static_cast<unsigned char>(s[*i]);
  int len = 0;
  char32_t cp = 0;
  if (b0 < 0x80) {
    ++*i;
    return b0;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    ++*i;
    return b0;  // stray byte: pass through as-is
  }
  if (*i + len > s.size()) {
    ++*i;
    return b0;
  }
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[*i + k]);
    if ((b & 0xC0) != 0x80) {
      ++*i;
      return b0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  *i += len;
  return cp;
}


std::vector<std::string> SplitCodePoints(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    DecodeUtf8(s, &i);
    out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

size_t Utf16Length(std::string_view s) {
  size_t n = 0;
  size_t i = 0;
  while (i < s.size()) n += DecodeUtf8(s, &i) >= 0x10000 ? 2 : 1;
  return n;
}

bool IsJsSpace(char32_t cp) {
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0xFEFF: return true;
    default: return cp >= 0x2000 && cp <= 0x200A;
  }
}

std::string_view JsTrimStart(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t next = i;
    if (!IsJsSpace(DecodeUtf8(s, &next))) break;
    i = next;
  }
  return s.substr(i);
}

std::string_view JsTrimEnd(std::string_view s) {
  // Walk forward remembering where the trailing run of spaces began.
  size_t i = 0;
  size_t keep = 0;
  while (i < s.size()) {
    const char32_t cp = DecodeUtf8(s, &i);
    if (!IsJsSpace(cp)) keep = i;
  }
  return s.substr(0, keep);
}

std::string_view JsTrim(std::string_view s) {
  return JsTrimEnd(JsTrimStart(s));
}

namespace {

// Returns the simple upper-case mapping, or 0 when the code point has none.
char32_t UpperOf(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 0x20;
  if (c < 0x80) return 0;
  if (c == 0xB5) return 0x39C;
  if (c == 0xFF) return 0x178;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 0x20;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x131) return 'I';
    if (c == 0x17F) return 'S';
    if (c == 0x130 || c == 0x138 || c == 0x149) return 0;
    const bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_upper) return (c % 2 == 0) ? c - 1 : 0;
    return (c % 2 == 1) ? c - 1 : 0;
  }
  if (c == 0x3C2) return 0x3A3;
  if (c >= 0x3B1 && c <= 0x3CB) return c - 0x20;
  if (c == 0x3AC) return 0x386;
  if (c >= 0x3AD && c <= 0x3AF) return c - 0x25;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 0x3F;
  if (c >= 0x430 && c <= 0x44F) return c - 0x20;
  if (c >= 0x450 && c <= 0x45F) return c - 0x50;
  return 0;
}

char32_t LowerOf(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 0x20;
  if (c < 0x80) return 0;
  if (c == 0x178) return 0xFF;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 0x20;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x130 || c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F) return 0;
    const bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_upper) return (c % 2 == 1) ? c + 1 : 0;
    return (c % 2 == 0) ? c + 1 : 0;
  }
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 0x20;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 0x25;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 0x3F;
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  return 0;
}

}  // namespace

std::string JsToUpper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    const char32_t cp = DecodeUtf8(s, &i);
    if (cp == 0xDF) {  // ß -> SS
      out += "SS";
      continue;
    }
    const char32_t up = UpperOf(cp);
    if (up == 0) {
      out.append(s.substr(start, i - start));
    } else {
      AppendUtf8(up, &out);
    }
  }
  return out;
}

std::string JsToLower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    const char32_t cp = DecodeUtf8(s, &i);
    const char32_t low = LowerOf(cp);
    if (low == 0) {
      out.append(s.substr(start, i - start));
    } else {
      AppendUtf8(low, &out);
    }
  }
  return out;
}

std::string JsNumberToString(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == 0) return "0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string_view sci(buf, res.ptr - buf);
  std::string out;
  if (sci.front() == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exp10 = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  const int k = static_cast<int>(digits.size());
  const int n = exp10 + 1;  // value = 0.digits * 10^n
  if (k <= n && n <= 21) {
    out += digits;
    out.append(n - k, '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, n);
    out.push_back('.');
    out += digits.substr(n);
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(-n, '0');
    out += digits;
  } else {
    out.push_back(digits[0]);
    if (k > 1) {
      out.push_back('.');
      out += digits.substr(1);
    }
    out.push_back('e');
    out.push_back(n - 1 >= 0 ? '+' : '-');
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

void AppendJsonString(std::string_view s, bool ensure_ascii, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  auto unit = [&](unsigned u) {
    out->append("\\u");
    for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(u >> shift) & 0xF]);
  };
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    const char32_t cp = DecodeUtf8(s, &i);
    switch (cp) {
      case '"': out->append("\\\""); continue;
      case '\\': out->append("\\\\"); continue;
      case '\b': out->append("\\b"); continue;
      case '\f': out->append("\\f"); continue;
      case '\n': out->append("\\n"); continue;
      case '\r': out->append("\\r"); continue;
      case '\t': out->append("\\t"); continue;
      default: break;
    }
    if (cp < 0x20) {
      unit(cp);
    } else if (ensure_ascii && cp >= 0x7F) {
      if (cp >= 0x10000) {
        const char32_t v = cp - 0x10000;
        unit(0xD800 + (v >> 10));
        unit(0xDC00 + (v & 0x3FF));
      } else {
        unit(cp);
      }
    } else {
      out->append(s.substr(start, i - start));
    }
  }
  out->push_back('"');
}

namespace {

// Length of the longest prefix of `s` that is a JS StrDecimalLiteral
// (without sign); 0 when there is none.
size_t DecimalPrefix(std::string_view s) {
  size_t i = 0;
  size_t int_digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++int_digits;
  size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    size_t j = i + 1;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j, ++frac_digits;
    if (int_digits + frac_digits > 0) i = j;
  }
  if (int_digits + frac_digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    const size_t exp_start = j;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j > exp_start) i = j;
  }
  return i;
}

double ParseSignedDecimal(std::string_view s, size_t* used) {
  size_t i = 0;
  double sign = 1;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    if (s[i] == '-') sign = -1;
    ++i;
  }
  if (s.substr(i).starts_with("Infinity")) {
    *used = i + 8;
    return sign * std::numeric_limits<double>::infinity();
  }
  const size_t len = DecimalPrefix(s.substr(i));
  if (len == 0) {
    *used = 0;
    return std::nan("");
  }
  *used = i + len;
  const std::string text(s.substr(i, len));
  return sign * std::strtod(text.c_str(), nullptr);
}

}  // namespace

double JsStringToNumber(std::string_view s) {
  s = JsTrim(s);
  if (s.empty()) return 0;
  if (s.size() > 2 && s[0] == '0' &&
      (s[1] == 'x' || s[1] == 'X' || s[1] == 'o' || s[1] == 'O' || s[1] == 'b' || s[1] == 'B')) {
    const int base = (s[1] == 'x' || s[1] == 'X') ? 16 : (s[1] == 'o' || s[1] == 'O') ? 8 : 2;
    double v = 0;
    for (char c : s.substr(2)) {
      int digit = -1;
      if (c >= '0' && c <= '9') digit = c - '0';
      if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
      if (digit < 0 || digit >= base) return std::nan("");
      v = v * base + digit;
    }
    return v;
  }
  size_t used = 0;
  const double v = ParseSignedDecimal(s, &used);
  return used == s.size() ? v : std::nan("");
}

double JsParseInt(std::string_view s) {
  s = JsTrimStart(s);
  size_t i = 0;
  double sign = 1;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    if (s[i] == '-') sign = -1;
    ++i;
  }
  const size_t start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == start) return std::nan("");
  const std::string digits(s.substr(start, i - start));
  return sign * std::strtod(digits.c_str(), nullptr);
}

double JsParseFloat(std::string_view s) {
  s = JsTrimStart(s);
  size_t used = 0;
  return ParseSignedDecimal(s, &used);
}

}  // namespace mneme::jinja
