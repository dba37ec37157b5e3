// The chat panel: a top bar (title, model, context meter, actions), the transcript (markdown,
// streaming, auto-scroll only at the bottom, off-screen messages clipped through a height cache)
// and the input box (Enter sends, Shift+Enter newline, Esc or Stop stops). A message can be
// switched to selectable text ("Select" or a double-click) to copy part of it.
#include <imgui.h>
#include <imgui_internal.h>  // ImGuiInputTextState: the selection, to copy the original text
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/text_util.h"
#include "ui.h"

namespace magnetar::app {

namespace {

ImFont* span_font(const Fonts& fonts, const MarkdownSpan& span) {
  if (span.code) return fonts.mono;
  if (span.bold) return fonts.bold;
  if (span.italic) return fonts.italic;
  return fonts.regular;
}

// Inline text with mixed fonts, wrapped word by word at wrap_x (window-local). Continuation
// lines start at the current indent.
void FlowSpans(UiState& ui, const std::vector<MarkdownSpan>& spans, float wrap_x) {
  bool all_plain = true;
  for (const MarkdownSpan& s : spans) all_plain = all_plain && !s.bold && !s.italic && !s.code;
  if (all_plain) {  // the common case: one wrapped call (also wraps CJK without spaces)
    std::string text;
    for (const MarkdownSpan& s : spans) text += s.text;
    ImGui::PushTextWrapPos(wrap_x);
    ImGui::TextUnformatted(text.c_str(), text.c_str() + text.size());
    ImGui::PopTextWrapPos();
    return;
  }
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float line_start = ImGui::GetCursorPosX();
  bool same_line = false;
  for (const MarkdownSpan& span : spans) {
    ImGui::PushFont(span_font(ui.fonts, span));
    size_t pos = 0;
    while (pos < span.text.size()) {
      if (span.text[pos] == '\n') {
        if (!same_line) ImGui::NewLine();
        same_line = false;
        ++pos;
        continue;
      }
      // A word and the spaces after it.
      size_t end = pos;
      while (end < span.text.size() && span.text[end] != ' ' && span.text[end] != '\n') ++end;
      while (end < span.text.size() && span.text[end] == ' ') ++end;
      const char* begin_ptr = span.text.c_str() + pos;
      const char* end_ptr = span.text.c_str() + end;
      const ImVec2 size = ImGui::CalcTextSize(begin_ptr, end_ptr);
      if (same_line) {
        ImGui::SameLine(0, 0);
        if (ImGui::GetCursorPosX() + size.x > wrap_x && ImGui::GetCursorPosX() > line_start + 1) ImGui::NewLine();
      }
      if (span.code) {
        const ImVec2 p = ImGui::GetCursorScreenPos();
        draw->AddRectFilled(ImVec2(p.x - 2, p.y - 1), ImVec2(p.x + size.x + 2, p.y + size.y + 1),
                            IM_COL32(60, 62, 82, 255), 3.0f);
      }
      if (size.x > wrap_x - line_start) {  // a word longer than the line: let ImGui break it
        ImGui::PushTextWrapPos(wrap_x);
        ImGui::TextUnformatted(begin_ptr, end_ptr);
        ImGui::PopTextWrapPos();
      } else {
        ImGui::TextUnformatted(begin_ptr, end_ptr);
      }
      same_line = true;
      pos = end;
    }
    ImGui::PopFont();
  }
}

void CodeBlock(UiState& ui, const MarkdownBlock& block, float wrap_x, int index) {
  const float s = ui.scale;
  ImGui::PushFont(ui.fonts.mono);
  const ImVec2 text_size = ImGui::CalcTextSize(block.code.c_str(), block.code.c_str() + block.code.size());
  const float line = ImGui::GetTextLineHeight();
  ImGui::PopFont();
  const float width = std::max(100.0f * s, wrap_x - ImGui::GetCursorPosX());
  const float header = ImGui::GetFontSize() + 8 * s;
  const bool needs_scrollbar = text_size.x + 24 * s > width;
  const float height = header + std::max(line, text_size.y) + 20 * s +
                       (needs_scrollbar ? ImGui::GetStyle().ScrollbarSize : 0);
  ImGui::PushID(index);
  ImGui::PushStyleColor(ImGuiCol_ChildBg, colors::kCodeBackground);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(12 * s, 8 * s));
  ImGui::BeginChild("##code", ImVec2(width, height), false, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::PushFont(ui.fonts.small);
  ImGui::PushStyleColor(ImGuiCol_Text, colors::kDim);
  ImGui::TextUnformatted(block.language.empty() ? "code" : block.language.c_str());
  ImGui::PopStyleColor();
  ImGui::SameLine(std::max(ImGui::GetCursorPosX(), ImGui::GetWindowContentRegionMax().x +
                                                        ImGui::GetScrollX() - 44 * s));
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(6 * s, 1 * s));
  if (ImGui::SmallButton("Copy")) ImGui::SetClipboardText(block.code.c_str());
  ImGui::PopStyleVar();
  ImGui::PopFont();
  ImGui::PushFont(ui.fonts.mono);
  ImGui::TextUnformatted(block.code.c_str(), block.code.c_str() + block.code.size());
  ImGui::PopFont();
  ImGui::EndChild();
  ImGui::PopStyleVar();
  ImGui::PopStyleColor();
  ImGui::PopID();
}

}  // namespace

void RenderMarkdown(UiState& ui, const std::vector<MarkdownBlock>& blocks, float wrap_x) {
  const float s = ui.scale;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const MarkdownBlock& b = blocks[i];
    if (i > 0) ImGui::Dummy(ImVec2(0, 2 * s));
    switch (b.kind) {
      case MarkdownBlockKind::Paragraph: FlowSpans(ui, b.spans, wrap_x); break;
      case MarkdownBlockKind::Heading: {
        ImGui::PushFont(b.level <= 2 ? ui.fonts.heading : ui.fonts.bold);
        std::vector<MarkdownSpan> spans = b.spans;
        for (auto& span : spans) span.bold = span.italic = false;  // the heading font already is
        FlowSpans(ui, spans, wrap_x);
        ImGui::PopFont();
        break;
      }
      case MarkdownBlockKind::ListItem: {
        const float indent = (8 + 18 * b.level) * s;
        ImGui::Indent(indent);
        ImGui::PushStyleColor(ImGuiCol_Text, ToVec4(colors::kAccent));
        ImGui::TextUnformatted(b.marker.c_str());
        ImGui::PopStyleColor();
        ImGui::SameLine();
        const float marker_width = ImGui::CalcTextSize(b.marker.c_str()).x + ImGui::GetStyle().ItemSpacing.x;
        ImGui::Indent(marker_width);
        FlowSpans(ui, b.spans, wrap_x);
        ImGui::Unindent(marker_width);
        ImGui::Unindent(indent);
        break;
      }
      case MarkdownBlockKind::Quote: {
        const ImVec2 top = ImGui::GetCursorScreenPos();
        ImGui::Indent(14 * s);
        ImGui::PushStyleColor(ImGuiCol_Text, ToVec4(colors::kDim));
        std::vector<MarkdownSpan> spans = b.spans;
        for (auto& span : spans) span.italic = true;
        FlowSpans(ui, spans, wrap_x);
        ImGui::PopStyleColor();
        ImGui::Unindent(14 * s);
        const float bottom = ImGui::GetItemRectMax().y;
        ImGui::GetWindowDrawList()->AddRectFilled(top, ImVec2(top.x + 3 * s, bottom), colors::kAccent, 2 * s);
        break;
      }
      case MarkdownBlockKind::CodeBlock: CodeBlock(ui, b, wrap_x, static_cast<int>(i)); break;
      case MarkdownBlockKind::Rule: ImGui::Separator(); break;
    }
  }
}

namespace {

void ContextMeter(UiState& ui, float width) {
  AppState& app = *ui.app;
  const int total = app.model.info.context_length;
  const int used = app.generation.active && app.generation.conversation_id == app.active_id &&
                           app.generation.stats.n_context > 0
                       ? app.generation.stats.n_context
                       : app.context_used;
  const float fraction = total > 0 ? std::min(1.0f, static_cast<float>(used) / total) : 0.0f;
  char label[64];
  std::snprintf(label, sizeof label, "%d / %d tokens", used, total);
  const ImU32 color = fraction > 0.9f ? colors::kBad : fraction > 0.7f ? colors::kWarn : colors::kAccent;
  ImGui::PushStyleColor(ImGuiCol_PlotHistogram, ToVec4(color));
  ImGui::PushFont(ui.fonts.small);
  ImGui::ProgressBar(fraction, ImVec2(width, ImGui::GetFontSize() + 6 * ui.scale), label);
  ImGui::PopFont();
  ImGui::PopStyleColor();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Context window: tokens the model sees now, of %d.\nWhen a chat outgrows it, "
                      "you choose: leave out the oldest turns, or stop.", total);
}

void TopBar(UiState& ui, Conversation* chat) {
  AppState& app = *ui.app;
  const float s = ui.scale;
  // Right side first (measured), so the title knows how much room it has.
  const char* dashboard_label = ui.dashboard.visible ? "Hide stats" : "Live stats";
  const char* labels[] = {"Chat settings", "Copy chat", "Export", dashboard_label};
  float buttons_width = 0;
  for (const char* label : labels)
    buttons_width += ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2 + ImGui::GetStyle().ItemSpacing.x;

  ImGui::PushFont(ui.fonts.heading);
  std::string title = chat ? chat->title : std::string("Welcome");
  const float title_room = ImGui::GetContentRegionAvail().x - buttons_width - 16 * s;
  if (ImGui::CalcTextSize(title.c_str()).x > title_room) {  // cut with an ellipsis, UTF-8 safe
    while (!title.empty() && ImGui::CalcTextSize((title + "…").c_str()).x > title_room)
      title = utf8_truncate(title, title.size() - 1);
    title += "…";
  }
  ImGui::TextUnformatted(title.c_str());
  ImGui::PopFont();
  if (chat && ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n(double-click to rename)", chat->title.c_str());
  if (chat && ImGui::IsItemHovered() && DoubleClicked(ui)) {
    ui.sidebar.rename_id = chat->id;
    ui.sidebar.rename_text = chat->title;
    ui.sidebar.open_rename = true;
  }

  // Right side: actions, right-aligned by their measured widths.
  ImGui::SameLine(std::max(ImGui::GetCursorPosX() + 20 * s,
                           ImGui::GetWindowContentRegionMax().x - buttons_width + ImGui::GetStyle().ItemSpacing.x));
  ImGui::BeginDisabled(chat == nullptr);
  if (ImGui::Button("Chat settings")) ui.open_chat_settings = true;
  ImGui::SameLine();
  if (ImGui::Button("Copy chat") && chat) {
    ImGui::SetClipboardText(conversation_to_markdown(*chat).c_str());
    app.post(Notice::Level::Info, "The chat is on the clipboard as Markdown.", ui.now);
  }
  ImGui::SameLine();
  if (ImGui::Button("Export") && chat) {
    const std::string path = from_path(to_path(ui.exports_dir) / to_path(chat->id + ".md"));
    std::error_code ec;
    std::filesystem::create_directories(to_path(ui.exports_dir), ec);
    Status status = write_file_atomically(path, conversation_to_markdown(*chat));
    app.post(status ? Notice::Level::Info : Notice::Level::Error,
             status ? "Exported to " + path : status.message(), ui.now);
  }
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button(dashboard_label)) ui.dashboard.visible = !ui.dashboard.visible;

  // Second row: the model chip and the context meter.
  ImGui::PushFont(ui.fonts.small);
  if (app.model.present) {
    ImGui::PushStyleColor(ImGuiCol_Text, ToVec4(colors::kGood));
    ImGui::TextUnformatted("●");
    ImGui::PopStyleColor();
    ImGui::SameLine(0, 4 * s);
    ImGui::Text("%s  ·  %s %s  ·  %s%s%s", app.model.name.c_str(), architecture_name_words(app.model.info.arch),
                format_count(app.model.info.n_params).c_str(), app.model.info.weight_type.c_str(),
                app.model.info.kv_type == KvType::F32 ? "" : "  ·  KV cache ",
                app.model.info.kv_type == KvType::F32 ? "" : kv_type_name(app.model.info.kv_type));
  } else {
    ImGui::PushStyleColor(ImGuiCol_Text, ToVec4(colors::kDim));
    ImGui::TextUnformatted(app.activity == EngineActivity::Loading ? "Loading model…" : "No model loaded");
    ImGui::PopStyleColor();
  }
  ImGui::PopFont();
  if (app.model.present) {
    ImGui::SameLine();
    const float meter = std::min(260 * s, ImGui::GetContentRegionAvail().x);
    ImGui::SetCursorPosX(ImGui::GetWindowContentRegionMax().x - meter);
    ContextMeter(ui, meter);
  }

  // A chat made with another model: offer to switch.
  if (chat && !chat->model_path.empty() && app.model.present && chat->model_path != app.model.info.path &&
      !app.busy()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ToVec4(colors::kWarn));
    ImGui::Text("This chat was with %s.", DisplayName(chat->model_path).c_str());
    ImGui::PopStyleColor();
    ImGui::SameLine();
    std::error_code ec;
    if (std::filesystem::is_regular_file(to_path(chat->model_path), ec)) {
      if (ImGui::SmallButton("Load it")) app.request_load(chat->model_path);
      ImGui::SameLine();
    }
    if (ImGui::SmallButton("Continue with the loaded model")) {
      chat->model_path = app.model.info.path;
      (void)app.store.save(chat->id);
    }
  }
}

bool IsSelecting(const UiState& ui, const Conversation& chat, size_t index) {
  return ui.chat.selecting_index == static_cast<int>(index) && ui.chat.selecting_chat_id == chat.id;
}

void StartSelecting(UiState& ui, const Conversation& chat, size_t index) {
  ui.chat.selecting_index = static_cast<int>(index);
  ui.chat.selecting_chat_id = chat.id;
  ui.chat.selection_hash = 0;  // wrap afresh
  ui.chat.focus_selection = true;
}

// The message as selectable text: a read-only multiline box over a copy wrapped to the box
// (replacing spaces at line ends, so selections map back to the message's own bytes). Ctrl+C
// copies the original text of the selection, without the wrapping.
void SelectableBody(UiState& ui, const Message& m, float wrap_x) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float box_width = wrap_x - ImGui::GetCursorPosX();
  const float text_width = box_width - 2 * style.FramePadding.x - style.ScrollbarSize;
  const size_t hash = std::hash<std::string>{}(m.content);
  if (hash != ui.chat.selection_hash || std::fabs(text_width - ui.chat.selection_width) > 0.5f) {
    ImFont* font = ImGui::GetFont();
    const float scale = ImGui::GetFontSize() / font->FontSize;
    ui.chat.selection = soft_wrap(m.content, [&](std::string_view line) {
      const char* end = font->CalcWordWrapPositionA(scale, line.data(), line.data() + line.size(), text_width);
      return static_cast<size_t>(end - line.data());
    });
    ui.chat.selection_hash = hash;
    ui.chat.selection_width = text_width;
  }
  const float lines = 1.0f + static_cast<float>(std::count(ui.chat.selection.text.begin(), ui.chat.selection.text.end(), '\n'));
  const float height = std::min(lines * ImGui::GetTextLineHeight() + 2 * style.FramePadding.y + 2,
                                ImGui::GetWindowHeight() * 0.7f);
  if (ui.chat.focus_selection) {
    ImGui::SetKeyboardFocusHere();
    ui.chat.focus_selection = false;
  }
  ImGui::PushStyleColor(ImGuiCol_FrameBg, ImVec4(0, 0, 0, 0.22f));
  ImGui::InputTextMultiline("##selectable", &ui.chat.selection.text, ImVec2(box_width, height),
                            ImGuiInputTextFlags_ReadOnly);
  ImGui::PopStyleColor();
  const ImGuiIO& io = ImGui::GetIO();
  const bool copy = io.KeyCtrl && (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_C)) ||
                                   ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Insert)));
  if (ImGuiInputTextState* state = ImGui::GetInputTextState(ImGui::GetItemID()); copy && state && state->HasSelection()) {
    // ImGui has just copied the wrapped text; replace it with the message's own.
    const int a = std::min(state->GetSelectionStart(), state->GetSelectionEnd());
    const int b = std::max(state->GetSelectionStart(), state->GetSelectionEnd());
    const std::string original = ui.chat.selection.original(utf8_offset_of_codepoint(ui.chat.selection.text, static_cast<size_t>(a)),
                                                       utf8_offset_of_codepoint(ui.chat.selection.text, static_cast<size_t>(b)));
    ImGui::SetClipboardText(original.c_str());
  }
}

void MessageActions(UiState& ui, Conversation& chat, size_t index, bool streaming, float wrap_x) {
  AppState& app = *ui.app;
  const Message& m = chat.messages[index];
  ImGui::PushFont(ui.fonts.small);
  ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0, 0, 0, 0));
  ImGui::PushStyleColor(ImGuiCol_Text, ToVec4(colors::kDim));
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(4 * ui.scale, 1 * ui.scale));
  if (!streaming) {
    if (ImGui::SmallButton("Copy")) ImGui::SetClipboardText(m.content.c_str());
    ImGui::SameLine();
    if (IsSelecting(ui, chat, index)) {
      if (ImGui::SmallButton("Done selecting")) ui.chat.selecting_index = -1;
    } else {
      if (ImGui::SmallButton("Select")) StartSelecting(ui, chat, index);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("Select part of the text to copy it (or double-click the message)");
    }
    if (m.role == "user" && !app.busy()) {
      ImGui::SameLine();
      if (ImGui::SmallButton("Edit")) {
        ui.chat.editing_index = static_cast<int>(index);
        ui.chat.edit_text = m.content;
      }
    }
    if (m.role == "assistant" && index + 1 == chat.messages.size() && !app.busy() && app.model.present) {
      ImGui::SameLine();
      if (ImGui::SmallButton("Regenerate")) {
        ui.chat.scroll_to_bottom = true;
        app.regenerate(ui.now);
      }
    }
  }
  if (m.stats.present) {
    ImGui::SameLine();
    ImGui::PushTextWrapPos(wrap_x);  // a narrow window moves the rest to a second line
    ImGui::TextUnformatted(format_message_stats(m.stats).c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::PopStyleVar();
  ImGui::PopStyleColor(2);
  ImGui::PopFont();
}

void DrawMessage(UiState& ui, Conversation& chat, size_t index, float left, float width) {
  AppState& app = *ui.app;
  const float s = ui.scale;
  Message& m = chat.messages[index];
  const bool user = m.role == "user";
  const bool streaming = app.generation.active && app.generation.conversation_id == chat.id &&
                         app.generation.message_index == index;
  const float pad = 14 * s;
  ImGui::PushID(static_cast<int>(index));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->ChannelsSplit(2);
  draw->ChannelsSetCurrent(1);

  ImGui::SetCursorPosX(left);
  const ImVec2 top_left = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(width, pad * 0.6f));
  ImGui::Indent(left + pad);
  const float wrap_x = left + width - pad;

  // Header: who speaks.
  ImGui::PushFont(ui.fonts.bold);
  ImGui::PushStyleColor(ImGuiCol_Text, user ? ImVec4(0.80f, 0.78f, 1.0f, 1.0f) : ToVec4(colors::kDim));
  ImGui::TextUnformatted(user ? "You" : (app.model.present && chat.model_path == app.model.info.path
                                             ? app.model.name.c_str()
                                             : "Assistant"));
  ImGui::PopStyleColor();
  ImGui::PopFont();
  if (streaming) {
    ImGui::SameLine();
    const float pulse = 0.5f + 0.5f * std::sin(static_cast<float>(ui.now) * 6.0f);
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.49f, 0.42f, 1.0f, 0.4f + 0.6f * pulse));
    ImGui::TextUnformatted(app.generation.prefilling ? "● reading the prompt" : "● writing");
    ImGui::PopStyleColor();
  }

  const ImVec2 body_min = ImGui::GetCursorScreenPos();
  if (ui.chat.editing_index == static_cast<int>(index)) {
    ImGui::InputTextMultiline("##edit", &ui.chat.edit_text, ImVec2(wrap_x - ImGui::GetCursorPosX(), 110 * s));
    if (AccentButton("Save & resend")) {
      ui.chat.scroll_to_bottom = true;
      if (app.edit_and_resend(index, ui.chat.edit_text, ui.now)) ui.chat.editing_index = -1;
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ui.chat.editing_index = -1;
  } else if (!streaming && IsSelecting(ui, chat, index)) {
    SelectableBody(ui, m, wrap_x);
  } else if (user) {
    ImGui::PushTextWrapPos(wrap_x);
    ImGui::TextUnformatted(m.content.c_str(), m.content.c_str() + m.content.size());
    ImGui::PopTextWrapPos();
  } else if (m.content.empty() && streaming) {
    const int dots = 1 + static_cast<int>(ui.now * 3) % 3;
    ImGui::TextDisabled("%.*s", dots, "...");
    if (app.generation.prefilling && app.generation.prefill_total > 0)
      ImGui::TextDisabled("%d / %d prompt tokens", app.generation.prefill_done, app.generation.prefill_total);
  } else {
    // Parse once per content change (streaming messages change every token).
    if (ui.chat.parsed_for_id != chat.id) {
      ui.chat.parsed_for_id = chat.id;
      ui.chat.parsed.clear();
    }
    if (ui.chat.parsed.size() < chat.messages.size()) ui.chat.parsed.resize(chat.messages.size());
    ChatPanel::ParsedMessage& cache = ui.chat.parsed[index];
    const size_t hash = std::hash<std::string>{}(m.content);  // microseconds; parsing is not
    if (cache.length != m.content.size() || cache.hash != hash) {
      cache.blocks = parse_markdown(m.content);
      cache.length = m.content.size();
      cache.hash = hash;
    }
    RenderMarkdown(ui, cache.blocks, wrap_x);
  }
  // A double-click on the text (not on a button in it) makes it selectable. The first click of
  // it may still hold the window's move id as the active item (when no frame came between the
  // two clicks), so being "blocked" by that does not count.
  const ImVec2 body_max(top_left.x + width, ImGui::GetCursorScreenPos().y);
  if (!streaming && ui.chat.editing_index != static_cast<int>(index) && !IsSelecting(ui, chat, index) &&
      DoubleClicked(ui) && ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) &&
      !ImGui::IsAnyItemHovered() &&
      ImGui::IsMouseHoveringRect(body_min, body_max))
    StartSelecting(ui, chat, index);
  ImGui::Dummy(ImVec2(0, 1 * s));
  MessageActions(ui, chat, index, streaming, wrap_x);
  ImGui::Unindent(left + pad);
  ImGui::Dummy(ImVec2(width, pad * 0.3f));
  const ImVec2 bottom_right(top_left.x + width, ImGui::GetItemRectMax().y);

  draw->ChannelsSetCurrent(0);
  draw->AddRectFilled(top_left, bottom_right, user ? colors::kUserBubble : colors::kAssistantBubble, 10 * s);
  if (streaming) draw->AddRect(top_left, bottom_right, colors::kAccentSoft, 10 * s, 0, 1.5f * s);
  draw->ChannelsMerge();
  ImGui::PopID();
}

void Transcript(UiState& ui, Conversation& chat, float height) {
  AppState& app = *ui.app;
  const float s = ui.scale;
  ImGui::BeginChild("##transcript", ImVec2(0, height), false);
  const float scroll_y = ImGui::GetScrollY();
  const bool at_bottom = scroll_y >= ImGui::GetScrollMaxY() - 4 * s;
  const float view_height = ImGui::GetWindowHeight();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float width = std::min(avail - 8 * s, 860 * s);
  const float left = std::max(0.0f, (avail - width) * 0.5f);

  if (ui.chat.heights_for_id != chat.id || std::fabs(ui.chat.heights_width - width) > 0.5f) {
    ui.chat.heights_for_id = chat.id;
    ui.chat.heights_width = width;
    ui.chat.heights.assign(chat.messages.size(), 0.0f);
  }
  ui.chat.heights.resize(chat.messages.size(), 0.0f);

  ImGui::Dummy(ImVec2(0, 6 * s));
  if (!chat.system_prompt.empty()) {
    ImGui::SetCursorPosX(left);
    ImGui::PushFont(ui.fonts.small);
    ImGui::PushStyleColor(ImGuiCol_Text, ToVec4(colors::kDim));
    ImGui::PushTextWrapPos(left + width);
    ImGui::Text("System prompt: %s", chat.system_prompt.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    ImGui::PopFont();
  }
  const float margin = 200 * s;
  for (size_t i = 0; i < chat.messages.size(); ++i) {
    const float y = ImGui::GetCursorPosY();
    const bool streaming = app.generation.active && app.generation.conversation_id == chat.id &&
                           app.generation.message_index == i;
    const float h = ui.chat.heights[i];
    if (h > 0 && !streaming && ui.chat.editing_index != static_cast<int>(i) &&
        (y + h < scroll_y - margin || y > scroll_y + view_height + margin)) {
      ImGui::Dummy(ImVec2(1, h));  // off screen: its height only
      continue;
    }
    DrawMessage(ui, chat, i, left, width);
    ImGui::Dummy(ImVec2(0, 4 * s));
    ui.chat.heights[i] = ImGui::GetCursorPosY() - y;
  }
  if (chat.messages.empty()) {
    ImGui::Dummy(ImVec2(0, 40 * s));
    ImGui::SetCursorPosX(left);
    ImGui::PushStyleColor(ImGuiCol_Text, ToVec4(colors::kDim));
    ImGui::TextUnformatted(app.model.present ? "Type a message below to start." :
                                               "Load a model to start chatting.");
    ImGui::PopStyleColor();
  }
  ImGui::Dummy(ImVec2(0, 8 * s));
  // Follow the stream only while the reader is at the bottom; scrolling up stops it.
  if (ui.chat.scroll_to_bottom || (at_bottom && app.generation.active && app.generation.conversation_id == chat.id)) {
    ImGui::SetScrollHereY(1.0f);
    ui.chat.scroll_to_bottom = false;
  }
  ImGui::EndChild();
}

void InputArea(UiState& ui) {
  AppState& app = *ui.app;
  ImGuiIO& io = ImGui::GetIO();
  const float s = ui.scale;
  const float avail = ImGui::GetContentRegionAvail().x;
  const float width = std::min(avail - 8 * s, 860 * s);
  const float left = ImGui::GetCursorPosX() + std::max(0.0f, (avail - width) * 0.5f);
  const bool generating = app.generation.active;
  const float button_width = 92 * s;
  const float height = 84 * s;

  ImGui::SetCursorPosX(left);
  // Enter sends; Shift+Enter (or Ctrl+Enter) inserts a newline. ImGui's multiline box sends on
  // Enter (EnterReturnsTrue) and makes a newline on Ctrl+Enter (CtrlEnterForNewLine). Shift+Enter
  // becomes a '\n' character queued after whatever was typed in the same frame, and the Enter
  // press is hidden from the box (mapping it onto Ctrl+Enter would make ImGui 1.86 drop the
  // characters of that frame: it ignores text input while Ctrl is down).
  const bool enter = ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter)) ||
                     ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_KeyPadEnter));
  if (enter && io.KeyShift && !io.KeyCtrl && ImGui::GetActiveID() == ImGui::GetID("##input")) {
    io.AddInputCharacter('\n');
    for (ImGuiKey key : {ImGuiKey_Enter, ImGuiKey_KeyPadEnter}) {
      const int index = ImGui::GetKeyIndex(key);
      io.KeysDown[index] = false;          // no press again next frame, no repeat
      io.KeysDownDuration[index] = -1.0f;  // no press this frame
    }
    io.NavInputsDownDuration[ImGuiNavInput_Input] = -1.0f;  // keyboard navigation maps Enter here too
  }
  if (ui.chat.focus_input && !ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId)) {
    ImGui::SetKeyboardFocusHere();
    ui.chat.focus_input = false;
  }
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(12 * s, 10 * s));
  ImGui::PushStyleVar(ImGuiStyleVar_FrameRounding, 10 * s);
  const bool submitted = ImGui::InputTextMultiline(
      "##input", &ui.chat.input, ImVec2(width - button_width - 8 * s, height),
      ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CtrlEnterForNewLine);
  ImGui::PopStyleVar(2);
  if (ui.chat.input.empty()) {
    // Placeholder text (multiline boxes have no hint in ImGui 1.86).
    const ImVec2 p = ImGui::GetItemRectMin();
    ImGui::GetWindowDrawList()->AddText(ImVec2(p.x + 12 * s, p.y + 10 * s), colors::kDim,
                                        app.model.present ? "Message the model…   (Enter sends, Shift+Enter: new line)"
                                                          : "Drop a model onto the window to start");
  }
  ImGui::SameLine(0, 8 * s);
  // An Enter that confirmed an input-method composition (X11 reports it; see ImeGuard) is not
  // a send: the composed text arrives as characters after it.
  bool send = submitted && !ui.chat.enter_confirmed_composition;
  if (generating) {
    ImGui::PushStyleColor(ImGuiCol_Button, ToVec4(IM_COL32(150, 60, 60, 255)));
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ToVec4(IM_COL32(180, 72, 72, 255)));
    if (ImGui::Button("Stop", ImVec2(button_width, height))) app.stop();
    ImGui::PopStyleColor(2);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Stop after the current token (Esc)");
  } else {
    ImGui::BeginDisabled(!app.model.present || app.busy());
    send = AccentButton("Send", ImVec2(button_width, height)) || send;
    ImGui::EndDisabled();
  }
  if (send && !generating) {
    if (app.send(ui.chat.input, ui.now)) {
      ui.chat.input.clear();
      ui.chat.scroll_to_bottom = true;
    }
    ui.chat.focus_input = true;
  } else if (submitted) {
    ui.chat.focus_input = true;  // Enter while generating or composing: keep the text, keep typing
  }
}

}  // namespace

void DrawChat(UiState& ui) {
  AppState& app = *ui.app;
  Conversation* chat = app.active();
  TopBar(ui, chat);
  ImGui::Separator();
  const float input_height = 84 * ui.scale + ImGui::GetStyle().ItemSpacing.y * 2 + 4 * ui.scale;
  const float transcript_height = ImGui::GetContentRegionAvail().y - input_height;
  if (chat && !(chat->messages.empty() && !app.model.present)) {
    Transcript(ui, *chat, transcript_height);
  } else {
    ImGui::BeginChild("##welcome", ImVec2(0, transcript_height), false);
    DrawWelcome(ui);
    ImGui::EndChild();
  }
  InputArea(ui);
}

}  // namespace magnetar::app
