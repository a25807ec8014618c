#include "emit/text_template.h"

#include <stdexcept>
#include <vector>

namespace ss {

const std::map<std::string, std::string_view>& embedded_templates();  // generated from core/emit/templates

namespace {

std::string substitute(std::string_view line, const TemplateValues& values) {
  std::string out;
  size_t at = 0;
  for (size_t open = line.find("${"); open != std::string_view::npos; open = line.find("${", at)) {
    size_t close = line.find('}', open);
    if (close == std::string_view::npos) break;
    out += line.substr(at, open - at);
    out += values.text.at(std::string(line.substr(open + 2, close - open - 2)));
    at = close + 1;
  }
  return out + std::string(line.substr(at));
}

}  // namespace

std::string fill_template(std::string_view text, const TemplateValues& values) {
  std::string out;
  std::vector<std::pair<std::string, bool>> sections;  // open sections: name, and whether their lines are kept
  auto kept = [&] { return sections.empty() || sections.back().second; };
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    end = end == std::string_view::npos ? text.size() : end + 1;
    std::string_view line = text.substr(begin, end - begin);
    begin = end;
    std::string_view tag = line;
    while (!tag.empty() && (tag.front() == ' ')) tag.remove_prefix(1);
    while (!tag.empty() && (tag.back() == '\n' || tag.back() == ' ')) tag.remove_suffix(1);
    bool section = tag.size() > 4 && tag.starts_with("${") && (tag[2] == '#' || tag[2] == '^' || tag[2] == '/') && tag.ends_with("}") &&
                   tag.find('}') == tag.size() - 1;
    if (!section) {
      if (kept()) out += substitute(line, values);
      continue;
    }
    std::string name(tag.substr(3, tag.size() - 4));
    if (tag[2] == '/') {
      if (sections.empty() || sections.back().first != name) throw std::out_of_range("template section `" + name + "` closed but not open");
      sections.pop_back();
      continue;
    }
    bool flag = values.flags.at(name);
    sections.push_back({name, kept() && (tag[2] == '#' ? flag : !flag)});
  }
  if (!sections.empty()) throw std::out_of_range("template section `" + sections.back().first + "` not closed");
  return out;
}

std::string_view embedded_template(const std::string& name) { return embedded_templates().at(name); }

}  // namespace ss
