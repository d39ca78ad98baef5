// UTF-8 primitives shared by the tokenizers, the template interpreter and the
// CLI. Each module keeps its own policy for invalid input (llama.cpp-style
// repair in the pre-tokenizer, JS-style in Jinja); only the encoding rules
// that never vary live here.
#pragma once

#include <string>
#include <string_view>

namespace mneme {

// Appends the UTF-8 encoding of `cp` (1 to 4 bytes). `cp` must be at most
// U+10FFFF; surrogates are encoded as given (callers decide whether to allow them).
void AppendUtf8(char32_t cp, std::string* out);

// Strict validation: shortest form, no surrogates, nothing above U+10FFFF.
bool IsWellFormedUtf8(std::string_view s);

}  // namespace mneme
