// The Markdown subset reader: blocks and inline spans as models write them.
#include "core/markdown.h"

#include <gtest/gtest.h>

namespace magnetar::app {
namespace {

std::string joined(const std::vector<MarkdownSpan>& spans) {
  std::string text;
  for (const auto& s : spans) text += s.text;
  return text;
}

TEST(Markdown, CodeFenceWithLanguage) {
  const auto blocks = parse_markdown("Here:\n```python\nprint(1)\n\nx = 2\n```\nDone.");
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].kind, MarkdownBlockKind::Paragraph);
  EXPECT_EQ(blocks[1].kind, MarkdownBlockKind::CodeBlock);
  EXPECT_EQ(blocks[1].language, "python");
  EXPECT_EQ(blocks[1].code, "print(1)\n\nx = 2");
  EXPECT_TRUE(blocks[1].code_closed);
  EXPECT_EQ(joined(blocks[2].spans), "Done.");
}

TEST(Markdown, UnterminatedFenceRunsToTheEnd) {
  const auto blocks = parse_markdown("```\nint main() {\n  return 0;");
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].kind, MarkdownBlockKind::CodeBlock);
  EXPECT_FALSE(blocks[0].code_closed);
  EXPECT_EQ(blocks[0].code, "int main() {\n  return 0;");
}

TEST(Markdown, HeadingsListsQuotesRules) {
  const auto blocks = parse_markdown("# Title\n\n- one\n- two\n  continued\n  - nested\n3. three\n> quoted\n---\nplain");
  ASSERT_EQ(blocks.size(), 8u);
  EXPECT_EQ(blocks[0].kind, MarkdownBlockKind::Heading);
  EXPECT_EQ(blocks[0].level, 1);
  EXPECT_EQ(joined(blocks[0].spans), "Title");
  EXPECT_EQ(blocks[1].kind, MarkdownBlockKind::ListItem);
  EXPECT_EQ(blocks[1].marker, "•");
  EXPECT_EQ(joined(blocks[2].spans), "two continued");
  EXPECT_EQ(blocks[3].level, 1);
  EXPECT_EQ(blocks[4].marker, "3.");
  EXPECT_EQ(blocks[5].kind, MarkdownBlockKind::Quote);
  EXPECT_EQ(joined(blocks[5].spans), "quoted");
  EXPECT_EQ(blocks[6].kind, MarkdownBlockKind::Rule);
  EXPECT_EQ(joined(blocks[7].spans), "plain");
}

TEST(Markdown, SingleNewlinesStayLineBreaks) {
  const auto blocks = parse_markdown("Roses are red\nViolets are blue\n\nNext");
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(joined(blocks[0].spans), "Roses are red\nViolets are blue");
}

TEST(Markdown, InlineEmphasisAndCode) {
  const auto spans = parse_markdown_inline("a **bold** and *it* with `x*y` end");
  ASSERT_EQ(spans.size(), 7u);
  EXPECT_EQ(spans[1].text, "bold");
  EXPECT_TRUE(spans[1].bold);
  EXPECT_FALSE(spans[2].bold);
  EXPECT_EQ(spans[3].text, "it");
  EXPECT_TRUE(spans[3].italic);
  EXPECT_EQ(spans[5].text, "x*y");
  EXPECT_TRUE(spans[5].code);
  EXPECT_EQ(spans[6].text, " end");
}

TEST(Markdown, SnakeCaseAndLoneStarsAreText) {
  EXPECT_EQ(parse_markdown_inline("call my_func_name now").size(), 1u);
  EXPECT_EQ(parse_markdown_inline("2 * 3 = 6").size(), 1u);
  const auto unclosed = parse_markdown_inline("**not closed");
  ASSERT_EQ(unclosed.size(), 1u);
  EXPECT_EQ(unclosed[0].text, "**not closed");
  EXPECT_FALSE(unclosed[0].bold);
  EXPECT_EQ(joined(parse_markdown_inline("a \\*literal\\* star")), "a *literal* star");
}

TEST(Markdown, NeverFailsOnOddInput) {
  for (const char* text : {"", "\n\n\n", "```", "#", "- ", "1.", "> ", "**", "`", "***", "_"}) {
    const auto blocks = parse_markdown(text);
    for (const auto& b : blocks) EXPECT_LE(b.level, 6);
  }
}

}  // namespace
}  // namespace magnetar::app
