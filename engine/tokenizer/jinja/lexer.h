// Splits a template into text and tag tokens, applying Jinja's whitespace rules as transformers
// configures them: trim_blocks and lstrip_blocks on, `{%-`/`-%}` stripping, `{%+`/`+%}` to opt
// out, newlines normalised to "\n", one trailing newline of the source dropped, {% raw %} kept
// verbatim, comments removed. Inside tags it produces names, literals and operators.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace magnetar::jinja {

struct Token {
  enum class Type { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, End };
  Type type;
  std::string value;  // Text, Name, String (unescaped), Op
  int64_t integer = 0;
  double number = 0;
  int line = 0;
};

// Throws Error on an unterminated tag, string or comment, or an unknown character.
std::vector<Token> tokenize(std::string_view source);

}  // namespace magnetar::jinja
