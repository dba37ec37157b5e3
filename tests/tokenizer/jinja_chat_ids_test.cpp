// The whole chat path for tokenizer.json families: each conversation of tokenizers/*/chat/cases.json
// rendered by our Jinja interpreter, then encoded with the content ranges it reports
// (Tokenizer::encode_chat_prompt), gives exactly the ids transformers' apply_chat_template gives.
// The one case whose user types control tokens (special_text_in_content_gen) differs on purpose:
// its text is byte-exact, its ids decode back to it, and no special id lies inside a message.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/testdata.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace magnetar {
namespace {

using ojson = nlohmann::ordered_json;

struct Family {
  const char* name;
  const char* tokenizer_json;  // llama3_1, qwen3 and gemma3 keep theirs in the tiny model folders
};

const Family kFamilies[] = {
    {"llama3", "tokenizers/llama3/tokenizer.json"},
    {"llama3_1", "models/tiny-llama31/tokenizer.json"},
    {"qwen3", "models/tiny-qwen3/tokenizer.json"},
    {"gemma3", "models/tiny-gemma3/tokenizer.json"},
};

class ChatIds : public ::testing::TestWithParam<Family> {};

TEST_P(ChatIds, RenderedAndEncodedLikeApplyChatTemplate) {
  const Family& f = GetParam();
  const std::string dir = std::string("tokenizers/") + f.name + "/";
  MAGNETAR_REQUIRE_TESTDATA(f.tokenizer_json);
  MAGNETAR_REQUIRE_TESTDATA(dir + "chat/cases.json");
  const std::string config_text = test::read_file(test::testdata_path(dir + "tokenizer_config.json"));
  Tokenizer tok;
  const Status loaded = tok.load_tokenizer_json(test::read_file(test::testdata_path(f.tokenizer_json)), config_text);
  ASSERT_TRUE(loaded) << loaded.message();
  std::string source;
  jinja::Dict config_vars;
  ASSERT_TRUE(read_template_config(config_text, &source, &config_vars));
  std::unique_ptr<jinja::Template> tmpl;
  ASSERT_TRUE(jinja::Template::parse(source, &tmpl));
  const ojson cases = ojson::parse(test::read_file(test::testdata_path(dir + "chat/cases.json")));
  int exact = 0, guarded = 0;
  for (const ojson& c : cases.at("cases")) {
    if (!c.contains("expected")) continue;  // a raise_exception case (jinja_chat_cases_test)
    SCOPED_TRACE(std::string(f.name) + " / " + c.at("name").get<std::string>());
    jinja::Dict vars;
    jinja::Value messages;
    ASSERT_TRUE(messages_value(c.at("messages"), &messages));
    vars.set("messages", messages);
    vars.set("tools", jinja::Value::none());
    vars.set("documents", jinja::Value::none());
    vars.set("add_generation_prompt", jinja::Value::boolean(c.at("add_generation_prompt").get<bool>()));
    for (const ojson* group : {&cases.at("special_token_vars"), &c.at("extra_vars")})
      for (auto it = group->begin(); it != group->end(); ++it) {
        jinja::Value v;
        ASSERT_TRUE(jinja::value_from_json(it.value(), false, &v));
        vars.set(it.key(), v);
      }
    jinja::RenderResult r;
    const Status rendered = tmpl->render(vars, jinja::RenderLimits{}, &r);
    ASSERT_TRUE(rendered) << rendered.message();
    ASSERT_EQ(r.text, c.at("expected").get<std::string>());
    ContentRanges contents;
    for (const jinja::ByteRange& range : r.content_ranges) contents.emplace_back(range.begin, range.end);
    std::vector<int> ids;
    ASSERT_TRUE(tok.encode_chat_prompt(r.text, contents, &ids));
    const std::vector<int> expected = c.at("expected_ids").get<std::vector<int>>();
    if (c.at("name") != "special_text_in_content_gen") {
      EXPECT_EQ(ids, expected);
      exact += ids == expected;
      continue;
    }
    // The typed control tokens stay text: every special id starts outside the content ranges,
    // and the pieces spell the rendered text.
    EXPECT_NE(ids, expected);
    std::string spelled;
    for (int id : ids) {
      const size_t at = spelled.size();
      spelled += tok.is_special(id) ? tok.piece_string(id) : std::string(tok.piece_text(id));
      if (!tok.is_special(id)) continue;
      for (const jinja::ByteRange& range : r.content_ranges)
        EXPECT_FALSE(at < range.end && range.begin < spelled.size())
            << "special token " << tok.piece_string(id) << " inside message content";
    }
    EXPECT_EQ(spelled, r.text);
    ++guarded;
  }
  EXPECT_GE(exact, 11);
  EXPECT_EQ(guarded, 1);
}

INSTANTIATE_TEST_SUITE_P(Families, ChatIds, ::testing::ValuesIn(kFamilies),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace magnetar
