// What the code generators write for a file, for the emit goldens (tests/golden/run.py --emit):
//   golden_emit FILE python          the PyTorch module (what `shapescript.compile` and export run)
//   golden_emit FILE hf-modeling FN  modeling_shapescript.py of `export --hf` with FN as the forward
//   golden_emit FILE hf-config FN    configuration_shapescript.py of the same
// A file with errors prints them and exits 1, as `shapescript check` would. Code that breaks the
// generators' invariant (pywrite::is_generator_safe) is printed too, and the exit status is 3.
#include <fstream>
#include <iostream>
#include <sstream>

#include "check/analysis.h"
#include "emit/codegen.h"
#include "emit/codegen_hf.h"
#include "emit/python_writer.h"
#include "model/model_layout.h"
#include "diagnostics/render.h"

int main(int argc, char** argv) {
  std::string mode = argc > 2 ? argv[2] : "";
  if (!(argc == 3 && mode == "python") && !(argc == 4 && (mode == "hf-modeling" || mode == "hf-config"))) {
    std::cerr << "usage: golden_emit FILE python | FILE hf-modeling FN | FILE hf-config FN\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "error: can't read `" << argv[1] << "`\n";
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  ss::AnalyzeOptions options;
  if (mode != "python") {  // as `export --hf` without --vllm
    options.serving_severity = ss::Severity::information;
    options.serving_function = argv[3];
  }
  auto analysis = ss::analyze(ss::SourceFile(argv[1], text.str()), options);
  if (analysis->has_errors()) {
    for (const ss::Diagnostic& d : analysis->diagnostics)
      if (d.severity == ss::Severity::error) std::cout << ss::render_diagnostic(analysis->file, d, {});
    return 1;
  }
  auto print = [](const std::string& python) {
    std::cout << python;
    if (ss::pywrite::is_generator_safe(python)) return 0;
    std::cerr << "error: the generated code breaks the generators' invariant (is_generator_safe)\n";
    return 3;
  };
  if (mode == "python") return print(ss::generate_python(*analysis).python);
  ss::HfModel model = ss::generate_hf(*analysis, ss::find_model_layout(*analysis, argv[3]));
  if (!model.error.empty()) {
    std::cout << "error: can't write `" << argv[3] << "` as a Hugging Face model: " << model.error << "\n";
    return 1;
  }
  return print(mode == "hf-modeling" ? model.modeling : model.configuration);
}
