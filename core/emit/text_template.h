// Templates for the fixed parts of generated files (core/emit/templates/*.tmpl, embedded at build time
// by cmake/embed_files.cmake), so that the Python a generator writes is read as Python.
#pragma once
#include <map>
#include <string>
#include <string_view>

namespace ss {

struct TemplateValues {
  std::map<std::string, std::string> text;  // ${name}
  std::map<std::string, bool> flags;        // ${#name} … ${/name}, ${^name} … ${/name}
};

// `${name}` becomes its text; the lines between `${#flag}` and `${/flag}` are kept only when the
// flag is set, those between `${^flag}` and `${/flag}` only when it isn't. A section's tags stand
// on lines of their own, which the output leaves out. A name without a value is a generator's bug:
// std::out_of_range.
std::string fill_template(std::string_view text, const TemplateValues& values);

// An embedded template by its file name (`hf_configuration.py.tmpl`); std::out_of_range when none.
std::string_view embedded_template(const std::string& name);

}  // namespace ss
