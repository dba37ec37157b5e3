// settings.json: round trip, first start (no file), damaged files fall back to defaults.
#include "core/settings_file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/testdata.h"
#include "core/text_util.h"

namespace magnetar::app {
namespace {

TEST(SettingsFile, RoundTripAndFirstStart) {
  const std::string dir = test::make_temp_dir("settings");
  const std::string path = dir + "/settings.json";
  Settings settings;
  std::vector<std::string> models;
  ASSERT_TRUE(load_settings(path, &settings, &models).is_ok());  // no file yet: defaults
  EXPECT_EQ(settings.threads, 0);
  EXPECT_EQ(settings.kv_type, KvType::F32);
  EXPECT_TRUE(models.empty());

  settings.threads = 3;
  settings.context_length = 1024;
  settings.system_prompt = "Answer in haiku.";
  settings.sampling.temperature = 0.25f;
  settings.sampling.max_tokens = 99;
  settings.kv_type = KvType::F16;
  ASSERT_TRUE(save_settings(path, settings, {"/m/a.mgn", "/m/b.mgn"}).is_ok());
  Settings back;
  ASSERT_TRUE(load_settings(path, &back, &models).is_ok());
  EXPECT_EQ(back.threads, 3);
  EXPECT_EQ(back.context_length, 1024);
  EXPECT_EQ(back.system_prompt, "Answer in haiku.");
  EXPECT_FLOAT_EQ(back.sampling.temperature, 0.25f);
  EXPECT_EQ(back.sampling.max_tokens, 99);
  EXPECT_EQ(back.kv_type, KvType::F16);
  std::string text;
  ASSERT_TRUE(read_whole_file(path, &text).is_ok());
  EXPECT_NE(text.find("\"kv_cache_type\": \"f16\""), std::string::npos) << text;
  EXPECT_EQ(models, (std::vector<std::string>{"/m/a.mgn", "/m/b.mgn"}));
  test::remove_tree(dir);
}

TEST(SettingsFile, DamagedFilesKeepDefaults) {
  const std::string dir = test::make_temp_dir("settings-bad");
  const std::string path = dir + "/settings.json";
  for (const char* text : {"{not json", "[1,2]", "{\"threads\": \"many\"}", "{\"threads\": -4}",
                           "{\"kv_cache_type\": \"q4_0\"}", "{\"kv_cache_type\": 16}"}) {
    std::ofstream(path, std::ios::trunc) << text;
    Settings settings;
    settings.threads = 7;  // must stay untouched on failure
    settings.kv_type = KvType::Int8;
    std::vector<std::string> models{"keep"};
    EXPECT_FALSE(load_settings(path, &settings, &models).is_ok()) << text;
    EXPECT_EQ(settings.threads, 7) << text;
    EXPECT_EQ(settings.kv_type, KvType::Int8) << text;
    EXPECT_EQ(models.size(), 1u) << text;
  }
  test::remove_tree(dir);
}

}  // namespace
}  // namespace magnetar::app
