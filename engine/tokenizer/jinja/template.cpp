// The interpreter's Status boundary: see template.h. Errors thrown inside the lexer, parser
// and interpreter stop here.
#include "tokenizer/jinja/template.h"

#include <limits>
#include <new>

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/parser.h"

namespace magnetar::jinja {

Status Template::parse(std::string_view source, std::unique_ptr<Template>* out) {
  if (source.size() > kMaxSourceBytes)
    return Status::error("chat template: " + std::to_string(source.size()) + " bytes is larger than the " +
                         std::to_string(kMaxSourceBytes) + "-byte limit");
  try {
    auto t = std::unique_ptr<Template>(new Template());
    t->body_ = parse_template(source);
    *out = std::move(t);
    return Status::ok();
  } catch (const Error& e) {
    return Status::error("chat template: " + e.message);
  } catch (const std::bad_alloc&) {
    return Status::error("chat template: out of memory while parsing");
  }
}

Status Template::render(const Dict& variables, const RenderLimits& limits, RenderResult* out) const {
  *out = RenderResult{};
  try {
    Text text = render_body(body_, variables, limits);
    out->content_ranges = text.content_ranges();
    out->text = text.bytes();
    return Status::ok();
  } catch (const Error& e) {
    out->raised_by_template = e.from_template;
    return Status::error("chat template: " + e.message);
  } catch (const std::bad_alloc&) {
    return Status::error("chat template: out of memory while rendering");
  } catch (const std::exception& e) {
    return Status::error(std::string("chat template: ") + e.what());
  }
}

namespace {

Value from_json(const nlohmann::ordered_json& j, bool content, int depth) {
  if (depth > 128) fail("JSON nested more than 128 levels deep");
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::from_int(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return Value::from_float(static_cast<double>(u));
      return Value::from_int(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::from_float(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(Text(j.get<std::string>(), content));
    case nlohmann::ordered_json::value_t::array: {
      List items;
      for (const auto& e : j) items.push_back(from_json(e, content, depth + 1));
      return Value::from_list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict d;
      for (auto it = j.begin(); it != j.end(); ++it) d.set(it.key(), from_json(it.value(), content, depth + 1));
      return Value::from_dict(std::move(d));
    }
    default: fail("unsupported JSON value (binary)");
  }
}

}  // namespace

Status value_from_json(const nlohmann::ordered_json& j, bool content, Value* out) {
  try {
    *out = from_json(j, content, 0);
    return Status::ok();
  } catch (const Error& e) {
    return Status::error(e.message);
  }
}

}  // namespace magnetar::jinja
