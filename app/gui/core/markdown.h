// A small Markdown reader for chat messages: the subset models actually write (fenced code,
// headings, bullet and numbered lists, block quotes, paragraphs; **bold**, *italic*, `code`).
// It never fails: anything it does not recognise is plain text. An unterminated code fence
// (common while a reply is still streaming) runs to the end of the message.
#pragma once
#include <string>
#include <vector>

namespace magnetar::app {

struct MarkdownSpan {
  std::string text;
  bool bold = false;
  bool italic = false;
  bool code = false;  // inline `code`
};

enum class MarkdownBlockKind { Paragraph, Heading, ListItem, Quote, CodeBlock, Rule };

struct MarkdownBlock {
  MarkdownBlockKind kind = MarkdownBlockKind::Paragraph;
  int level = 0;              // Heading: 1..6; ListItem: nesting depth (0 = top)
  std::string marker;         // ListItem: "•" or "1."
  std::string language;       // CodeBlock: the fence's info string ("cpp"), may be empty
  std::string code;           // CodeBlock: the text, without the fences
  bool code_closed = true;    // CodeBlock: false while the closing fence has not arrived
  std::vector<MarkdownSpan> spans;  // every kind except CodeBlock and Rule
};

std::vector<MarkdownBlock> parse_markdown(const std::string& text);
// Inline emphasis and code spans of one paragraph's text.
std::vector<MarkdownSpan> parse_markdown_inline(const std::string& text);

}  // namespace magnetar::app
