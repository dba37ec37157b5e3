// Inspect once, convert once (the app's drop flow, issue 14): inspect_source's PlannedSource
// converts to the same file as converting the path; the conversion really uses the inspected plan
// (a config edit that keeps the file's size and time is not read again); and any input that
// changed size or time since makes it plan again, so a stale plan is never converted.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/testdata.h"
#include "convert_test_util.h"
#include "magnetar/convert.h"

namespace magnetar::test {
namespace {

namespace fs = std::filesystem;

class PlannedSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
    root_ = make_temp_dir("planned-source");
    source_ = root_ + "/src";
    copy_folder(testdata_path("stories260K-hf/f32"), source_);
  }
  void TearDown() override {
    if (!root_.empty()) remove_tree(root_);  // empty: skipped before SetUp made it
  }

  // Rewrites config.json's rms_norm_eps text (`from` → `to`), keeping its modification time
  // when `keep_time`.
  void edit_config(const std::string& from, const std::string& to, bool keep_time) {
    const std::string path = source_ + "/config.json";
    const fs::file_time_type time = fs::last_write_time(path);
    std::string text = read_file(path);
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, from.size(), to);
    write_file(path, text);
    if (keep_time) fs::last_write_time(path, time);
  }

  float converted_norm_eps(const std::string& path) {
    ModelFile model;
    std::string error;
    EXPECT_TRUE(load_model_file(path, &model, &error)) << error;
    return model.header.norm_eps;
  }

  std::string root_, source_;
};

TEST_F(PlannedSourceTest, ConvertsToTheSameFileAsThePath) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  SourceSummary summary, planned_summary;
  PlannedSource planned;
  ASSERT_TRUE(inspect_source(source_, &summary).is_ok());
  ASSERT_TRUE(inspect_source(source_, &planned_summary, &planned).is_ok());
  ASSERT_NE(planned.plan, nullptr);
  EXPECT_EQ(planned.source_path, source_);
  EXPECT_EQ(planned_summary.n_params, summary.n_params);
  EXPECT_EQ(planned_summary.n_tensors, summary.n_tensors);
  ConvertOptions options;
  options.weight_type = WeightType::Q8_0;
  ASSERT_TRUE(convert_model(planned, root_ + "/planned.mgn", options).is_ok());
  ASSERT_TRUE(convert_model(source_, root_ + "/path.mgn", options).is_ok());
  EXPECT_EQ(read_file(root_ + "/planned.mgn"), read_file(root_ + "/path.mgn"));
}

TEST_F(PlannedSourceTest, TheInspectedPlanIsNotMadeAgain) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  SourceSummary summary;
  PlannedSource planned;
  ASSERT_TRUE(inspect_source(source_, &summary, &planned).is_ok());
  edit_config("\"rms_norm_eps\": 1e-05", "\"rms_norm_eps\": 2e-05", /*keep_time=*/true);
  ASSERT_TRUE(convert_model(planned, root_ + "/planned.mgn", ConvertOptions{}).is_ok());
  EXPECT_FLOAT_EQ(converted_norm_eps(root_ + "/planned.mgn"), 1e-5f);  // the inspected plan
  ASSERT_TRUE(convert_model(source_, root_ + "/path.mgn", ConvertOptions{}).is_ok());
  EXPECT_FLOAT_EQ(converted_norm_eps(root_ + "/path.mgn"), 2e-5f);
}

TEST_F(PlannedSourceTest, AChangedInputIsPlannedAgain) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  SourceSummary summary;
  PlannedSource planned;
  ASSERT_TRUE(inspect_source(source_, &summary, &planned).is_ok());
  edit_config("\"rms_norm_eps\": 1e-05", "\"rms_norm_eps\": 0.00002", /*keep_time=*/false);  // new size
  ASSERT_TRUE(convert_model(planned, root_ + "/planned.mgn", ConvertOptions{}).is_ok());
  EXPECT_FLOAT_EQ(converted_norm_eps(root_ + "/planned.mgn"), 2e-5f);
  // A weights file that vanished: planning again reports it instead of reading stale ranges.
  ASSERT_TRUE(inspect_source(source_, &summary, &planned).is_ok());
  fs::remove(source_ + "/model.safetensors");
  const Status s = convert_model(planned, root_ + "/gone.mgn", ConvertOptions{});
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("model.safetensors"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(root_ + "/gone.mgn"));
}

TEST_F(PlannedSourceTest, AFailedInspectionLeavesNoPlan) {
  SourceSummary summary;
  PlannedSource planned;
  planned.source_path = "stale";
  EXPECT_FALSE(inspect_source(root_ + "/missing", &summary, &planned).is_ok());
  EXPECT_EQ(planned.plan, nullptr);
  EXPECT_TRUE(planned.source_path.empty());
}

}  // namespace
}  // namespace magnetar::test
