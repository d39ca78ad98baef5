// JavaScript string semantics over UTF-8 bytes.
//
// The byte-exact reference for chat templates (@huggingface/jinja) runs on
// JavaScript strings: `length` counts UTF-16 code units, trim() strips the
// Unicode White_Space set plus BOM, toUpperCase() is Unicode-aware, numbers
// print with Number.prototype.toString and JSON.stringify escapes only
// quotes, backslashes and control characters. Mneme keeps strings as UTF-8;
// these helpers reproduce the JS behaviour where chat templates can see it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/utf8.h"

namespace mneme::jinja {

// Decodes one code point at `s[*i]` and advances `*i`. Invalid bytes decode
// as themselves (one byte each) so nothing is ever lost or read past the end.
char32_t DecodeUtf8(std::string_view s, size_t* i);
using ::mneme::AppendUtf8;  // util/utf8.h

// Splits into code points, each as its own UTF-8 string (Array.from(str)).
std::vector<std::string> SplitCodePoints(std::string_view s);
// Number of UTF-16 code units (JS `str.length`).
size_t Utf16Length(std::string_view s);

// JS /\s/ (WhiteSpace + LineTerminator).
bool IsJsSpace(char32_t cp);
std::string_view JsTrimStart(std::string_view s);
std::string_view JsTrimEnd(std::string_view s);
std::string_view JsTrim(std::string_view s);

// String.prototype.toUpperCase / toLowerCase for ASCII, Latin-1, Latin
// Extended-A, Greek and Cyrillic (other scripts pass through unchanged).
std::string JsToUpper(std::string_view s);
std::string JsToLower(std::string_view s);

// Number.prototype.toString() (shortest round-trip, JS exponent rules).
std::string JsNumberToString(double d);

// JSON.stringify(string); with `ensure_ascii`, every UTF-16 unit >= 0x7f is
// written as \uXXXX (as the reference's makeAsciiSafe does).
void AppendJsonString(std::string_view s, bool ensure_ascii, std::string* out);

// JS Number(string) for loose equality: trims, "" -> 0, NaN when malformed.
double JsStringToNumber(std::string_view s);
// JS parseInt(s, 10) / parseFloat(s); NaN when no digits.
double JsParseInt(std::string_view s);
double JsParseFloat(std::string_view s);

}  // namespace mneme::jinja
