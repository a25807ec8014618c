#include "import_weights.h"

#include <filesystem>
#include <iostream>

#include "export.h"
#include "files.h"
#include "process.h"

namespace ss {

int run_import_weights(const ImportOptions& options) {
  if (!refuse_overwriting_inputs({options.file, options.folder}, {{options.output}})) return kExitFiles;
  int status = 0;
  auto analysis = checked_file(options.file, {}, options.color, status);
  if (!analysis) return status;
  const std::string& function = options.function;
  const std::string failed = "error: importing `" + options.folder + "` failed: ";
  namespace fs = std::filesystem;
  std::error_code unreadable;
  fs::file_status folder = fs::status(options.folder, unreadable);
  if (!fs::exists(folder)) {
    std::cerr << "error: can't read `" << options.folder << "`: " << (unreadable && folder.type() != fs::file_type::not_found ? unreadable.message() : "no such folder") << "\n";
    return 2;
  }
  if (!fs::is_directory(folder)) {
    std::cerr << "error: `" << options.folder << "` isn't a folder: a Hugging Face model is a folder with config.json and *.safetensors\n";
    return 2;
  }
  InterruptScope interrupts;
  StagedOutput staged;
  if (std::string error; !staged.prepare({options.output}, error)) {
    std::cerr << "error: can't write `" << options.output << "`: " << error << "\n";
    return kExitFiles;
  }
  ModelLayout layout = describe_model(*analysis, function);
  // An encoder (BERT, ViT) is checked by its last hidden state, a language model by its logits.
  std::string why_not = why_not_described_model(*analysis, layout);
  if (!why_not.empty()) {
    std::cerr << "error: can't import weights for `" << function << "`: the folder's model is checked by its logits: " << why_not << "\n";
    return 1;
  }
  // The weights and the compiled forward are all it needs: not the Hugging Face generator's translation.
  LanguageModelFacts model = language_model_facts(*analysis, layout);
  if (!model.error.empty()) {
    std::cerr << "error: can't import weights for `" << function << "`: " << model.error << "\n";
    return 1;
  }
  if (model.parameters.empty()) {
    std::cerr << "error: `" << function << "`'s model has no params: there is nothing to import\n";
    return 1;
  }
  nlohmann::json spec = language_model_spec(*analysis, layout, model, function);
  spec.update({{"folder", fs::absolute(options.folder, unreadable).string()},
               {"folder_name", options.folder},
               {"output", staged.path().string()},
               {"output_name", options.output}});
  ExportOptions run_options;
  run_options.python = options.python;
  run_options.verbose = options.verbose;
  std::cerr << "importing " << options.folder << " onto `" << model.model_name << "` with " << choose_python(options.python) << "...\n";
  // Live: the search's progress lines as they come.
  auto result = run_runtime("import_weights.py", spec, run_options, failed, true, RuntimeMode::progress, &status);
  if (!result) return status;
  std::string error;
  if (!staged.written({}, error)) {
    std::cerr << failed << "`" << choose_python(options.python) << "` exited with exit status: 0 but " << error << "\n";
    return 1;
  }
  if (int signal = interrupted()) return 128 + signal;
  if (!staged.commit(error)) {
    std::cerr << "error: can't write `" << options.output << "`: " << error << "\n";
    return kExitFiles;
  }
  try {
    const nlohmann::json& reply = result->reply;
    std::string readings;
    for (auto& [how, count] : reply.at("readings").items())
      readings += (readings.empty() ? "" : ", ") + how + " " + std::to_string(count.get<int64_t>());
    char difference[32];
    std::snprintf(difference, sizeof difference, "%.1e", reply.at("difference").get<double>());
    std::cout << "wrote " << options.output << ": " << reply.at("tensors").get<int64_t>() << " tensors of " << options.folder << " into "
              << reply.at("params").get<int64_t>() << " params of `" << model.model_name << "` (" << (readings.empty() ? "read as stored" : readings)
              << "); " << (model.encoder ? "the last hidden state agrees" : "logits agree") << " with transformers' to " << difference << " of the largest\n";
    // What the agreement rests on: the tokens compared, and how far the nearest other reading was.
    const nlohmann::json& tokens = reply.at("tokens");
    int64_t forwards = reply.at("forwards").get<int64_t>();
    std::cout << "compared " << tokens.at(0).get<int64_t>() << " rows of " << tokens.at(1).get<int64_t>() << " tokens in " << forwards
              << (forwards == 1 ? " forward" : " forwards");
    if (const nlohmann::json& runner_up = reply.at("runner_up"); runner_up.is_null()) {
      std::cout << "; no other reading was tried\n";
    } else {
      std::snprintf(difference, sizeof difference, "%.1e", runner_up.at("difference").get<double>());
      std::cout << "; the runner-up (" << runner_up.at("mapping").get<std::string>() << ") differed by " << difference
                << " of the largest " << (model.encoder ? "value" : "logit") << "\n";
    }
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
