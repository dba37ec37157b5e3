// The sidebar: brand, New chat, search, the conversation list (rename, delete with
// confirmation), and the way to models and settings.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>

#include "core/text_util.h"
#include "ui.h"

namespace magnetar::app {

void DrawSidebar(UiState& ui) {
  AppState& app = *ui.app;
  const float s = ui.scale;

  // Brand.
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float r = 9 * s;
  const ImVec2 center(p.x + r * 1.9f, p.y + 14 * s);
  draw->AddCircleFilled(center, r * 1.9f, IM_COL32(124, 108, 255, 40), 32);
  draw->AddLine(ImVec2(center.x - r * 1.7f, center.y + r * 1.7f), ImVec2(center.x + r * 1.7f, center.y - r * 1.7f),
                IM_COL32(170, 160, 255, 200), 2.0f * s);
  draw->AddCircleFilled(center, r * 0.75f, IM_COL32(235, 232, 255, 255), 24);
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + 3.8f * r + 8 * s);
  ImGui::PushFont(ui.fonts.heading);
  ImGui::TextUnformatted("Magnetar");
  ImGui::PopFont();
  ImGui::Dummy(ImVec2(0, 4 * s));

  if (AccentButton("+  New chat", ImVec2(-1, 34 * s))) {
    app.new_conversation();
    ui.chat.focus_input = true;
  }
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##search", "Search chats", &ui.sidebar.search);
  ImGui::Dummy(ImVec2(0, 2 * s));

  // The list.
  const float footer = 3 * (ImGui::GetFrameHeight() + ImGui::GetStyle().ItemSpacing.y) + 8 * s;
  ImGui::BeginChild("##chats", ImVec2(0, ImGui::GetContentRegionAvail().y - footer), false);
  const std::vector<std::string> ids = app.store.search(ui.sidebar.search);
  if (ids.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ToVec4(colors::kDim));
    ImGui::TextWrapped("%s", app.store.conversations().empty() ? "No chats yet." : "No chat matches.");
    ImGui::PopStyleColor();
  }
  for (const std::string& id : ids) {
    const Conversation* c = app.store.find(id);
    if (!c) continue;
    ImGui::PushID(id.c_str());
    const bool selected = id == app.active_id;
    const bool writing = app.generation.active && app.generation.conversation_id == id;
    std::string label = c->title;
    if (writing) label = "● " + label;
    ImGui::PushStyleVar(ImGuiStyleVar_SelectableTextAlign, ImVec2(0.0f, 0.5f));
    if (ImGui::Selectable(label.c_str(), selected, 0, ImVec2(0, 28 * s))) {
      app.select(id);
      ui.chat.editing_index = -1;
      ui.chat.scroll_to_bottom = true;
      ui.chat.focus_input = true;
    }
    ImGui::PopStyleVar();
    if (ImGui::IsItemHovered() && DoubleClicked(ui)) {
      ui.sidebar.rename_id = id;
      ui.sidebar.rename_text = c->title;
      ui.sidebar.open_rename = true;
    }
    if (ImGui::BeginPopupContextItem("##context")) {
      if (ImGui::MenuItem("Rename…")) {
        ui.sidebar.rename_id = id;
        ui.sidebar.rename_text = c->title;
        ui.sidebar.open_rename = true;
      }
      if (ImGui::MenuItem("Copy as Markdown")) ImGui::SetClipboardText(conversation_to_markdown(*c).c_str());
      ImGui::Separator();
      if (ImGui::MenuItem("Delete…")) {
        ui.sidebar.delete_id = id;
        ui.sidebar.open_delete = true;
      }
      ImGui::EndPopup();
    }
    ImGui::PopID();
  }
  ImGui::EndChild();

  ImGui::Separator();
  if (ImGui::Button("Models", ImVec2(-1, 0))) ui.open_library = true;
  if (ImGui::Button("Settings", ImVec2(-1, 0))) ui.open_settings = true;
  ImGui::PushFont(ui.fonts.small);
  ImGui::TextDisabled("Right-click a chat for more");
  ImGui::PopFont();

  // Rename and delete dialogs.
  if (ui.sidebar.open_rename) {
    ImGui::OpenPopup("Rename chat");
    ui.sidebar.open_rename = false;
  }
  if (ImGui::BeginPopupModal("Rename chat", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    ImGui::SetNextItemWidth(320 * s);
    const bool enter = ImGui::InputText("##title", &ui.sidebar.rename_text, ImGuiInputTextFlags_EnterReturnsTrue);
    if (AccentButton("Rename") || enter) {
      Status status = app.rename(ui.sidebar.rename_id, ui.sidebar.rename_text);
      if (!status) app.post(Notice::Level::Error, status.message(), ui.now);
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  if (ui.sidebar.open_delete) {
    ImGui::OpenPopup("Delete chat?");
    ui.sidebar.open_delete = false;
  }
  if (ImGui::BeginPopupModal("Delete chat?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    const Conversation* c = app.store.find(ui.sidebar.delete_id);
    ImGui::Text("Delete \"%s\"?", c ? c->title.c_str() : "");
    ImGui::TextDisabled("Its file is removed; this cannot be undone.");
    ImGui::PushStyleColor(ImGuiCol_Button, ToVec4(IM_COL32(150, 60, 60, 255)));
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ToVec4(IM_COL32(180, 72, 72, 255)));
    if (ImGui::Button("Delete")) {
      Status status = app.remove(ui.sidebar.delete_id);
      if (!status) app.post(Notice::Level::Error, status.message(), ui.now);
      ImGui::CloseCurrentPopup();
    }
    ImGui::PopStyleColor(2);
    ImGui::SameLine();
    if (ImGui::Button("Keep it") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

}  // namespace magnetar::app
