// magnetar: the desktop app's entry point and frame loop.
//
// One window (GLFW + OpenGL 3.3 core via glad), Dear ImGui for everything drawn. The UI thread
// only renders and handles input; the EngineBridge's thread loads, converts and generates.
// Each frame: drain engine events into AppState, draw the panels, hand AppState's outbox to
// the engine. The loop sleeps in glfwWaitEventsTimeout until a frame is due (FramePacer): input
// wakes it and is drawn at once; the engine wakes it with glfwPostEmptyEvent, and while the
// engine works its progress is drawn at a rate set by what frames cost in CPU time, so the UI
// takes about 2% of one core from generation. With nothing happening it draws twice a second.
//
// Usage: magnetar [MODEL.mgn | HF_FOLDER | CHECKPOINT.bin]
// MAGNETAR_FRAME_STATS=FILE appends one JSON line per answer: the UI's frame times during it.
#include <glad/gl.h>
// glad first: it replaces the system GL header GLFW would include.
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <thread>

#include "core/frame_pacing.h"
#include "core/input_trickle.h"
#include "core/settings_file.h"
#include "core/text_util.h"
#include "magnetar/convert.h"
#include "magnetar/system.h"
#include "ui.h"
#include "window_icon.h"

#ifdef _WIN32
#include <windows.h>
// windows.h first: shellapi.h needs its types.
#include <shellapi.h>
#endif

namespace magnetar::app {

namespace fs = std::filesystem;

namespace {

// What the window system delivered since the last frame (GLFW callbacks run inside
// glfwWaitEventsTimeout on the UI thread). Keys, characters, mouse buttons, moves and scrolling
// wait in `events` and reach ImGui's backend a frame's worth at a time (InputTrickle), so a key
// tap or a click shorter than a slow frame is still seen; focus and cursor enter/leave go to the
// backend at once.
struct WindowInbox {
  std::vector<std::string> drops;
  InputTrickle events;
  bool input = false;    // keys, characters, clicks, scrolling, focus, resize, expose: draw at once
  bool pointer = false;  // the mouse moved (paced while the engine works)
  ImeGuard ime;
  // Double-clicks timed when the presses arrive, not per frame (see DoubleClicked in ui.h).
  double last_press_time = -1, last_press_x = 0, last_press_y = 0;
};

WindowInbox& inbox_of(GLFWwindow* window) { return *static_cast<WindowInbox*>(glfwGetWindowUserPointer(window)); }

void on_drop(GLFWwindow* window, int count, const char** paths) {
  WindowInbox& inbox = inbox_of(window);
  for (int i = 0; i < count; ++i) inbox.drops.emplace_back(paths[i]);  // GLFW gives UTF-8
  inbox.input = true;
}

void on_key(GLFWwindow* window, int key, int scancode, int action, int mods) {
  WindowInbox& inbox = inbox_of(window);
  inbox.input = true;
  InputEvent event{InputEvent::Kind::Key, key, action, scancode, mods};
  if (action != GLFW_RELEASE) {
    if (key == GLFW_KEY_ENTER || key == GLFW_KEY_KP_ENTER) {
      event.flag = !inbox.ime.on_enter();  // this Enter confirmed a composition
    } else {
      // Keys that type a character on the main block (the keypad types nothing with NumLock off).
      const bool plain = !(mods & (GLFW_MOD_CONTROL | GLFW_MOD_ALT | GLFW_MOD_SUPER));
      inbox.ime.on_key_press(plain && key >= GLFW_KEY_SPACE && key <= GLFW_KEY_WORLD_2, key == GLFW_KEY_ESCAPE);
    }
  }
  inbox.events.push(event);
}

void on_char(GLFWwindow* window, unsigned int codepoint) {
  WindowInbox& inbox = inbox_of(window);
  inbox.ime.on_char();
  inbox.input = true;
  inbox.events.push(InputEvent{InputEvent::Kind::Char, static_cast<int>(codepoint)});
}

void on_window_input(GLFWwindow* window) { inbox_of(window).input = true; }

void on_mouse_button(GLFWwindow* window, int button, int action, int mods) {
  WindowInbox& inbox = inbox_of(window);
  inbox.input = true;
  InputEvent event{InputEvent::Kind::MouseButton, button, action, 0, mods};
  if (button == GLFW_MOUSE_BUTTON_LEFT && action == GLFW_PRESS) {
    constexpr double kDoubleClickSeconds = 0.5;  // Windows' default
    constexpr double kDoubleClickPixels = 6;
    double x = 0, y = 0;
    glfwGetCursorPos(window, &x, &y);
    const double now = glfwGetTime();
    if (inbox.last_press_time >= 0 && now - inbox.last_press_time <= kDoubleClickSeconds &&
        std::abs(x - inbox.last_press_x) <= kDoubleClickPixels && std::abs(y - inbox.last_press_y) <= kDoubleClickPixels) {
      event.flag = true;           // this press completed a double-click
      inbox.last_press_time = -1;  // a third press starts a new pair
    } else {
      inbox.last_press_time = now;
      inbox.last_press_x = x;
      inbox.last_press_y = y;
    }
  }
  inbox.events.push(event);
}

void on_scroll(GLFWwindow* window, double x, double y) {
  InputEvent event{InputEvent::Kind::Scroll};
  event.x = x;
  event.y = y;
  inbox_of(window).events.push(event);
  on_window_input(window);
}

void on_cursor_pos(GLFWwindow* window, double x, double y) {
  InputEvent event{InputEvent::Kind::MouseMove};
  event.x = x;
  event.y = y;
  inbox_of(window).events.push(event);
  inbox_of(window).pointer = true;
}

// ImGui's backend is initialised without callbacks of its own: these hand it every event.
void install_input_callbacks(GLFWwindow* window) {
  glfwSetDropCallback(window, on_drop);
  glfwSetKeyCallback(window, on_key);
  glfwSetCharCallback(window, on_char);
  glfwSetMouseButtonCallback(window, on_mouse_button);
  glfwSetScrollCallback(window, on_scroll);
  glfwSetCursorPosCallback(window, on_cursor_pos);
  glfwSetCursorEnterCallback(window, [](GLFWwindow* w, int entered) {
    ImGui_ImplGlfw_CursorEnterCallback(w, entered);
    inbox_of(w).pointer = true;
  });
  glfwSetWindowFocusCallback(window, [](GLFWwindow* w, int focused) {
    ImGui_ImplGlfw_WindowFocusCallback(w, focused);
    on_window_input(w);
  });
  glfwSetWindowRefreshCallback(window, on_window_input);
  glfwSetFramebufferSizeCallback(window, [](GLFWwindow* w, int, int) { on_window_input(w); });
  glfwSetWindowContentScaleCallback(window, [](GLFWwindow* w, float, float) { on_window_input(w); });
}

// Mesa's software OpenGL (llvmpipe) rasterises on one thread per core by default: threads that
// compete with generation and whose CPU no frame measurement sees. Asked to, it rasterises on
// the thread that draws, where thread_cpu_seconds() counts it and the pacer limits it. Hardware
// drivers ignore the variable; a value the user set is kept.
void keep_software_rendering_on_the_ui_thread() {
#ifdef _WIN32
  if (!std::getenv("LP_NUM_THREADS")) _putenv_s("LP_NUM_THREADS", "0");
#else
  setenv("LP_NUM_THREADS", "0", /*overwrite=*/0);
#endif
}

// Replays one frame's share of the queued input into ImGui's backend, as its own callbacks would
// have; returns what the app's own per-frame flags need from those events.
struct FrameInput {
  bool enter_confirmed_composition = false;
  bool double_clicked = false;
};
FrameInput replay_input(GLFWwindow* window, InputTrickle& trickle, std::vector<InputEvent>* scratch) {
  FrameInput result;
  trickle.take_frame(scratch);
  for (const InputEvent& e : *scratch) {
    switch (e.kind) {
      case InputEvent::Kind::Key:
        ImGui_ImplGlfw_KeyCallback(window, e.code, e.scancode, e.action, e.mods);
        result.enter_confirmed_composition |= e.flag;
        break;
      case InputEvent::Kind::Char:
        ImGui_ImplGlfw_CharCallback(window, static_cast<unsigned int>(e.code));
        break;
      case InputEvent::Kind::MouseButton:
        ImGui_ImplGlfw_MouseButtonCallback(window, e.code, e.action, e.mods);
        result.double_clicked |= e.flag;
        break;
      case InputEvent::Kind::Scroll: ImGui_ImplGlfw_ScrollCallback(window, e.x, e.y); break;
      case InputEvent::Kind::MouseMove: break;  // applied after the backend's NewFrame (below)
    }
  }
  return result;
}

// ImGui 1.86's backend reads the buttons and the cursor as they are now; the frame shows them as
// the events replayed so far left them.
void apply_mouse_state(const InputTrickle& trickle) {
  ImGuiIO& io = ImGui::GetIO();
  for (int b = 0; b < IM_ARRAYSIZE(io.MouseDown); ++b) io.MouseDown[b] = trickle.button_down(b);
  const bool cursor_known = io.MousePos.x != -FLT_MAX;  // the backend's "not over the window"
  if (cursor_known && trickle.has_position())
    io.MousePos = ImVec2(static_cast<float>(trickle.mouse_x()), static_cast<float>(trickle.mouse_y()));
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
    ui.chat.focus_input = true;
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
  const float dashboard_width = ui.dashboard.visible ? 320 * s : 0;
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

  if (ui.dashboard.visible) {
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
  keep_software_rendering_on_the_ui_thread();
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
  WindowInbox inbox;
  glfwSetWindowUserPointer(window, &inbox);
  install_input_callbacks(window);  // they feed ImGui's backend (initialised below without its own)

  float scale_x = 1, scale_y = 1;
  glfwGetWindowContentScale(window, &scale_x, &scale_y);
  const float scale = std::clamp(std::max(scale_x, scale_y), 1.0f, 4.0f);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed; nothing to remember
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
  // Windows' default double-click time (ImGui's is 0.3 s). ImGui measures it between frames, and a
  // software-rendered frame on a busy machine can take a good part of 0.3 s.
  io.MouseDoubleClickTime = 0.5f;
  ApplyTheme(scale);
  UiState ui;
  ui.scale = scale;
  ui.fonts = LoadFonts(scale);
  ImGui_ImplGlfw_InitForOpenGL(window, /*install_callbacks=*/false);  // ours replay into it
  ImGui_ImplOpenGL3_Init("#version 330 core");

  // Data: chats, settings, converted models.
  AppState app;
  ui.app = &app;
  ui.data_dir = user_data_dir();
  ui.models_dir = user_models_dir();
  // Conversions the app was killed in (SIGKILL, power cut) left "<model>.tmp-<pid>" behind.
  if (const int removed = remove_stale_conversion_files(ui.models_dir); removed > 0)
    std::fprintf(stderr, "magnetar: removed %d unfinished conversion file(s) from %s\n", removed,
                 ui.models_dir.c_str());
  ui.exports_dir = from_path(to_path(ui.data_dir) / "exports");
  ui.settings_path = from_path(to_path(ui.data_dir) / "settings.json");
  if (Status status = load_settings(ui.settings_path, &app.settings, &app.known_models); !status)
    app.post(Notice::Level::Warning, status.message(), 0);
  if (Status status = app.open_store(from_path(to_path(ui.data_dir) / "conversations")); !status)
    app.post(Notice::Level::Error, "Chats cannot be saved: " + status.message(), 0);

  // Destroyed before glfwTerminate(): its thread calls glfwPostEmptyEvent() until it stops.
  std::atomic<bool> engine_woke{false};
  auto bridge_owner = std::make_unique<EngineBridge>([&engine_woke] {
    engine_woke.store(true);
    glfwPostEmptyEvent();
  });
  EngineBridge& bridge = *bridge_owner;
  ui.bridge = &bridge;
  EngineCommand measure;
  measure.kind = EngineCommand::Kind::MeasureMachine;
  bridge.send(measure);
  for (const std::string& path : args) HandleDroppedPath(ui, path);

  const char* frame_stats_path = std::getenv("MAGNETAR_FRAME_STATS");
  FramePacer pacer;
  FrameRecorder generation_frames;
  std::vector<InputEvent> input_scratch;
  int settle_frames = 3;  // ImGui needs a frame or two after input to settle hover and key states
  double last_frame = 0;
  while (!glfwWindowShouldClose(window)) {
    // Sleep until a frame is due. Whatever arrives meanwhile (input, an engine wake-up) is
    // handled inside glfwWaitEventsTimeout and may bring the frame forward. A frame already due
    // (the last one took longer than the interval: software OpenGL on a busy machine) still
    // takes what the window system has delivered first, so input, drops and the drag-and-drop
    // replies the source waits for are never held back by a run of slow frames.
    for (;;) {
      FrameTriggers triggers;
      triggers.input = inbox.input || inbox.events.pending();  // events left for the next frame
      triggers.pointer = inbox.pointer;
      triggers.settling = settle_frames > 0;
      triggers.engine = engine_woke.load();
      triggers.polling = app.inspection.active;  // the dialog's "Reading the folder..." dots
      const double due = pacer.due(triggers, app.busy() && bridge.working(), last_frame);
      const double now = seconds_now();
      if (now >= due) {
        glfwPollEvents();
        break;
      }
      glfwWaitEventsTimeout(due - now);
    }
    if (inbox.input) settle_frames = 2;
    else if (settle_frames > 0) --settle_frames;
    inbox.input = inbox.pointer = false;
    const FrameInput frame_input = replay_input(window, inbox.events, &input_scratch);
    ui.chat.enter_confirmed_composition = frame_input.enter_confirmed_composition;
    ui.double_clicked = frame_input.double_clicked;

    const double frame_start = seconds_now();
    const double frame_start_cpu = thread_cpu_seconds();
    last_frame = frame_start;
    ui.now = frame_start;

    engine_woke.store(false);  // before draining: a wake-up for a later event stays seen
    EngineEvent event;
    while (bridge.poll(&event)) {
      std::optional<ModelInfo> info;
      if (event.kind == EventKind::ModelLoaded) info = bridge.take_model_info();
      std::optional<SourceSummary> source;
      if (event.kind == EventKind::SourceInspected) source = bridge.take_source_summary();
      app.on_event(event, ui.now, info ? &*info : nullptr, source ? &*source : nullptr);
      if (event.kind == EventKind::ModelLoaded) ui.settings_dirty = true;  // known_models changed
    }
    if (ui.machine.generation != bridge.machine_generation()) ui.machine = bridge.machine();
    for (const std::string& path : inbox.drops) HandleDroppedPath(ui, path);
    inbox.drops.clear();

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    apply_mouse_state(inbox.events);
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

    // A frame's cost is the CPU it took on this thread (with software OpenGL that includes the
    // rasterising); its wall time also holds waiting for a core the engine is using.
    const double frame_end = seconds_now();
    const double frame_end_cpu = thread_cpu_seconds();
    const double frame_cpu = frame_end_cpu - frame_start_cpu;
    pacer.record(frame_cpu);
    ui.dashboard.frame_cpu_ms.push_back(static_cast<float>(frame_cpu * 1000.0));
    if (ui.dashboard.frame_cpu_ms.size() > 120) ui.dashboard.frame_cpu_ms.pop_front();
    // Statistics of the frames drawn while an answer is written (from the frame after Send to
    // the frame that shows the end).
    if (generation_frames.active()) generation_frames.add(frame_cpu, frame_end - frame_start);
    if (!generation_frames.active() && app.generation.active) {
      generation_frames.begin(frame_end, frame_end_cpu);
    } else if (generation_frames.active() && !app.generation.active) {
      ui.dashboard.generation_frames = generation_frames.finish(frame_end, frame_end_cpu);
      if (frame_stats_path) {
        if (FILE* f = std::fopen(frame_stats_path, "a")) {
          const std::string line = frame_summary_json(ui.dashboard.generation_frames, app.last_stats.generate_tokens_per_second,
                                                      app.last_stats.n_generated);
          std::fprintf(f, "%s\n", line.c_str());
          std::fclose(f);
        }
      }
    }
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
