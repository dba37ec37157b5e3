// Template lexer: see lexer.h. Follows jinja2/lexer.py's rules for whitespace control.
#include "tokenizer/jinja/lexer.h"

#include <cerrno>
#include <cstdlib>
#include <limits>

#include "tokenizer/jinja/text.h"
#include "tokenizer/jinja/value.h"

namespace magnetar::jinja {

namespace {

std::string normalize_newlines(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out += '\n';
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// Python whitespace at s[pos], as the regex \s sees it: its length in bytes, 0 when none.
size_t space_at(std::string_view s, size_t pos) {
  size_t next = pos;
  const uint32_t cp = next_code_point(s, &next);
  return is_python_space(cp) ? next - pos : 0;
}

std::string rstrip_python(std::string_view s) {
  const std::vector<size_t> offsets = code_point_offsets(s);
  size_t last = offsets.size() - 1;
  while (last > 0 && space_at(s, offsets[last - 1]) != 0) --last;
  return std::string(s.substr(0, offsets[last]));
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(normalize_newlines(source)) {
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();  // keep_trailing_newline=False
  }

  std::vector<Token> run() {
    bool line_starting = true;  // the last tag's end consumed a newline (or at the start)
    while (pos_ < src_.size()) {
      const size_t tag = find_tag(pos_);
      std::string text = src_.substr(pos_, tag - pos_);
      if (tag == src_.size()) {
        emit_text(std::move(text), line_);
        break;
      }
      const char kind = src_[tag + 1];  // '{', '%' or '#'
      const char mark = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      if (mark == '-') {
        text = rstrip_python(text);
      } else if (kind != '{' && mark != '+') {
        // lstrip_blocks: drop the spaces and tabs between the line start and the tag.
        const size_t line_start = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if (line_start > 0 || line_starting) {
          if (text.find_first_not_of(" \t", line_start) == std::string::npos) text.resize(line_start);
        }
      }
      const int text_line = line_;
      advance_to(tag);
      emit_text(std::move(text), text_line);
      advance_to(tag + 2 + ((mark == '-' || mark == '+') ? 1 : 0));
      if (kind == '#') {
        line_starting = skip_comment();
      } else if (kind == '%' && try_raw_block(&line_starting)) {
      } else {
        line_starting = lex_tag(kind == '{');
      }
    }
    tokens_.push_back({Token::Type::End, "", 0, 0, line_});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    fail("template line " + std::to_string(line_) + ": " + what);
  }

  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i)
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    return src_.size();
  }

  void advance_to(size_t pos) {
    for (; pos_ < pos && pos_ < src_.size(); ++pos_)
      if (src_[pos_] == '\n') ++line_;
  }

  void emit_text(std::string text, int line) {
    if (!text.empty()) tokens_.push_back({Token::Type::Text, std::move(text), 0, 0, line});
  }

  // After a tag's closing delimiter: "-" strips all following whitespace, otherwise a block
  // or comment tag eats one newline (trim_blocks) unless marked "+". Returns whether the
  // consumed text ended with a newline (lstrip_blocks' "line starting").
  bool finish_tag(char mark, bool is_block) {
    bool ate_newline = false;
    if (mark == '-') {
      while (pos_ < src_.size()) {
        const size_t n = space_at(src_, pos_);
        if (n == 0) break;
        ate_newline = src_[pos_] == '\n';
        advance_to(pos_ + n);
      }
    } else if (is_block && mark != '+' && pos_ < src_.size() && src_[pos_] == '\n') {
      advance_to(pos_ + 1);
      ate_newline = true;
    }
    return ate_newline;
  }

  bool skip_comment() {
    const size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) error("unterminated comment");
    const char mark = end > pos_ && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : '\0';
    advance_to(end + 2);
    return finish_tag(mark, true);
  }

  // {% raw %}...{% endraw %}: the text in between is output as written.
  bool try_raw_block(bool* line_starting) {
    size_t p = pos_;
    while (p < src_.size() && (src_[p] == ' ' || src_[p] == '\t' || src_[p] == '\n')) ++p;
    if (src_.compare(p, 3, "raw") != 0 || (p + 3 < src_.size() && is_name_char(src_[p + 3])))
      return false;
    p += 3;
    while (p < src_.size() && (src_[p] == ' ' || src_[p] == '\t' || src_[p] == '\n')) ++p;
    char mark = '\0';
    if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) mark = src_[p++];
    if (src_.compare(p, 2, "%}") != 0) error("malformed {% raw %} tag");
    advance_to(p + 2);
    finish_tag(mark, true);
    // Find "{%[-+]? endraw [-+]?%}".
    for (size_t i = src_.find("{%", pos_); i != std::string::npos; i = src_.find("{%", i + 2)) {
      size_t q = i + 2;
      const char open_mark = q < src_.size() && (src_[q] == '-' || src_[q] == '+') ? src_[q++] : '\0';
      while (q < src_.size() && (src_[q] == ' ' || src_[q] == '\t' || src_[q] == '\n')) ++q;
      if (src_.compare(q, 6, "endraw") != 0) continue;
      q += 6;
      while (q < src_.size() && (src_[q] == ' ' || src_[q] == '\t' || src_[q] == '\n')) ++q;
      char close_mark = '\0';
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) close_mark = src_[q++];
      if (src_.compare(q, 2, "%}") != 0) continue;
      std::string body = src_.substr(pos_, i - pos_);
      if (open_mark == '-') body = rstrip_python(body);
      emit_text(std::move(body), line_);
      advance_to(q + 2);
      *line_starting = finish_tag(close_mark, true);
      return true;
    }
    error("{% raw %} without {% endraw %}");
  }

  // Tokens of one {{ ... }} or {% ... %} tag, up to and including its closing delimiter.
  bool lex_tag(bool is_var) {
    const int begin_line = line_;
    tokens_.push_back({is_var ? Token::Type::VarBegin : Token::Type::BlockBegin, "", 0, 0, line_});
    const char close = is_var ? '}' : '%';
    std::vector<char> brackets;
    while (true) {
      while (pos_ < src_.size() && (src_[pos_] == ' ' || src_[pos_] == '\t' || src_[pos_] == '\n' ||
                                    src_[pos_] == '\r'))
        advance_to(pos_ + 1);
      if (pos_ >= src_.size()) {
        line_ = begin_line;
        error(is_var ? "unterminated '{{'" : "unterminated '{%'");
      }
      const char c = src_[pos_];
      if (brackets.empty()) {
        char mark = '\0';
        size_t at = pos_;
        if ((c == '-' || c == '+') && at + 1 < src_.size()) mark = c, ++at;
        if (src_.compare(at, 2, std::string{close, '}'}) == 0) {
          advance_to(at + 2);
          tokens_.push_back({is_var ? Token::Type::VarEnd : Token::Type::BlockEnd, "", 0, 0, line_});
          return finish_tag(mark, !is_var);
        }
      }
      if (is_name_start(c)) {
        size_t end = pos_;
        while (end < src_.size() && is_name_char(src_[end])) ++end;
        tokens_.push_back({Token::Type::Name, src_.substr(pos_, end - pos_), 0, 0, line_});
        advance_to(end);
      } else if (is_digit(c)) {
        lex_number();
      } else if (c == '\'' || c == '"') {
        lex_string(c);
      } else {
        lex_operator(&brackets);
      }
    }
  }

  void lex_number() {
    size_t end = pos_;
    std::string digits;
    bool is_float = false;
    const auto take_digits = [&] {
      while (end < src_.size() && (is_digit(src_[end]) || (src_[end] == '_' && end + 1 < src_.size() &&
                                                           is_digit(src_[end + 1])))) {
        if (src_[end] != '_') digits += src_[end];
        ++end;
      }
    };
    take_digits();
    if (end + 1 < src_.size() && src_[end] == '.' && is_digit(src_[end + 1])) {
      is_float = true;
      digits += src_[end++];
      take_digits();
    }
    if (end < src_.size() && (src_[end] == 'e' || src_[end] == 'E')) {
      size_t e = end + 1;
      if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
      if (e < src_.size() && is_digit(src_[e])) {
        is_float = true;
        digits += 'e';
        digits.append(src_, end + 1, e - end - 1);
        end = e;
        take_digits();
      }
    }
    Token t{is_float ? Token::Type::Float : Token::Type::Int, digits, 0, 0, line_};
    errno = 0;
    if (is_float) {
      t.number = std::strtod(digits.c_str(), nullptr);
    } else {
      const unsigned long long v = std::strtoull(digits.c_str(), nullptr, 10);
      if (errno == ERANGE || v > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max()))
        error("integer literal too large: " + digits);
      t.integer = static_cast<int64_t>(v);
    }
    tokens_.push_back(std::move(t));
    advance_to(end);
  }

  // Python "unicode-escape" rules, as Jinja applies them to string literals.
  void lex_string(char quote) {
    const int start_line = line_;
    std::string value;
    size_t p = pos_ + 1;
    const auto hex = [&](size_t at, int n, uint32_t* out) {
      uint32_t v = 0;
      for (int k = 0; k < n; ++k) {
        if (at + k >= src_.size()) return false;
        const char h = src_[at + k];
        const int d = is_digit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
        if (d < 0) return false;
        v = v * 16 + static_cast<uint32_t>(d);
      }
      *out = v;
      return true;
    };
    while (true) {
      if (p >= src_.size()) {
        line_ = start_line;
        error("unterminated string literal");
      }
      const char c = src_[p];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++p;
        continue;
      }
      if (p + 1 >= src_.size()) {
        line_ = start_line;
        error("unterminated string literal");
      }
      const char e = src_[p + 1];
      p += 2;
      uint32_t cp = 0;
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case 'a': value += '\a'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case '\n': break;  // line continuation
        case 'x':
        case 'u':
        case 'U': {
          const int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (!hex(p, n, &cp) || cp > 0x10FFFF) error(std::string("malformed \\") + e + " escape in a string");
          append_utf8(cp, &value);
          p += n;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            cp = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && p < src_.size() && src_[p] >= '0' && src_[p] <= '7'; ++k)
              cp = cp * 8 + static_cast<uint32_t>(src_[p++] - '0');
            append_utf8(cp, &value);
          } else {  // unknown escapes stay as written
            value += '\\';
            value += e;
          }
      }
    }
    tokens_.push_back({Token::Type::String, std::move(value), 0, 0, start_line});
    advance_to(p + 1);
  }

  void lex_operator(std::vector<char>* brackets) {
    static const char* const kTwo[] = {"**", "//", "==", "!=", "<=", ">="};
    for (const char* op : kTwo)
      if (src_.compare(pos_, 2, op) == 0) {
        tokens_.push_back({Token::Type::Op, op, 0, 0, line_});
        advance_to(pos_ + 2);
        return;
      }
    const char c = src_[pos_];
    static const std::string kOne = "+-*/%~<>=()[]{},.:|";
    if (kOne.find(c) == std::string::npos) {
      size_t next = pos_;
      std::string shown;
      append_utf8(next_code_point(src_, &next), &shown);
      error("unexpected character '" + shown + "' in a tag");
    }
    if (c == '(' || c == '[' || c == '{') {
      if (brackets->size() >= 256) error("brackets nested too deeply");
      brackets->push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (brackets->empty() || brackets->back() != c) error(std::string("unbalanced '") + c + "'");
      brackets->pop_back();
    }
    tokens_.push_back({Token::Type::Op, std::string(1, c), 0, 0, line_});
    advance_to(pos_ + 1);
  }

  std::string src_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace magnetar::jinja
