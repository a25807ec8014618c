#include "import_weights.h"

#include <filesystem>
#include <iostream>

#include "export.h"

namespace ss {

int run_import_weights(const ImportOptions& options) {
  int status = 0;
  auto analysis = checked_file(options.file, {}, options.color, status);
  if (!analysis) return status;
  const std::string& function = options.function;
  const std::string failed = "error: importing `" + options.folder + "` failed: ";
  namespace fs = std::filesystem;
  if (!fs::exists(options.folder)) {
    std::cerr << "error: can't read `" << options.folder << "`: no such folder\n";
    return 2;
  }
  if (!fs::is_directory(options.folder)) {
    std::cerr << "error: `" << options.folder << "` isn't a folder: a Hugging Face model is a folder with config.json and *.safetensors\n";
    return 2;
  }
  fs::path output = fs::absolute(options.output);
  if (!fs::is_directory(output.parent_path())) {
    std::cerr << "error: can't write `" << options.output << "`: the folder `" << output.parent_path().string() << "` does not exist\n";
    return 2;
  }
  ModelLayout layout = find_model_layout(*analysis, function);
  HfModel model = generate_hf(*analysis, layout);
  if (!model.error.empty()) {
    std::cerr << "error: can't import weights for `" << function << "`: " << model.error << "\n";
    return 1;
  }
  if (!model.causal_lm) {
    std::cerr << "error: can't import weights for `" << function << "`: the folder's model is checked by its logits, and `" << function
              << "` isn't a language model's forward (it must take a model and token ids, embed them and end with an output layer)\n";
    return 1;
  }
  if (model.parameters.empty()) {
    std::cerr << "error: `" << function << "`'s model has no params: there is nothing to import\n";
    return 1;
  }
  nlohmann::json spec = language_model_spec(*analysis, layout, model, function);
  spec.update({{"folder", fs::absolute(options.folder).string()},
               {"folder_name", options.folder},
               {"output", output.string()},
               {"output_name", options.output}});
  ExportOptions run_options;
  run_options.python = options.python;
  run_options.verbose = options.verbose;
  std::cerr << "importing " << options.folder << " onto `" << model.model_name << "` with " << choose_python(options.python) << "...\n";
  // Live: the search's progress lines as they come.
  auto result = run_runtime("import_weights.py", spec, run_options, failed, true, true);
  if (!result) return 1;
  try {
    const nlohmann::json& reply = result->reply;
    std::string readings;
    for (auto& [how, count] : reply.at("readings").items())
      readings += (readings.empty() ? "" : ", ") + how + " " + std::to_string(count.get<int64_t>());
    char difference[32];
    std::snprintf(difference, sizeof difference, "%.1e", reply.at("difference").get<double>());
    std::cout << "wrote " << options.output << ": " << reply.at("tensors").get<int64_t>() << " tensors of " << options.folder << " into "
              << reply.at("params").get<int64_t>() << " params of `" << model.model_name << "` (" << (readings.empty() ? "read as stored" : readings)
              << "); logits agree with transformers' to " << difference << " of the largest\n";
    if (!reply.at("unused").empty()) {
      std::cerr << "note: tensors of " << options.folder << " no param needed:";
      for (const auto& name : reply.at("unused")) std::cerr << " " << name.get<std::string>();
      std::cerr << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << failed << "the runtime's reply isn't what was expected: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace ss
