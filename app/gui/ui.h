// The desktop app's UI layer: UiState (what only the window needs: fonts, dialogs, and one
// struct per panel — ChatPanel, SidebarPanel, DashboardPanel) and one Draw…() function per
// panel, Dear ImGui style. App logic lives in
// AppState (core/app_state.h); panels read it and call its actions.
#pragma once
#include <deque>
#include <string>
#include <vector>

#include <imgui.h>

#include "core/app_state.h"
#include "core/frame_pacing.h"
#include "core/markdown.h"
#include "core/text_util.h"
#include "engine_bridge.h"
#include "magnetar/convert.h"

namespace magnetar::app {

struct Fonts {
  ImFont* regular = nullptr;  // text (with CJK merged in when the system has a CJK font)
  ImFont* bold = nullptr;
  ImFont* italic = nullptr;
  ImFont* mono = nullptr;     // code
  ImFont* heading = nullptr;  // titles
  ImFont* small = nullptr;    // captions, statistics
  ImFont* big = nullptr;      // the dashboard's numbers
  bool cjk = false;
  std::string family;         // "DejaVu Sans", "Segoe UI", or "ImGui default"
};

// Drop of a Hugging Face folder or checkpoint: inspect (AppState::inspection, through the
// engine bridge), choose a type, convert, load.
struct DropDialog {
  bool open = false, just_opened = false;
  std::string source;  // folder or checkpoint
  int weight_type = -1;  // index into the dialog's choices (kStoredTypes first for a GGUF file, then
                         // kWeightTypes); -1: the recommended one once inspected
  std::string out_path;  // the file being made; the dialog closes once it is loaded
};

struct FileDialog {
  bool open = false, just_opened = false;
  std::string directory;
  std::string path_text;  // editable
  struct Entry {
    std::string name;
    bool directory = false;
    bool model = false;      // a Magnetar file
    bool hf_folder = false;  // a folder with config.json
    uint64_t bytes = 0;
  };
  std::vector<Entry> entries;
  std::string error;
};

// The chat panel (ui_chat.cpp): the prompt box, the message being edited or selected, and the
// caches that keep long chats cheap to draw.
struct ChatPanel {
  std::string input;
  bool focus_input = true;
  bool enter_confirmed_composition = false;  // this frame's Enter belongs to an IME composition
  bool scroll_to_bottom = false;
  int editing_index = -1;
  std::string edit_text;
  // One message at a time can be shown as selectable text (a read-only text box over a
  // soft-wrapped copy; ImGui 1.86 has no selectable static text). "Select" or a double-click.
  int selecting_index = -1;
  std::string selecting_chat_id;
  bool focus_selection = false;
  SoftWrappedText selection;
  size_t selection_hash = 0;
  float selection_width = 0;
  // Per-message height cache for clipping long chats (messages off screen become one Dummy).
  std::string heights_for_id;
  float heights_width = 0;
  std::vector<float> heights;
  // Parsed markdown of the messages of the chat on screen, redone when a message changes.
  struct ParsedMessage {
    size_t length = SIZE_MAX;
    size_t hash = 0;
    std::vector<MarkdownBlock> blocks;
  };
  std::string parsed_for_id;
  std::vector<ParsedMessage> parsed;
};

// The sidebar (ui_sidebar.cpp): chat search, and the chat being renamed or deleted.
struct SidebarPanel {
  std::string search;
  std::string rename_id, rename_text;
  bool open_rename = false;
  std::string delete_id;
  bool open_delete = false;
};

// The dashboard (ui_panels.cpp): speed, memory and the UI thread's own cost.
struct DashboardPanel {
  bool visible = true;
  std::deque<float> frame_cpu_ms;       // recent frames' CPU time on the UI thread
  FrameTimeSummary generation_frames;   // the frames drawn during the last answer
  uint64_t rss_bytes = 0;
  double rss_time = -10;
};

struct UiState {
  AppState* app = nullptr;
  EngineBridge* bridge = nullptr;
  Fonts fonts;
  float scale = 1.0f;
  double now = 0;
  MachineProfile machine;
  std::string data_dir, models_dir, exports_dir, settings_path;
  bool settings_dirty = false;
  bool double_clicked = false;  // a left double-click since the last frame, timed by the window system

  ChatPanel chat;
  SidebarPanel sidebar;
  DashboardPanel dashboard;
  // Dialogs (ui_panels.cpp)
  bool open_settings = false, open_chat_settings = false, open_library = false;
  DropDialog drop;
  FileDialog file_dialog;
};

struct WeightTypeChoice {
  WeightType type;
  const char* label;
  const char* note;
};
// The types the drop dialog converts to (and the welcome table's columns), largest first.
inline constexpr WeightTypeChoice kWeightTypes[] = {
    {WeightType::F32, "F32", "exact, twice the size"},
    {WeightType::F16, "F16", "same answers, half of F32"},
    {WeightType::Q8_0, "Q8_0", "8-bit: about half of F16, nearly the same answers"},
    {WeightType::Q6_K, "Q6_K", "6.6-bit: 41% of F16, very close answers"},
    {WeightType::Q5_K_M, "Q5_K_M", "5.7-bit mix: 36% of F16, close answers"},
    {WeightType::Q4_K_M, "Q4_K_M", "4.8-bit mix: 30% of F16, close answers; fast"},
    {WeightType::Q4_0, "Q4_0", "4-bit: 28% of F16, noticeably rougher"},
    {WeightType::Q3_K_M, "Q3_K_M", "3.9-bit mix: 24% of F16, rougher"},
    {WeightType::Q2_K_Mix, "Q2_K", "3.0-bit mix: 19% of F16, much rougher; for RAM-bound big models"},
};
// A GGUF file's own per-tensor types, copied without requantizing: the drop dialog offers it
// first, pre-selected, for sources that have types of their own.
inline constexpr WeightTypeChoice kStoredTypes = {WeightType::Auto, "As stored",
                                                  "the file's own types, copied as they are"};

struct KvTypeChoice {
  KvType type;
  const char* label;
  const char* note;
};
// The KV cache types Settings offers (LoadOptions::kv_type).
inline constexpr KvTypeChoice kKvTypes[] = {
    {KvType::F32, "f32", "exact (default)"},
    {KvType::F16, "f16", "half the memory, nearly the same answers"},
    {KvType::Int8, "int8", "a quarter of the memory, slightly rougher answers"},
};

// ui_theme.cpp
void ApplyTheme(float scale);
Fonts LoadFonts(float scale);
namespace colors {
inline constexpr ImU32 kAccent = IM_COL32(124, 108, 255, 255);
inline constexpr ImU32 kAccentSoft = IM_COL32(124, 108, 255, 60);
inline constexpr ImU32 kUserBubble = IM_COL32(44, 48, 66, 255);
inline constexpr ImU32 kAssistantBubble = IM_COL32(30, 33, 41, 255);
inline constexpr ImU32 kCodeBackground = IM_COL32(17, 19, 24, 255);
inline constexpr ImU32 kGood = IM_COL32(80, 200, 140, 255);
inline constexpr ImU32 kWarn = IM_COL32(240, 180, 70, 255);
inline constexpr ImU32 kBad = IM_COL32(240, 90, 90, 255);
inline constexpr ImU32 kDim = IM_COL32(140, 146, 160, 255);
inline constexpr ImU32 kTokensLine = IM_COL32(124, 108, 255, 255);
inline constexpr ImU32 kBandwidthLine = IM_COL32(80, 200, 200, 255);
}  // namespace colors
ImVec4 ToVec4(ImU32 color);

// ui_chat.cpp
void DrawChat(UiState& ui);
void RenderMarkdown(UiState& ui, const std::vector<MarkdownBlock>& blocks, float wrap_x);
// ui_sidebar.cpp
void DrawSidebar(UiState& ui);
// ui_panels.cpp
void DrawWelcome(UiState& ui);
void DrawDashboard(UiState& ui);
void DrawDialogs(UiState& ui);  // drop/convert, library, file dialog, settings, overflow, notices
void DrawNotices(UiState& ui, ImVec2 area_min, ImVec2 area_max);
// ImGui 1.86 sees one click when both clicks of a double-click fall between two frames (slow
// software-rendered frames on a busy machine): the loop also times presses as they arrive.
inline bool DoubleClicked(const UiState& ui) { return ImGui::IsMouseDoubleClicked(0) || ui.double_clicked; }
// Small shared widgets.
bool AccentButton(const char* label, ImVec2 size = ImVec2(0, 0));
void Gauge(const char* label, double value, double ceiling, const char* unit, ImU32 color, float width);
void HelpText(const char* text);  // dim, wrapped

// gui_app.cpp: what a drop or `magnetar PATH` does.
void HandleDroppedPath(UiState& ui, const std::string& path);
void OpenFileDialog(UiState& ui, const std::string& directory);
std::string DisplayName(const std::string& path);

}  // namespace magnetar::app
