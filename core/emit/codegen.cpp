#include "emit/codegen.h"
#include "emit/python_writer.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "check/builtins.h"
#include "check/extern_targets.h"
#include "emit/hoist.h"
#include "syntax/walk.h"

namespace ss {

namespace {

// Names a ShapeScript name may not keep in Python, where it gets a `_` after it: Python's keywords
// (`lambda`) and builtins (`exec`, `range`: a function of that name would replace what the generated
// code calls), and the names the generated modules import or define themselves. A name starting with
// `_` (the generators' own helpers: `_check_shape`, `_causal`) or `ShapeScript` (the folder's
// classes) gets one too; see python_name.
const std::set<std::string> kReserved = {
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else",
    "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
    "return", "try", "while", "with", "yield", "match", "case",
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup", "BlockingIOError",
    "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError", "ConnectionAbortedError", "ConnectionError",
    "ConnectionRefusedError", "ConnectionResetError", "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning",
    "EnvironmentError", "Exception", "ExceptionGroup", "FileExistsError", "FileNotFoundError", "FloatingPointError",
    "FutureWarning", "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError", "IndexError",
    "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt", "LookupError", "MemoryError",
    "ModuleNotFoundError", "NameError", "NotADirectoryError", "NotImplemented", "NotImplementedError", "OSError",
    "OverflowError", "PendingDeprecationWarning", "PermissionError", "ProcessLookupError", "RecursionError", "ReferenceError",
    "ResourceWarning", "RuntimeError", "RuntimeWarning", "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning",
    "SystemError", "SystemExit", "TabError", "TimeoutError", "TypeError", "UnboundLocalError", "UnicodeDecodeError",
    "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError", "Warning",
    "ZeroDivisionError", "abs", "aiter", "all", "anext", "any", "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes",
    "callable", "chr", "classmethod", "compile", "complex", "copyright", "credits", "delattr", "dict", "dir", "divmod",
    "enumerate", "eval", "exec", "exit", "filter", "float", "format", "frozenset", "getattr", "globals", "hasattr", "hash",
    "help", "hex", "id", "input", "int", "isinstance", "issubclass", "iter", "len", "license", "list", "locals", "map", "max",
    "memoryview", "min", "next", "object", "oct", "open", "ord", "pow", "print", "property", "quit", "range", "repr", "reversed",
    "round", "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "vars", "zip",
    "torch", "F", "nn", "math", "einops", "self", "config", "layer_idx", "kwargs", "attention_mask", "PretrainedConfig",
    "PreTrainedModel", "DynamicCache", "GenerationMixin", "BaseModelOutputWithPast", "CausalLMOutputWithPast",
    "ALL_ATTENTION_FUNCTIONS", "eager_attention_forward",
    "builtins", "importlib", "os", "sys", "subprocess"};

// Whether the text is one parenthesized expression: the `(` it starts with closes at its end.
bool wrapped(const std::string& text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return false;
  return !pywrite::scan_code(text, false, [&](size_t i, int depth) { return depth == 0 && i + 1 < text.size(); });
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

}  // namespace

// `text` as an operand of a method call or an operator: unchanged when it is a name, a call, a
// number or already parenthesized, else in parentheses. (lowering.cpp uses it too.)
std::string python_atom(const std::string& text) {
  if (wrapped(text) || is_number_literal(text)) return text;
  bool compound = pywrite::scan_code(text, false, [&](size_t i, int depth) {
    char c = text[i];
    bool bracket = c == '(' || c == '[' || c == '{' || c == ')' || c == ']' || c == '}';
    return depth == 0 && !bracket && !(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.');
  });
  return compound ? "(" + text + ")" : text;
}

// An expression where any expression may stand (an argument, a right-hand side): without the
// parentheses that only an operand would need.
std::string python_bare(const std::string& text) {
  if (!wrapped(text)) return text;
  bool tuple = pywrite::scan_code(text, false, [&](size_t i, int depth) { return text[i] == ',' && depth == 1; });
  return tuple ? text : text.substr(1, text.size() - 2);  // a tuple keeps its parentheses
}

namespace {

// Whether `name` has the form the `ss` prefix writes: `ss` any number of times, then `prefix`.
bool has_ss_form(const std::string& name, std::string_view prefix) {
  size_t at = 0;
  while (name.compare(at, 2, "ss") == 0) at += 2;
  return name.compare(at, prefix.size(), prefix) == 0;
}

// `name` without the `_`s at its end, which the suffix rule writes.
std::string without_trailing_underscores(const std::string& name) {
  size_t last = name.find_last_not_of('_');
  return last == std::string::npos ? name : name.substr(0, last + 1);
}

}  // namespace

// Each rule also applies to a name that already has the form it writes (`ss_x` → `ssss_x`,
// `lambda_` → `lambda__`), so two different names never become one.
std::string python_name(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (has_ss_form(out, "_")) return "ss" + out;  // the generators' helpers start with `_`; no dunder either
  std::string stem = without_trailing_underscores(out);
  if (kReserved.count(stem) || stem.starts_with("ShapeScript")) out += "_";
  return out;
}

std::string python_attribute(const std::string& name) {
  static const std::set<std::string> keywords = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else", "except",
      "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
      "while", "with", "yield"};
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (has_ss_form(out, "__")) return "ss" + out;
  if (keywords.count(without_trailing_underscores(out))) out += "_";
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

using namespace pywrite;

class Generator : public PythonWriter {
 public:
  Generator(const Analysis& analysis, PythonImports python_imports)
      : PythonWriter(analysis), python_imports_(python_imports), hoist_(plan_hoisting(analysis)) {}

  GeneratedModule run() {
    std::ostringstream body;
    for (const Item& item : a_.program.items) {
      if (item.kind == Item::Kind::dim) {
        auto value = a_.semantics.dims.find(item.name);
        if (value != a_.semantics.dims.end()) constants_ << python_name(item.name) << " = " << value->second << "\n";
      } else if (item.kind == Item::Kind::python_import) {
        if (python_imports_ == PythonImports::left_out) continue;
        std::string module;  // each part a Python name: a keyword can't break the line
        for (size_t begin = 0; begin <= item.name.size();) {
          size_t end = std::min(item.name.find('.', begin), item.name.size());
          module += (module.empty() ? "" : ".") + python_attribute(item.name.substr(begin, end - begin));
          begin = end + 1;
        }
        imports_.insert("import " + module);
      } else if (item.kind == Item::Kind::model) {
        body << "\n\n" << model_class(item);
      } else if (item.kind == Item::Kind::function) {
        body << "\n\n" << function(item);
      } else if (item.kind == Item::Kind::extern_fn) {
        // Only a target the checker allows (E0207) is written; its module is imported.
        if (is_allowed_extern_target(item.extern_target)) imports_.insert("import " + extern_module(item.extern_target));
      }
    }
    GeneratedModule module;
    module.uses_einops = uses_einops_;
    std::ostringstream out;
    out << "# Generated by ShapeScript from " << comment_text(file_name(a_.file.path())) << ": plain PyTorch. Edit the .ss file, not this one.\n";
    // Only the imports the code uses, standard library first, as a person would write them.
    std::string code = body.str();
    std::vector<std::string> imports;
    if (uses_name(code, "math.")) imports.push_back("import math");
    for (const std::string& line : imports_)
      if (line != "import math" && line != "import torch") imports.push_back(line);
    imports.push_back("");
    imports.push_back("import torch");
    if (uses_name(code, "F.") || uses_name(code, "_attention")) imports.push_back("import torch.nn.functional as F");
    if (uses_name(code, "nn.")) imports.push_back("from torch import nn");
    if (uses_einops_) imports.push_back("import einops");
    if (imports.front().empty()) imports.erase(imports.begin());
    for (const std::string& line : imports) out << line << "\n";
    std::string constants = constants_.str();
    if (!constants.empty()) out << "\n" << constants;
    if (uses_name(code, "_ss_mode")) out << "\n" << mode_definition;
    // Helpers only where the code calls them (`causal[n n]` in attention becomes is_causal=True).
    if (uses_causal_ && uses_name(body.str(), "_causal")) out << "\n\n" << causal_definition;
    if (uses_name(body.str(), "_within_window")) out << "\n\n" << within_window_definition;
    if (uses_name(body.str(), "_attention")) out << "\n\n" << attention_definition;
    if (uses_check_number_) {
      out << "\n\ndef _check_number(x, bound, written):\n"
             "    # An `as` on a plain number (a block's index): checked while the program is traced.\n"
             "    if bound is not None and not 0 <= x < bound:\n"
             "        raise ValueError(f\"expected {written}, got {x}\")\n"
             "    return x\n";
    }
    if (uses_name(body.str(), "_experts")) out << "\n\n" << experts_definition;
    if (uses_check_) {
      out << "\n\ndef _check_shape(x, sizes, written" << (uses_index_check_ ? ", below=None" : "") << "):\n"
             "    # An `as` assertion: torch.export learns the sizes, and the program checks them when it runs.\n"
             "    torch._check(x.dim() == len(sizes), lambda: f\"expected {written}, got shape {tuple(x.shape)}\")\n"
             "    for axis, size in enumerate(sizes):\n"
             "        if size is not None:\n"
             "            torch._check(x.shape[axis] == size, lambda: f\"expected {written}, got shape {tuple(x.shape)}\")\n";
      if (uses_index_check_)
        out << "    if below is not None:\n"
               "        # `as .. Index[N]`: each value an index below N. Checked on the device without waiting for it,\n"
               "        # and kept, message and all, by torch.export.\n"
               "        torch._assert_async(((x >= 0) & (x < below)).all(), f\"expected {written}: an index is outside 0..{below - 1}\")\n";
      out << "    return x\n";
    }
    out << body.str();
    module.python = out.str();
    return module;
  }

 private:
  PythonImports python_imports_;
  std::set<std::string> imports_;
  std::ostringstream constants_;
  bool uses_check_ = false;
  bool uses_index_check_ = false;  // an `as .. Index[N]` whose values need checking
  bool uses_check_number_ = false;
  std::set<std::string> signature_axes_;  // generic axes of the function being written
  std::set<std::string> item_names_;
  int temporaries_ = 0;  // per function
  // Layer-invariant work (emit/hoist.h): each version of a function is written twice, as
  // `_prepare_f_N` (what reads only the invariant arguments, computed once before the loop) and
  // `_hoisted_f_N` (the rest, reading those values from its last argument, `_prepared`).
  HoistPlan hoist_;
  const HoistedFunction* version_ = nullptr;  // the `_hoisted_` version being written
  const HoistedLoop* loop_ = nullptr;         // the loop being written, and its prepared values' names
  std::vector<std::string> loop_prepared_;

  // ---------------------------------------------------------------------------------------------
  // Models

  std::string model_class(const Item& item) {
    std::ostringstream out;
    out << "class " << python_name(item.name) << "(nn.Module):\n";
    if (!item.doc.empty()) out << "    " << docstring(item.doc, 1) << "\n\n";
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
    std::string out = function_text(item, nullptr, false);
    for (size_t v : hoist_.versions_of(&item)) {
      out += "\n\n" + function_text(item, &hoist_.functions[v], true);
      out += "\n\n" + function_text(item, &hoist_.functions[v], false);
    }
    return out;
  }

  std::string version_name(size_t v, bool prepare) const {
    return std::string(prepare ? "_prepare_" : "_hoisted_") + python_name(hoist_.functions[v].function->name) + "_" + std::to_string(v + 1);
  }


  // `item` as written, or a version of it: with `prepare`, what reads only its invariant parameters,
  // returned as a tuple; else the rest, which reads those values from `_prepared`.
  std::string function_text(const Item& item, const HoistedFunction* version, bool prepare) {
    locals_.clear();
    needed_axes_.clear();
    temporaries_ = 0;
    auto types = a_.semantics.functions.find(&item);
    // A `_prepare_` version takes the invariant parameters, a `_hoisted_` one those it still reads.
    auto kept = [&](size_t i) {
      if (!version) return true;
      const std::vector<bool>& mask = prepare ? version->invariant : version->takes;
      return i < mask.size() && mask[i];
    };
    // The generic axes the inputs carry: the only sizes a function body can read from shapes.
    signature_axes_.clear();
    if (types != a_.semantics.functions.end())
      for (size_t i = 0; i < types->second->parameters.size(); ++i)
        if (const ValueType& t = types->second->parameters[i]; t.is_tensor() && kept(i))
          for (const Axis& axis : t.tensor.axes)
            for (const std::string& v : axis.size.variables()) signature_axes_.insert(v);
    std::vector<std::string> parameters;
    for (size_t i = 0; i < item.parameters.size(); ++i) {
      if (!kept(i)) continue;
      parameters.push_back(python_name(item.parameters[i].name));
      locals_.insert(item.parameters[i].name);
    }
    if (version && !prepare) parameters.push_back("_prepared");
    std::vector<std::pair<std::string, const ValueType*>> typed;
    if (types != a_.semantics.functions.end())
      for (size_t i = 0; i < item.parameters.size(); ++i)
        if (kept(i)) typed.push_back({python_name(item.parameters[i].name), &types->second->parameters[i]});
    anchor_ = anchor_of(typed);
    std::string body;
    if (!item.body) {
      body = "    pass\n";
    } else if (!version) {
      body = block(*item.body, 1);
    } else if (prepare) {
      for (const Statement& s : item.body->statements)
        if (version->statements.count(&s)) body += statement(s, 1);
      std::vector<std::string> values;
      for (const HoistedFunction::Slot& slot : version->slots)
        values.push_back(slot.value ? python_bare(expression(*slot.value))
                                    : version_name(slot.callee, true) + "(" + prepared_arguments(*slot.call, hoist_.functions[slot.callee].invariant) + ")");
      body += line(1, "return (" + join(values) + (values.size() == 1 ? ",)" : ")"));
    } else {
      for (auto& [e, slot] : version->slot_of)
        if (version->slots[slot].value) substitutes_[e] = "_prepared[" + std::to_string(slot) + "]";
      skipped_ = version->statements;
      version_ = version;
      body = block(*item.body, 1);
      version_ = nullptr;
      skipped_.clear();
      for (auto& [e, slot] : version->slot_of) substitutes_.erase(e);
    }
    std::ostringstream out;
    out << "def " << (version ? version_name(static_cast<size_t>(version - hoist_.functions.data()), prepare) : python_name(item.name)) << "(";
    for (size_t i = 0; i < parameters.size(); ++i) out << (i ? ", " : "") << parameters[i];
    out << "):\n";
    std::string doc = file_name(a_.file.path()) + ": " + signature_line(item) + (item.doc.empty() ? "" : "\n\n" + item.doc);
    if (version)
      doc = file_name(a_.file.path()) + ": `" + item.name + "`" +
            (prepare ? ", what reads only the arguments a loop doesn't change, computed once before it"
                     : " in a loop, with what reads only the arguments the loop doesn't change computed once (`_prepared`)");
    out << "    " << docstring(doc, 1) << "\n";
    out << axis_reads(typed, body, 1);
    out << body;
    return out.str();
  }

  const std::set<std::string>& item_names() {
    if (item_names_.empty())
      for (const Item& item : a_.program.items) item_names_.insert(item.name);
    return item_names_;
  }

  static bool returns(const Block* b) {
    return b && !b->statements.empty() && b->statements.back().kind == Statement::Kind::return_;
  }

  // Whether a statement of `b` calls the built-in `name`; a nested `for` is a loop of its own
  // (the innermost loop that calls `update` is the training loop).
  bool calls_builtin(const Block* b, std::string_view name) const {
    if (!b) return false;
    auto is_call = [&](const Expr& e) {
      const CallFacts* facts = facts_of(e);
      return facts && facts->builtin && facts->builtin->name == name ? Walk::stop : Walk::into;
    };
    auto own_loop = [](const Statement& s) { return s.kind == Statement::Kind::for_ ? Walk::skip : Walk::into; };
    return !for_each_expr(*b, is_call, own_loop);
  }

  std::string for_statement(const Statement& s, int depth) override {
    std::string start = s.value ? expression(*s.value) : "0";
    std::string end = s.end ? expression(*s.end) : "0";
    std::string variable = python_name(s.variable);
    if (calls_builtin(s.body.get(), "update")) {
      // A training loop: the runtime resumes it where a run stopped, shows progress, stops on Ctrl-C.
      locals_.insert(s.variable);
      return indent(depth) + "for " + variable + " in _ss_train.steps(" + python_bare(start) + ", " + python_bare(end) + "):\n" +
             (s.body ? block(*s.body, depth + 1) : "");
    }
    bool fixed = s.value && s.end && is_static(*s.value) && is_static(*s.end);
    if (fixed) {
      // What the body's calls compute from values the loop doesn't change, computed once before it.
      std::string prepared;
      const HoistedLoop* outer = loop_;
      std::vector<std::string> outer_prepared = std::move(loop_prepared_);
      loop_prepared_.clear();
      loop_ = nullptr;
      if (auto planned = hoist_.loops.find(&s); planned != hoist_.loops.end() && s.body) {
        for (const HoistedLoop::Prepared& p : planned->second.prepared) {
          std::string name = "_prepared" + std::to_string(++temporaries_);
          prepared += line(depth, name + " = " + version_name(p.callee, true) + "(" + prepared_arguments(*p.call, hoist_.functions[p.callee].invariant) + ")");
          loop_prepared_.push_back(name);
        }
        loop_ = &planned->second;
      }
      // Unrolled while tracing: torch.export records each iteration.
      locals_.insert(s.variable);
      std::string range = python_bare(start) == "0" ? python_bare(end) : python_bare(start) + ", " + python_bare(end);
      std::string out = prepared + indent(depth) + "for " + variable + " in range(" + range + "):\n" + (s.body ? block(*s.body, depth + 1) : "");
      loop_ = outer;
      loop_prepared_ = std::move(outer_prepared);
      return out;
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
    std::string initial = "torch.tensor(" + python_bare(start) + (anchor_.device.empty() ? "" : ", device=" + anchor_.device) + ")";
    for (const std::string& c : carried) initial += ", " + c;
    if (carried.empty()) initial += ",";
    std::string targets = "_";
    for (const std::string& c : carried) targets += ", " + c;
    out += indent(depth) + targets + " = torch.while_loop(_cond" + id + ", _body" + id + ", (" + initial + "))\n";
    return out;
  }

  std::string if_statement(const Statement& s, int depth) override {
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

  std::string as_expression(const Expr& e) override {
    std::string value = expression(*e.operands[0]);
    const ValueType* type = type_of(e);
    if (!type || !type->is_tensor() || !e.type) return value;
    if (type->fixed) {
      // A plain number (`(2 * p) as Index[L]`) has no shape: its value is checked as the program is traced.
      uses_check_number_ = true;
      const ElementType& element = type->tensor.element;
      std::string bound = element.kind == ElementKind::index ? computed_size(element.bound) : "None";
      std::string written(a_.file.slice(e.type->span));
      return "_check_number(" + python_bare(value) + ", " + bound + ", " + quote(written) + ")";
    }
    uses_check_ = true;
    std::string sizes;
    for (size_t i = 0; i < e.type->axes.size(); ++i) {
      const SizeNode& node = e.type->axes[i];
      bool checkable = node.kind != SizeNode::Kind::unknown;
      // A name the assertion introduces is bound by it, not checked: no input's shape holds it.
      if (node.kind == SizeNode::Kind::name && !a_.semantics.dims.count(node.name)) {
        const SizeExpr& size = type->tensor.axes[i].size;
        checkable = !(size == SizeExpr::variable(node.name) && !locals_.count(node.name) && !signature_axes_.count(node.name));
      }
      sizes += (sizes.empty() ? "" : ", ") + (checkable ? computed_size(type->tensor.axes[i].size) : std::string("None"));
    }
    if (e.type->axes.size() == 1) sizes += ",";
    std::string written(a_.file.slice(e.type->span));
    // Values asserted to be `Index[N]` are checked too, unless they were already: an index out of
    // range would otherwise fail later, as a bare IndexError far from the `as`. (Not under `map`'s
    // torch.vmap, which has no batching rule for the check.)
    const ElementType& element = type->tensor.element;
    const ValueType* before = type_of(*e.operands[0]);
    bool proven = before && before->is_tensor() && before->tensor.element.kind == ElementKind::index && before->tensor.element.bound == element.bound;
    if (element.kind == ElementKind::index && !element.bound.is_zero() && !proven && lambda_depth_ == 0) {
      uses_index_check_ = true;
      return "_check_shape(" + value + ", (" + sizes + "), " + quote(written) + ", below=" + computed_size(element.bound) + ")";
    }
    return "_check_shape(" + value + ", (" + sizes + "), " + quote(written) + ")";
  }


  // ---- PythonWriter's hooks

  std::string attribute(const Expr& e) override {
    return python_atom(expression(*e.operands[0])) + "." + (type_of(*e.operands[0]) && type_of(*e.operands[0])->kind == ValueType::Kind::model ? python_name(e.text) : e.text);
  }

  bool name_taken(const std::string& name) override {
    return locals_.count(name) || a_.semantics.dims.count(name) || item_names().count(name);
  }

  // A dim by its name (`(D,)`), other sizes as computed.
  std::optional<std::string> over_size(const Axis& over) override {
    if (a_.semantics.dims.count(over.label)) return python_name(over.label);
    return PythonWriter::over_size(over);
  }

  std::string function_call(const Expr& e, const Item& item, const std::vector<std::string>& args) override {
    // A target the checker refuses (E0207) never reaches the code: the call is `None(...)`, which fails.
    if (item.kind == Item::Kind::extern_fn) return (is_allowed_extern_target(item.extern_target) ? item.extern_target : "None") + "(" + join(args) + ")";
    // A call whose invariant work was computed once: its version, given those values.
    if (version_)
      if (auto slot = version_->slot_of.find(&e); slot != version_->slot_of.end() && !version_->slots[slot->second].value) {
        size_t callee = version_->slots[slot->second].callee;
        std::vector<std::string> taken = taken_arguments(args, hoist_.functions[callee].takes);
        taken.push_back("_prepared[" + std::to_string(slot->second) + "]");
        return version_name(callee, false) + "(" + join(taken) + ")";
      }
    if (loop_)
      if (auto p = loop_->prepared_of.find(&e); p != loop_->prepared_of.end()) {
        size_t callee = loop_->prepared[p->second].callee;
        std::vector<std::string> taken = taken_arguments(args, hoist_.functions[callee].takes);
        taken.push_back(loop_prepared_[p->second]);
        return version_name(callee, false) + "(" + join(taken) + ")";
      }
    return python_name(item.name) + "(" + join(args) + ")";
  }

  // A call through `import python`: written as it was.
  std::string python_call(const Expr& e, const std::vector<std::string>& args, const std::map<std::string, std::string>& keywords) override {
    std::string callee = e.operands.empty() ? "None" : expression(*e.operands[0]);
    std::vector<std::string> all = args;
    for (auto& [k, v] : keywords) all.push_back(k + "=" + v);
    return callee + "(" + join(all) + ")";
  }
};

}  // namespace

GeneratedModule generate_python(const Analysis& analysis, PythonImports python_imports) {
  return Generator(analysis, python_imports).run();
}

}  // namespace ss
