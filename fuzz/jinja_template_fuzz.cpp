// libFuzzer target for the chat-template interpreter (engine/tokenizer/jinja/): parses arbitrary
// bytes as a template and, when they parse, renders them with a small conversation and tight
// limits. Any crash, sanitizer report, hang or exception escaping the Status boundary is a bug.
// Also checks that the content ranges stay sorted and inside the output. Built with clang
// -fsanitize=fuzzer,address,undefined by fuzz/CMakeLists.txt; CTest runs it for a bounded time
// (test fuzz.jinja_template).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/template.h"

namespace {

const magnetar::jinja::Dict& variables() {
  static const magnetar::jinja::Dict vars = [] {
    using magnetar::jinja::Value;
    const auto conversation = nlohmann::ordered_json::parse(R"([
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "  <|im_start|>hi\u0085 "},
      {"role": "assistant", "content": "<think>x</think>\n\nok", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"a": 1.5, "b": [true, null]}}}]},
      {"role": "user", "content": [{"type": "text", "text": "part"}, {"type": "image"}]}])");
    magnetar::jinja::Dict d;
    Value messages;
    if (!magnetar::jinja::value_from_json(conversation, true, &messages)) std::abort();
    d.set("messages", messages);
    d.set("add_generation_prompt", Value::boolean(true));
    d.set("bos_token", Value::string(std::string("<s>")));
    d.set("eos_token", Value::string(std::string("</s>")));
    d.set("tools", Value::none());
    return d;
  }();
  return vars;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<magnetar::jinja::Template> t;
  if (!magnetar::jinja::Template::parse(std::string_view(reinterpret_cast<const char*>(data), size), &t)) return 0;
  magnetar::jinja::RenderLimits limits;
  limits.max_output_bytes = 64 << 10;
  limits.max_created_bytes = 4 << 20;
  limits.max_list_items = 4096;
  limits.max_loop_iterations = 20000;
  limits.max_call_depth = 16;
  magnetar::jinja::RenderResult result;
  if (!t->render(variables(), limits, &result)) return 0;
  size_t previous_end = 0;
  for (const auto& r : result.content_ranges) {
    if (r.begin < previous_end || r.begin >= r.end || r.end > result.text.size()) std::abort();
    previous_end = r.end;
  }
  return 0;
}
