// Hostile converter inputs (issue 15), one test per class: JSON nested past the bound in every
// reader, fields of the wrong type, untrusted values kept out of messages, a config describing
// fewer layers than the weights hold, outputs that are inputs under another name or not regular
// files, stale temporary files of dead writers. Each expects a clear error, an untouched source
// and nothing left in the output folder.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/testdata.h"
#include "convert/json_input.h"
#include "convert_test_util.h"
#include "magnetar/convert.h"
#include "tokenizer/hf_tokenizer.h"

#ifndef _WIN32
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace magnetar::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Far past any stack: the old converter recursed this deep while building its message.
constexpr int kHostileDepth = 100000;

std::string nested_array(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// Replaces the JSON header text of a safetensors file (its data section is kept).
void edit_safetensors_header_text(const std::string& path, const std::function<void(std::string&)>& edit) {
  std::string bytes = read_file(path);
  uint64_t length = 0;
  std::memcpy(&length, bytes.data(), 8);
  std::string header = bytes.substr(8, length);
  const std::string data = bytes.substr(8 + length);
  edit(header);
  length = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &length, 8);
  write_file(path, out + header + data);
}

using ConvertHardeningTest = ConvertFailureTest;

// ---- JSON ------------------------------------------------------------------------------------

TEST(JsonInput, DepthIsMeasuredOutsideStringsAndBounded) {
  EXPECT_EQ(convert::json_nesting_depth("{\"a\": [1, {\"b\": []}]}", 64), 4);
  EXPECT_EQ(convert::json_nesting_depth("{\"a\": \"[[[[\\\"[[[\"}", 64), 1);  // brackets in a string
  EXPECT_EQ(convert::json_nesting_depth(nested_array(kHostileDepth), 64), 65);  // stops early
  json j;
  EXPECT_TRUE(convert::parse_json_object("{\"a\": " + nested_array(convert::kMaxJsonDepth - 1) + "}",
                                         "x.json", &j).is_ok());
  Status s = convert::parse_json_object("{\"a\": " + nested_array(convert::kMaxJsonDepth) + "}",
                                        "x.json", &j);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("x.json"), std::string::npos);
  EXPECT_NE(s.message().find("nested deeper"), std::string::npos);
  EXPECT_FALSE(convert::parse_json_object("[1, 2]", "x.json", &j).is_ok());  // not an object
  EXPECT_FALSE(convert::parse_json_object("{\"a\": ", "x.json", &j).is_ok());
}

// tokenizer.json (a folder's, or the copy stored in a model file) goes through the same bound.
TEST(JsonInput, TokenizerJsonIsDepthBoundedAndTypeChecked) {
  tok::HfTokenizer tokenizer;
  Status s = tokenizer.load_files("{\"model\": " + nested_array(kHostileDepth) + "}", "");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("tokenizer.json: JSON nested deeper"), std::string::npos) << s.message();
  s = tokenizer.load_files("{}", "{\"a\": " + nested_array(kHostileDepth) + "}");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("tokenizer_config.json: JSON nested deeper"), std::string::npos) << s.message();
  EXPECT_FALSE(tokenizer.load_files("[1]", "").is_ok());  // not an object
  EXPECT_FALSE(tokenizer.load_stored("{\"t\": " + nested_array(kHostileDepth) + "}").is_ok());
  // A stored section whose "format" is not a string: an error, not nlohmann's type_error.
  for (const char* stored : {"{\"format\": 5}", "{\"format\": [\"x\"]}", "{\"format\": null}", "[]"}) {
    SCOPED_TRACE(stored);
    s = tokenizer.load_stored(stored);
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("not a stored tokenizer.json"), std::string::npos) << s.message();
  }
}

TEST(JsonInput, ExcerptIsCutAtACharacterBoundary) {
  const json long_string = std::string(10000, 'x');
  EXPECT_LE(convert::json_excerpt(long_string, 80).size(), 80u + 3);  // + the 3-byte "…"
  const json accents = std::string(200, '\xc3');  // invalid UTF-8 must not throw
  EXPECT_NO_THROW((void)convert::json_excerpt(accents, 50));
  const json utf8 = "ééééééééééééééééééééééééééééééééééééééééééééééé";
  const std::string cut = convert::json_excerpt(utf8, 20);
  EXPECT_EQ(cut.substr(cut.size() - 3), "…");
  EXPECT_EQ(json::parse("\"" + cut.substr(1, cut.size() - 4) + "\"").get<std::string>().size() % 2, 0u);
}

TEST_F(ConvertHardeningTest, DeeplyNestedJsonInEveryReaderIsAnError) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  const std::string deep = nested_array(kHostileDepth);
  struct Case {
    const char* folder;
    const char* file;
  };
  for (const Case& c : {Case{"stories260K-hf/f32", "config.json"},
                        Case{"stories260K-hf/f32", "generation_config.json"},
                        Case{"stories260K-hf/f32", "tokenizer_config.json"},
                        Case{"stories260K-hf/f32-sharded", "model.safetensors.index.json"}}) {
    SCOPED_TRACE(c.file);
    const std::string src = copy(c.folder);
    std::string text = read_file(src + "/" + c.file);
    text.insert(text.find('{') + 1, "\"eos_token_id\": " + deep + ", ");
    write_file(src + "/" + c.file, text);
    expect_error(src, {c.file, "nested deeper"});
  }
  const std::string src = copy("stories260K-hf/f32");
  edit_safetensors_header_text(src + "/model.safetensors", [&](std::string& h) {
    const std::string key = "\"model.norm.weight\":";
    const size_t shape = h.find("\"shape\"", h.find(key));
    h.replace(shape, 7, "\"shape\": " + deep + ", \"unused\"");
  });
  expect_error(src, {"model.safetensors", "nested deeper"});
}

TEST_F(ConvertHardeningTest, ChatTemplateListEntriesAreTypeChecked) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  const std::string src = copy("stories260K-hf/f32");
  for (const json& entry : {json{{"name", 5}, {"template", "x"}}, json{{"name", "default"}},
                            json{{"name", "default"}, {"template", 7}}, json("default")}) {
    SCOPED_TRACE(entry.dump());
    edit_json(src + "/tokenizer_config.json",
              [&](json& j) { j["chat_template"] = json::array({entry}); });
    expect_error(src, {"tokenizer_config.json", "chat_template"});
  }
}

TEST_F(ConvertHardeningTest, EveryConfigFieldIsTypeChecked) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  struct Case {
    const char* key;
    json value;
    const char* expect;
  };
  for (const Case& c : {Case{"tie_word_embeddings", "yes", "true or false"},
                        Case{"attention_bias", 0, "true or false"},
                        Case{"mlp_bias", json::array(), "true or false"},
                        Case{"hidden_act", 5, "must be a string"},
                        Case{"rope_theta", "big", "must be a number"},
                        Case{"num_key_value_heads", 1.5, "not an integer"},
                        Case{"bos_token_id", json::object(), "not a token id"}}) {
    SCOPED_TRACE(c.key);
    const std::string src = copy("stories260K-hf/f32");
    edit_json(src + "/config.json", [&](json& j) { j[c.key] = c.value; });
    expect_error(src, {"config.json", c.key, c.expect});
  }
}

TEST_F(ConvertHardeningTest, HugeValuesAreAbridgedInMessages) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  const std::string src = copy("stories260K-hf/f32");
  const std::string huge(4 << 20, 'x');
  edit_json(src + "/config.json", [&](json& j) { j["num_hidden_layers"] = huge; });
  expect_error(src, {"config.json", "num_hidden_layers", "…"});
  edit_json(src + "/config.json", [&](json& j) {
    j["num_hidden_layers"] = 5;
    j["rope_scaling"] = {{"type", huge}};
  });
  expect_error(src, {"config.json", "rope_scaling", "…"});
}

TEST_F(ConvertHardeningTest, ConfigWithFewerLayersThanTheWeightsIsRefused) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  for (const char* folder : {"stories260K-hf/f32", "stories260K-hf/f32-sharded"}) {
    const std::string src = copy(folder);
    edit_json(src + "/config.json", [](json& j) { j["num_hidden_layers"] = 3; });
    expect_error(src, {"config.json", "num_hidden_layers is 3", "model.layers.3."});
  }
}

// ---- Outputs ---------------------------------------------------------------------------------

TEST_F(ConvertHardeningTest, OutputThatIsAnInputIsRefusedAndTheInputKept) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  const std::string llama2c = copy("stories260K");
  const std::string checkpoint = llama2c + "/stories260K.bin";
  const std::string sharded = copy("stories260K-hf/f32-sharded");
  const std::string shard = sharded + "/model-00002-of-00002.safetensors";
  struct Case {
    std::string source, victim, out;
  };
  std::vector<Case> cases = {
      {checkpoint, checkpoint, checkpoint},                             // convert X X
      {checkpoint, llama2c + "/tok512.model", llama2c + "/tok512.model"},  // its tokenizer
      {sharded, shard, shard},                                          // a shard
      {sharded, sharded + "/config.json", sharded + "/config.json"},
      {sharded + "/config.json", sharded + "/tokenizer.model", sharded + "/tokenizer.model"}};
  std::error_code ec;
  fs::create_hard_link(shard, root_ + "/hard-link.mgn", ec);
  if (!ec) cases.push_back({sharded, shard, root_ + "/hard-link.mgn"});
  fs::create_symlink(checkpoint, root_ + "/sym-link.mgn", ec);
  if (!ec) cases.push_back({checkpoint, checkpoint, root_ + "/sym-link.mgn"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.out);
    const std::string before = read_file(c.victim);
    Status s = convert_model(c.source, c.out, ConvertOptions{});
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("an input of this conversion"), std::string::npos) << s.message();
    EXPECT_EQ(read_file(c.victim), before) << "the input was changed";
  }
  for (const std::string& dir : {llama2c, sharded})
    for (const std::string& name : list_dir(dir))
      EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name << " left in " << dir;
}

#ifndef _WIN32
TEST_F(ConvertHardeningTest, NonRegularOutputTargetsAreRefused) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  const std::string fifo = root_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& out : {std::string("/dev/null"), fifo}) {
    SCOPED_TRACE(out);
    Status s = convert_model(testdata_path("stories260K/stories260K.bin"), out, ConvertOptions{});
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find("not a regular file"), std::string::npos) << s.message();
    struct stat st {};
    ASSERT_EQ(::stat(out.c_str(), &st), 0);
    EXPECT_FALSE(S_ISREG(st.st_mode)) << out << " was replaced by a regular file";
  }
  EXPECT_FALSE(fs::exists("/dev/null.tmp-" + std::to_string(::getpid())));
}
#endif

TEST_F(ConvertHardeningTest, StaleTemporaryFilesOfDeadWritersAreRemoved) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  const std::string out = out_dir_ + "/model.mgn";
  // No process has this id (above every pid_max and Windows' id range in practice).
  const std::string dead = out + ".tmp-2147483646";
  const std::string unrelated = out_dir_ + "/other.mgn.tmp-2147483646";
  const std::string not_a_pid = out + ".tmp-abc";
  for (const std::string& f : {dead, unrelated, not_a_pid}) write_file(f, "partial");
#ifndef _WIN32
  const std::string live = out + ".tmp-" + std::to_string(::getppid());  // our parent runs
  write_file(live, "partial");
#endif
  ASSERT_TRUE(convert_model(testdata_path("stories260K/stories260K.bin"), out, ConvertOptions{}).is_ok());
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(unrelated));   // another output's temp file is not ours to judge
  EXPECT_TRUE(fs::exists(not_a_pid));   // not a writer's name
#ifndef _WIN32
  EXPECT_TRUE(fs::exists(live));        // a running writer keeps its file
#endif
  // The app's sweep of its model library: every dead writer's file, whatever the model's name.
  write_file(out_dir_ + "/third.mgn.tmp-2147483645", "partial");
  EXPECT_EQ(remove_stale_conversion_files(out_dir_), 2);
  EXPECT_FALSE(fs::exists(unrelated));
  EXPECT_TRUE(fs::exists(not_a_pid));
#ifndef _WIN32
  EXPECT_TRUE(fs::exists(live));
#endif
}

}  // namespace
}  // namespace magnetar::test
