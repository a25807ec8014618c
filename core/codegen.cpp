#include "codegen.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "builtins.h"

namespace ss {

namespace {

const std::set<std::string> kReserved = {
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else",
    "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass",
    "raise", "return", "try", "while", "with", "yield", "torch", "F", "nn", "math", "einops", "self"};

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// True when `text` uses `prefix` (such as "F.", or a whole name such as "n") as a name of its
// own, outside strings and comments.
bool uses_name(const std::string& text, const std::string& prefix) {
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
    if (c == '#') {  // a comment runs to the end of the line
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    bool starts = i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_' || text[i - 1] == '.');
    if (!starts || text.compare(i, prefix.size(), prefix) != 0) continue;
    size_t after = i + prefix.size();
    bool whole = prefix.back() == '.' || after == text.size() ||
                 !(std::isalnum(static_cast<unsigned char>(text[after])) || text[after] == '_');
    if (whole) return true;
  }
  return false;
}

// Whether `(` at `open` is closed by the text's last character.
bool wrapped(const std::string& text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return false;
  int depth = 0;
  char quote_char = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote_char) {
      if (c == '\\') ++i;
      else if (c == quote_char) quote_char = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote_char = c;
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0 && i + 1 < text.size()) return false;
    }
  }
  return true;
}

// `16`, `0.5`, `1e-5`: a number Python reads as one token.
bool is_number_literal(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool sign_after_exponent = (c == '-' || c == '+') && i > 0 && (text[i - 1] == 'e' || text[i - 1] == 'E');
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != 'e' && c != 'E' && !sign_after_exponent) return false;
  }
  return true;
}

// The file's name without its folders, as the generated comments cite it.
std::string file_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

// `text` as an operand of a method call or an operator: unchanged when it is a name, a call, a
// number or already parenthesized, else in parentheses. (lowering.cpp uses it too.)
std::string python_atom(const std::string& text) {
  if (wrapped(text) || is_number_literal(text)) return text;
  int depth = 0;
  char quote_char = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote_char) {
      if (c == '\\') ++i;
      else if (c == quote_char) quote_char = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote_char = c;
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
    else if (depth == 0 && !(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return "(" + text + ")";
  }
  return text;
}

// An expression where any expression may stand (an argument, a right-hand side): without the
// parentheses that only an operand would need.
std::string python_bare(const std::string& text) {
  if (!wrapped(text)) return text;
  int depth = 0;
  char quote_char = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote_char) {
      if (c == '\\') ++i;
      else if (c == quote_char) quote_char = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote_char = c;
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
    else if (c == ',' && depth == 1) return text;  // a tuple keeps its parentheses
  }
  return text.substr(1, text.size() - 2);
}

std::string python_name(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (kReserved.count(out)) out += "_";
  return out;
}

std::string python_size(const SizeExpr& size) {
  if (size.is_zero()) return "0";
  std::string out;
  for (auto it = size.terms().rbegin(); it != size.terms().rend(); ++it) {
    int64_t coefficient = it->second;
    std::string term;
    for (auto& [variable, power] : it->first)
      for (uint32_t p = 0; p < power; ++p) term += (term.empty() ? "" : " * ") + python_name(variable);
    std::string magnitude = std::to_string(coefficient < 0 ? -coefficient : coefficient);
    if (term.empty()) term = magnitude;
    else if (magnitude != "1") term = magnitude + " * " + term;
    if (out.empty()) out = coefficient < 0 ? "-" + term : term;
    else out += (coefficient < 0 ? " - " : " + ") + term;
  }
  return out;
}

namespace {

class Generator {
 public:
  explicit Generator(const Analysis& analysis) : a_(analysis) {}

  GeneratedModule run() {
    std::ostringstream body;
    for (const Item& item : a_.program.items) {
      if (item.kind == Item::Kind::dim) {
        auto value = a_.semantics.dims.find(item.name);
        if (value != a_.semantics.dims.end()) constants_ << python_name(item.name) << " = " << value->second << "\n";
      } else if (item.kind == Item::Kind::python_import) {
        imports_.insert("import " + item.name);
      } else if (item.kind == Item::Kind::model) {
        body << "\n\n" << model_class(item);
      } else if (item.kind == Item::Kind::function) {
        body << "\n\n" << function(item);
      } else if (item.kind == Item::Kind::extern_fn) {
        std::string root = item.extern_target.substr(0, item.extern_target.find('.'));
        if (root == "math" || root == "torch") imports_.insert("import " + root);
      }
    }
    GeneratedModule module;
    module.uses_einops = uses_einops_;
    std::ostringstream out;
    out << "# Generated by ShapeScript from " << file_name(a_.file.path()) << ": plain PyTorch. Edit the .ss file, not this one.\n";
    // Only the imports the code uses, standard library first, as a person would write them.
    std::string code = body.str();
    std::vector<std::string> imports;
    if (uses_name(code, "math.")) imports.push_back("import math");
    for (const std::string& line : imports_)
      if (line != "import math" && line != "import torch") imports.push_back(line);
    imports.push_back("");
    imports.push_back("import torch");
    if (uses_name(code, "F.")) imports.push_back("import torch.nn.functional as F");
    if (uses_name(code, "nn.")) imports.push_back("from torch import nn");
    if (uses_einops_) imports.push_back("import einops");
    if (imports.front().empty()) imports.erase(imports.begin());
    for (const std::string& line : imports) out << line << "\n";
    std::string constants = constants_.str();
    if (!constants.empty()) out << "\n" << constants;
    // Helpers only where the code calls them (`causal[n n]` in attention becomes is_causal=True).
    if (uses_causal_ && uses_name(body.str(), "_causal")) {
      out << "\n\ndef _causal(n, m):\n"
             "    # causal[n m]: True where key position j is at or before query position i (j <= i).\n"
             "    return torch.ones(n, m, dtype=torch.bool).tril()\n";
    }
    if (uses_check_) {
      out << "\n\ndef _check_shape(x, sizes, written):\n"
             "    # An `as` assertion: torch.export learns the sizes, and the program checks them when it runs.\n"
             "    torch._check(x.dim() == len(sizes), lambda: f\"expected {written}, got shape {tuple(x.shape)}\")\n"
             "    for axis, size in enumerate(sizes):\n"
             "        if size is not None:\n"
             "            torch._check(x.shape[axis] == size, lambda: f\"expected {written}, got shape {tuple(x.shape)}\")\n"
             "    return x\n";
    }
    out << body.str();
    module.python = out.str();
    return module;
  }

 private:
  const Analysis& a_;
  std::set<std::string> imports_;
  std::ostringstream constants_;
  bool uses_einops_ = false, uses_causal_ = false, uses_check_ = false;
  std::map<const Expr*, std::string> substitutes_;  // an expression already computed into a variable
  std::set<std::string> item_names_;

  // Per function.
  std::set<std::string> locals_;
  std::set<std::string> needed_axes_;  // generic axes used as values: read from the inputs' shapes
  int temporaries_ = 0;

  std::string source_line(Span span) const {
    LineColumn position = a_.file.line_column(span.begin);
    std::string text(a_.file.line_text(position.line));
    size_t first = text.find_first_not_of(' ');
    return file_name(a_.file.path()) + ":" + std::to_string(position.line + 1) + ": " + (first == std::string::npos ? "" : text.substr(first));
  }

  // The comment above a statement's code: its source line, and for a simple statement written
  // over several lines (a `|>` chain), those lines too, keeping their indentation.
  std::string source_comment(const Statement& s, int depth) const {
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
      out += indent(depth) + "# " + std::string(prefix.size(), ' ') + text.substr(cut) + "\n";
    }
    return out;
  }

  const ValueType* type_of(const Expr& e) const {
    auto it = a_.semantics.types.find(&e);
    return it == a_.semantics.types.end() ? nullptr : &it->second;
  }

  const CallFacts* facts_of(const Expr& e) const {
    auto it = a_.semantics.calls.find(&e);
    return it == a_.semantics.calls.end() ? nullptr : &it->second;
  }

  // ---------------------------------------------------------------------------------------------
  // Models

  std::string model_class(const Item& item) {
    std::ostringstream out;
    out << "class " << python_name(item.name) << "(nn.Module):\n";
    if (!item.doc.empty()) {
      std::string doc;
      for (char c : item.doc) doc += c == '\n' ? std::string("\n    ") : std::string(1, c);
      out << "    \"\"\"" << doc << "\"\"\"\n\n";
    }
    out << "    def __init__(self):\n        super().__init__()\n";
    std::ostringstream init;
    for (const Item::Param& param : item.params) {
      std::string shape;
      for (const SizeNode& axis : param.type.axes) shape += (shape.empty() ? "" : ", ") + size_node(axis);
      out << "        self." << python_name(param.name) << " = nn.Parameter(torch.empty(" << shape << "))  # " << source_line(param.span)
          << "\n";
      init << "        " << initializer(param) << "\n";
    }
    out << "        self.reset_parameters()\n\n    def reset_parameters(self):\n";
    std::string inits = init.str();
    out << (inits.empty() ? "        pass\n" : inits);
    return out.str();
  }

  std::string initializer(const Item::Param& param) {
    std::string target = "self." + python_name(param.name);
    if (!param.init) return "nn.init.normal_(" + target + ", std=0.02)";
    const Expr& init = *param.init;
    const Expr* callee = init.kind == Expr::Kind::call && !init.operands.empty() ? init.operands[0].get() : &init;
    const Builtin* builtin = callee->kind == Expr::Kind::name ? find_builtin(callee->text) : nullptr;
    if (!builtin || !builtin->lower) return "nn.init.normal_(" + target + ", std=0.02)";
    LowerContext context;
    if (init.kind == Expr::Kind::call)
      for (const Argument& argument : init.arguments)
        if (argument.keyword && argument.value) context.keywords[*argument.keyword] = expression(*argument.value);
    std::string call = builtin->lower(context);
    size_t at = call.find("{param}");
    if (at != std::string::npos) call.replace(at, 7, target);
    return call;
  }

  // ---------------------------------------------------------------------------------------------
  // Functions

  std::string function(const Item& item) {
    locals_.clear();
    needed_axes_.clear();
    temporaries_ = 0;
    std::vector<std::string> parameters;
    for (const Parameter& p : item.parameters) {
      parameters.push_back(python_name(p.name));
      locals_.insert(p.name);
    }
    std::string body = item.body ? block(*item.body, 1) : "    pass\n";
    std::ostringstream out;
    out << "def " << python_name(item.name) << "(";
    for (size_t i = 0; i < parameters.size(); ++i) out << (i ? ", " : "") << parameters[i];
    out << "):\n";
    std::string doc;
    for (char c : item.doc) doc += c == '\n' ? std::string("\n    ") : std::string(1, c);
    out << "    \"\"\"" << file_name(a_.file.path()) << ": " << signature_line(item) << (doc.empty() ? "" : "\n\n    " + doc) << "\"\"\"\n";
    out << axis_reads(item, body);
    out << body;
    return out.str();
  }

  std::string signature_line(const Item& item) const {
    std::string line(a_.file.slice({item.span.begin, item.body ? item.body->span.begin : item.span.end}));
    size_t colon = line.rfind(':');
    line = line.substr(0, colon == std::string::npos ? line.size() : colon);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\n')) line.pop_back();
    std::string flat;
    for (char c : line) flat += c == '\n' ? ' ' : c;
    return flat;
  }

  // `n = x.shape[1]` for each generic axis the body uses as a value.
  std::string axis_reads(const Item& item, const std::string& body) {
    auto types = a_.semantics.functions.find(&item);
    if (types == a_.semantics.functions.end()) return "";
    std::string out;
    for (const std::string& axis : needed_axes_) {
      if (!uses_name(body, python_name(axis))) continue;  // e.g. causal[n n] became is_causal=True
      bool found = false;
      for (size_t i = 0; i < item.parameters.size() && !found; ++i) {
        const ValueType& type = types->second.parameters[i];
        if (!type.is_tensor()) continue;
        for (size_t a = 0; a < type.tensor.rank() && !found; ++a) {
          const SizeExpr& size = type.tensor.axes[a].size;
          auto linear = size.linear_in(axis);
          if (!linear || size.variables().size() != 1) continue;
          auto scale = linear->first.constant_value();
          auto offset = linear->second.constant_value();
          if (!scale || !offset || *scale <= 0) continue;
          std::string read = python_name(item.parameters[i].name) + ".shape[" + std::to_string(a) + "]";
          if (*offset) read = "(" + read + (*offset > 0 ? " - " : " + ") + std::to_string(std::abs(*offset)) + ")";
          if (*scale != 1) read += " // " + std::to_string(*scale);
          out += "    " + python_name(axis) + " = " + read + "\n";
          found = true;
        }
      }
    }
    return out;
  }

  static std::string indent(int depth) { return std::string(static_cast<size_t>(depth) * 4, ' '); }

  std::string block(const Block& b, int depth) {
    std::string out;
    for (const Statement& s : b.statements) out += statement(s, depth);
    if (out.empty()) out = indent(depth) + "pass\n";
    return out;
  }

  std::string statement(const Statement& s, int depth) {
    std::string out = source_comment(s, depth);
    switch (s.kind) {
      case Statement::Kind::assign: {
        if (s.value && s.targets.size() == 1) {
          std::string steps = pipe_steps(*s.value, python_name(s.targets[0].first), s.targets[0].first, depth);
          if (!steps.empty()) {
            locals_.insert(s.targets[0].first);
            return out + steps;
          }
        }
        std::string value = s.value ? python_bare(expression(*s.value)) : "None";
        std::string targets;
        for (auto& [name, span] : s.targets) {
          targets += (targets.empty() ? "" : ", ") + python_name(name);
          locals_.insert(name);
        }
        return out + indent(depth) + targets + " = " + value + "\n";
      }
      case Statement::Kind::return_: {
        if (s.value) {
          std::string name = "out";
          while (locals_.count(name) || a_.semantics.dims.count(name) || item_names().count(name)) name += "_";
          std::string steps = pipe_steps(*s.value, name, "", depth, true);
          if (!steps.empty()) return out + steps;
        }
        return out + indent(depth) + "return " + (s.value ? python_bare(expression(*s.value)) : "None") + "\n";
      }
      case Statement::Kind::expression: return out + indent(depth) + (s.value ? python_bare(expression(*s.value)) : "pass") + "\n";
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
  std::string pipe_steps(const Expr& value, const std::string& name, const std::string& source_name, int depth, bool returns = false) {
    std::vector<const Expr*> stages;  // outermost first
    const Expr* e = &value;
    while (e->kind == Expr::Kind::call && e->piped && !e->arguments.empty() && e->arguments[0].value && !e->arguments[0].keyword) {
      stages.push_back(e);
      e = e->arguments[0].value.get();
    }
    if (stages.size() < 2) return "";
    if (!source_name.empty())
      for (const Expr* stage : stages)
        for (size_t i = 1; i < stage->arguments.size(); ++i)
          if (stage->arguments[i].value && mentions(*stage->arguments[i].value, source_name)) return "";
    std::string out = indent(depth) + name + " = " + python_bare(expression(*e)) + "\n";
    for (size_t i = stages.size(); i-- > 0;) {
      substitutes_[stages[i]->arguments[0].value.get()] = name;
      std::string step = python_bare(expression(*stages[i]));
      substitutes_.erase(stages[i]->arguments[0].value.get());
      out += indent(depth) + (returns && i == 0 ? "return " : name + " = ") + step + "\n";
    }
    return out;
  }

  // Whether `e` reads the variable `name`.
  static bool mentions(const Expr& e, const std::string& name) {
    if (e.kind == Expr::Kind::name && e.text == name) return true;
    if (e.kind == Expr::Kind::lambda && e.text == name) return false;  // shadowed
    for (const ExprPtr& o : e.operands)
      if (o && mentions(*o, name)) return true;
    for (const Argument& a : e.arguments)
      if (a.value && mentions(*a.value, name)) return true;
    for (const SizeNode& i : e.index)
      if (mentions_size(i, name)) return true;
    return false;
  }

  static bool mentions_size(const SizeNode& node, const std::string& name) {
    if ((node.kind == SizeNode::Kind::name || node.kind == SizeNode::Kind::scaled) && node.name == name) return true;
    for (const SizeNode& c : node.children)
      if (mentions_size(c, name)) return true;
    return false;
  }

  const std::set<std::string>& item_names() {
    if (item_names_.empty())
      for (const Item& item : a_.program.items) item_names_.insert(item.name);
    return item_names_;
  }

  // Static: depends only on dims and numbers, so plain Python runs it while tracing.
  bool is_static(const Expr& e) const {
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

  // Names a block assigns, in order.
  static void assigned_names(const Block& b, std::vector<std::string>& names) {
    for (const Statement& s : b.statements) {
      for (auto& [name, span] : s.targets)
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      if (s.body) assigned_names(*s.body, names);
      for (auto& [condition, body] : s.branches)
        if (body) assigned_names(*body, names);
    }
  }

  static bool returns(const Block* b) {
    return b && !b->statements.empty() && b->statements.back().kind == Statement::Kind::return_;
  }

  std::string for_statement(const Statement& s, int depth) {
    std::string start = s.value ? expression(*s.value) : "0";
    std::string end = s.end ? expression(*s.end) : "0";
    std::string variable = python_name(s.variable);
    bool fixed = s.value && s.end && is_static(*s.value) && is_static(*s.end);
    if (fixed) {
      // Unrolled while tracing: torch.export records each iteration.
      locals_.insert(s.variable);
      std::string range = python_bare(start) == "0" ? python_bare(end) : python_bare(start) + ", " + python_bare(end);
      return indent(depth) + "for " + variable + " in range(" + range + "):\n" + (s.body ? block(*s.body, depth + 1) : "");
    }
    // A dynamic number of iterations: torch.while_loop over the names the body rebinds.
    std::vector<std::string> names;
    if (s.body) assigned_names(*s.body, names);
    std::vector<std::string> carried;
    for (const std::string& name : names)
      if (locals_.count(name)) carried.push_back(python_name(name));
    std::string id = std::to_string(++temporaries_);
    std::string state = variable;
    for (const std::string& c : carried) state += ", " + c;
    std::string end_name = "_end" + id;
    std::string out = indent(depth) + end_name + " = " + end + "\n";
    out += indent(depth) + "def _cond" + id + "(" + state + "):\n" + indent(depth + 1) + "return " + variable + " < " + end_name + "\n";
    out += indent(depth) + "def _body" + id + "(" + state + "):\n";
    locals_.insert(s.variable);
    out += s.body ? block(*s.body, depth + 1) : "";
    std::string next = variable + " + 1";
    for (const std::string& c : carried) next += ", " + c;
    out += indent(depth + 1) + "return " + next + "\n";
    std::string initial = "torch.tensor(" + python_bare(start) + ")";
    for (const std::string& c : carried) initial += ", " + c;
    if (carried.empty()) initial += ",";
    std::string targets = "_";
    for (const std::string& c : carried) targets += ", " + c;
    out += indent(depth) + targets + " = torch.while_loop(_cond" + id + ", _body" + id + ", (" + initial + "))\n";
    return out;
  }

  std::string if_statement(const Statement& s, int depth) {
    bool fixed = std::all_of(s.branches.begin(), s.branches.end(), [&](const auto& branch) { return branch.first && is_static(*branch.first); });
    if (fixed) {
      std::string out;
      for (size_t i = 0; i < s.branches.size(); ++i) {
        out += indent(depth) + (i ? "elif " : "if ") + expression(*s.branches[i].first) + ":\n";
        out += s.branches[i].second ? block(*s.branches[i].second, depth + 1) : indent(depth + 1) + "pass\n";
      }
      if (s.body) out += indent(depth) + "else:\n" + block(*s.body, depth + 1);
      return out;
    }
    return cond_chain(s, 0, depth);
  }

  // `if` on a value or a dynamic size: torch.cond, with elif as a nested cond in the false branch.
  std::string cond_chain(const Statement& s, size_t index, int depth) {
    const auto& [condition, body] = s.branches[index];
    const Block* otherwise = index + 1 < s.branches.size() ? nullptr : s.body.get();
    bool all_return = returns(s.body.get());
    for (size_t i = index; i < s.branches.size(); ++i) all_return = all_return && returns(s.branches[i].second.get());
    std::vector<std::string> names;
    if (body) assigned_names(*body, names);
    for (size_t i = index + 1; i < s.branches.size(); ++i)
      if (s.branches[i].second) assigned_names(*s.branches[i].second, names);
    if (s.body) assigned_names(*s.body, names);
    std::vector<std::string> results;
    for (const std::string& n : names) results.push_back(python_name(n));
    std::string id = std::to_string(++temporaries_);
    std::string tuple = results.empty() ? "()" : "(" + join(results) + (results.size() == 1 ? ",)" : ")");
    // Names the branches rebind that already have a value are passed in: a branch that assigned
    // a name it only closed over would make it local to the branch, unbound before the assignment.
    std::vector<std::string> carried;
    for (const std::string& n : names)
      if (locals_.count(n)) carried.push_back(python_name(n));
    std::string parameters = join(carried);
    std::string operands = carried.empty() ? "()" : "(" + join(carried) + (carried.size() == 1 ? ",)" : ")");
    std::string out;
    out += indent(depth) + "def _then" + id + "(" + parameters + "):\n";
    std::set<std::string> saved = locals_;
    out += body ? block(*body, depth + 1) : indent(depth + 1) + "pass\n";
    if (!all_return) out += indent(depth + 1) + "return " + branch_results(body.get(), names) + "\n";
    locals_ = saved;
    out += indent(depth) + "def _else" + id + "(" + parameters + "):\n";
    if (index + 1 < s.branches.size()) {
      out += cond_chain(s, index + 1, depth + 1);  // elif: a torch.cond of its own
      if (!all_return) out += indent(depth + 1) + "return " + tuple + "\n";
    } else {
      out += otherwise ? block(*otherwise, depth + 1) : "";
      if (!all_return) out += indent(depth + 1) + "return " + branch_results(otherwise, names) + "\n";
    }
    for (const std::string& n : names) locals_.insert(n);
    std::string call = "torch.cond(" + python_bare(expression(*condition)) + ", _then" + id + ", _else" + id + ", " + operands + ")";
    if (all_return) return out + indent(depth) + "return " + call + "\n";
    if (results.empty()) return out + indent(depth) + call + "\n";
    return out + indent(depth) + (results.size() == 1 ? "(" + results[0] + ",)" : join(results)) + " = " + call + "\n";
  }

  // What a torch.cond branch returns: the names the `if` rebinds. torch.cond refuses a result
  // that is one of its operands, so a name this branch leaves alone is returned as a copy.
  static std::string branch_results(const Block* branch, const std::vector<std::string>& names) {
    std::vector<std::string> own;
    if (branch) assigned_names(*branch, own);
    std::vector<std::string> results;
    for (const std::string& n : names)
      results.push_back(python_name(n) + (std::find(own.begin(), own.end(), n) == own.end() ? ".clone()" : ""));
    return results.empty() ? "()" : "(" + join(results) + (results.size() == 1 ? ",)" : ")");
  }

  static std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Expressions

  // A size written in the source, as Python: dims by name, generic axes read from the inputs.
  std::string size_node(const SizeNode& node) {
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
        return "(" + size_node(node.children[0]) + " " + (node.op == '/' ? std::string("//") : std::string(1, node.op)) + " " +
               size_node(node.children[1]) + ")";
      case SizeNode::Kind::error: return "None";
    }
    return "None";
  }

  // A size the checker computed, over generic axes: those become reads of the inputs' shapes.
  std::string computed_size(const SizeExpr& size) {
    for (const std::string& v : size.variables())
      if (!v.starts_with("?")) needed_axes_.insert(v);
    return python_size(size);
  }

  std::string expression(const Expr& e) {
    if (auto substitute = substitutes_.find(&e); substitute != substitutes_.end()) return substitute->second;
    switch (e.kind) {
      case Expr::Kind::name: {
        if (locals_.count(e.text)) return python_name(e.text);
        if (a_.semantics.dims.count(e.text)) return python_name(e.text);
        if (e.text == "inf") return "math.inf";
        const ValueType* type = type_of(e);
        if (type && type->known_size) return computed_size(*type->known_size);
        return python_name(e.text);
      }
      case Expr::Kind::number: {
        std::string text(a_.file.slice(e.span));
        return text;
      }
      case Expr::Kind::string: return quote(e.text);
      case Expr::Kind::binary: {
        if (e.operands.size() != 2 || !e.operands[0] || !e.operands[1]) return "None";
        int own = precedence(e);
        std::string left = expression(*e.operands[0]), right = expression(*e.operands[1]);
        // Parentheses only where Python needs them; comparisons never chain.
        int lp = precedence(*e.operands[0]), rp = precedence(*e.operands[1]);
        if (lp < own || (lp == own && own == kComparison)) left = "(" + left + ")";
        if (rp <= own) right = "(" + right + ")";
        return left + " " + python_operator(e) + " " + right;
      }
      case Expr::Kind::unary: {
        if (e.operands.empty() || !e.operands[0]) return "None";
        std::string operand = expression(*e.operands[0]);
        if (precedence(*e.operands[0]) < precedence(e)) operand = "(" + operand + ")";
        if (e.text == "!") return (is_static(e) ? "not " : "~") + operand;
        return "-" + operand;
      }
      case Expr::Kind::attribute: return python_atom(expression(*e.operands[0])) + "." + (type_of(*e.operands[0]) && type_of(*e.operands[0])->kind == ValueType::Kind::model ? python_name(e.text) : e.text);
      case Expr::Kind::subscript: {
        const Expr& base = *e.operands[0];
        if (base.kind == Expr::Kind::name && base.text == "causal" && !locals_.count("causal") && e.index.size() == 2) {
          uses_causal_ = true;
          // The sizes as the checker solved them: `m` may be an axis a pattern named, with no
          // Python variable of its own.
          const ValueType* type = type_of(e);
          if (type && type->is_tensor() && type->tensor.rank() == 2)
            return "_causal(" + computed_size(type->tensor.axes[0].size) + ", " + computed_size(type->tensor.axes[1].size) + ")";
          return "_causal(" + size_node(e.index[0]) + ", " + size_node(e.index[1]) + ")";
        }
        std::string index;
        for (const SizeNode& i : e.index) index += (index.empty() ? "" : ", ") + size_node(i);
        return python_atom(expression(base)) + "[" + index + "]";
      }
      case Expr::Kind::as: return as_expression(e);
      case Expr::Kind::lambda: {
        locals_.insert(e.text);
        std::string body = expression(*e.operands[0]);
        return "lambda " + python_name(e.text) + ": " + body;
      }
      case Expr::Kind::call: return call(e);
      case Expr::Kind::error: return "None";
    }
    return "None";
  }

  // Python's precedence of the code an expression becomes (higher binds tighter).
  static constexpr int kComparison = 4;
  int precedence(const Expr& e) const {
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

  std::string python_operator(const Expr& e) const {
    if (e.text == "and") return is_static(e) ? "and" : "&";
    if (e.text == "or") return is_static(e) ? "or" : "|";
    return e.text;
  }

  std::string as_expression(const Expr& e) {
    std::string value = expression(*e.operands[0]);
    const ValueType* type = type_of(e);
    if (!type || !type->is_tensor() || !e.type) return value;
    uses_check_ = true;
    std::string sizes;
    for (size_t i = 0; i < e.type->axes.size(); ++i) {
      const SizeNode& node = e.type->axes[i];
      bool checkable = node.kind != SizeNode::Kind::unknown;
      // A name the assertion introduces is bound by it, not checked.
      if (node.kind == SizeNode::Kind::name && !a_.semantics.dims.count(node.name)) {
        const SizeExpr& size = type->tensor.axes[i].size;
        checkable = !(size.variables().size() == 1 && size == SizeExpr::variable(node.name) && !locals_.count(node.name) &&
                      !is_signature_axis(node.name));
      }
      sizes += (sizes.empty() ? "" : ", ") + (checkable ? computed_size(type->tensor.axes[i].size) : std::string("None"));
    }
    if (e.type->axes.size() == 1) sizes += ",";
    std::string written(a_.file.slice(e.type->span));
    return "_check_shape(" + value + ", (" + sizes + "), " + quote(written) + ")";
  }

  bool is_signature_axis(const std::string&) const { return true; }

  std::string call(const Expr& e) {
    const CallFacts* facts = facts_of(e);
    std::vector<std::string> args;
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
    }
    if (facts && facts->builtin && facts->builtin->lower) {
      LowerContext context;
      context.args = args;
      context.keywords = keywords;
      context.facts = facts;
      context.scalar = std::all_of(e.arguments.begin(), e.arguments.end(), [&](const Argument& a) { return a.value && is_number(*a.value); });
      if (pattern) einops_pattern(*pattern, *facts, context);
      // The size of the `over=` axis, for lowerings that pass it to torch (normalized_shape).
      if (auto dim = facts->lowering.find("dim"); dim != facts->lowering.end() && !e.arguments.empty() && e.arguments[0].value)
        if (const ValueType* x = type_of(*e.arguments[0].value); x && x->is_tensor()) {
          int64_t axis = std::stoll(dim->second);
          if (axis < 0) axis += static_cast<int64_t>(x->tensor.rank());
          if (axis >= 0 && axis < static_cast<int64_t>(x->tensor.rank())) {
            const Axis& over = x->tensor.axes[static_cast<size_t>(axis)];
            auto variables = over.size.variables();
            bool known = std::none_of(variables.begin(), variables.end(), [](const std::string& v) { return v.starts_with("?"); });
            // A dim by its name (`(D,)`), other sizes as computed.
            if (a_.semantics.dims.count(over.label)) context.keywords["#over_size"] = python_name(over.label);
            else if (known) context.keywords["#over_size"] = computed_size(over.size);
          }
        }
      return facts->builtin->lower(context);
    }
    if (facts && facts->function) {
      const Item& item = *facts->function;
      if (item.kind == Item::Kind::extern_fn) return item.extern_target + "(" + join(args) + ")";
      return python_name(item.name) + "(" + join(args) + ")";
    }
    // A call through `import python`: written as it was.
    std::string callee = e.operands.empty() ? "None" : expression(*e.operands[0]);
    std::vector<std::string> all = args;
    for (auto& [k, v] : keywords) all.push_back(k + "=" + v);
    return callee + "(" + join(all) + ")";
  }

  // A plain Python number: a literal, a dim, an axis size, or arithmetic on those.
  bool is_number(const Expr& e) const {
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

  // einops names: a number or a dim gets a name of its own and its size as a keyword argument.
  std::string pattern_side(const std::vector<SizeNode>& side, const CallFacts& facts, std::map<std::string, int64_t>& sizes) {
    std::string out;
    for (const SizeNode& node : side) out += (out.empty() ? "" : " ") + pattern_axis(node, facts, sizes);
    return out;
  }

  std::string pattern_axis(const SizeNode& node, const CallFacts& facts, std::map<std::string, int64_t>& sizes) {
    switch (node.kind) {
      case SizeNode::Kind::number: {
        if (node.number == 1) return "1";
        std::string name = "k" + std::to_string(node.number);
        sizes[name] = node.number;
        return name;
      }
      case SizeNode::Kind::name: {
        std::string name = python_name(node.name);
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
      default: return python_name(std::string(a_.file.slice(node.span)));
    }
  }

  void einops_pattern(const AxisPattern& pattern, const CallFacts& facts, LowerContext& context) {
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
    // Only sizes einops can't infer are passed: every named or numbered axis of a decomposed group.
    std::string keyword_sizes;
    for (auto& [name, size] : sizes) keyword_sizes += ", " + name + "=" + std::to_string(size);
    context.pattern_sizes = facts.builtin && facts.builtin->name == "einsum" ? "" : keyword_sizes;
  }
};

}  // namespace

GeneratedModule generate_python(const Analysis& analysis) { return Generator(analysis).run(); }

}  // namespace ss
