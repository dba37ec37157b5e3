// PCRE2 wrapper for tokenizer.json patterns: see unicode_regex.h.
#include "tokenizer/unicode_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace magnetar::tok {

namespace {

// Unicode White_Space, the set Oniguruma's and Python regex's `\s` use (NOT U+180E, U+FEFF).
constexpr const char kWhiteSpaceItems[] =
    "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

}  // namespace

std::string rewrite_whitespace_classes(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 64);
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char n = p[i + 1];
      if (n == 's') {
        out += in_class ? std::string(kWhiteSpaceItems) : "[" + std::string(kWhiteSpaceItems) + "]";
      } else if (n == 'S' && !in_class) {
        out += "[^" + std::string(kWhiteSpaceItems) + "]";
      } else {  // `\S` inside a class has no item form: PCRE2's own meaning is kept
        out += c;
        out += n;
      }
      ++i;
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal member, not the end of the class.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (in_class && c == ']') in_class = false;
    out += c;
  }
  return out;
}

// Hostile patterns from a tokenizer.json must fail, not hang: bound the backtracking work of
// one match (real pre-tokenizer patterns need a few hundred steps) and its heap.
constexpr uint32_t kMatchLimit = 20'000'000;
constexpr uint32_t kHeapLimitKiB = 64 * 1024;

struct UnicodeRegex::Impl {
  pcre2_code* code = nullptr;
  pcre2_match_context* context = nullptr;  // read-only while matching: shared by threads
  ~Impl() {
    pcre2_match_context_free(context);
    pcre2_code_free(code);
  }
};

UnicodeRegex::UnicodeRegex() = default;
UnicodeRegex::~UnicodeRegex() = default;
UnicodeRegex::UnicodeRegex(UnicodeRegex&&) noexcept = default;
UnicodeRegex& UnicodeRegex::operator=(UnicodeRegex&&) noexcept = default;

Status UnicodeRegex::compile(std::string_view pattern) {
  const std::string rewritten = rewrite_whitespace_classes(pattern);
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    return Status::error("regex \"" + std::string(pattern.substr(0, 200)) + "\": " +
                         reinterpret_cast<const char*>(message) + " at offset " +
                         std::to_string(error_offset));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // optional: the interpreter is the fallback
  impl_ = std::make_unique<Impl>();
  impl_->code = code;
  impl_->context = pcre2_match_context_create(nullptr);
  if (impl_->context == nullptr) return Status::error("regex: out of memory");
  pcre2_set_match_limit(impl_->context, kMatchLimit);
  pcre2_set_heap_limit(impl_->context, kHeapLimitKiB);
  return Status::ok();
}

Status UnicodeRegex::find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>* out) const {
  if (!impl_) return Status::error("regex used before it was compiled");
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  if (md == nullptr) return Status::error("regex: out of memory");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  uint32_t options = 0;
  Status result = Status::ok();
  while (start <= text.size()) {
    int rc = pcre2_match(impl_->code, subject, text.size(), start, options, md, impl_->context);
    // JIT code runs on a small machine stack; the interpreter's heap (bounded above) is larger.
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
      rc = pcre2_match(impl_->code, subject, text.size(), start, options | PCRE2_NO_JIT, md, impl_->context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      result = Status::error(std::string("regex match: ") + reinterpret_cast<const char*>(message));
      break;
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const size_t m_start = ov[0], m_end = ov[1];
    if (m_end > m_start) {
      out->emplace_back(m_start, m_end);
      start = m_end;
      options = 0;
    } else {  // empty match: step over one whole character and keep searching
      if (m_start >= text.size()) break;
      start = m_start + 1;
      while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
      options = 0;
    }
    // Later searches start inside an already-checked subject: skip re-validating it.
    options |= PCRE2_NO_UTF_CHECK;
  }
  pcre2_match_data_free(md);
  return result;
}

}  // namespace magnetar::tok
