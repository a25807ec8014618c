#include "emit/python_writer.h"

#include <algorithm>

#include "syntax/walk.h"

namespace ss {

namespace pywrite {

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (no overlong forms, surrogates or values
// past U+10FFFF), or 0 when the byte there starts none.
size_t utf8_length(const std::string& text, size_t i) {
  auto byte = [&](size_t j) { return j < text.size() ? static_cast<unsigned char>(text[j]) : 0u; };
  auto continuation = [&](size_t j) { return (byte(j) & 0xC0u) == 0x80u; };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return continuation(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return byte(i + 1) >= lo && byte(i + 1) <= hi && continuation(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return byte(i + 1) >= lo && byte(i + 1) <= hi && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

namespace {

// A code point that ends a line for Python, an editor or str.splitlines() (besides \n and \r, which
// are control characters): U+0085, U+2028, U+2029; or a C1 control. quote() escapes them all.
bool unsafe_code_point(const std::string& text, size_t i, size_t length) {
  auto byte = [&](size_t j) { return static_cast<unsigned char>(text[j]); };
  if (length == 2) return byte(i) == 0xC2 && byte(i + 1) >= 0x80 && byte(i + 1) <= 0x9F;  // U+0080-U+009F
  return length == 3 && byte(i) == 0xE2 && byte(i + 1) == 0x80 && (byte(i + 2) == 0xA8 || byte(i + 2) == 0xA9);
}

// The code point of the well-formed UTF-8 sequence at text[i] of `length` bytes.
uint32_t code_point(const std::string& text, size_t i, size_t length) {
  auto byte = [&](size_t j) { return static_cast<uint32_t>(static_cast<unsigned char>(text[j])); };
  if (length == 1) return byte(i);
  uint32_t value = byte(i) & (length == 2 ? 0x1Fu : length == 3 ? 0x0Fu : 0x07u);
  for (size_t j = 1; j < length; ++j) value = (value << 6) | (byte(i + j) & 0x3Fu);
  return value;
}

// quote()'s escaping, with `"` and `\` escaped too only inside a literal (`literal`).
std::string escape(const std::string& text, bool literal) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length = utf8_length(text, i);
    if (length == 0) {
      out += literal ? "\\ufffd" : "\xef\xbf\xbd";  // a byte that is not UTF-8: the replacement character, as decoders write it
      ++i;
      continue;
    }
    if (literal && (c == '"' || c == '\\')) out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7F) out += std::string("\\u00") + hex[c >> 4] + hex[c & 0xF];
    else if (unsafe_code_point(text, i, length)) {
      uint32_t u = code_point(text, i, length);
      out += std::string("\\u") + hex[(u >> 12) & 0xF] + hex[(u >> 8) & 0xF] + hex[(u >> 4) & 0xF] + hex[u & 0xF];
    } else out.append(text, i, length);
    i += length;
  }
  return out;
}

}  // namespace

std::string quote(const std::string& text) { return "\"" + escape(text, true) + "\""; }

std::string comment_text(const std::string& text) { return escape(text, false); }

std::string docstring(const std::string& text, int depth) {
  std::vector<std::string> lines;
  for (size_t begin = 0;;) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) {
      lines.push_back(text.substr(begin));
      break;
    }
    lines.push_back(text.substr(begin, end + 1 - begin));
    begin = end + 1;
  }
  if (lines.size() > 1 && lines.back().empty()) lines.pop_back();
  if (lines.size() == 1) return quote(lines[0]);
  std::string out = "(";
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" + indent(depth) + " " : "") + quote(lines[i]);
  return out + ")";
}

bool is_generator_safe(const std::string& python) {
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto is_hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  // Every character: UTF-8, no control but \n, no line terminator but \n.
  for (size_t i = 0; i < python.size();) {
    size_t length = utf8_length(python, i);
    unsigned char c = static_cast<unsigned char>(python[i]);
    if (length == 0 || (c < 0x20 && c != '\n') || c == 0x7F || unsafe_code_point(python, i, length)) return false;
    i += length;
  }
  // Every string literal: `"` (or `f"`), one line, quote()'s escapes only; no `'` or `"""` literal.
  for (size_t i = 0; i < python.size(); ++i) {
    char c = python[i];
    if (c == '#') {
      while (i < python.size() && python[i] != '\n') ++i;
      continue;
    }
    if (c == '\'') return false;
    if (c != '"') continue;
    if (i > 0 && name_char(python[i - 1])) {
      bool f_prefix = python[i - 1] == 'f' && (i < 2 || !name_char(python[i - 2]));
      if (!f_prefix) return false;
    }
    if (python.compare(i, 3, "\"\"\"") == 0) return false;
    for (++i;; ++i) {
      if (i >= python.size() || python[i] == '\n') return false;
      if (python[i] == '"') break;
      if (python[i] != '\\') continue;
      char e = i + 1 < python.size() ? python[i + 1] : 0;
      if (e == '"' || e == '\\' || e == 'n' || e == 'r' || e == 't') ++i;
      else if (e == 'u' && i + 5 < python.size() && is_hex(python[i + 2]) && is_hex(python[i + 3]) && is_hex(python[i + 4]) && is_hex(python[i + 5])) i += 5;
      else return false;
    }
  }
  return true;
}

bool scan_code(const std::string& text, bool skip_comments, const std::function<bool(size_t, int)>& visit) {
  int depth = 0;
  char quote_char = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote_char) {
      if (c == '\\') ++i;
      else if (c == quote_char) quote_char = 0;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote_char = c;
      continue;
    }
    if (skip_comments && c == '#') {  // a comment runs to the end of the line
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
    if (visit(i, depth)) return true;
  }
  return false;
}

bool uses_name(const std::string& text, const std::string& prefix) {
  auto name_char = [&](size_t i) { return std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_'; };
  return scan_code(text, true, [&](size_t i, int) {
    bool starts = i == 0 || !(name_char(i - 1) || text[i - 1] == '.');
    if (!starts || text.compare(i, prefix.size(), prefix) != 0) return false;
    size_t after = i + prefix.size();
    return prefix.back() == '.' || after == text.size() || !name_char(after);
  });
}

std::string file_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string indent(int depth) { return std::string(static_cast<size_t>(depth) * 4, ' '); }

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace pywrite

using namespace pywrite;

// ---------------------------------------------------------------------------------------------
// Facts

bool PythonWriter::is_python_module(const std::string& name) const {
  for (const Item& item : a_.program.items)
    if (item.kind == Item::Kind::python_import && item.name.substr(0, item.name.find('.')) == name) return true;
  return false;
}

const ValueType* PythonWriter::type_of(const Expr& e) const {
  return a_.semantics.types.find(&e);
}

const CallFacts* PythonWriter::facts_of(const Expr& e) const {
  return a_.semantics.calls.find(&e);
}

std::string PythonWriter::signature_line(const Item& item) const {
  std::string line(a_.file.slice({item.span.begin, item.body ? item.body->span.begin : item.span.end}));
  size_t colon = line.rfind(':');
  line = line.substr(0, colon == std::string::npos ? line.size() : colon);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\n')) line.pop_back();
  std::string flat;
  for (char c : line) flat += c == '\n' ? ' ' : c;
  return flat;
}

void PythonWriter::assigned_names(const Block& b, std::vector<std::string>& names) {
  for_each_statement(b, [&](const Statement& s) {
    for (auto& [name, span] : s.targets)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  });
}

bool PythonWriter::is_static(const Expr& e) const {
  // The checker knows it for a plain number: the loop index of an unrolled loop, a local computed from it.
  if (const ValueType* type = type_of(e); type && type->fixed) return true;
  switch (e.kind) {
    case Expr::Kind::number: return true;
    case Expr::Kind::name: {
      if (locals_.count(e.text)) return false;
      const ValueType* type = type_of(e);
      return type && type->known_size && type->known_size->is_constant();
    }
    case Expr::Kind::binary:
    case Expr::Kind::unary:
      return std::all_of(e.operands.begin(), e.operands.end(), [&](const ExprPtr& o) { return o && is_static(*o); });
    default: return false;
  }
}

bool PythonWriter::is_number(const Expr& e) const {
  if (const ValueType* type = type_of(e); type && type->fixed) return true;
  switch (e.kind) {
    case Expr::Kind::number: return true;
    case Expr::Kind::name: {
      if (locals_.count(e.text)) return false;
      const ValueType* type = type_of(e);
      return e.text == "inf" || (type && type->known_size);
    }
    case Expr::Kind::binary:
    case Expr::Kind::unary: return std::all_of(e.operands.begin(), e.operands.end(), [&](const ExprPtr& o) { return o && is_number(*o); });
    case Expr::Kind::call: {
      const CallFacts* facts = facts_of(e);
      return facts && facts->builtin && facts->builtin->effect == BuiltinEffect::pure &&
             std::all_of(e.arguments.begin(), e.arguments.end(), [&](const Argument& a) { return a.value && is_number(*a.value); });
    }
    default: return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Statements

std::string PythonWriter::source_line(Span span) const {
  LineColumn position = a_.file.line_column(span.begin);
  std::string text(a_.file.line_text(position.line));
  size_t first = text.find_first_not_of(' ');
  return comment_text(file_name(a_.file.path()) + ":" + std::to_string(position.line + 1) + ": " + (first == std::string::npos ? "" : text.substr(first)));
}

// The comment above a statement's code: its source line, and for a simple statement written
// over several lines (a `|>` chain), those lines too, keeping their indentation; each through
// comment_text, so no character of the source can end the comment.
std::string PythonWriter::source_comment(const Statement& s, int depth) const {
  std::string out = indent(depth) + "# " + source_line(s.span) + "\n";
  if (s.kind == Statement::Kind::for_ || s.kind == Statement::Kind::if_ || s.span.end <= s.span.begin) return out;
  LineColumn first = a_.file.line_column(s.span.begin);
  LineColumn last = a_.file.line_column(s.span.end - 1);
  std::string head(a_.file.line_text(first.line));
  size_t base = head.find_first_not_of(' ');
  std::string prefix = file_name(a_.file.path()) + ":" + std::to_string(first.line + 1) + ": ";
  for (uint32_t line = first.line + 1; line <= last.line; ++line) {
    std::string text(a_.file.line_text(line));
    size_t lead = text.find_first_not_of(' ');
    if (lead == std::string::npos) continue;
    size_t cut = std::min(lead, base == std::string::npos ? 0 : base);
    out += indent(depth) + "# " + std::string(prefix.size(), ' ') + comment_text(text.substr(cut)) + "\n";
  }
  return out;
}

std::string PythonWriter::block(const Block& b, int depth) {
  std::string out;
  for (const Statement& s : b.statements)
    if (!skipped_.count(&s)) out += statement(s, depth);
  if (out.empty()) out = indent(depth) + "pass\n";
  return out;
}

std::string PythonWriter::flush_prelude(int depth) {
  std::string out;
  for (const std::string& line : prelude_) out += indent(depth) + line + "\n";
  prelude_.clear();
  return out;
}

std::string PythonWriter::line(int depth, const std::string& code) {
  std::string first = flush_prelude(depth);
  return first + indent(depth) + code + "\n";
}

std::string PythonWriter::statement(const Statement& s, int depth) {
  std::string out = source_comment(s, depth);
  switch (s.kind) {
    case Statement::Kind::assign: {
      if (s.value && s.targets.size() == 1) {
        std::string steps = pipe_steps(*s.value, python_name(s.targets[0].first), s.targets[0].first, depth);
        if (!steps.empty()) {
          locals_.insert(s.targets[0].first);
          assigned({s.targets[0].first}, s.value.get());
          return out + steps;
        }
      }
      std::string targets;
      std::vector<std::string> names;
      for (auto& [name, span] : s.targets) {
        targets += (targets.empty() ? "" : ", ") + python_name(name);
        names.push_back(name);
      }
      // Several targets of a piped value: its steps go through the first, which the last step unpacks.
      if (s.value && s.targets.size() > 1) {
        std::string steps = pipe_steps(*s.value, python_name(s.targets[0].first), s.targets[0].first, depth, false, targets);
        if (!steps.empty()) {
          for (const std::string& name : names) locals_.insert(name);
          assigned(names, s.value.get());
          return out + steps;
        }
      }
      std::string value = s.value ? python_bare(expression(*s.value)) : "None";
      for (const std::string& name : names) locals_.insert(name);
      assigned(names, s.value.get());
      return out + line(depth, targets + " = " + value);
    }
    case Statement::Kind::return_: {
      on_return(s);
      if (s.value) {
        std::string name = "out";
        while (name_taken(name)) name += "_";
        std::string steps = pipe_steps(*s.value, name, "", depth, true);
        if (!steps.empty()) return out + steps;
      }
      std::string value = s.value ? python_bare(expression(*s.value)) : "None";
      return out + line(depth, "return " + value);
    }
    case Statement::Kind::expression: {
      std::string value = s.value ? python_bare(expression(*s.value)) : "pass";
      return out + line(depth, value);
    }
    case Statement::Kind::for_: return out + for_statement(s, depth);
    case Statement::Kind::if_: return out + if_statement(s, depth);
    case Statement::Kind::error: return "";
  }
  return "";
}

// A `|>` chain of two or more steps, written as one assignment per step to `name`, so that each
// line does one thing: `att = einsum(…) |> scale(s) |> softmax(over=m)` becomes
// `att = einops.einsum(…)`, `att = att * s`, `att = torch.softmax(att, dim=-1)`. With `returns`,
// the last step is returned. Empty when the statement is not such a chain, or when a later
// step reads the old value of `source_name` (`x = f(y) |> g(x)`).
std::string PythonWriter::pipe_steps(const Expr& value, const std::string& name, const std::string& source_name, int depth, bool returns,
                                     const std::string& last_targets) {
  std::vector<const Expr*> stages;  // outermost first
  const Expr* e = &value;
  while (e->kind == Expr::Kind::call && e->piped && !e->arguments.empty() && e->arguments[0].value && !e->arguments[0].keyword) {
    stages.push_back(e);
    e = e->arguments[0].value.get();
  }
  if (stages.size() < pipe_steps_from() || (stages.size() == 1 && e->kind == Expr::Kind::name)) return "";
  if (!source_name.empty())
    for (const Expr* stage : stages)
      for (size_t i = 1; i < stage->arguments.size(); ++i)
        if (stage->arguments[i].value && step_reads(*stage->arguments[i].value, source_name)) return "";
  std::string out = line(depth, name + " = " + python_bare(expression(*e)));
  for (size_t i = stages.size(); i-- > 0;) {
    substitutes_[stages[i]->arguments[0].value.get()] = name;
    std::string step = python_bare(expression(*stages[i]));
    substitutes_.erase(stages[i]->arguments[0].value.get());
    std::string target = returns && i == 0 ? "return " : (i == 0 && !last_targets.empty() ? last_targets : name) + " = ";
    out += line(depth, target + step);
  }
  return out;
}

std::string PythonWriter::axis_reads(const std::vector<std::pair<std::string, const ValueType*>>& inputs, const std::string& body, int depth) {
  std::string out;
  for (const std::string& axis : needed_axes_) {
    if (!uses_name(body, python_name(axis))) continue;  // e.g. causal[n n] became is_causal=True
    bool found = false;
    for (auto& [name, type] : inputs) {
      if (found || !type || !type->is_tensor()) continue;
      for (size_t a = 0; a < type->tensor.rank() && !found; ++a) {
        auto linear = type->tensor.axes[a].size.fixed_linear_in(axis);
        if (!linear) continue;
        auto [scale, offset] = *linear;
        std::string read = name + ".shape[" + std::to_string(a) + "]";
        if (offset) read = "(" + read + (offset > 0 ? " - " : " + ") + std::to_string(std::abs(offset)) + ")";
        if (scale != 1) read += " // " + std::to_string(scale);
        out += indent(depth) + python_name(axis) + " = " + read + "\n";
        found = true;
      }
    }
  }
  return out;
}

PythonWriter::Anchor PythonWriter::anchor_of(const std::vector<std::pair<std::string, const ValueType*>>& inputs) const {
  Anchor anchor;
  std::string model_parameter;  // `m.wte`: the first parameter of a model input
  for (auto& [name, type] : inputs) {
    if (!type) continue;
    if (type->kind == ValueType::Kind::model) {
      anchor.floating.insert(name);
      const Item* model = a_.find_item(type->name);
      if (model_parameter.empty() && model && !model->params.empty()) model_parameter = name + "." + python_name(model->params[0].name);
      continue;
    }
    if (!type->is_tensor() || type->tensor.rank() == 0) continue;
    if (anchor.device.empty()) anchor.device = name + ".device";
    if (type->tensor.element.is_real()) {
      anchor.floating.insert(name);
      if (anchor.dtype.empty()) anchor.dtype = name + ".dtype";
    }
  }
  if (anchor.device.empty() && !model_parameter.empty()) anchor.device = model_parameter + ".device";
  if (anchor.dtype.empty() && !model_parameter.empty()) anchor.dtype = model_parameter + ".dtype";
  return anchor;
}

bool PythonWriter::from_model_values(const Expr& e) const {
  return !for_each_free_name(e, [&](const Expr& name) { return anchor_.floating.count(name.text) ? Walk::stop : Walk::into; });
}

std::vector<std::string> PythonWriter::in_model_dtype(const std::vector<const Expr*>& operands, std::vector<std::string> code) const {
  if (anchor_.dtype.empty()) return code;
  auto float_tensor = [&](const Expr* e) {  // a lambda (`map`'s) is typed by its body but is no value
    const ValueType* type = e && e->kind != Expr::Kind::lambda ? type_of(*e) : nullptr;
    return type && type->is_tensor() && type->tensor.rank() > 0 && type->tensor.element.is_real();
  };
  bool meets_model = std::any_of(operands.begin(), operands.end(), [&](const Expr* e) { return float_tensor(e) && from_model_values(*e); });
  if (!meets_model) return code;
  for (size_t i = 0; i < operands.size() && i < code.size(); ++i)
    if (float_tensor(operands[i]) && !from_model_values(*operands[i])) code[i] = python_atom(code[i]) + ".to(" + anchor_.dtype + ")";
  return code;
}

void PythonWriter::assigned(const std::vector<std::string>& names, const Expr* value) {
  bool model_values = value && from_model_values(*value);
  for (const std::string& name : names) {
    if (model_values) anchor_.floating.insert(name);
    else anchor_.floating.erase(name);
  }
}

std::string PythonWriter::causal_call(const std::string& n, const std::string& m) {
  uses_causal_ = true;
  return "_causal(" + n + ", " + m + (anchor_.device.empty() ? "" : ", " + anchor_.device) + ")";
}

// ---------------------------------------------------------------------------------------------
// Expressions

// A size written in the source, as Python: dims by name, generic axes read from the inputs.
std::string PythonWriter::size_node(const SizeNode& node) {
  switch (node.kind) {
    case SizeNode::Kind::number: return std::to_string(node.number);
    case SizeNode::Kind::name:
      if (!a_.semantics.dims.count(node.name) && !locals_.count(node.name)) needed_axes_.insert(node.name);
      return python_name(node.name);
    case SizeNode::Kind::scaled:
      if (!a_.semantics.dims.count(node.name)) needed_axes_.insert(node.name);
      return std::to_string(node.number) + " * " + python_name(node.name);
    case SizeNode::Kind::unknown: return "None";
    case SizeNode::Kind::group: {
      std::string out;
      for (const SizeNode& c : node.children) out += (out.empty() ? "" : " * ") + size_node(c);
      return out.empty() ? "1" : "(" + out + ")";
    }
    case SizeNode::Kind::binary:
      if (node.children.size() != 2) return "None";
      return "(" + size_node(node.children[0]) + " " +
             (node.op == '/' || node.op == SizeNode::kFloorDivide ? std::string("//") : std::string(1, node.op)) + " " +
             size_node(node.children[1]) + ")";
    case SizeNode::Kind::error: return "None";
  }
  return "None";
}

// A size the checker computed, over generic axes: those become reads of the inputs' shapes.
std::string PythonWriter::computed_size(const SizeExpr& size) {
  for (const std::string& v : size.variables())
    if (!v.starts_with("?")) needed_axes_.insert(v);
  return python_size(size);
}

// The sizes of the tensor an expression makes (`zeros[n D]`, `full[n m](v)`), as Python.
std::vector<std::string> PythonWriter::result_shape(const Expr& e) {
  std::vector<std::string> sizes;
  if (const ValueType* type = type_of(e); type && type->is_tensor())
    for (const Axis& axis : type->tensor.axes) sizes.push_back(computed_size(axis.size));
  return sizes;
}

std::string PythonWriter::attribute(const Expr& e) { return python_atom(expression(*e.operands[0])) + "." + python_attribute(e.text); }

std::string PythonWriter::expression(const Expr& e) {
  if (auto substitute = substitutes_.find(&e); substitute != substitutes_.end()) return substitute->second;
  if (auto special = special_expression(e)) return *special;
  switch (e.kind) {
    case Expr::Kind::name: {
      if (locals_.count(e.text)) return python_name(e.text);
      if (a_.semantics.dims.count(e.text)) return python_name(e.text);
      if (e.text == "inf") return "math.inf";
      if (is_python_module(e.text)) return python_attribute(e.text);  // `import python numpy`: the module's own name
      const ValueType* type = type_of(e);
      if (type && type->known_size) return computed_size(*type->known_size);
      return python_name(e.text);
    }
    case Expr::Kind::number: return text(e.span);
    case Expr::Kind::string: return quote(e.text);
    case Expr::Kind::binary: {
      if (e.operands.size() != 2 || !e.operands[0] || !e.operands[1]) return "None";
      int own = precedence(e);
      std::string left = expression(*e.operands[0]), right = expression(*e.operands[1]);
      // Parentheses only where Python needs them; comparisons never chain.
      int lp = precedence(*e.operands[0]), rp = precedence(*e.operands[1]);
      if (lp < own || (lp == own && own == kComparison)) left = "(" + left + ")";
      if (rp <= own) right = "(" + right + ")";
      auto both = in_model_dtype({e.operands[0].get(), e.operands[1].get()}, {left, right});
      return both[0] + " " + python_operator(e) + " " + both[1];
    }
    case Expr::Kind::unary: {
      if (e.operands.empty() || !e.operands[0]) return "None";
      std::string operand = expression(*e.operands[0]);
      if (precedence(*e.operands[0]) < precedence(e)) operand = "(" + operand + ")";
      if (e.text == "!") return (is_static(e) ? "not " : "~") + operand;
      return "-" + operand;
    }
    case Expr::Kind::attribute: return attribute(e);
    case Expr::Kind::subscript: {
      const Expr& base = *e.operands[0];
      if (base.kind == Expr::Kind::name && base.text == "causal" && !locals_.count("causal") && e.index.size() == 2) {
        // The sizes as the checker solved them: `m` may be an axis a pattern named, with no
        // Python variable of its own.
        const ValueType* type = type_of(e);
        if (type && type->is_tensor() && type->tensor.rank() == 2)
          return causal_call(computed_size(type->tensor.axes[0].size), computed_size(type->tensor.axes[1].size));
        return causal_call(size_node(e.index[0]), size_node(e.index[1]));
      }
      // `zeros[n D]`, `ones[n D]`: a tensor made from the shape, as the checker resolved it.
      if (const CallFacts* facts = facts_of(e); facts && facts->builtin && facts->builtin->takes_shape && facts->builtin->lower) {
        LowerContext context;
        context.facts = facts;
        context.device = anchor_.device;
        context.shape = result_shape(e);
        return facts->builtin->lower(context);
      }
      std::string index;
      for (const SizeNode& i : e.index) index += (index.empty() ? "" : ", ") + size_node(i);
      return python_atom(expression(base)) + "[" + index + "]";
    }
    case Expr::Kind::as: return as_expression(e);
    case Expr::Kind::lambda: {
      locals_.insert(e.text);
      ++lambda_depth_;
      std::string body = expression(*e.operands[0]);
      --lambda_depth_;
      return "lambda " + python_name(e.text) + ": " + body;
    }
    case Expr::Kind::call: return call(e);
    case Expr::Kind::error: return error_expression(e);
  }
  return "None";
}

// Python's precedence of the code an expression becomes (higher binds tighter).
int PythonWriter::precedence(const Expr& e) const {
  if (e.kind == Expr::Kind::lambda) return 0;
  if (e.kind == Expr::Kind::unary) return e.text == "!" && is_static(e) ? 3 : 9;
  if (e.kind != Expr::Kind::binary) return 10;
  const std::string& op = e.text;
  if (op == "or") return is_static(e) ? 1 : 5;
  if (op == "and") return is_static(e) ? 2 : 6;
  if (op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=") return kComparison;
  if (op == "+" || op == "-") return 7;
  return 8;  // * /
}

std::string PythonWriter::python_operator(const Expr& e) const {
  if (e.text == "and") return is_static(e) ? "and" : "&";
  if (e.text == "or") return is_static(e) ? "or" : "|";
  return e.text;
}

std::optional<std::string> PythonWriter::over_size(const Axis& over) {
  auto variables = over.size.variables();
  bool known = std::none_of(variables.begin(), variables.end(), [](const std::string& v) { return v.starts_with("?"); });
  if (known) return computed_size(over.size);
  return std::nullopt;
}

std::string PythonWriter::call(const Expr& e) {
  if (auto special = special_call(e)) return *special;
  const CallFacts* facts = facts_of(e);
  std::vector<std::string> args;
  std::vector<const Expr*> positional;
  std::map<std::string, std::string> keywords;
  const AxisPattern* pattern = nullptr;
  for (const Argument& argument : e.arguments) {
    if (argument.pattern) {
      pattern = &*argument.pattern;
      continue;
    }
    if (!argument.value) continue;
    if (argument.keyword) {
      if (*argument.keyword != "over") keywords[*argument.keyword] = python_bare(expression(*argument.value));
      continue;
    }
    args.push_back(python_bare(expression(*argument.value)));
    positional.push_back(argument.value.get());
  }
  if (facts && facts->builtin && facts->builtin->lower) {
    on_builtin_call(e, *facts);
    LowerContext context;
    context.args = in_model_dtype(positional, args);
    context.keywords = keywords;
    context.facts = facts;
    context.device = anchor_.device;
    context.dtype = anchor_.dtype;
    context.scalar = std::all_of(e.arguments.begin(), e.arguments.end(), [&](const Argument& a) { return a.value && is_number(*a.value); });
    context.rearrange = rearrange_callable();
    for (const Expr* p : positional) context.numbers.push_back(is_number(*p));
    if (facts->builtin->takes_shape) context.shape = result_shape(e);
    if (pattern) einops_pattern(*pattern, *facts, context);
    // The size of the `over=` axis, for lowerings that pass it to torch (normalized_shape).
    if (auto dim = facts->lowering.find("dim"); dim != facts->lowering.end() && !e.arguments.empty() && e.arguments[0].value)
      if (const ValueType* x = type_of(*e.arguments[0].value); x && x->is_tensor()) {
        int64_t axis = std::stoll(dim->second);
        if (axis < 0) axis += static_cast<int64_t>(x->tensor.rank());
        if (axis >= 0 && axis < static_cast<int64_t>(x->tensor.rank()))
          if (auto size = over_size(x->tensor.axes[static_cast<size_t>(axis)])) context.keywords["#over_size"] = *size;
      }
    return facts->builtin->lower(context);
  }
  if (facts && facts->function) {
    for (size_t i = 0; i < positional.size(); ++i) args[i] = function_argument(*facts->function, i, *positional[i], args[i]);
    return function_call(e, *facts->function, args);
  }
  return python_call(e, args, keywords);
}

std::string PythonWriter::function_argument(const Item& callee, size_t i, const Expr& value, std::string code) const {
  // A plain number given for a scalar parameter becomes a tensor: the callee may hand it to torch
  // (`log(base)`). An `Index[N]` stays a number, for the callee to index with.
  auto types = a_.semantics.functions.find(&callee);
  if (types == a_.semantics.functions.end() || i >= types->second->parameters.size()) return code;
  const ValueType& parameter = types->second->parameters[i];
  if (!parameter.is_tensor() || parameter.tensor.rank() != 0 || !type_of(value) || !type_of(value)->fixed) return code;
  ElementKind kind = parameter.tensor.element.kind;
  if (kind == ElementKind::index) return code;
  const char* cast = kind == ElementKind::int_ ? "int" : kind == ElementKind::bool_ ? "bool" : "float";
  return std::string("torch.tensor(") + cast + "(" + python_bare(code) + "))";
}

std::vector<std::string> PythonWriter::taken_arguments(const std::vector<std::string>& args, const std::vector<bool>& takes) {
  std::vector<std::string> taken;
  for (size_t i = 0; i < args.size(); ++i)
    if (i >= takes.size() || takes[i]) taken.push_back(args[i]);
  return taken;
}

std::string PythonWriter::prepared_arguments(const Expr& call, const std::vector<bool>& invariant) {
  const CallFacts* facts = facts_of(call);
  std::vector<std::string> args;
  for (size_t i = 0; i < call.arguments.size() && i < invariant.size(); ++i)
    if (invariant[i] && call.arguments[i].value) {
      std::string code = python_bare(expression(*call.arguments[i].value));
      args.push_back(facts && facts->function ? function_argument(*facts->function, i, *call.arguments[i].value, code) : code);
    }
  return join(args);
}

// einops names: a number or a dim gets a name of its own and its size as a keyword argument.
std::string PythonWriter::pattern_side(const std::vector<SizeNode>& side, const CallFacts& facts, std::map<std::string, int64_t>& sizes) {
  std::string out;
  for (const SizeNode& node : side) out += (out.empty() ? "" : " ") + pattern_axis(node, facts, sizes);
  return out;
}

namespace {
// An einops axis name: einops refuses names that start or end with `_`, which python_name gives a
// dim that shadows a module (`F` -> `F_`); the name is also the size's keyword argument.
std::string einops_axis_name(const std::string& name) {
  std::string out = python_name(name);
  if (!out.empty() && out.front() == '_') out = "axis" + out;
  if (!out.empty() && out.back() == '_') out += "axis";
  return out;
}
}  // namespace

std::string PythonWriter::pattern_axis(const SizeNode& node, const CallFacts& facts, std::map<std::string, int64_t>& sizes) {
  switch (node.kind) {
    case SizeNode::Kind::number: {
      if (node.number == 1) return "1";
      std::string name = "k" + std::to_string(node.number);
      sizes[name] = node.number;
      return name;
    }
    case SizeNode::Kind::name: {
      std::string name = einops_axis_name(node.name);
      if (auto dim = a_.semantics.dims.find(node.name); dim != a_.semantics.dims.end()) sizes[name] = dim->second;
      else if (auto bound = facts.bindings.find(node.name); bound != facts.bindings.end() && bound->second.is_constant())
        sizes[name] = *bound->second.constant_value();
      return name;
    }
    case SizeNode::Kind::group: {
      std::string out;
      for (const SizeNode& c : node.children) out += (out.empty() ? "" : " ") + pattern_axis(c, facts, sizes);
      return "(" + out + ")";
    }
    default: return einops_axis_name(std::string(a_.file.slice(node.span)));
  }
}

void PythonWriter::einops_pattern(const AxisPattern& pattern, const CallFacts& facts, LowerContext& context) {
  uses_einops_ = true;
  std::map<std::string, int64_t> sizes;
  std::string inputs;
  for (const auto& side : pattern.inputs) inputs += (inputs.empty() ? "" : ", ") + pattern_side(side, facts, sizes);
  std::string output = pattern_side(pattern.output, facts, sizes);
  // split: the pieces factor (the group's factor the output lacks) leads the output, then unbind(0).
  if (facts.builtin && facts.builtin->name == "split") {
    std::set<std::string> in_output;
    for (const SizeNode& s : pattern.output)
      if (s.kind == SizeNode::Kind::name) in_output.insert(s.name);
    for (const auto& side : pattern.inputs)
      for (const SizeNode& s : side)
        if (s.kind == SizeNode::Kind::group)
          for (const SizeNode& c : s.children)
            if (c.kind == SizeNode::Kind::number || (c.kind == SizeNode::Kind::name && !in_output.count(c.name)))
              output = pattern_axis(c, facts, sizes) + " " + output;
  }
  context.pattern = inputs + " -> " + output;
  // Only sizes einops can't infer are passed: the factors of a decomposed group but its first,
  // which einops infers. So `b n (H Dh)` passes Dh and leaves H to the tensor, and a block that
  // holds some of the heads (tensor parallelism) runs the same code.
  // When a later factor isn't known, einops needs every known one, the first included.
  std::set<std::string> needed;
  auto factor_name = [](const SizeNode& c) {
    return c.kind == SizeNode::Kind::number ? "k" + std::to_string(c.number) : c.kind == SizeNode::Kind::name ? einops_axis_name(c.name) : "";
  };
  for (const auto& side : pattern.inputs)
    for (const SizeNode& s : side)
      if (s.kind == SizeNode::Kind::group) {
        bool rest_known = true;
        for (size_t i = 1; i < s.children.size(); ++i) rest_known = rest_known && sizes.count(factor_name(s.children[i]));
        for (size_t i = rest_known ? 1 : 0; i < s.children.size(); ++i) needed.insert(factor_name(s.children[i]));
      }
  std::string keyword_sizes;
  for (auto& [name, size] : sizes)
    if (needed.count(name)) keyword_sizes += ", " + name + "=" + std::to_string(size);
  context.pattern_sizes = facts.builtin && facts.builtin->name == "einsum" ? "" : keyword_sizes;
}

}  // namespace ss
