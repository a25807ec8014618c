// The `shapescript._core` extension: the C++ core, seen from Python. Only python/ knows Python.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fstream>
#include <sstream>

#include "check/analysis.h"
#include "emit/codegen.h"
#include "export.h"
#include "diagnostics/render.h"

namespace py = pybind11;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw py::value_error("can't read `" + path + "`");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

py::dict diagnostic_dict(const ss::Analysis& analysis, const ss::Diagnostic& d) {
  ss::LineColumn begin = analysis.file.line_column(d.primary.span.begin);
  py::dict out;
  out["code"] = std::string(ss::info(d.code).code);
  out["severity"] = d.severity == ss::Severity::error ? "error" : d.severity == ss::Severity::warning ? "warning" : "information";
  out["message"] = d.message;
  out["file"] = analysis.file.path();
  out["line"] = begin.line + 1;
  out["column"] = begin.column + 1;
  out["label"] = d.primary.text;
  out["notes"] = d.notes;
  out["helps"] = d.helps;
  out["rendered"] = ss::render_diagnostic(analysis.file, d);
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "ShapeScript's checker and code generator";
  m.def(
      "check",
      [](const std::string& path, std::optional<std::string> text) {
        auto analysis = ss::analyze(ss::SourceFile(path, text ? *text : read_text(path)));
        py::list diagnostics;
        for (const ss::Diagnostic& d : analysis->diagnostics) diagnostics.append(diagnostic_dict(*analysis, d));
        return diagnostics;
      },
      py::arg("path"), py::arg("text") = py::none(), "Checks a file; returns its diagnostics as dicts.");
  m.def(
      "export_spec",
      [](const std::string& path, const std::string& function, const std::string& output, const std::string& format,
         const std::string& weights) {
        ss::AnalyzeOptions options;
        options.model_forward = function;
        auto analysis = ss::analyze(ss::SourceFile(path, read_text(path)), options);
        py::dict result;
        py::list diagnostics;
        for (const ss::Diagnostic& d : analysis->diagnostics) diagnostics.append(diagnostic_dict(*analysis, d));
        result["diagnostics"] = diagnostics;
        result["spec"] = py::none();
        if (analysis->has_errors()) return result;
        for (const ss::ExportSignature& e : analysis->exports)
          if (e.function == function) {
            ss::GeneratedModule module = ss::generate_python(*analysis, ss::PythonImports::left_out);
            result["spec"] = ss::export_spec(*analysis, e, module, output, format, weights).dump();
          }
        py::list names;
        for (const ss::ExportSignature& e : analysis->exports) names.append(e.function);
        result["exports"] = names;
        return result;
      },
      py::arg("path"), py::arg("function"), py::arg("output"), py::arg("format") = "pt2", py::arg("weights") = "",
      "Checks a file and returns the export spec (JSON text) of one export fn, or its diagnostics.");
  m.def(
      "generate_python",
      [](const std::string& path, std::optional<std::string> text) {
        auto analysis = ss::analyze(ss::SourceFile(path, text ? *text : read_text(path)));
        py::dict result;
        py::list diagnostics;
        for (const ss::Diagnostic& d : analysis->diagnostics) diagnostics.append(diagnostic_dict(*analysis, d));
        result["diagnostics"] = diagnostics;
        result["python"] = analysis->has_errors() ? py::object(py::none()) : py::object(py::str(ss::generate_python(*analysis).python));
        return result;
      },
      py::arg("path"), py::arg("text") = py::none(),
      "Checks a file and returns its PyTorch code (every fn and model), or its diagnostics.");
}
