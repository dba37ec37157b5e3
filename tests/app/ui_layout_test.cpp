// The app's dialogs drawn headless: Dear ImGui without a window or a renderer (the font atlas
// built in memory, frames begun and ended), the real panels over a plain UiState. Each dialog
// must fit the window whole, without a scrollbar, and leave its values room to be read — what a
// screenshot shows, checked on ImGui's own window rectangles. (The drop dialog once wrapped its
// summary one character per line and ran off the window: a fixed-fit table around wrapped text.)
#include <imgui.h>
#include <imgui_internal.h>  // ImGuiWindow: a dialog's size and scrollbar

#include <gtest/gtest.h>

#include <string>

#include "common/testdata.h"
#include "magnetar/convert.h"
#include "ui.h"

namespace magnetar::app {
namespace {

constexpr float kWindowWidth = 1400, kWindowHeight = 900;  // the e2e test's window

class HeadlessUi : public ::testing::Test {
 protected:
  void SetUp() override {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(kWindowWidth, kWindowHeight);
    ApplyTheme(1.0f);
    ui_.fonts = LoadFonts(1.0f);
    unsigned char* pixels = nullptr;
    int width = 0, height = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &width, &height);
    ui_.app = &app_;
    ui_.scale = 1.0f;
  }
  void TearDown() override { ImGui::DestroyContext(); }

  // A few frames of the dialogs (auto-resizing windows settle after their first frames).
  void DrawFrames(int frames = 4) {
    for (int i = 0; i < frames; ++i) {
      ImGui::GetIO().DeltaTime = 1.0f / 60.0f;
      ImGui::NewFrame();
      DrawDialogs(ui_);
      ImGui::Render();
      ui_.now += 1.0 / 60.0;
    }
  }

  // Drops `source` as the window would, and answers the inspection as the engine thread does.
  void DropInspected(const std::string& source) {
    HandleDroppedPath(ui_, source);
    ASSERT_TRUE(ui_.drop.open) << source;
    SourceSummary summary;
    const Status status = inspect_source(source, &summary);
    ASSERT_TRUE(status.ok()) << status.message();
    app_.inspection.active = false;
    app_.inspection.ok = true;
    app_.inspection.summary = summary;
  }

  static void ExpectFitsTheWindow(const char* name, float min_width) {
    const ImGuiWindow* window = ImGui::FindWindowByName(name);
    ASSERT_NE(window, nullptr) << name << " was never drawn";
    EXPECT_TRUE(window->Active) << name;
    EXPECT_LE(window->Size.y, kWindowHeight) << name << " is taller than the window";
    EXPECT_LE(window->Size.x, kWindowWidth) << name << " is wider than the window";
    EXPECT_GE(window->Size.x, min_width) << name << " is too narrow to read";
    EXPECT_FALSE(window->ScrollbarY) << name << " needs a scrollbar";
  }

  AppState app_;
  UiState ui_;
};

TEST_F(HeadlessUi, DropDialogForAHuggingFaceFolderFitsTheWindow) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  DropInspected(test::testdata_path("stories260K-hf/f32"));
  DrawFrames();
  ExpectFitsTheWindow("Add a model", 500);
}

TEST_F(HeadlessUi, DropDialogForAGgufFileFitsTheWindow) {
  MAGNETAR_REQUIRE_TESTDATA("gguf-kquants/tiny-gemma-Q4_K_M.gguf");
  DropInspected(test::testdata_path("gguf-kquants/tiny-gemma-Q4_K_M.gguf"));
  DrawFrames();
  ExpectFitsTheWindow("Add a model", 500);
}

TEST_F(HeadlessUi, DropDialogWithALongErrorFitsTheWindow) {
  MAGNETAR_REQUIRE_TESTDATA("stories260K-hf/f32");
  HandleDroppedPath(ui_, test::testdata_path("stories260K-hf/f32"));
  app_.inspection.active = false;
  app_.inspection.ok = false;
  app_.inspection.error = "config.json: " + std::string(2000, 'x');
  DrawFrames();
  ExpectFitsTheWindow("Add a model", 300);
}

TEST_F(HeadlessUi, SettingsAndModelsDialogsFitTheWindow) {
  ui_.open_settings = true;
  DrawFrames();
  ExpectFitsTheWindow("Settings", 300);
  ImGui::ClosePopupToLevel(0, false);
  ui_.open_library = true;
  DrawFrames();
  ExpectFitsTheWindow("Models", 300);
}

}  // namespace
}  // namespace magnetar::app
