// magnetar: the desktop app's entry point and frame loop.
//
// One window (GLFW + OpenGL 3.3 core via glad), Dear ImGui for everything drawn. The UI thread
// only renders and handles input; the EngineBridge's thread loads, converts and generates.
// Each frame: drain engine events into AppState, draw the panels, hand AppState's outbox to
// the engine. When nothing happens the loop sleeps in glfwWaitEventsTimeout; the engine wakes
// it with glfwPostEmptyEvent, and frames are capped at 60 per second while the engine works,
// so the UI never competes with generation for the CPU.
//
// Usage: magnetar [MODEL.mgn | HF_FOLDER | CHECKPOINT.bin]
#include <glad/gl.h>
// glad first: it replaces the system GL header GLFW would include.
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>

#include "core/settings_file.h"
#include "core/text_util.h"
#include "magnetar/system.h"
#include "ui.h"

#ifdef _WIN32
#include <windows.h>
// windows.h first: shellapi.h needs its types.
#include <shellapi.h>
#endif

namespace magnetar::app {

namespace fs = std::filesystem;

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
    case DropKind::Llama2cCheckpoint:
      if (app.busy()) {
        app.post(Notice::Level::Warning, "Wait for the current task to finish (or stop it) before adding a model.", ui.now);
        return;
      }
      ui.drop = DropDialog{};
      ui.drop.open = true;
      ui.drop.just_opened = true;
      ui.drop.source = target.path;
      ui.drop.inspecting = true;
      // Reading config.json and the safetensors headers takes milliseconds to a second: off the
      // UI thread, polled each frame.
      ui.drop.inspection = std::async(std::launch::async, [source = target.path] {
        InspectResult result;
        Status status = inspect_source(source, &result.summary);
        result.ok = status.is_ok();
        if (!status) result.error = status.message();
        return result;
      });
      return;
  }
}

namespace {

struct PendingDrops {
  std::vector<std::string> paths;
};

void on_drop(GLFWwindow* window, int count, const char** paths) {
  auto* pending = static_cast<PendingDrops*>(glfwGetWindowUserPointer(window));
  for (int i = 0; i < count; ++i) pending->paths.emplace_back(paths[i]);  // GLFW gives UTF-8
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void DrawFrame(UiState& ui, GLFWwindow* window) {
  AppState& app = *ui.app;
  const float s = ui.scale;
  ImGuiIO& io = ImGui::GetIO();

  // Global shortcuts.
  if (io.KeyCtrl && ImGui::IsKeyPressed(GLFW_KEY_N, false)) {
    app.new_conversation();
    ui.focus_input = true;
  }
  if (app.generation.active && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false) &&
      !ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId))
    app.stop();

  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->WorkPos);
  ImGui::SetNextWindowSize(viewport->WorkSize);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::Begin("##root", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                      ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus);
  ImGui::PopStyleVar();

  const float sidebar_width = 260 * s;
  const float dashboard_width = ui.show_dashboard ? 320 * s : 0;
  const float height = viewport->WorkSize.y;

  ImGui::PushStyleColor(ImGuiCol_ChildBg, ToVec4(IM_COL32(27, 29, 37, 255)));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(14 * s, 14 * s));
  ImGui::PushStyleVar(ImGuiStyleVar_ChildRounding, 0);
  ImGui::BeginChild("##sidebar", ImVec2(sidebar_width, height), false, ImGuiWindowFlags_AlwaysUseWindowPadding);
  DrawSidebar(ui);
  ImGui::EndChild();
  ImGui::PopStyleColor();

  ImGui::SameLine(0, 0);
  const float center_width = viewport->WorkSize.x - sidebar_width - dashboard_width;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(18 * s, 12 * s));
  ImGui::BeginChild("##center", ImVec2(center_width, height), false, ImGuiWindowFlags_AlwaysUseWindowPadding);
  const ImVec2 center_min = ImGui::GetWindowPos();
  const ImVec2 center_max(center_min.x + center_width, center_min.y + height);
  DrawChat(ui);
  ImGui::EndChild();
  ImGui::PopStyleVar();

  if (ui.show_dashboard) {
    ImGui::SameLine(0, 0);
    ImGui::PushStyleColor(ImGuiCol_ChildBg, ToVec4(IM_COL32(27, 29, 37, 255)));
    ImGui::BeginChild("##dashboard", ImVec2(dashboard_width, height), false, ImGuiWindowFlags_AlwaysUseWindowPadding);
    DrawDashboard(ui);
    ImGui::EndChild();
    ImGui::PopStyleColor();
  }
  ImGui::PopStyleVar(2);
  ImGui::End();

  DrawDialogs(ui);
  DrawNotices(ui, center_min, center_max);

  // The window title names the model (and lets tests find the window).
  static std::string last_title;
  const std::string title = app.model.present ? "Magnetar — " + app.model.name : "Magnetar";
  if (title != last_title) {
    glfwSetWindowTitle(window, title.c_str());
    last_title = title;
  }
}

std::vector<std::string> utf8_arguments(int argc, char** argv) {
  std::vector<std::string> args;
#ifdef _WIN32
  (void)argc;
  (void)argv;
  int count = 0;
  LPWSTR* wide = CommandLineToArgvW(GetCommandLineW(), &count);
  for (int i = 1; wide && i < count; ++i) args.push_back(from_path(fs::path(wide[i])));
  if (wide) LocalFree(wide);
#else
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
#endif
  return args;
}

int run(int argc, char** argv) {
  const std::vector<std::string> args = utf8_arguments(argc, argv);
  for (const std::string& a : args)
    if (a == "--help" || a == "-h") {
      std::printf("usage: magnetar [MODEL.mgn | HUGGING_FACE_FOLDER | CHECKPOINT.bin]\n"
                  "Opens the desktop app; a model file is loaded, a folder is offered for conversion.\n");
      return 0;
    }

  glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "magnetar: GLFW error %d: %s\n", code, text); });
  if (!glfwInit()) {
    std::fprintf(stderr, "magnetar: cannot open a window (no display?)\n");
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(1360, 860, "Magnetar", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "magnetar: cannot create an OpenGL 3.3 window\n");
    glfwTerminate();
    return 1;
  }
  // Scaled to a high-DPI monitor the window may not fit: keep it inside the work area.
  if (GLFWmonitor* monitor = glfwGetPrimaryMonitor()) {
    int area_x = 0, area_y = 0, area_w = 0, area_h = 0, w = 0, h = 0;
    glfwGetMonitorWorkarea(monitor, &area_x, &area_y, &area_w, &area_h);
    glfwGetWindowSize(window, &w, &h);
    if (area_w > 0 && area_h > 0 && (w > area_w || h > area_h)) {
      glfwSetWindowSize(window, std::min(w, area_w * 9 / 10), std::min(h, area_h * 9 / 10));
      glfwSetWindowPos(window, area_x + area_w / 20, area_y + area_h / 20);
    }
  }
  glfwMakeContextCurrent(window);
  if (!gladLoadGL(glfwGetProcAddress)) {
    std::fprintf(stderr, "magnetar: cannot load OpenGL 3.3 functions\n");
    return 1;
  }
  glfwSwapInterval(1);
  SetWindowIcon(window);
  PendingDrops drops;
  glfwSetWindowUserPointer(window, &drops);
  glfwSetDropCallback(window, on_drop);

  float scale_x = 1, scale_y = 1;
  glfwGetWindowContentScale(window, &scale_x, &scale_y);
  const float scale = std::clamp(std::max(scale_x, scale_y), 1.0f, 4.0f);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed; nothing to remember
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  ApplyTheme(scale);
  UiState ui;
  ui.scale = scale;
  ui.fonts = LoadFonts(scale);
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");

  // Data: chats, settings, converted models.
  AppState app;
  ui.app = &app;
  ui.data_dir = user_data_dir();
  ui.models_dir = from_path(to_path(ui.data_dir) / "models");
  ui.exports_dir = from_path(to_path(ui.data_dir) / "exports");
  ui.settings_path = from_path(to_path(ui.data_dir) / "settings.json");
  if (Status status = load_settings(ui.settings_path, &app.settings, &app.known_models); !status)
    app.post(Notice::Level::Warning, status.message(), 0);
  if (Status status = app.open_store(from_path(to_path(ui.data_dir) / "conversations")); !status)
    app.post(Notice::Level::Error, "Chats cannot be saved: " + status.message(), 0);

  // Destroyed before glfwTerminate(): its thread calls glfwPostEmptyEvent() until it stops.
  auto bridge_owner = std::make_unique<EngineBridge>([] { glfwPostEmptyEvent(); });
  EngineBridge& bridge = *bridge_owner;
  ui.bridge = &bridge;
  EngineCommand measure;
  measure.kind = EngineCommand::Kind::MeasureMachine;
  bridge.send(measure);
  for (const std::string& path : args) HandleDroppedPath(ui, path);

  // While the engine works, frames are paced so drawing takes at most ~1/6 of one core: 60 fps
  // with a GPU (a frame costs ~1 ms), fewer with software OpenGL, whose frames cost tens of ms
  // of the CPU time generation needs.
  constexpr double kBusyFrameSeconds = 1.0 / 60.0;
  constexpr double kSlowestBusyFrameSeconds = 0.25;
  constexpr double kFrameCostShare = 6.0;
  constexpr double kIdleWaitSeconds = 0.5;          // caret blink, toasts
  int settle_frames = 3;  // ImGui needs a frame or two after input to settle hover states
  double last_frame = 0;
  while (!glfwWindowShouldClose(window)) {
    const bool animating = app.busy() || ui.drop.inspecting || settle_frames > 0;
    if (animating) {
      double recent_cost = 0;  // seconds of the last few frames' CPU work
      for (size_t i = ui.frame_ms.size() > 8 ? ui.frame_ms.size() - 8 : 0; i < ui.frame_ms.size(); ++i)
        recent_cost = std::max(recent_cost, ui.frame_ms[i] / 1000.0);
      const double interval = settle_frames > 0 && !app.busy()
                                  ? kBusyFrameSeconds
                                  : std::clamp(recent_cost * kFrameCostShare, kBusyFrameSeconds,
                                               kSlowestBusyFrameSeconds);
      const double next = last_frame + interval;
      for (double t = seconds_now(); t < next; t = seconds_now()) glfwWaitEventsTimeout(next - t);
      glfwPollEvents();
      if (settle_frames > 0) --settle_frames;
    } else {
      glfwWaitEventsTimeout(kIdleWaitSeconds);
      settle_frames = 2;
    }
    const double frame_start = seconds_now();
    last_frame = frame_start;
    ui.now = frame_start;

    EngineEvent event;
    while (bridge.poll(&event)) {
      std::optional<ModelInfo> info;
      if (event.kind == EventKind::ModelLoaded) info = bridge.take_model_info();
      app.on_event(event, ui.now, info ? &*info : nullptr);
      if (event.kind == EventKind::ModelLoaded) ui.settings_dirty = true;  // known_models changed
    }
    if (!ui.machine.ready && bridge.machine_ready()) ui.machine = bridge.machine();
    for (const std::string& path : drops.paths) HandleDroppedPath(ui, path);
    drops.paths.clear();

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    DrawFrame(ui, window);
    ImGui::Render();
    int width = 0, height = 0;
    glfwGetFramebufferSize(window, &width, &height);
    glViewport(0, 0, width, height);
    glClearColor(22 / 255.f, 24 / 255.f, 30 / 255.f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    glfwSwapBuffers(window);

    for (EngineCommand& command : app.outbox) bridge.send(std::move(command));
    app.outbox.clear();
    for (uint64_t id : app.cancel_requests) bridge.cancel(id);
    app.cancel_requests.clear();
    if (ui.settings_dirty && !ImGui::IsMouseDown(0)) {
      ui.settings_dirty = false;
      if (Status status = save_settings(ui.settings_path, app.settings, app.known_models); !status)
        app.post(Notice::Level::Error, status.message(), ui.now);
    }
    ui.frame_ms.push_back(static_cast<float>((seconds_now() - frame_start) * 1000.0));
    if (ui.frame_ms.size() > 120) ui.frame_ms.pop_front();
  }

  // Closing mid-answer keeps what was written so far.
  if (app.generation.active) (void)app.store.save(app.generation.conversation_id);
  bridge_owner.reset();  // cancels what runs and joins the engine thread
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return 0;
}

}  // namespace
}  // namespace magnetar::app

int main(int argc, char** argv) { return magnetar::app::run(argc, argv); }
