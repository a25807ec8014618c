#include "diagnostics/render.h"

#include <algorithm>
#include <map>
#include <set>

namespace ss {

namespace {

struct Style {
  bool on;
  std::string paint(std::string_view code, std::string_view text) const {
    if (!on) return std::string(text);
    return "\x1b[" + std::string(code) + "m" + std::string(text) + "\x1b[0m";
  }
};

constexpr std::string_view kRed = "1;31", kYellow = "1;33", kBlue = "1;34", kCyan = "1;36", kBold = "1";

// Display width of UTF-8 text: one column per code point.
size_t display_width(std::string_view text) {
  size_t width = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++width;
  return width;
}

std::string_view severity_word(Severity severity) {
  switch (severity) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::information: return "info";
  }
  return "error";
}

std::string_view severity_color(Severity severity) {
  return severity == Severity::error ? kRed : severity == Severity::warning ? kYellow : kCyan;
}

}  // namespace

std::string render_location(const SourceFile& file, Span span) {
  LineColumn position = file.line_column(span.begin);
  std::string_view line = file.line_text(position.line);
  size_t column = display_width(line.substr(0, std::min<size_t>(position.column, line.size())));
  return file.path() + ":" + std::to_string(position.line + 1) + ":" + std::to_string(column + 1);
}

std::string render_diagnostic(const SourceFile& file, const Diagnostic& diagnostic, const RenderOptions& options) {
  Style style{options.color};
  std::string_view word = severity_word(diagnostic.severity);
  std::string_view color = severity_color(diagnostic.severity);
  std::string out = style.paint(color, std::string(word) + "[" + std::string(info(diagnostic.code).code) + "]") +
                    style.paint(kBold, ": " + diagnostic.message) + "\n";

  // Labels grouped by line: the primary first on its line, then secondaries.
  struct LineLabel {
    uint32_t column_begin, column_end;
    std::string text;
    bool primary;
  };
  std::map<uint32_t, std::vector<LineLabel>> by_line;
  auto add = [&](const Label& label, bool primary) {
    LineColumn begin = file.line_column(label.span.begin);
    LineColumn end = file.line_column(label.span.end);
    std::string_view line = file.line_text(begin.line);
    uint32_t end_column = end.line == begin.line ? end.column : static_cast<uint32_t>(line.size());
    uint32_t column = std::min<uint32_t>(begin.column, line.size());
    end_column = std::clamp<uint32_t>(end_column, column, line.size());
    by_line[begin.line].push_back({static_cast<uint32_t>(display_width(line.substr(0, column))),
                                   static_cast<uint32_t>(display_width(line.substr(0, end_column))), label.text, primary});
  };
  add(diagnostic.primary, true);
  for (const Label& label : diagnostic.secondary) add(label, false);

  size_t gutter = std::to_string(by_line.rbegin()->first + 1).size();
  std::string pad(gutter, ' ');
  std::string bar = style.paint(kBlue, "|");
  out += pad + style.paint(kBlue, "-->") + " " + render_location(file, diagnostic.primary.span) + "\n";
  out += pad + " " + bar + "\n";
  std::optional<uint32_t> previous;
  for (auto& [line, labels] : by_line) {
    if (previous && line > *previous + 1) out += style.paint(kBlue, "...") + "\n";
    previous = line;
    std::string number = std::to_string(line + 1);
    out += style.paint(kBlue, std::string(gutter - number.size(), ' ') + number + " |") + " " +
           std::string(file.line_text(line)) + "\n";
    std::stable_sort(labels.begin(), labels.end(), [](const LineLabel& a, const LineLabel& b) { return a.primary > b.primary; });
    for (const LineLabel& label : labels) {
      size_t width = std::max<size_t>(1, label.column_end - label.column_begin);
      std::string marks(width, label.primary ? '^' : '-');
      std::string text = marks + (label.text.empty() ? "" : " " + label.text);
      out += pad + " " + bar + " " + std::string(label.column_begin, ' ') +
             style.paint(label.primary ? color : kBlue, text) + "\n";
    }
  }
  if (!diagnostic.notes.empty() || !diagnostic.helps.empty()) out += pad + " " + bar + "\n";
  for (const std::string& note : diagnostic.notes) out += pad + " " + style.paint(kBlue, "=") + style.paint(kBold, " note") + ": " + note + "\n";
  for (const std::string& help : diagnostic.helps) out += pad + " " + style.paint(kBlue, "=") + style.paint(kBold, " help") + ": " + help + "\n";
  out += "\n";
  return out;
}

std::string render_explain_footer(const std::vector<Diagnostic>& diagnostics, const RenderOptions& options) {
  Style style{options.color};
  std::set<std::string_view> codes;
  for (const Diagnostic& d : diagnostics) codes.insert(info(d.code).code);
  if (codes.empty()) return "";
  if (codes.size() == 1) {
    std::string code(*codes.begin());
    return style.paint(kBold, "For more information about " + code + ", run `shapescript explain " + code + "`.") + "\n";
  }
  std::string list;
  for (std::string_view code : codes) list += (list.empty() ? "" : ", ") + std::string(code);
  return style.paint(kBold, "Some errors have detailed explanations: " + list + ".") + "\n" +
         style.paint(kBold, "For more information about an error, run `shapescript explain " + std::string(*codes.begin()) + "`.") + "\n";
}

}  // namespace ss
