// Markdown subset reader (see markdown.h). Line based: fences first, then block markers,
// then inline spans over each block's joined text.
#include "markdown.h"

#include <cctype>

namespace magnetar::app {

namespace {

size_t leading_spaces(const std::string& line) {
  size_t n = 0;
  while (n < line.size() && (line[n] == ' ' || line[n] == '\t')) ++n;
  return n;
}

bool is_blank(const std::string& line) { return leading_spaces(line) == line.size(); }

bool starts_fence(const std::string& line, std::string* info) {
  const size_t indent = leading_spaces(line);
  if (indent > 3 || line.compare(indent, 3, "```") != 0) return false;
  std::string rest = line.substr(indent + 3);
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back()))) rest.pop_back();
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.erase(0, 1);
  if (info) *info = rest;
  return true;
}

bool is_rule(const std::string& line) {
  const size_t indent = leading_spaces(line);
  if (indent > 3) return false;
  char mark = 0;
  int count = 0;
  for (size_t i = indent; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ') continue;
    if (c != '-' && c != '*' && c != '_') return false;
    if (mark && c != mark) return false;
    mark = c;
    ++count;
  }
  return count >= 3;
}

// "- x", "* x", "+ x" or "12. x" / "12) x": returns the marker and where the text starts.
bool list_marker(const std::string& line, std::string* marker, size_t* text_start, int* depth) {
  const size_t indent = leading_spaces(line);
  if (indent >= line.size()) return false;
  const char c = line[indent];
  if ((c == '-' || c == '*' || c == '+') && indent + 1 < line.size() && line[indent + 1] == ' ') {
    *marker = "•";
    *text_start = indent + 2;
  } else if (std::isdigit(static_cast<unsigned char>(c))) {
    size_t i = indent;
    while (i < line.size() && i - indent < 9 && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    if (i + 1 >= line.size() || (line[i] != '.' && line[i] != ')') || line[i + 1] != ' ') return false;
    *marker = line.substr(indent, i - indent) + ".";
    *text_start = i + 2;
  } else {
    return false;
  }
  *depth = static_cast<int>(indent / 2);
  return true;
}

void flush_paragraph(std::string* text, std::vector<MarkdownBlock>* blocks) {
  if (text->empty()) return;
  MarkdownBlock block;
  block.kind = MarkdownBlockKind::Paragraph;
  block.spans = parse_markdown_inline(*text);
  blocks->push_back(std::move(block));
  text->clear();
}

}  // namespace

std::vector<MarkdownSpan> parse_markdown_inline(const std::string& text) {
  std::vector<MarkdownSpan> spans;
  MarkdownSpan current;
  bool bold = false, italic = false;
  auto flush = [&] {
    if (!current.text.empty()) spans.push_back(current);
    current = MarkdownSpan{};
    current.bold = bold;
    current.italic = italic;
  };
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && std::ispunct(static_cast<unsigned char>(text[i + 1]))) {
      current.text += text[i + 1];
      i += 2;
      continue;
    }
    if (c == '`') {
      const size_t close = text.find('`', i + 1);
      if (close != std::string::npos) {
        flush();
        MarkdownSpan code;
        code.text = text.substr(i + 1, close - i - 1);
        code.code = true;
        spans.push_back(std::move(code));
        i = close + 1;
        continue;
      }
    }
    const bool double_mark = i + 1 < text.size() && text[i + 1] == c;
    if ((c == '*' || c == '_') && double_mark) {
      // Toggle bold when there is a matching closer ahead (or we are closing).
      if (bold || text.find(std::string(2, c), i + 2) != std::string::npos) {
        flush();
        bold = !bold;
        current.bold = bold;
        i += 2;
        continue;
      }
    } else if (c == '*' || c == '_') {
      // Intraword underscores (snake_case) are text; '*' followed by a space is text.
      const bool prev_alnum = i > 0 && std::isalnum(static_cast<unsigned char>(text[i - 1]));
      const bool next_space = i + 1 >= text.size() || text[i + 1] == ' ';
      const bool opens = !italic && !next_space && !(c == '_' && prev_alnum) &&
                         text.find(c, i + 1) != std::string::npos;
      const bool closes = italic && !(c == '_' && i + 1 < text.size() &&
                                      std::isalnum(static_cast<unsigned char>(text[i + 1])));
      if (opens || closes) {
        flush();
        italic = !italic;
        current.italic = italic;
        ++i;
        continue;
      }
    }
    current.text += c;
    ++i;
  }
  flush();
  return spans;
}

std::vector<MarkdownBlock> parse_markdown(const std::string& text) {
  std::vector<MarkdownBlock> blocks;
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }

  std::string paragraph;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    std::string info;
    if (starts_fence(line, &info)) {
      flush_paragraph(&paragraph, &blocks);
      MarkdownBlock block;
      block.kind = MarkdownBlockKind::CodeBlock;
      block.language = info;
      block.code_closed = false;
      for (++i; i < lines.size(); ++i) {
        if (starts_fence(lines[i], nullptr)) {
          block.code_closed = true;
          break;
        }
        block.code += lines[i] + "\n";
      }
      if (!block.code.empty() && block.code.back() == '\n') block.code.pop_back();
      blocks.push_back(std::move(block));
      continue;
    }
    if (is_blank(line)) {
      flush_paragraph(&paragraph, &blocks);
      continue;
    }
    const size_t indent = leading_spaces(line);
    if (indent <= 3 && line[indent] == '#') {
      size_t level = 0;
      while (indent + level < line.size() && line[indent + level] == '#') ++level;
      if (level <= 6 && (indent + level == line.size() || line[indent + level] == ' ')) {
        flush_paragraph(&paragraph, &blocks);
        MarkdownBlock block;
        block.kind = MarkdownBlockKind::Heading;
        block.level = static_cast<int>(level);
        std::string title = indent + level < line.size() ? line.substr(indent + level + 1) : "";
        while (!title.empty() && (title.back() == '#' || title.back() == ' ')) title.pop_back();
        block.spans = parse_markdown_inline(title);
        blocks.push_back(std::move(block));
        continue;
      }
    }
    if (is_rule(line) && paragraph.empty()) {
      MarkdownBlock block;
      block.kind = MarkdownBlockKind::Rule;
      blocks.push_back(std::move(block));
      continue;
    }
    std::string marker;
    size_t text_start = 0;
    int depth = 0;
    if (list_marker(line, &marker, &text_start, &depth)) {
      flush_paragraph(&paragraph, &blocks);
      MarkdownBlock block;
      block.kind = MarkdownBlockKind::ListItem;
      block.marker = marker;
      block.level = depth;
      std::string item = line.substr(text_start);
      // Lazy continuation lines (indented, not a new marker) belong to the item.
      while (i + 1 < lines.size() && !is_blank(lines[i + 1]) && leading_spaces(lines[i + 1]) >= 2 &&
             !list_marker(lines[i + 1], &marker, &text_start, &depth) &&
             !starts_fence(lines[i + 1], nullptr)) {
        ++i;
        item += " " + lines[i].substr(leading_spaces(lines[i]));
      }
      block.spans = parse_markdown_inline(item);
      blocks.push_back(std::move(block));
      continue;
    }
    if (indent <= 3 && line[indent] == '>') {
      flush_paragraph(&paragraph, &blocks);
      std::string quote;
      for (;; ++i) {
        const size_t q = leading_spaces(lines[i]);
        std::string body = lines[i].substr(q + 1);
        if (!body.empty() && body[0] == ' ') body.erase(0, 1);
        quote += (quote.empty() ? "" : " ") + body;
        if (i + 1 >= lines.size()) break;
        const size_t nq = leading_spaces(lines[i + 1]);
        if (nq >= lines[i + 1].size() || lines[i + 1][nq] != '>') break;
      }
      MarkdownBlock block;
      block.kind = MarkdownBlockKind::Quote;
      block.spans = parse_markdown_inline(quote);
      blocks.push_back(std::move(block));
      continue;
    }
    // Chat text: a single newline is a line break (models write poems and addresses that way).
    if (!paragraph.empty()) paragraph += '\n';
    paragraph += line.substr(indent);
  }
  flush_paragraph(&paragraph, &blocks);
  return blocks;
}

}  // namespace magnetar::app
