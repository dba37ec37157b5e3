// Look and feel: the dark theme, fonts from the system (DejaVu / Segoe UI, a monospace face for
// code, Noto CJK or the Windows CJK fonts when present) and DPI scaling. No window system here
// (window_icon.cpp draws the icon for GLFW).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/text_util.h"
#include "ui.h"

#ifdef _WIN32
#include <windows.h>
#endif

#ifdef MAGNETAR_EMBEDDED_UI_FONT
// DejaVu Sans, embedded at build time (app/gui/CMakeLists.txt, cmake/EmbedFile.cmake).
extern const unsigned char kEmbeddedUiFont[];
extern const unsigned long kEmbeddedUiFont_bytes;
#endif

namespace magnetar::app {

ImVec4 ToVec4(ImU32 color) { return ImGui::ColorConvertU32ToFloat4(color); }

void ApplyTheme(float scale) {
  ImGuiStyle& style = ImGui::GetStyle();
  ImGui::StyleColorsDark(&style);
  style.WindowPadding = ImVec2(14, 12);
  style.FramePadding = ImVec2(10, 6);
  style.ItemSpacing = ImVec2(8, 7);
  style.ItemInnerSpacing = ImVec2(6, 5);
  style.ScrollbarSize = 12;
  style.GrabMinSize = 10;
  style.WindowRounding = 8;
  style.ChildRounding = 8;
  style.FrameRounding = 6;
  style.PopupRounding = 8;
  style.ScrollbarRounding = 6;
  style.GrabRounding = 6;
  style.TabRounding = 6;
  style.WindowBorderSize = 0;
  style.ChildBorderSize = 0;
  style.PopupBorderSize = 1;
  style.FrameBorderSize = 0;
  style.WindowTitleAlign = ImVec2(0.5f, 0.5f);

  ImVec4* c = style.Colors;
  auto rgb = [](int r, int g, int b, float a = 1.0f) { return ImVec4(r / 255.f, g / 255.f, b / 255.f, a); };
  c[ImGuiCol_Text] = rgb(226, 229, 236);
  c[ImGuiCol_TextDisabled] = rgb(125, 131, 146);
  c[ImGuiCol_WindowBg] = rgb(22, 24, 30);
  c[ImGuiCol_ChildBg] = rgb(22, 24, 30, 0.0f);
  c[ImGuiCol_PopupBg] = rgb(30, 33, 42, 0.98f);
  c[ImGuiCol_Border] = rgb(58, 62, 76);
  c[ImGuiCol_FrameBg] = rgb(36, 39, 50);
  c[ImGuiCol_FrameBgHovered] = rgb(46, 50, 64);
  c[ImGuiCol_FrameBgActive] = rgb(52, 56, 74);
  c[ImGuiCol_TitleBg] = rgb(22, 24, 30);
  c[ImGuiCol_TitleBgActive] = rgb(30, 33, 42);
  c[ImGuiCol_MenuBarBg] = rgb(26, 28, 36);
  c[ImGuiCol_ScrollbarBg] = rgb(0, 0, 0, 0);
  c[ImGuiCol_ScrollbarGrab] = rgb(60, 64, 80);
  c[ImGuiCol_ScrollbarGrabHovered] = rgb(80, 84, 104);
  c[ImGuiCol_ScrollbarGrabActive] = rgb(124, 108, 255);
  c[ImGuiCol_CheckMark] = rgb(150, 138, 255);
  c[ImGuiCol_SliderGrab] = rgb(124, 108, 255);
  c[ImGuiCol_SliderGrabActive] = rgb(150, 138, 255);
  c[ImGuiCol_Button] = rgb(42, 46, 60);
  c[ImGuiCol_ButtonHovered] = rgb(56, 60, 80);
  c[ImGuiCol_ButtonActive] = rgb(70, 74, 100);
  c[ImGuiCol_Header] = rgb(48, 50, 72);
  c[ImGuiCol_HeaderHovered] = rgb(44, 47, 62);
  c[ImGuiCol_HeaderActive] = rgb(60, 58, 96);
  c[ImGuiCol_Separator] = rgb(48, 52, 64);
  c[ImGuiCol_ResizeGrip] = rgb(0, 0, 0, 0);
  c[ImGuiCol_PlotLines] = rgb(124, 108, 255);
  c[ImGuiCol_PlotHistogram] = rgb(124, 108, 255);
  c[ImGuiCol_TextSelectedBg] = rgb(124, 108, 255, 0.35f);
  c[ImGuiCol_ModalWindowDimBg] = rgb(8, 9, 12, 0.6f);
  c[ImGuiCol_TableHeaderBg] = rgb(30, 33, 42);
  c[ImGuiCol_TableBorderLight] = rgb(40, 43, 54);
  c[ImGuiCol_TableBorderStrong] = rgb(48, 52, 64);
  c[ImGuiCol_TableRowBgAlt] = rgb(255, 255, 255, 0.02f);
  c[ImGuiCol_NavHighlight] = rgb(124, 108, 255);
  style.ScaleAllSizes(scale);
}

namespace {

std::string first_existing(const std::vector<std::string>& candidates) {
  std::error_code ec;
  for (const std::string& path : candidates)
    if (std::filesystem::is_regular_file(to_path(path), ec)) return path;
  return {};
}

#ifdef _WIN32
// %WINDIR%\Fonts as the system reports it (GetWindowsDirectoryW: not necessarily C:\Windows),
// UTF-8 like every path in the app (ImGui opens font files through UTF-8 → wide conversion).
std::string windows_fonts_dir() {
  wchar_t buffer[MAX_PATH];
  const UINT length = GetWindowsDirectoryW(buffer, MAX_PATH);
  if (length > 0 && length < MAX_PATH) return from_path(std::filesystem::path(buffer) / L"Fonts");
  const char* windir = std::getenv("WINDIR");
  return std::string(windir ? windir : "C:\\Windows") + "\\Fonts";
}

std::vector<std::string> in_fonts_dir(const std::string& dir, std::initializer_list<const char*> files) {
  std::vector<std::string> paths;
  for (const char* file : files) paths.push_back(dir + "\\" + file);
  return paths;
}
#endif

// The family behind a chosen file, for the About/welcome text.
const char* family_of(const std::string& path) {
  struct Known {
    const char* file;
    const char* family;
  };
  static const Known kKnown[] = {{"DejaVuSans", "DejaVu Sans"}, {"segoeui", "Segoe UI"},
                                 {"tahoma", "Tahoma"},          {"arial", "Arial"},
                                 {"verdana", "Verdana"}};
  const std::string name = from_path(to_path(path).filename());
  for (const Known& k : kKnown)
    if (name.rfind(k.file, 0) == 0) return k.family;
  return "system font";
}

}  // namespace

Fonts LoadFonts(float scale) {
  ImGuiIO& io = ImGui::GetIO();
  Fonts fonts;
#ifdef _WIN32
  // Segoe UI / Consolas since Vista; the others where those are missing (older systems, wine).
  // CJK: Yu Gothic (Windows 8.1+), Meiryo (Vista+), Microsoft YaHei, MS Gothic, SimSun — the
  // first face of each .ttc is the one loaded.
  const std::string dir = windows_fonts_dir();
  const std::string regular = first_existing(in_fonts_dir(dir, {"segoeui.ttf", "tahoma.ttf", "arial.ttf", "verdana.ttf"}));
  const std::string bold = first_existing(in_fonts_dir(dir, {"segoeuib.ttf", "tahomabd.ttf", "arialbd.ttf", "verdanab.ttf"}));
  const std::string italic = first_existing(in_fonts_dir(dir, {"segoeuii.ttf", "ariali.ttf", "verdanai.ttf"}));
  const std::string mono = first_existing(in_fonts_dir(dir, {"consola.ttf", "CascadiaMono.ttf", "lucon.ttf", "cour.ttf"}));
  const std::string cjk = first_existing(in_fonts_dir(
      dir, {"YuGothM.ttc", "YuGothR.ttc", "meiryo.ttc", "msyh.ttc", "msgothic.ttc", "simsun.ttc"}));
#else
  const std::string regular = first_existing({"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                                              "/usr/share/fonts/TTF/DejaVuSans.ttf"});
  const std::string bold = first_existing({"/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
                                           "/usr/share/fonts/TTF/DejaVuSans-Bold.ttf"});
  const std::string italic = first_existing({"/usr/share/fonts/truetype/dejavu/DejaVuSans-Oblique.ttf",
                                             "/usr/share/fonts/TTF/DejaVuSans-Oblique.ttf"});
  const std::string mono = first_existing({"/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
                                           "/usr/share/fonts/TTF/DejaVuSansMono.ttf"});
  const std::string cjk = first_existing({"/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
                                          "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc"});
#endif
#ifdef MAGNETAR_EMBEDDED_UI_FONT
  const bool embedded = true;
#else
  const bool embedded = false;
#endif
  if (regular.empty() && !embedded) {
    // No system font: ImGui's built-in one keeps the app usable (ASCII only).
    ImFontConfig config;
    config.SizePixels = 13.0f * scale;
    ImFont* f = io.Fonts->AddFontDefault(&config);
    fonts = Fonts{f, f, f, f, f, f, f, false, "ImGui default"};
    return fonts;
  }
  fonts.family = regular.empty() ? "DejaVu Sans (built in)" : family_of(regular);

  const float base = 15.5f * scale;
  // Latin, Latin-1, general punctuation (— … •), arrows and a few symbols used in the UI.
  static const ImWchar kTextRanges[] = {0x0020, 0x00FF, 0x0100, 0x024F, 0x0370, 0x03FF, 0x0400, 0x04FF,
                                        0x2000, 0x206F, 0x2190, 0x21FF, 0x2200, 0x22FF, 0x2500, 0x25FF,
                                        0x2600, 0x26FF, 0};
  // The embedded DejaVu Sans at `size`: the face itself (merge = false) or, merged into the font
  // just added, only the glyphs that one lacks (ImGui keeps the first glyph of a code point).
  auto add_embedded = [&](float size, bool merge) -> ImFont* {
#ifdef MAGNETAR_EMBEDDED_UI_FONT
    ImFontConfig config;
    config.MergeMode = merge;
    config.FontDataOwnedByAtlas = false;  // static data
    config.OversampleH = 2;
    config.OversampleV = 1;
    return io.Fonts->AddFontFromMemoryTTF(const_cast<unsigned char*>(kEmbeddedUiFont),
                                          static_cast<int>(kEmbeddedUiFont_bytes), size, &config,
                                          kTextRanges);
#else
    (void)size, (void)merge;
    return nullptr;
#endif
  };
  auto add = [&](const std::string& path, float size, bool merge_cjk) -> ImFont* {
    if (path.empty()) return nullptr;
    ImFontConfig config;
    config.OversampleH = 2;
    config.OversampleV = 1;
    ImFont* font = io.Fonts->AddFontFromFileTTF(path.c_str(), size, &config, kTextRanges);
    if (font) add_embedded(size, true);
    if (font && merge_cjk && !cjk.empty()) {
      ImFontConfig merge;
      merge.MergeMode = true;
      merge.OversampleH = 1;
      merge.OversampleV = 1;
      merge.PixelSnapH = true;
      // CJK faces draw smaller than DejaVu at the same pixel size; match the x-height.
      merge.GlyphOffset.y = 1.0f * scale;
      // Japanese covers kana + the common kanji; simplified-Chinese common adds hanzi.
      io.Fonts->AddFontFromFileTTF(cjk.c_str(), size * 1.12f, &merge, io.Fonts->GetGlyphRangesJapanese());
      io.Fonts->AddFontFromFileTTF(cjk.c_str(), size * 1.12f, &merge,
                                   io.Fonts->GetGlyphRangesChineseSimplifiedCommon());
      fonts.cjk = true;
    }
    return font;
  };
  fonts.regular = regular.empty() ? add_embedded(base, false) : add(regular, base, true);
  fonts.bold = add(bold, base, false);
  fonts.italic = add(italic, base, false);
  fonts.mono = add(mono, base - 1.0f * scale, false);
  auto add_or_embedded = [&](const std::string& path, float size) {
    return path.empty() ? add_embedded(size, false) : add(path, size, false);
  };
  fonts.heading = add_or_embedded(bold.empty() ? regular : bold, 22.0f * scale);
  fonts.small = add_or_embedded(regular, 13.0f * scale);
  fonts.big = add_or_embedded(bold.empty() ? regular : bold, 30.0f * scale);
  if (!fonts.bold) fonts.bold = fonts.regular;
  if (!fonts.italic) fonts.italic = fonts.regular;
  if (!fonts.mono) fonts.mono = fonts.regular;
  io.FontDefault = fonts.regular;
  return fonts;
}

}  // namespace magnetar::app
