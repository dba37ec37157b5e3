// Bad inputs: each case builds a broken copy of a test folder in a temp dir, converts it, and
// checks that the error names the file and the problem and that nothing is left in the output
// folder (no model, no temporary file).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/testdata.h"
#include "convert_test_util.h"
#include "magnetar/convert.h"

namespace magnetar::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using ConvertErrorTest = ConvertFailureTest;

TEST_F(ConvertErrorTest, MissingSource) {
  expect_error(root_ + "/nowhere", {"nowhere", "not found"});
}

TEST_F(ConvertErrorTest, MissingConfigJson) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  fs::remove(src + "/config.json");
  expect_error(src, {src, "no config.json"});
}

TEST_F(ConvertErrorTest, MalformedConfigJson) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  write_file(src + "/config.json", "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": ");
  expect_error(src, {"config.json", "malformed JSON"});
}

TEST_F(ConvertErrorTest, ConfigValueOfTheWrongType) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_json(src + "/config.json", [](json& j) { j["num_hidden_layers"] = "five"; });
  expect_error(src, {"config.json", "num_hidden_layers", "must be a number"});
}

TEST_F(ConvertErrorTest, UnknownArchitectureIsNamedAndSupportedOnesListed) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_json(src + "/config.json", [](json& j) { j["architectures"] = {"FalconForCausalLM"}; });
  expect_error(src, {"config.json", "FalconForCausalLM", "not supported", "LlamaForCausalLM",
                     "MistralForCausalLM", "GemmaForCausalLM", "Gemma2ForCausalLM", "Qwen2ForCausalLM",
                     "Qwen3ForCausalLM", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration",
                     "Phi3ForCausalLM"});
}

// RoPE scalings that are not implemented are refused by name, never run wrongly.
TEST_F(ConvertErrorTest, UnimplementedRopeScalingIsNamed) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  for (const char* type : {"longrope", "yarn", "dynamic"}) {
    std::string src = copy("stories260K-hf/f32");
    edit_json(src + "/config.json", [&](json& j) {
      j["rope_scaling"] = {{"rope_type", type}, {"factor", 4.0}};
    });
    expect_error(src, {"config.json", "rope_scaling", type, "not supported"});
  }
  std::string src = copy("stories260K-hf/f32");
  edit_json(src + "/config.json", [](json& j) {  // Phi-3's older spelling: "type"
    j["architectures"] = {"Phi3ForCausalLM"};
    j["rope_scaling"] = {{"type", "su"}, {"short_factor", {1.0}}, {"long_factor", {1.0}}};
  });
  expect_error(src, {"rope_scaling", "\"su\"", "not supported"});
}

TEST_F(ConvertErrorTest, Llama3RopeScalingNeedsItsFields) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_json(src + "/config.json", [](json& j) {
    j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}};
  });
  expect_error(src, {"high_freq_factor"});
}

TEST_F(ConvertErrorTest, QwenSlidingWindowLayersAreRefused) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_json(src + "/config.json", [](json& j) {
    j["architectures"] = {"Qwen2ForCausalLM"};
    j["use_sliding_window"] = true;
  });
  expect_error(src, {"use_sliding_window", "not supported"});
}

TEST_F(ConvertErrorTest, IrregularLayerTypesAreRefused) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_json(src + "/config.json", [](json& j) {
    j["architectures"] = {"Gemma2ForCausalLM"};
    const int n = j["num_hidden_layers"];
    j["layer_types"] = json::array();
    for (int i = 0; i < n; ++i) j["layer_types"].push_back(i == 0 ? "full_attention" : "sliding_attention");
  });
  expect_error(src, {"layer_types", "repeating pattern"});
}

TEST_F(ConvertErrorTest, AttentionBiasOutsideQwen2IsRefused) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_json(src + "/config.json", [](json& j) { j["attention_bias"] = true; });
  expect_error(src, {"attention_bias", "not supported", "LlamaForCausalLM"});
}

TEST_F(ConvertErrorTest, MissingTokenizerModel) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  fs::remove(src + "/tokenizer.model");
  fs::remove(src + "/tokenizer.json");
  expect_error(src, {src, "no tokenizer.model or tokenizer.json"});
}

TEST_F(ConvertErrorTest, CorruptTokenizerModel) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  write_file(src + "/tokenizer.model", "this is not a protobuf");
  expect_error(src, {"tokenizer.model", "not a valid SentencePiece model"});
}

TEST_F(ConvertErrorTest, MalformedTokenizerConfig) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  write_file(src + "/tokenizer_config.json", "[1, 2");
  expect_error(src, {"tokenizer_config.json", "malformed JSON"});
}

// Phi-3's turn markers are added tokens past its tokenizer.model: they must continue it.
TEST_F(ConvertErrorTest, AddedTokensThatCannotJoinTheTokenizerModel) {
  MAGNETAR_REQUIRE_TESTDATA("models/tiny-phi3");
  const std::string src = copy("models/tiny-phi3");
  const std::string config = src + "/tokenizer_config.json";
  const json original = json::parse(read_file(config));
  auto with_added = [&](const std::function<void(json&)>& edit) {
    json j = original;
    edit(j["added_tokens_decoder"]);
    write_file(config, j.dump(2));
  };
  with_added([](json& a) { a["32012"] = a["32010"], a.erase("32010"); });
  expect_error(src, {"tokenizer_config.json", "added token 32012", "gap", "32010"});
  with_added([](json& a) {
    for (int id = 32011; id <= 32064; ++id) a[std::to_string(id)] = {{"content", "<|x" + std::to_string(id) + "|>"}};
  });
  expect_error(src, {"tokenizer_config.json", "added token 32064", "vocab_size 32064"});
  with_added([](json& a) { a["32009"]["content"] = "<|user|>"; });
  expect_error(src, {"tokenizer_config.json", "\"<|user|>\" appears twice"});
  with_added([](json& a) { a["32010"]["content"] = "<s>"; });
  expect_error(src, {"tokenizer_config.json", "\"<s>\" is already piece 1"});
  with_added([](json& a) { a["first"] = {{"content", "<|first|>"}}; });
  expect_error(src, {"tokenizer_config.json", "added_tokens_decoder entry \"first\""});
  with_added([](json& a) { a["32010"]["content"] = 7; });
  expect_error(src, {"tokenizer_config.json", "added_tokens_decoder entry \"32010\""});
}

TEST_F(ConvertErrorTest, MalformedGenerationConfig) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  write_file(src + "/generation_config.json", "{\"eos_token_id\": [2, ");
  expect_error(src, {"generation_config.json", "malformed JSON"});
}

TEST_F(ConvertErrorTest, EosIdThatIsNotATokenId) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_json(src + "/generation_config.json", [](json& j) { j["eos_token_id"] = {2, "</s>"}; });
  expect_error(src, {"generation_config.json", "eos_token_id", "not a token id"});
  edit_json(src + "/generation_config.json", [](json& j) { j["eos_token_id"] = 4096; });
  expect_error(src, {"eos id 4096", "outside the vocabulary"});
}

TEST_F(ConvertErrorTest, MissingWeights) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  fs::remove(src + "/model.safetensors");
  expect_error(src, {src, "no model.safetensors"});
}

TEST_F(ConvertErrorTest, MissingTensor) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_safetensors_header(src + "/model.safetensors",
                          [](json& h) { h.erase("model.layers.3.mlp.up_proj.weight"); });
  expect_error(src, {src, "missing tensor model.layers.3.mlp.up_proj.weight"});
}

TEST_F(ConvertErrorTest, TensorShapeDisagreesWithConfig) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  // 8 KV heads of 8 dims: k_proj should be [64, 64] but the file holds [32, 64].
  edit_json(src + "/config.json", [](json& j) { j["num_key_value_heads"] = 8; });
  expect_error(src, {"model.safetensors", "model.layers.0.self_attn.k_proj.weight",
                     "shape [32, 64]", "expected [64, 64]"});
}

TEST_F(ConvertErrorTest, ShapeDisagreesWithByteRange) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_safetensors_header(src + "/model.safetensors", [](json& h) {
    h["model.layers.0.self_attn.q_proj.weight"]["shape"] = {64, 65};
  });
  expect_error(src, {"model.safetensors", "model.layers.0.self_attn.q_proj.weight", "needs"});
}

TEST_F(ConvertErrorTest, UnsupportedTensorDtype) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_safetensors_header(src + "/model.safetensors", [](json& h) {
    h["model.norm.weight"]["dtype"] = "I32";  // same byte size, a type Magnetar does not read
  });
  expect_error(src, {"model.safetensors", "model.norm.weight", "dtype I32", "F32, F16, BF16"});
}

TEST_F(ConvertErrorTest, TruncatedShard) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32-sharded");
  const std::string shard = src + "/model-00002-of-00002.safetensors";
  std::string bytes = read_file(shard);
  write_file(shard, bytes.substr(0, bytes.size() - 1000));
  expect_error(src, {"model-00002-of-00002.safetensors", "truncated"});
}

TEST_F(ConvertErrorTest, ShardTooShortForAHeader) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32-sharded");
  write_file(src + "/model-00001-of-00002.safetensors", "abc");
  expect_error(src, {"model-00001-of-00002.safetensors", "truncated"});
}

TEST_F(ConvertErrorTest, MissingShard) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32-sharded");
  fs::remove(src + "/model-00002-of-00002.safetensors");
  expect_error(src, {"model-00002-of-00002.safetensors", "missing"});
}

TEST_F(ConvertErrorTest, IndexPointsAtTheWrongShard) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32-sharded");
  edit_json(src + "/model.safetensors.index.json", [](json& j) {
    j["weight_map"]["model.norm.weight"] =
        j["weight_map"]["model.norm.weight"] == "model-00001-of-00002.safetensors"
            ? "model-00002-of-00002.safetensors"
            : "model-00001-of-00002.safetensors";
  });
  expect_error(src, {"missing tensor model.norm.weight"});
}

TEST_F(ConvertErrorTest, MalformedIndex) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32-sharded");
  write_file(src + "/model.safetensors.index.json", "{\"weight_map\": ");
  expect_error(src, {"model.safetensors.index.json", "malformed JSON"});
}

TEST_F(ConvertErrorTest, IndexNamesAFileOutsideTheFolder) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32-sharded");
  edit_json(src + "/model.safetensors.index.json",
            [](json& j) { j["weight_map"]["model.norm.weight"] = "../elsewhere.safetensors"; });
  expect_error(src, {"model.safetensors.index.json", "../elsewhere.safetensors",
                     "not a file name"});
}

TEST_F(ConvertErrorTest, HeaderLengthPointsOutsideTheFile) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  set_safetensors_header_length(src + "/model.safetensors", 1ull << 40);
  expect_error(src, {"model.safetensors", "header length", "outside the file"});
}

TEST_F(ConvertErrorTest, HeaderLengthCutsTheJson) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  set_safetensors_header_length(src + "/model.safetensors", 100);
  expect_error(src, {"model.safetensors", "malformed JSON"});
}

TEST_F(ConvertErrorTest, TensorOffsetsOutsideTheFile) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_safetensors_header(src + "/model.safetensors", [](json& h) {
    h["model.norm.weight"]["data_offsets"] = {50000000, 50000256};
  });
  expect_error(src, {"model.safetensors", "model.norm.weight", "outside"});
}

TEST_F(ConvertErrorTest, OverlappingTensorOffsets) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_safetensors_header(src + "/model.safetensors", [](json& h) {
    // Same size as the layer-0 input norm, placed over the middle of the embedding.
    h["model.layers.1.input_layernorm.weight"]["data_offsets"] = {1024, 1280};
  });
  expect_error(src, {"model.safetensors", "overlapping", "model.embed_tokens.weight",
                     "model.layers.1.input_layernorm.weight"});
}

TEST_F(ConvertErrorTest, ReversedTensorOffsets) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K-hf/f32");
  edit_safetensors_header(src + "/model.safetensors", [](json& h) {
    auto& o = h["model.norm.weight"]["data_offsets"];
    o = {o[1], o[0]};
  });
  expect_error(src, {"model.safetensors", "model.norm.weight", "reversed"});
}

TEST_F(ConvertErrorTest, TruncatedLlama2cCheckpoint) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K");
  std::string bytes = read_file(src + "/stories260K.bin");
  write_file(src + "/stories260K.bin", bytes.substr(0, bytes.size() - 4096));
  expect_error(src + "/stories260K.bin", {"stories260K.bin", "truncated"});
}

TEST_F(ConvertErrorTest, Llama2cHeaderThatIsNotOne) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K");
  std::string bytes = read_file(src + "/stories260K.bin");
  const int32_t bad_heads = 7;  // 64 is not a multiple of 7
  std::memcpy(bytes.data() + 12, &bad_heads, 4);
  write_file(src + "/stories260K.bin", bytes);
  expect_error(src + "/stories260K.bin", {"stories260K.bin", "not a llama2.c checkpoint", "n_heads"});
}

TEST_F(ConvertErrorTest, Llama2cWithoutTokenizer) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  const std::string src = root_ + "/lonely";
  fs::create_directory(src);
  write_file(src + "/stories260K.bin", read_file(testdata_path("stories260K/stories260K.bin")));
  expect_error(src + "/stories260K.bin", {"no tokenizer found", "tok512.bin", "--tokenizer"});
  expect_error(src + "/stories260K.bin", {"missing.model", "not found"},
               src + "/missing.model");
}

TEST_F(ConvertErrorTest, Llama2cTokenizerOfTheWrongSize) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  MAGNETAR_REQUIRE_TESTDATA("gemma/tiny-gemma/tokenizer.model");
  expect_error(testdata_path("stories260K/stories260K.bin"), {"1024", "vocab_size 512"},
               testdata_path("gemma/tiny-gemma/tokenizer.model"));
}

TEST_F(ConvertErrorTest, TruncatedLlama2cVocabulary) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  std::string src = copy("stories260K");
  std::string bytes = read_file(src + "/tok512.bin");
  write_file(src + "/tok512.bin", bytes.substr(0, bytes.size() - 3));
  expect_error(testdata_path("stories260K/stories260K.bin"), {"tok512.bin"},
               src + "/tok512.bin");
}

TEST_F(ConvertErrorTest, OutputFolderMissing) {
  MAGNETAR_REQUIRE_CONVERT_TEST_DATA();
  ConvertOptions options;
  Status s = convert_model(testdata_path("stories260K-hf/f32"), root_ + "/no/such/dir/m.mgn", options);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("does not exist"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace magnetar::test
