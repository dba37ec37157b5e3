// Real chat templates through our Jinja interpreter, against the text Python Jinja2 renders as
// transformers' apply_chat_template does: every conversation of tokenizers/*/chat/cases.json,
// the chat case of each tiny model's golden file, and the taint ranges of message contents.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/testdata.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/jinja/template.h"

namespace magnetar {
namespace {

using ojson = nlohmann::ordered_json;

ojson read_json(const std::string& relative) {
  return ojson::parse(test::read_file(test::testdata_path(relative)));
}

// tokenizer_config.json's template and special-token variables.
std::string template_of(const std::string& folder, jinja::Dict* special = nullptr) {
  std::string source;
  jinja::Dict unused;
  EXPECT_TRUE(read_template_config(test::read_file(test::testdata_path(folder + "/tokenizer_config.json")), &source,
                                   special ? special : &unused));
  return source;
}

void set_json_variable(jinja::Dict* vars, const std::string& name, const ojson& value) {
  jinja::Value v;
  ASSERT_TRUE(jinja::value_from_json(value, false, &v));
  vars->set(name, std::move(v));
}

struct Rendered {
  Status status = Status::ok();
  jinja::RenderResult result;
};

Rendered render(const std::string& source, const ojson& messages, bool add_generation_prompt,
                const jinja::Dict& extra) {
  Rendered r;
  std::unique_ptr<jinja::Template> t;
  r.status = jinja::Template::parse(source, &t);
  if (!r.status) return r;
  jinja::Dict vars;
  jinja::Value msgs;
  r.status = messages_value(messages, &msgs);
  if (!r.status) return r;
  vars.set("messages", msgs);
  vars.set("tools", jinja::Value::none());
  vars.set("documents", jinja::Value::none());
  vars.set("add_generation_prompt", jinja::Value::boolean(add_generation_prompt));
  for (const auto& [k, v] : extra.entries) vars.set(k, v);
  r.status = t->render(vars, jinja::RenderLimits{}, &r.result);
  return r;
}

class ChatCases : public ::testing::TestWithParam<const char*> {};

TEST_P(ChatCases, EveryConversationRendersLikeJinja2) {
  const std::string family = GetParam();
  MAGNETAR_REQUIRE_TESTDATA("tokenizers/" + family + "/chat/cases.json");
  const ojson cases = read_json("tokenizers/" + family + "/chat/cases.json");
  const std::string source = template_of("tokenizers/" + family);
  int rendered = 0, refused = 0;
  for (const ojson& c : cases.at("cases")) {
    SCOPED_TRACE(family + " / " + c.at("name").get<std::string>());
    jinja::Dict extra;
    for (auto it = cases.at("special_token_vars").begin(); it != cases.at("special_token_vars").end(); ++it)
      set_json_variable(&extra, it.key(), it.value());
    for (auto it = c.at("extra_vars").begin(); it != c.at("extra_vars").end(); ++it)
      set_json_variable(&extra, it.key(), it.value());
    const Rendered r = render(source, c.at("messages"), c.at("add_generation_prompt").get<bool>(), extra);
    if (c.contains("expected_error")) {
      ASSERT_FALSE(r.status);
      EXPECT_TRUE(r.result.raised_by_template);
      EXPECT_NE(r.status.message().find(c.at("expected_error").get<std::string>()), std::string::npos)
          << r.status.message();
      ++refused;
      continue;
    }
    ASSERT_TRUE(r.status) << r.status.message();
    EXPECT_EQ(r.result.text, c.at("expected").get<std::string>());
    ++rendered;
  }
  EXPECT_GE(rendered, 12);
  std::printf("%s: %d conversations rendered byte-exact, %d refused as expected\n", family.c_str(), rendered,
              refused);
}

INSTANTIATE_TEST_SUITE_P(Families, ChatCases, ::testing::Values("llama3", "llama3_1", "qwen3", "gemma3"));

// A user who types a control token: the rendered text holds it, inside a content range.
TEST(ChatCases, ControlTokenTextInContentIsMarkedAsContent) {
  for (const char* family : {"llama3", "qwen3", "gemma3"}) {
    MAGNETAR_REQUIRE_TESTDATA(std::string("tokenizers/") + family + "/chat/cases.json");
    const ojson cases = read_json(std::string("tokenizers/") + family + "/chat/cases.json");
    for (const ojson& c : cases.at("cases")) {
      if (c.at("name") != "special_text_in_content_gen") continue;
      jinja::Dict extra;
      for (auto it = cases.at("special_token_vars").begin(); it != cases.at("special_token_vars").end(); ++it)
        set_json_variable(&extra, it.key(), it.value());
      const Rendered r = render(template_of(std::string("tokenizers/") + family), c.at("messages"), c.at("add_generation_prompt").get<bool>(), extra);
      ASSERT_TRUE(r.status) << r.status.message();
      // Every message content (trimmed as the template trims it) lies inside one range, and
      // nothing the template wrote itself does.
      size_t content_bytes = 0;
      for (const jinja::ByteRange& range : r.result.content_ranges) {
        content_bytes += range.end - range.begin;
        const std::string inside = r.result.text.substr(range.begin, range.end - range.begin);
        bool from_a_message = false;
        for (const ojson& m : c.at("messages"))
          from_a_message |= m.at("content").get<std::string>().find(inside) != std::string::npos;
        EXPECT_TRUE(from_a_message) << family << ": range '" << inside << "' is not message text";
      }
      for (const ojson& m : c.at("messages")) {
        std::string content = m.at("content").get<std::string>();
        const size_t b = content.find_first_not_of(" \n\t"), e = content.find_last_not_of(" \n\t");
        content = b == std::string::npos ? "" : content.substr(b, e - b + 1);
        const size_t at = r.result.text.find(content);
        ASSERT_NE(at, std::string::npos);
        bool covered = false;
        for (const jinja::ByteRange& range : r.result.content_ranges)
          covered |= range.begin <= at && at + content.size() <= range.end;
        EXPECT_TRUE(covered) << family << ": '" << content << "' is not marked as content";
      }
      EXPECT_GT(content_bytes, 0u);
    }
  }
}

// models/goldens/<model>.json and gemma/goldens/tiny-gemma.json: the chat case's rendered_text.
struct GoldenModel {
  const char* folder;
  const char* golden;
};

class GoldenTemplates : public ::testing::TestWithParam<GoldenModel> {};

TEST_P(GoldenTemplates, RenderTheGoldenPrompt) {
  const GoldenModel m = GetParam();
  MAGNETAR_REQUIRE_TESTDATA(m.golden);
  const ojson golden = read_json(m.golden);
  const ojson& chat = golden.at("cases").at("chat");
  const ojson& messages = chat.at("messages");
  jinja::Dict extra;
  const std::string source = template_of(m.folder, &extra);
  const Rendered r = render(source, messages, true, extra);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(r.result.text, chat.at("rendered_text").get<std::string>());
}

INSTANTIATE_TEST_SUITE_P(
    Models, GoldenTemplates,
    ::testing::Values(GoldenModel{"models/tiny-llama31", "models/goldens/tiny-llama31.json"},
                      GoldenModel{"models/tiny-qwen25", "models/goldens/tiny-qwen25.json"},
                      GoldenModel{"models/tiny-qwen3", "models/goldens/tiny-qwen3.json"},
                      GoldenModel{"models/tiny-gemma3", "models/goldens/tiny-gemma3.json"},
                      GoldenModel{"models/tiny-phi3", "models/goldens/tiny-phi3.json"},
                      GoldenModel{"gemma/tiny-gemma", "gemma/goldens/tiny-gemma.json"}),
    [](const auto& info) {
      std::string name = info.param.folder;
      name = name.substr(name.find('/') + 1);
      for (char& c : name)
        if (c == '-') c = '_';
      return name;
    });

}  // namespace
}  // namespace magnetar
