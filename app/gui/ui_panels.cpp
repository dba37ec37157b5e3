// Panels other than chat and sidebar: the welcome screen, the live performance dashboard, and
// the dialogs (drop → inspect → convert → load, model library, open file, settings, chat
// settings, context overflow), plus notices and small shared widgets.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/text_util.h"
#include "magnetar/system.h"
#include "ui.h"

namespace magnetar::app {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Widgets

bool AccentButton(const char* label, ImVec2 size) {
  ImGui::PushStyleColor(ImGuiCol_Button, ToVec4(IM_COL32(104, 88, 235, 255)));
  ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ToVec4(IM_COL32(124, 108, 255, 255)));
  ImGui::PushStyleColor(ImGuiCol_ButtonActive, ToVec4(IM_COL32(90, 76, 210, 255)));
  ImGui::PushStyleColor(ImGuiCol_Text, ToVec4(IM_COL32(255, 255, 255, 255)));
  const bool pressed = ImGui::Button(label, size);
  ImGui::PopStyleColor(4);
  return pressed;
}

// One "key  value" row of a two-column ImGui table (machine card, model card, drop summary).
// A two-column key/value table: keys as wide as the widest, values wrapped in the rest (a long
// value such as the decode tuning must not run past the panel's edge).
static bool BeginKeyValueTable(const char* id, float width = 0.0f) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingFixedFit, ImVec2(width, 0))) return false;
  ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  return true;
}

static void KeyValueRow(const char* key, const std::string& value) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", key);
  ImGui::TableNextColumn();
  ImGui::TextWrapped("%s", value.c_str());
}

void HelpText(const char* text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ToVec4(colors::kDim));
  ImGui::TextWrapped("%s", text);
  ImGui::PopStyleColor();
}

void Gauge(const char* label, double value, double ceiling, const char* unit, ImU32 color, float width) {
  const float s = ImGui::GetFontSize() / 15.5f;
  ImGui::TextUnformatted(label);
  auto digits = [](double v) { return v < 1 ? 3 : v < 100 ? 1 : 0; };  // tiny models read KB/token
  char right[64];
  if (ceiling > 0)
    std::snprintf(right, sizeof right, "%.*f / %.*f %s", digits(value), value, digits(ceiling), ceiling, unit);
  else
    std::snprintf(right, sizeof right, "%.*f %s", digits(value), value, unit);
  ImGui::SameLine(std::max(ImGui::GetCursorPosX(), ImGui::GetCursorStartPos().x + width - ImGui::CalcTextSize(right).x));
  ImGui::TextDisabled("%s", right);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = 8 * s;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(p, ImVec2(p.x + width, p.y + h), IM_COL32(40, 43, 56, 255), h * 0.5f);
  const float fraction = ceiling > 0 ? static_cast<float>(std::clamp(value / ceiling, 0.0, 1.0)) : 0.0f;
  if (fraction > 0)
    draw->AddRectFilled(p, ImVec2(p.x + std::max(h, width * fraction), p.y + h), color, h * 0.5f);
  ImGui::Dummy(ImVec2(width, h + 2 * s));
}

std::string DisplayName(const std::string& path) {
  fs::path p = to_path(path);
  while (!p.empty() && p.filename().empty()) p = p.parent_path();
  return from_path(p.filename());
}

// ---------------------------------------------------------------------------------------------
// Welcome

namespace {

// The decode tuning in effect, or the calibration's progress while it runs.
std::string TuningStatus(const MachineProfile& m) {
  if (m.calibrating)
    return "calibrating " + std::to_string(m.calibration_done + 1) + "/" + std::to_string(m.calibration_total) +
           (m.calibration_step.empty() ? "" : ": " + m.calibration_step);
  std::string text = describe_decode_tuning(m.tuning);
  if (!m.calibration_error.empty()) text += " — last calibration: " + m.calibration_error;
  return text;
}

void MachineCard(UiState& ui, float width) {
  const float s = ui.scale;
  const CpuInfo& cpu = ui.machine.ready ? ui.machine.cpu : cpu_info();
  ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted("This machine");
  ImGui::PopFont();
  if (BeginKeyValueTable("##machine", width)) {
    auto* const row = KeyValueRow;
    row("Processor", cpu.brand.empty() ? "unknown" : cpu.brand);
    row("Cores", std::to_string(cpu.logical_cores) + " logical");
    std::string isa;
    auto flag = [&](bool on, const char* name) {
      if (on) isa += (isa.empty() ? "" : " · ") + std::string(name);
    };
    flag(cpu.avx2, "AVX2");
    flag(cpu.fma, "FMA");
    flag(cpu.f16c, "F16C");
    flag(cpu.avx512f, "AVX-512F");
    flag(cpu.avx512_vnni, "AVX-512 VNNI");
    row("Instruction sets", isa.empty() ? "none of AVX2/FMA/F16C" : isa);
    // The quantized types' table may differ from the float kernels' (AVX-512 VNNI: Q8_0, Q4_0 and
    // the K-quants Q4_K..Q6_K, IQ4_XS).
    const bool own_quant_isa = !cpu.quant_kernel_isa.empty() && cpu.quant_kernel_isa != cpu.kernel_isa;
    row("Kernels", cpu.kernel_isa + (cpu.kernel_note.empty() ? "" : " (" + cpu.kernel_note + ")") +
                       (own_quant_isa ? " · quantized: " + cpu.quant_kernel_isa : ""));
    char bw[64];
    if (ui.machine.ready) std::snprintf(bw, sizeof bw, "%.1f GB/s read (measured)", ui.machine.best_gbps);
    else std::snprintf(bw, sizeof bw, "measuring…");
    row("Memory bandwidth", bw);
    row("Decode tuning", TuningStatus(ui.machine));
    ImGui::EndTable();
  }
  (void)s;
}

void SpeedTable(UiState& ui) {
  ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted("What to expect here");
  ImGui::PopFont();
  HelpText("Generating a token reads every weight once, so speed ≈ memory bandwidth ÷ model size. "
           "Tokens per second by model and weight type:");
  if (!ui.machine.ready) {
    ImGui::TextDisabled("(waiting for the bandwidth measurement)");
    return;
  }
  // One column per type the drop dialog offers (kWeightTypes, largest first), smallest first.
  const int n_types = static_cast<int>(std::size(kWeightTypes));
  if (ImGui::BeginTable("##expect", 1 + n_types,
                        ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchSame)) {
    // Models people run today, by their parameter counts (embeddings included).
    const struct { const char* name; double params; } sizes[] = {
        {"Llama 3.2 1B", 1.24e9}, {"Qwen 3 1.7B", 2.03e9}, {"Gemma 2 2B", 2.61e9},
        {"Phi-3.5 mini", 3.82e9}, {"Llama 3.1 8B", 8.03e9}};
    float name_width = 0.0f;
    for (const auto& size : sizes) name_width = std::max(name_width, ImGui::CalcTextSize(size.name).x);
    ImGui::TableSetupColumn("Model", ImGuiTableColumnFlags_WidthFixed, name_width);
    for (int i = n_types - 1; i >= 0; --i) ImGui::TableSetupColumn(kWeightTypes[i].label);
    ImGui::TableHeadersRow();
    for (const auto& size : sizes) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(size.name);
      for (int i = n_types - 1; i >= 0; --i) {
        const WeightType t = kWeightTypes[i].type;
        ImGui::TableNextColumn();
        const double tps = predicted_tokens_per_second(
            static_cast<uint64_t>(size.params * bytes_per_parameter(t)), ui.machine.best_gbps);
        ImGui::Text("%.1f", tps);  // the unit is in the heading: nine columns leave no room
      }
    }
    ImGui::EndTable();
  }
}

}  // namespace

void DrawWelcome(UiState& ui) {
  AppState& app = *ui.app;
  const float s = ui.scale;
  const float avail = ImGui::GetContentRegionAvail().x;
  const float width = std::min(avail - 20 * s, 720 * s);
  const float left = std::max(0.0f, (avail - width) * 0.5f);
  ImGui::Dummy(ImVec2(0, 24 * s));
  ImGui::SetCursorPosX(left);
  ImGui::BeginGroup();
  ImGui::PushFont(ui.fonts.big);
  if (app.model.present) ImGui::Text("Ready: %s", app.model.name.c_str());
  else ImGui::TextUnformatted("Drop a model here");
  ImGui::PopFont();
  ImGui::PushTextWrapPos(left + width);
  if (app.model.present)
    HelpText("Type a message below to start a chat (Ctrl+N starts another). To switch models, drop "
             "another model folder or .mgn file onto the window, or open the model library.");
  else HelpText((std::string("Drag a Hugging Face model folder (with config.json and .safetensors) or a .gguf "
                       "file anywhere onto this window: Magnetar reads it, tells you what it is and how "
                       "fast it will run, converts it once into a single .mgn file, and loads it. A .mgn "
                       "file you drop loads directly. Supported families: ") +
                   supported_model_families() + ".").c_str());
  ImGui::PopTextWrapPos();
  ImGui::Dummy(ImVec2(0, 4 * s));
  if (AccentButton("Open a model…")) OpenFileDialog(ui, "");
  ImGui::SameLine();
  if (ImGui::Button("Model library")) ui.open_library = true;

  if (app.activity == EngineActivity::Loading || app.activity == EngineActivity::Converting) {
    ImGui::Dummy(ImVec2(0, 6 * s));
    const JobProgress& job = app.activity == EngineActivity::Loading ? app.load_job : app.convert_job;
    ImGui::Text("%s %s", app.activity == EngineActivity::Loading ? "Loading" : "Converting",
                DisplayName(job.path).c_str());
    ImGui::ProgressBar(job.total ? static_cast<float>(job.done) / job.total : 0.0f, ImVec2(width, 0));
  }

  // Recent models, one click to load.
  if (!app.known_models.empty()) {
    ImGui::Dummy(ImVec2(0, 10 * s));
    ImGui::PushFont(ui.fonts.bold);
    ImGui::TextUnformatted("Recent models");
    ImGui::PopFont();
    int shown = 0;
    for (const std::string& path : app.known_models) {
      std::error_code ec;
      if (!fs::is_regular_file(to_path(path), ec) || shown >= 4) continue;
      ++shown;
      ImGui::PushID(path.c_str());
      ImGui::BeginDisabled(app.busy());
      if (ImGui::Button("Load")) app.request_load(path);
      ImGui::EndDisabled();
      ImGui::SameLine();
      ImGui::Text("%s", DisplayName(path).c_str());
      ImGui::SameLine();
      ImGui::TextDisabled("%s", format_bytes(fs::file_size(to_path(path), ec)).c_str());
      ImGui::PopID();
    }
  }
  ImGui::Dummy(ImVec2(0, 12 * s));
  ImGui::Separator();
  ImGui::Dummy(ImVec2(0, 6 * s));
  MachineCard(ui, width);
  ImGui::Dummy(ImVec2(0, 8 * s));
  SpeedTable(ui);
  ImGui::EndGroup();
}

// ---------------------------------------------------------------------------------------------
// Dashboard

namespace {

void SpeedPlot(UiState& ui, float width, float height, double token_ceiling, double gbps_ceiling) {
  AppState& app = *ui.app;
  const float s = ui.scale;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(p, ImVec2(p.x + width, p.y + height), IM_COL32(17, 19, 24, 255), 6 * s);
  for (int i = 1; i < 4; ++i) {  // 25 / 50 / 75 % of the machine's limit
    const float y = p.y + height * i / 4.0f;
    draw->AddLine(ImVec2(p.x + 4 * s, y), ImVec2(p.x + width - 4 * s, y), IM_COL32(255, 255, 255, 14));
  }
  const double span = AppState::kHistorySeconds;
  auto x_of = [&](double t) { return p.x + width * static_cast<float>(1.0 - (ui.now - t) / span); };
  auto plot = [&](auto value_of, double ceiling, ImU32 color) {
    if (ceiling <= 0 || app.speed_history.size() < 2) return;
    std::vector<ImVec2> points;
    for (const SpeedSample& sample : app.speed_history) {
      if (ui.now - sample.time > span) continue;
      const float v = static_cast<float>(std::min(1.0, value_of(sample) / ceiling));
      points.push_back(ImVec2(x_of(sample.time), p.y + height - 3 * s - (height - 6 * s) * v));
    }
    if (points.size() >= 2) draw->AddPolyline(points.data(), static_cast<int>(points.size()), color, 0, 2.0f * s);
  };
  plot([](const SpeedSample& x) { return static_cast<double>(x.tokens_per_second); }, token_ceiling, colors::kTokensLine);
  plot([](const SpeedSample& x) { return static_cast<double>(x.gbps); }, gbps_ceiling, colors::kBandwidthLine);
  ImGui::PushFont(ui.fonts.small);
  draw->AddText(ImVec2(p.x + 6 * s, p.y + 3 * s), colors::kDim, "last minute, % of the machine's limit");
  ImGui::PopFont();
  ImGui::Dummy(ImVec2(width, height));
}

}  // namespace

void DrawDashboard(UiState& ui) {
  AppState& app = *ui.app;
  const float s = ui.scale;
  const float width = ImGui::GetContentRegionAvail().x;
  ImGui::PushFont(ui.fonts.heading);
  ImGui::TextUnformatted("Live");
  ImGui::PopFont();
  ImGui::SameLine();
  const char* state = app.activity == EngineActivity::Generating ? "generating"
                      : app.activity == EngineActivity::Loading  ? "loading"
                      : app.activity == EngineActivity::Converting ? "converting"
                                                                   : "idle";
  ImGui::SetCursorPosY(ImGui::GetCursorPosY() + 6 * s);
  ImGui::TextDisabled("%s", state);

  const GenerationStats& st = app.generation.active ? app.generation.stats : app.last_stats;
  const double bandwidth = ui.machine.best_gbps;
  const double token_ceiling = app.model.present
                                   ? predicted_tokens_per_second(app.model.info.weight_bytes_per_token, bandwidth)
                                   : 0;
  ImGui::PushFont(ui.fonts.big);
  ImGui::Text("%.1f", st.generate_tokens_per_second);
  ImGui::PopFont();
  ImGui::SameLine();
  ImGui::SetCursorPosY(ImGui::GetCursorPosY() + 12 * s);
  ImGui::TextDisabled("tokens/s");
  Gauge("Generation", st.generate_tokens_per_second, token_ceiling, "tok/s", colors::kTokensLine, width);
  Gauge("Memory bandwidth", st.achieved_gbps, bandwidth, "GB/s", colors::kBandwidthLine, width);
  if (token_ceiling > 0 && st.generate_tokens_per_second > 0) {
    ImGui::PushFont(ui.fonts.small);
    ImGui::TextDisabled("%.0f%% of what this machine's memory allows",
                        100.0 * std::min(1.0, st.achieved_gbps / std::max(bandwidth, 1e-9)));
    ImGui::PopFont();
  }
  ImGui::Dummy(ImVec2(0, 4 * s));
  SpeedPlot(ui, width, 90 * s, token_ceiling, bandwidth);

  // Live figures.
  if (ImGui::GetTime() - ui.dashboard.rss_time > 0.5) {
    ui.dashboard.rss_time = ImGui::GetTime();
    ui.dashboard.rss_bytes = current_resident_bytes();
  }
  float frame_avg = 0, frame_max = 0;
  for (float ms : ui.dashboard.frame_cpu_ms) {
    frame_avg += ms;
    frame_max = std::max(frame_max, ms);
  }
  if (!ui.dashboard.frame_cpu_ms.empty()) frame_avg /= static_cast<float>(ui.dashboard.frame_cpu_ms.size());
  if (ImGui::BeginTable("##live", 2, ImGuiTableFlags_SizingStretchProp)) {
    auto row = [](const char* key, const char* fmt, auto... values) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", key);
      ImGui::TableNextColumn();
      ImGui::Text(fmt, values...);
    };
    // Before the first answer there is nothing measured: a dash, not a row of zeros.
    const bool answered = st.n_prompt > 0 || st.n_generated > 0;
    const char* none = "\xe2\x80\x94";  // an em dash
    if (answered) {
      row("Prompt speed", "%.0f tok/s", st.prompt_tokens_per_second);
      row("First token", "%s", format_seconds(st.time_to_first_token).c_str());
      row("Generated", "%d tokens", st.n_generated);
    } else {
      row("Prompt speed", "%s", none);
      row("First token", "%s", none);
      row("Generated", "%s", none);
    }
    if (app.model.present) row("Context", "%d / %d", st.n_context, app.model.info.context_length);
    else row("Context", "%s", none);
    row("Memory (RSS)", "%s", format_bytes(ui.dashboard.rss_bytes).c_str());
    if (st.threads > 0) row("Threads", "%d", st.threads);
    else row("Threads", "%s", none);
    row("UI frame (CPU)", "%.1f ms avg · %.1f max", frame_avg, frame_max);
    ImGui::EndTable();
  }
  if (ui.dashboard.generation_frames.seconds > 0) {
    // What drawing cost during the last answer: the share of a core generation did not get.
    ImGui::PushFont(ui.fonts.small);
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("UI during the last answer: %s", format_frame_summary(ui.dashboard.generation_frames).c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
  }
  if (app.generation.active && app.generation.prefilling && app.generation.prefill_total > 0) {
    ImGui::ProgressBar(static_cast<float>(app.generation.prefill_done) / app.generation.prefill_total,
                       ImVec2(width, 0), "reading the prompt");
  }

  ImGui::Dummy(ImVec2(0, 6 * s));
  ImGui::Separator();
  ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted("Model");
  ImGui::PopFont();
  if (!app.model.present) {
    HelpText("None loaded.");
    return;
  }
  if (BeginKeyValueTable("##model")) {
    auto* const row = KeyValueRow;
    row("Name", app.model.name);
    row("Architecture", architecture_name_words(app.model.info.arch));
    row("Parameters", format_count(app.model.info.n_params));
    row("Weights", app.model.info.weight_type + " · " + format_bytes(app.model.info.file_bytes));
    row("Per token", format_bytes(app.model.info.weight_bytes_per_token) + " read");
    row("KV cache", format_bytes(app.model.info.kv_cache_bytes) + " · " + kv_type_name(app.model.info.kv_type));
    row("Layers · width", std::to_string(app.model.info.n_layers) + " · " + std::to_string(app.model.info.dim));
    row("Chat template", app.model.chat_template);
    row("Loaded in", format_seconds(app.model.info.load_seconds));
    ImGui::EndTable();
  }
  if (ImGui::TreeNode("Template source")) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(app.model.chat_template_source.c_str());
    ImGui::PopTextWrapPos();
    ImGui::TreePop();
  }
}

// ---------------------------------------------------------------------------------------------
// Notices: toasts in the lower right of the chat area.

void DrawNotices(UiState& ui, ImVec2 area_min, ImVec2 area_max) {
  AppState& app = *ui.app;
  const float s = ui.scale;
  constexpr double kInfoSeconds = 5.0, kErrorSeconds = 15.0;
  auto expired = [&](const Notice& n) {
    const double life = n.level == Notice::Level::Info ? kInfoSeconds : kErrorSeconds;
    return n.time > 0 && ui.now - n.time > life;
  };
  app.notices.erase(std::remove_if(app.notices.begin(), app.notices.end(), expired), app.notices.end());
  // Notices posted without a clock (at startup) get one now.
  for (Notice& n : app.notices)
    if (n.time == 0) n.time = ui.now;
  float y = area_max.y - 110 * s;
  const float width = std::min(440 * s, area_max.x - area_min.x - 40 * s);
  int index = 0;
  for (auto it = app.notices.rbegin(); it != app.notices.rend() && index < 4; ++it, ++index) {
    const ImU32 edge = it->level == Notice::Level::Error     ? colors::kBad
                       : it->level == Notice::Level::Warning ? colors::kWarn
                                                             : colors::kGood;
    ImGui::SetNextWindowPos(ImVec2(area_max.x - width - 20 * s, y), ImGuiCond_Always, ImVec2(0, 1));
    ImGui::SetNextWindowSize(ImVec2(width, 0));
    ImGui::SetNextWindowBgAlpha(0.97f);
    char name[32];
    std::snprintf(name, sizeof name, "##notice%d", index);
    ImGui::PushStyleColor(ImGuiCol_WindowBg, ToVec4(IM_COL32(36, 39, 52, 255)));
    ImGui::Begin(name, nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                    ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                                    ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoNav);
    const ImVec2 wp = ImGui::GetWindowPos(), ws = ImGui::GetWindowSize();
    ImGui::PushClipRect(wp, ImVec2(wp.x + ws.x, wp.y + ws.y), false);  // the edge sits in the padding
    ImGui::GetWindowDrawList()->AddRectFilled(wp, ImVec2(wp.x + 5 * s, wp.y + ws.y), edge, 8 * s,
                                              ImDrawFlags_RoundCornersLeft);
    ImGui::PopClipRect();
    ImGui::PushTextWrapPos(width - 16 * s);
    ImGui::TextUnformatted(it->text.c_str());
    ImGui::PopTextWrapPos();
    if (ImGui::IsWindowHovered() && ImGui::IsMouseClicked(0)) it->time = 1e-9;  // dismiss
    y -= ws.y + 8 * s;
    ImGui::End();
    ImGui::PopStyleColor();
  }
}

// ---------------------------------------------------------------------------------------------
// Dialogs

namespace {

std::string unique_model_path(const UiState& ui, const std::string& source, WeightType type) {
  const std::string name = converted_model_file_name(source, weight_type_name(type));
  fs::path path = to_path(ui.models_dir) / to_path(name);
  std::error_code ec;
  for (int n = 2; fs::exists(path, ec) && n < 1000; ++n) {
    std::string stem = from_path(to_path(name).stem()) + "-" + std::to_string(n) + ".mgn";
    path = to_path(ui.models_dir) / to_path(stem);
  }
  return from_path(path);
}

void DropDialogContent(UiState& ui) {
  AppState& app = *ui.app;
  DropDialog& d = ui.drop;
  const float s = ui.scale;
  ImGui::TextDisabled("%s", d.source.c_str());
  ImGui::Dummy(ImVec2(0, 2 * s));

  const SourceInspection& inspection = app.inspection;
  if (inspection.active) {
    ImGui::Text("Reading the folder%.*s", 1 + static_cast<int>(ui.now * 3) % 3, "...");
    return;
  }

  if (app.convert_job.active && app.convert_job.path == d.source) {
    const JobProgress& job = app.convert_job;
    const double elapsed = std::max(1e-3, ui.now - job.started);
    const float fraction = job.total ? static_cast<float>(job.done) / job.total : 0.0f;
    ImGui::Text("Converting to %s", DisplayName(job.out_path).c_str());
    char overlay[96];
    std::snprintf(overlay, sizeof overlay, "%.0f%%  ·  %s of %s  ·  %.0f MB/s", fraction * 100,
                  format_bytes(job.done).c_str(), format_bytes(job.total).c_str(), job.done / elapsed / 1e6);
    ImGui::ProgressBar(fraction, ImVec2(520 * s, 0), overlay);
    ImGui::PushFont(ui.fonts.small);
    ImGui::TextDisabled("%s", job.stage.c_str());
    ImGui::PopFont();
    if (ImGui::Button("Cancel")) app.cancel_job();
    return;
  }
  if (app.load_job.active) {
    const JobProgress& job = app.load_job;
    ImGui::Text("Loading %s", DisplayName(job.path).c_str());
    ImGui::ProgressBar(job.total ? static_cast<float>(job.done) / job.total : 0.0f, ImVec2(520 * s, 0));
    return;
  }
  if (!d.out_path.empty() && !app.busy() && app.model.present && app.model.info.path == d.out_path) {
    ImGui::CloseCurrentPopup();
    d.open = false;
    return;
  }

  if (!inspection.ok) {
    ImGui::PushStyleColor(ImGuiCol_Text, ToVec4(colors::kBad));
    ImGui::PushTextWrapPos(520 * s);
    ImGui::TextWrapped("This cannot be converted: %s", inspection.error.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    if (ImGui::Button("Close") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
      ImGui::CloseCurrentPopup();
      d.open = false;
    }
    return;
  }

  const SourceSummary& sum = inspection.summary;
  // A GGUF file keeps its own types unless the user picks another.
  const WeightTypeChoice* choices[std::size(kWeightTypes) + 1];
  int n_choices = 0;
  if (sum.keeps_source_types) choices[n_choices++] = &kStoredTypes;
  for (const WeightTypeChoice& choice : kWeightTypes) choices[n_choices++] = &choice;
  const WeightType recommended = sum.keeps_source_types ? WeightType::Auto : recommended_weight_type(sum.n_params);
  for (int i = 0; d.weight_type < 0 && i < n_choices; ++i)
    if (choices[i]->type == recommended) d.weight_type = i;
  // A set width: the values wrap (KeyValueRow), so they cannot size this auto-resizing dialog.
  if (BeginKeyValueTable("##summary", 620 * s)) {
    auto* const row = KeyValueRow;
    row("What", sum.family + " · " + sum.architecture + "  (" + sum.kind + ")");
    if (!sum.notice.empty()) row("Note", sum.notice);
    row("Parameters", format_count(sum.n_params) + "  ·  " + std::to_string(sum.n_layers) + " layers, width " +
                          std::to_string(sum.dim));
    row("Vocabulary", std::to_string(sum.vocab_size) + " tokens");
    row("Context", std::to_string(sum.max_context) + " tokens");
    row("On disk", format_bytes(sum.source_bytes));
    ImGui::EndTable();
  }
  ImGui::Dummy(ImVec2(0, 4 * s));
  ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted("Convert to");
  ImGui::PopFont();
  const int context = ui.app->settings.context_length > 0 ? std::min(ui.app->settings.context_length, sum.max_context)
                                                          : sum.max_context;
  if (ImGui::BeginTable("##types", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH |
                                          ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("Type");
    ImGui::TableSetupColumn("File");
    ImGui::TableSetupColumn("RAM needed");
    ImGui::TableSetupColumn("Expected speed");
    ImGui::TableSetupColumn("");
    ImGui::TableHeadersRow();
    for (int i = 0; i < n_choices; ++i) {
      const WeightTypeChoice& choice = *choices[i];
      const uint64_t bytes = predicted_model_file_bytes(sum, choice.type);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      // The radio's circle in FrameBg vanishes on the alternate rows' tint: one shade lighter.
      ImGui::PushStyleColor(ImGuiCol_FrameBg, ImGui::GetStyleColorVec4(ImGuiCol_FrameBgActive));
      if (ImGui::RadioButton(choice.label, d.weight_type == i)) d.weight_type = i;
      ImGui::PopStyleColor();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_bytes(bytes).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_bytes(predicted_ram_bytes(bytes, sum.n_layers, sum.n_kv_heads, sum.head_dim, context,
                                                                ui.app->settings.kv_type)).c_str());
      ImGui::TableNextColumn();
      if (ui.machine.ready) ImGui::Text("%.1f tok/s", predicted_tokens_per_second(bytes, ui.machine.best_gbps));
      else ImGui::TextDisabled("measuring…");
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s%s", choice.type == recommended ? "recommended · " : "", choice.note);
    }
    ImGui::EndTable();
  }
  const WeightType type = choices[std::clamp(d.weight_type, 0, n_choices - 1)]->type;
  const std::string out = unique_model_path(ui, d.source, type);
  ImGui::PushFont(ui.fonts.small);
  ImGui::TextDisabled("Writes %s", out.c_str());
  ImGui::TextDisabled("RAM counts the model file and a full-context KV cache (upper bound).");
  ImGui::PopFont();
  ImGui::Dummy(ImVec2(0, 4 * s));
  ImGui::BeginDisabled(app.busy());
  const bool enter = ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter)) ||
                     ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_KeyPadEnter));
  if (AccentButton("Convert and load  (Enter)") || (enter && !app.busy())) {
    d.out_path = out;
    app.request_convert(d.source, out, type, ui.now);
  }
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Not now") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
    ImGui::CloseCurrentPopup();
    d.open = false;
  }
  if (app.busy()) {
    ImGui::SameLine();
    ImGui::TextDisabled("(the engine is busy; wait or stop it)");
  }
}

void LibraryContent(UiState& ui) {
  AppState& app = *ui.app;
  const float s = ui.scale;
  // Known models plus everything in the models folder.
  std::vector<std::string> paths = app.known_models;
  std::error_code ec;
  for (fs::directory_iterator it(to_path(ui.models_dir), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".mgn") {
      const std::string p = from_path(it->path());
      if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
    }
  HelpText(("Models you converted live in " + ui.models_dir).c_str());
  if (ImGui::BeginTable("##library", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH |
                                            ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_ScrollY,
                        ImVec2(640 * s, 260 * s))) {
    ImGui::TableSetupColumn("Model", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("Size", ImGuiTableColumnFlags_WidthFixed, 90 * s);
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, 80 * s);
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, 70 * s);
    ImGui::TableHeadersRow();
    for (const std::string& path : paths) {
      const bool exists = fs::is_regular_file(to_path(path), ec);
      ImGui::PushID(path.c_str());
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(DisplayName(path).c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", path.c_str());
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", exists ? format_bytes(fs::file_size(to_path(path), ec)).c_str() : "missing");
      ImGui::TableNextColumn();
      const bool loaded = app.model.present && app.model.info.path == path;
      if (loaded) ImGui::TextColored(ToVec4(colors::kGood), "loaded");
      ImGui::TableNextColumn();
      ImGui::BeginDisabled(!exists || loaded || app.busy());
      if (ImGui::SmallButton("Load")) app.request_load(path);
      ImGui::EndDisabled();
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  if (AccentButton("Open file or folder…")) OpenFileDialog(ui, ui.models_dir);
  ImGui::SameLine();
  ImGui::BeginDisabled(!app.model.present || app.busy());
  if (ImGui::Button("Unload")) app.request_unload();
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Close") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ImGui::CloseCurrentPopup();
}

void RefreshFileDialog(FileDialog& f) {
  f.entries.clear();
  f.error.clear();
  std::error_code ec;
  fs::directory_iterator it(to_path(f.directory), ec);
  if (ec) {
    f.error = "Cannot open " + f.directory + ": " + ec.message();
    return;
  }
  for (fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    FileDialog::Entry e;
    e.name = from_path(it->path().filename());
    if (e.name.empty() || e.name[0] == '.') continue;
    e.directory = it->is_directory(ec);
    if (e.directory) {
      e.hf_folder = fs::is_regular_file(it->path() / "config.json", ec);
    } else {
      const std::string ext = from_path(it->path().extension());
      e.model = ext == ".mgn";
      if (!e.model && ext != ".bin") continue;  // only what can be opened
      e.bytes = it->file_size(ec);
    }
    f.entries.push_back(std::move(e));
  }
  std::sort(f.entries.begin(), f.entries.end(), [](const FileDialog::Entry& a, const FileDialog::Entry& b) {
    if (a.directory != b.directory) return a.directory;
    return a.name < b.name;
  });
}

void FileDialogContent(UiState& ui) {
  FileDialog& f = ui.file_dialog;
  const float s = ui.scale;
  if (ImGui::Button("Up")) {
    f.directory = from_path(to_path(f.directory).parent_path());
    f.path_text = f.directory;
    RefreshFileDialog(f);
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(560 * s);
  if (ImGui::InputText("##path", &f.path_text, ImGuiInputTextFlags_EnterReturnsTrue)) {
    std::error_code ec;
    if (fs::is_directory(to_path(f.path_text), ec) &&
        !fs::is_regular_file(to_path(f.path_text) / "config.json", ec)) {
      f.directory = f.path_text;
      RefreshFileDialog(f);
    } else {
      HandleDroppedPath(ui, f.path_text);
      ImGui::CloseCurrentPopup();
      f.open = false;
      return;
    }
  }
  if (!f.error.empty()) ImGui::TextColored(ToVec4(colors::kBad), "%s", f.error.c_str());
  ImGui::PushStyleColor(ImGuiCol_ChildBg, ToVec4(colors::kCodeBackground));
  ImGui::BeginChild("##entries", ImVec2(640 * s, 300 * s), true, ImGuiWindowFlags_AlwaysUseWindowPadding);
  std::string open_path, navigate_to;
  for (const FileDialog::Entry& e : f.entries) {
    std::string label = (e.directory ? (e.hf_folder ? "[model folder]  " : "[folder]  ") : "") + e.name;
    if (ImGui::Selectable(label.c_str(), false, ImGuiSelectableFlags_AllowDoubleClick)) {
      const std::string full = from_path(to_path(f.directory) / to_path(e.name));
      if (e.directory && !e.hf_folder) {
        navigate_to = full;
      } else {
        f.path_text = full;
        if (DoubleClicked(ui)) open_path = full;
      }
    }
    if (!e.directory) {
      ImGui::SameLine(520 * s);
      ImGui::TextDisabled("%s", format_bytes(e.bytes).c_str());
    }
  }
  if (f.entries.empty() && f.error.empty()) ImGui::TextDisabled("(no folders or model files here)");
  ImGui::EndChild();
  ImGui::PopStyleColor();
  if (!navigate_to.empty()) {
    f.directory = navigate_to;
    f.path_text = navigate_to;
    RefreshFileDialog(f);
  }
  HelpText("Choose a .mgn model file, or a Hugging Face model folder to convert.");
  if (AccentButton("Open")) open_path = f.path_text;
  ImGui::SameLine();
  if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
    ImGui::CloseCurrentPopup();
    f.open = false;
  }
  if (!open_path.empty()) {
    ImGui::CloseCurrentPopup();
    f.open = false;
    HandleDroppedPath(ui, open_path);
  }
}

void SamplingEditor(SamplingSettings& sm, float s, bool* changed) {
  ImGui::PushItemWidth(220 * s);
  *changed |= ImGui::SliderFloat("Temperature", &sm.temperature, 0.0f, 2.0f, "%.2f");
  ImGui::SameLine();
  ImGui::TextDisabled("0 = always the likeliest token");
  *changed |= ImGui::SliderInt("Top-k", &sm.top_k, 0, 200);
  *changed |= ImGui::SliderFloat("Top-p", &sm.top_p, 0.0f, 1.0f, "%.2f");
  *changed |= ImGui::SliderFloat("Min-p", &sm.min_p, 0.0f, 0.5f, "%.3f");
  *changed |= ImGui::SliderFloat("Repeat penalty", &sm.repeat_penalty, 1.0f, 2.0f, "%.2f");
  *changed |= ImGui::SliderInt("Max answer tokens", &sm.max_tokens, 16, 8192);
  ImGui::PopItemWidth();
}

void SettingsContent(UiState& ui) {
  AppState& app = *ui.app;
  const float s = ui.scale;
  bool changed = false;
  ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted("Engine");
  ImGui::PopFont();
  const int cores = std::max(1, ui.machine.ready ? ui.machine.cpu.logical_cores : cpu_info().logical_cores);
  ImGui::SetNextItemWidth(220 * s);
  changed |= ImGui::SliderInt("Threads", &app.settings.threads, 0, cores, app.settings.threads == 0 ? "automatic" : "%d");
  ImGui::SetNextItemWidth(220 * s);
  changed |= ImGui::InputInt("Context length", &app.settings.context_length, 256, 1024);
  app.settings.context_length = std::max(0, app.settings.context_length);
  ImGui::SameLine();
  ImGui::TextDisabled(app.settings.context_length == 0 ? "(the model's maximum)" : "tokens");
  ImGui::SetNextItemWidth(220 * s);
  const KvTypeChoice* current = &kKvTypes[0];
  for (const KvTypeChoice& choice : kKvTypes)
    if (choice.type == app.settings.kv_type) current = &choice;
  if (ImGui::BeginCombo("KV cache", current->label)) {
    for (const KvTypeChoice& choice : kKvTypes) {
      const std::string item = std::string(choice.label) + "  —  " + choice.note;
      if (ImGui::Selectable(item.c_str(), choice.type == app.settings.kv_type)) {
        app.settings.kv_type = choice.type;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::TextDisabled("%s", current->note);
  HelpText("Thread, context and KV cache changes apply when a model is loaded.");
  if (app.model.present && app.model.info.kv_type != app.settings.kv_type)
    HelpText(("The loaded model keeps its KV cache in " + std::string(kv_type_name(app.model.info.kv_type)) +
              " until it is loaded again.").c_str());
  if (app.model.present) {
    ImGui::BeginDisabled(app.busy());
    if (ImGui::Button("Reload the model now")) app.request_load(app.model.info.path);
    ImGui::EndDisabled();
  }
  ImGui::Dummy(ImVec2(0, 4 * s));
  ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted("Decode tuning");
  ImGui::PopFont();
  ImGui::TextWrapped("%s", TuningStatus(ui.machine).c_str());
  if (ui.machine.calibrating) {
    const float done = ui.machine.calibration_total > 0
                           ? float(ui.machine.calibration_done) / float(ui.machine.calibration_total)
                           : 0.0f;
    ImGui::ProgressBar(done, ImVec2(220 * s, 0));
    ImGui::SameLine();
    if (ImGui::Button("Cancel calibration")) ui.bridge->cancel_calibration();
  } else {
    ImGui::BeginDisabled(app.busy() || !ui.machine.ready);
    if (ImGui::Button("Calibrate again")) ui.bridge->recalibrate();
    ImGui::EndDisabled();
  }
  HelpText("A few seconds of measuring which kernel variants and weight layouts decode fastest on this "
           "machine; models loaded afterwards use the choice. Best run while nothing else is busy.");
  ImGui::Dummy(ImVec2(0, 4 * s));
  ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted("Defaults for new chats");
  ImGui::PopFont();
  SamplingEditor(app.settings.sampling, s, &changed);
  ImGui::TextUnformatted("System prompt");
  changed |= ImGui::InputTextMultiline("##system", &app.settings.system_prompt, ImVec2(520 * s, 70 * s));
  ImGui::Dummy(ImVec2(0, 4 * s));
  ImGui::PushFont(ui.fonts.small);
  ImGui::TextDisabled("Chats are saved in %s", app.store.directory().c_str());
  ImGui::PopFont();
  if (changed) ui.settings_dirty = true;
  if (AccentButton("Done") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ImGui::CloseCurrentPopup();
}

void ChatSettingsContent(UiState& ui) {
  AppState& app = *ui.app;
  Conversation* c = app.active();
  const float s = ui.scale;
  if (!c) {
    ImGui::CloseCurrentPopup();
    return;
  }
  bool changed = false;
  ImGui::TextDisabled("Model: %s", c->model_path.empty() ? "(the loaded one)" : c->model_path.c_str());
  ImGui::TextUnformatted("System prompt");
  changed |= ImGui::InputTextMultiline("##system", &c->system_prompt, ImVec2(520 * s, 80 * s));
  SamplingEditor(c->sampling, s, &changed);
  ImGui::SetNextItemWidth(220 * s);
  int seed = static_cast<int>(c->sampling.seed);
  if (ImGui::InputInt("Seed", &seed)) {
    c->sampling.seed = static_cast<uint64_t>(std::max(0, seed));
    changed = true;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("0 = different every time");
  if (changed) (void)app.store.save(c->id);
  if (AccentButton("Done") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ImGui::CloseCurrentPopup();
}

void OverflowContent(UiState& ui) {
  AppState& app = *ui.app;
  const PendingOverflow& o = *app.overflow;
  ImGui::PushTextWrapPos(480 * ui.scale);
  ImGui::TextWrapped("This chat no longer fits in the model's context window: the next answer needs "
                     "about %d tokens, the window holds %d.", o.needed, o.available);
  HelpText("Leaving out the oldest turns keeps the chat (they stay on screen and on disk) but the "
           "model will not see them any more.");
  ImGui::PopTextWrapPos();
  if (AccentButton("Leave out the oldest turns")) {
    ui.chat.scroll_to_bottom = true;
    app.resolve_overflow(true, ui.now);
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Stop here") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
    app.resolve_overflow(false, ui.now);
    ImGui::CloseCurrentPopup();
  }
}

void Modal(const char* name, bool* open_request, void (*content)(UiState&), UiState& ui, bool closable = true) {
  if (*open_request) {
    ImGui::OpenPopup(name);
    *open_request = false;
  }
  const ImVec2 center = ImGui::GetMainViewport()->GetCenter();
  // Always: auto-resizing dialogs change height after their first frame.
  ImGui::SetNextWindowPos(center, ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  bool keep_open = true;
  if (ImGui::BeginPopupModal(name, closable ? &keep_open : nullptr,
                             ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings)) {
    content(ui);
    ImGui::EndPopup();
  }
}

}  // namespace

// A dropped (or opened) path: a model file loads, a source opens the drop dialog and is inspected
// on the engine thread.
void HandleDroppedPath(UiState& ui, const std::string& path) {
  AppState& app = *ui.app;
  const DropTarget target = classify_drop(path);
  switch (target.kind) {
    case DropKind::Unsupported:
      app.post(Notice::Level::Error, target.message, ui.now);
      return;
    case DropKind::MagnetarModel:
      app.request_load(target.path);
      return;
    case DropKind::HuggingFaceFolder:
    case DropKind::GgufFile:
    case DropKind::Llama2cCheckpoint:
      if (app.busy()) {
        app.post(Notice::Level::Warning, "Wait for the current task to finish (or stop it) before adding a model.", ui.now);
        return;
      }
      ui.drop = DropDialog{};
      ui.drop.open = true;
      ui.drop.just_opened = true;
      ui.drop.source = target.path;
      // Reading config.json and the tensor headers takes milliseconds to a second: on the
      // engine thread, like every engine call.
      app.request_inspect(target.path);
      return;
  }
}

void DrawDialogs(UiState& ui) {
  AppState& app = *ui.app;
  bool open_drop = ui.drop.just_opened;
  ui.drop.just_opened = false;
  if (ui.drop.open) Modal("Add a model", &open_drop, DropDialogContent, ui);
  if (!ImGui::IsPopupOpen("Add a model") && ui.drop.open && !open_drop) ui.drop.open = false;
  Modal("Models", &ui.open_library, LibraryContent, ui);
  bool open_file = ui.file_dialog.just_opened;
  ui.file_dialog.just_opened = false;
  Modal("Open a model", &open_file, FileDialogContent, ui);
  Modal("Settings", &ui.open_settings, SettingsContent, ui);
  Modal("Chat settings", &ui.open_chat_settings, ChatSettingsContent, ui);
  bool open_overflow = app.overflow.has_value() && !ImGui::IsPopupOpen("The chat is too long");
  if (app.overflow) Modal("The chat is too long", &open_overflow, OverflowContent, ui, false);
}

void OpenFileDialog(UiState& ui, const std::string& directory) {
  FileDialog& f = ui.file_dialog;
  std::error_code ec;
  f.directory = directory.empty() ? from_path(fs::current_path(ec)) : directory;
  if (!fs::is_directory(to_path(f.directory), ec)) f.directory = from_path(fs::current_path(ec));
  f.path_text = f.directory;
  RefreshFileDialog(f);
  f.open = true;
  f.just_opened = true;
}

}  // namespace magnetar::app
