// A parsed Jinja template and its sandboxed rendering: the interface of the interpreter.
// Nothing here reads files or the environment; every render is bounded (loop iterations, call
// depth, text created, output size) and any failure comes back as a Status naming the template
// line and construct. No exception leaves these functions.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "magnetar/status.h"
#include "tokenizer/jinja/ast.h"

namespace magnetar::jinja {

struct RenderLimits {
  size_t max_output_bytes = 8u << 20;       // also the largest string a template may build
  size_t max_created_bytes = 256u << 20;    // all strings built during one render
  size_t max_list_items = 100'000;          // per list (range(), list * n, ...)
  int64_t max_loop_iterations = 1'000'000;  // all loops of one render together
  int max_call_depth = 64;                  // macro calls
};

struct RenderResult {
  std::string text;
  // Byte ranges of `text` that came from message contents (see text.h).
  std::vector<ByteRange> content_ranges;
  // Set on failure when the template itself called raise_exception (the conversation is
  // refused), as opposed to an error of the template or the interpreter.
  bool raised_by_template = false;
};

class Template {
 public:
  static constexpr size_t kMaxSourceBytes = 1u << 20;
  // Syntax errors and unsupported statements, filters or tests fail here.
  static Status parse(std::string_view source, std::unique_ptr<Template>* out);

  // `variables` are the template's globals (messages, add_generation_prompt, bos_token, ...);
  // the functions raise_exception, strftime_now, range, namespace and dict are added.
  Status render(const Dict& variables, const RenderLimits& limits, RenderResult* out) const;

 private:
  Body body_;
};

// JSON (a conversation, tools) as template values; with content=true every string in it counts
// as message content. Fails beyond 128 levels of nesting.
Status value_from_json(const nlohmann::ordered_json& j, bool content, Value* out);

}  // namespace magnetar::jinja
