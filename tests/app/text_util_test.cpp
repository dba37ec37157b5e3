// Text helpers behind the selectable message view: code-point offsets (ImGui counts positions in
// code points) and soft wrapping whose selections map back to the original bytes.
#include "core/text_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace magnetar::app {
namespace {

// A fixed-width "font": every code point is one column; breaks at the last space that fits,
// inside a word only when none does (the way ImFont::CalcWordWrapPositionA behaves).
size_t fit_columns(std::string_view line, size_t columns) {
  size_t bytes = 0, cols = 0, last_space = std::string_view::npos;
  while (bytes < line.size()) {
    const size_t next = utf8_offset_of_codepoint(std::string(line.substr(bytes)), 1) + bytes;
    if (line[bytes] == ' ') last_space = bytes;
    if (cols + 1 > columns) return last_space != std::string_view::npos ? last_space : bytes;
    bytes = next;
    ++cols;
  }
  return bytes;
}

TEST(TextUtil, CodePointOffsets) {
  const std::string text = "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x99\x82z";  // a é 日 🙂 z
  EXPECT_EQ(utf8_offset_of_codepoint(text, 0), 0u);
  EXPECT_EQ(utf8_offset_of_codepoint(text, 1), 1u);
  EXPECT_EQ(utf8_offset_of_codepoint(text, 2), 3u);
  EXPECT_EQ(utf8_offset_of_codepoint(text, 3), 6u);
  EXPECT_EQ(utf8_offset_of_codepoint(text, 4), 10u);
  EXPECT_EQ(utf8_offset_of_codepoint(text, 5), text.size());
  EXPECT_EQ(utf8_offset_of_codepoint(text, 99), text.size());
}

TEST(TextUtil, SoftWrapBreaksAtSpacesAndKeepsTheOriginal) {
  const std::string text = "the quick brown fox\njumps over the lazy dog";
  const SoftWrappedText w = soft_wrap(text, [](std::string_view line) { return fit_columns(line, 10); });
  EXPECT_EQ(w.text, "the quick\nbrown fox\njumps over\nthe lazy\ndog");
  EXPECT_EQ(w.text.size(), text.size());  // only spaces became breaks
  EXPECT_TRUE(w.inserted.empty());
  EXPECT_EQ(w.original(0, w.text.size()), text);
  // Any selection maps back to the same bytes of the original.
  for (size_t b = 0; b <= w.text.size(); ++b)
    for (size_t e = b; e <= w.text.size(); ++e) ASSERT_EQ(w.original(b, e), text.substr(b, e - b)) << b << "," << e;
}

TEST(TextUtil, SoftWrapSplitsWordsLongerThanALine) {
  const std::string text = "ab \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xA7\xE3\x81\x99 end";  // ab 日本語です end
  const SoftWrappedText w = soft_wrap(text, [](std::string_view line) { return fit_columns(line, 3); });
  EXPECT_EQ(w.original(0, w.text.size()), text);
  EXPECT_FALSE(w.inserted.empty());
  // No line is wider than 3 code points, and no UTF-8 character is cut.
  size_t start = 0;
  for (size_t i = 0; i <= w.text.size(); ++i) {
    if (i == w.text.size() || w.text[i] == '\n') {
      const std::string line = w.text.substr(start, i - start);
      EXPECT_LE(utf8_offset_of_codepoint(line, 3), line.size());
      EXPECT_EQ(utf8_offset_of_codepoint(line, 3), line.size()) << line;
      start = i + 1;
    }
  }
  // A selection across an inserted break drops it: 語|で selected over the break is "語で".
  const size_t cut = w.inserted.back();
  std::string expected = w.text.substr(cut - 3, 7);
  expected.erase(3, 1);
  EXPECT_EQ(w.original(cut - 3, cut + 4), expected);
  EXPECT_NE(text.find(expected), std::string::npos);
}

TEST(TextUtil, SoftWrapNeverLoops) {
  // A measure that fits nothing still advances one character at a time.
  const std::string text = "\xE6\x97\xA5x y";
  const SoftWrappedText w = soft_wrap(text, [](std::string_view) { return size_t{0}; });
  EXPECT_EQ(w.original(0, w.text.size()), text);
  EXPECT_EQ(soft_wrap("", [](std::string_view) { return size_t{0}; }).text, "");
  EXPECT_EQ(soft_wrap("a\n\nb\n", [](std::string_view l) { return l.size(); }).text, "a\n\nb\n");
}

TEST(TextUtil, FormatSecondsKeepsSmallDurationsReadable) {
  EXPECT_EQ(format_seconds(0.0034), "3.4 ms");  // a tiny model's first token: not "0.00 s"
  EXPECT_EQ(format_seconds(0.0), "0.0 ms");
  EXPECT_EQ(format_seconds(-1.0), "0.0 ms");
  EXPECT_EQ(format_seconds(std::nan("")), "0.0 ms");
  EXPECT_EQ(format_seconds(0.0381), "38 ms");
  EXPECT_EQ(format_seconds(0.9994), "999 ms");
  EXPECT_EQ(format_seconds(1.25), "1.25 s");
}

}  // namespace
}  // namespace magnetar::app
