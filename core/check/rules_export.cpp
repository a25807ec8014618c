// E17xx: what an exported function, and everything it calls, may do. torch.export records torch
// operations only, so Python, models and training constructs are refused where they are used.
#include <deque>
#include <set>

#include "check/extern_targets.h"
#include "check/check_internal.h"

namespace ss {

namespace {

// The closing parenthesis of a function's parameter list, found in the text after its name.
std::optional<uint32_t> parameter_list_end(const std::string& text, const Item& fn) {
  size_t open = text.find('(', fn.name_span.end);
  if (open == std::string::npos) return std::nullopt;
  int depth = 0;
  for (size_t i = open; i < text.size() && i < fn.span.end; ++i) {
    if (text[i] == '(' || text[i] == '[') ++depth;
    if (text[i] == ')' || text[i] == ']') --depth;
    if (depth == 0) return static_cast<uint32_t>(i);
  }
  return std::nullopt;
}

// A parameter name for a Python value: `torch.load("w_qkv.pt")` suggests `w_qkv`.
std::string parameter_name_for(const Expr* call) {
  if (call)
    for (const Argument& argument : call->arguments)
      if (argument.value && argument.value->kind == Expr::Kind::string) {
        std::string name;
        for (char c : argument.value->text.substr(argument.value->text.find_last_of('/') + 1)) {
          if (c == '.') break;
          name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
        }
        if (!name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]))) return name;
      }
  return "value";
}

}  // namespace

bool Checker::exported_root(const Item& item) const {
  if (item.kind != Item::Kind::function) return false;
  if (item.exported) return true;
  if (item.name != options_.model_forward) return false;
  const FunctionSignature& signature = this->signature(&item);
  return !signature.parameters.empty() && signature.parameters[0].kind == ValueType::Kind::model;
}

void Checker::check_export_rules() {
  std::set<std::pair<uint32_t, DiagnosticCode>> reported;
  const std::string& source = a_.file.text();
  for (const Item& root : a_.program.items) {
    if (!exported_root(root)) continue;
    const FunctionSignature& signature = this->signature(&root);
    for (size_t i = 0; i < signature.parameters.size(); ++i) {
      const ValueType& type = signature.parameters[i];
      if (type.kind == ValueType::Kind::model && !root.exported && i == 0) continue;  // a model forward's weights
      if (type.kind == ValueType::Kind::model) {
        report(DiagnosticCode::E1702, root.parameters[i].type.span, "`" + root.name + "` takes the model `" + type.name + "`, which an exported function can't use")
            .label("a model").note("an exported program is for inference: its weights are inputs or constants, not a model")
            .help("pass the parameters it needs as tensors, or export the model with `--hf`");
      } else if (!type.is_tensor() && !type.is_unknown()) {
        error(DiagnosticCode::E1705, root.parameters[i].type.span, "an exported function takes tensors, but `" + root.parameters[i].name + "` is " + type.to_string(),
              "not a tensor");
      } else if (type.is_tensor()) {
        // Each input axis becomes a torch.export Dim, a derived dim (scale * dim + offset) or a fixed size.
        for (size_t a = 0; a < type.tensor.rank() && a < root.parameters[i].type.axes.size(); ++a) {
          const Axis& axis = type.tensor.axes[a];
          if (export_axis(axis).kind != ExportAxis::Kind::product) continue;
          report(DiagnosticCode::E1705, root.parameters[i].type.axes[a].span, "`" + root.parameters[i].name + "`'s axis `" + axis.label + "` can't be an input size of an exported function")
              .label("not fixed, nor linear in one axis")
              .note("`torch.export` describes an input's size as a `Dim` or a derived dim such as `16*gh` or `n+1`; a product of sizes is neither")
              .help("take the axes apart, as in `[b gh gw D]`, and group them inside the function with `rearrange`");
          break;
        }
      }
    }
    if (!root.result) {
      report(DiagnosticCode::E1705, root.name_span, "the exported function `" + root.name + "` must declare its result type")
          .label("no `-> [..]`").note("`torch.export` records a program that returns a tensor, and the result type says which");
    }
    // Breadth first through everything `root` calls, remembering how each function was reached.
    std::map<const Item*, const Item*> reached_from{{&root, nullptr}};
    std::deque<const Item*> queue{&root};
    while (!queue.empty()) {
      const Item* fn = queue.front();
      queue.pop_front();
      std::string chain;
      for (const Item* at = fn; at; at = reached_from[at]) chain = "`" + at->name + "`" + (chain.empty() ? "" : " → " + chain);
      auto add_chain = [&](DiagnosticBuilder& d) {
        if (fn != &root) d.note("`" + fn->name + "` is reached from the exported function `" + root.name + "`: " + chain);
      };
      auto it = uses_.find(fn);
      if (it == uses_.end()) continue;
      for (const Use& use : it->second) {
        if (use.kind == Use::Kind::call) {
          if (use.callee && !reached_from.count(use.callee)) {
            reached_from[use.callee] = fn;
            queue.push_back(use.callee);
          }
          continue;
        }
        // Every `extern fn` names a torch or math function (E0207, for exported functions and the rest
        // alike), which torch.export records: calling one is always fine here.
        if (use.kind == Use::Kind::extern_call) continue;
        DiagnosticCode code = use.kind == Use::Kind::python ? DiagnosticCode::E1701 : DiagnosticCode::E1703;
        if (!reported.insert({use.span.begin, code}).second) continue;
        if (code == DiagnosticCode::E1701) {
          auto d = report(code, use.span, "`" + use.what + "` is Python, which an exported function can't use");
          d.label("runs Python")
              .note("`torch.export` records torch operations only, and code from `import python` could be anything")
              .help("pass the value in as a parameter, or declare a torch function with `extern fn`, as in "
                    "`extern fn erfc(x: Real) -> NonNeg = \"torch.special.erfc\"`");
          add_chain(d);
          if (fn == &root && use.asserted_type)
            if (auto end = parameter_list_end(source, root)) {
              std::string name = parameter_name_for(use.expr);
              std::string separator = root.parameters.empty() ? "" : ", ";
              d.fix("take `" + name + "` as a parameter", {{{*end, *end}, separator + name + ": " + *use.asserted_type}, {use.span, name}});
            }
          bool tensor_argument = false;
          if (use.expr)
            for (const Argument& argument : use.expr->arguments)
              if (argument.value) {
                auto type = a_.semantics.types.find(argument.value.get());
                tensor_argument = tensor_argument || (type && type->is_tensor() && type->tensor.rank() > 0);
              }
          if (tensor_argument && use.what.starts_with("torch.") && is_allowed_extern_target(use.what) && use.expr && !use.expr->operands.empty()) {
            std::string short_name = use.what.substr(use.what.rfind('.') + 1);
            uint32_t line_start = a_.file.offset_of({a_.file.line_column(fn->span.begin).line, 0});
            d.help("here that is `extern fn " + short_name + "(x: Real) -> Real = \"" + use.what + "\"`, called as `" + short_name + "`")
                .fix("declare `" + short_name + "` as an `extern fn` of `" + use.what + "`",
                     {{{line_start, line_start}, "extern fn " + short_name + "(x: Real) -> Real = \"" + use.what + "\"\n\n"},
                      {use.expr->operands[0]->span, short_name}});
          }
        } else {
          auto d = report(code, use.span, "`" + use.what + "` is for training, which an exported function can't do");
          d.label("training")
              .note("an exported program is for inference: modes, datasets, logs, gradients and optimizers belong to training, before export")
              .help("do this in the training code, and export a function that only computes");
          add_chain(d);
        }
      }
    }
  }
}

}  // namespace ss
