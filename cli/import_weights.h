// `shapescript import-weights FILE HF_DIR -o ckpt.pt`: a Hugging Face folder's weights as the
// model's parameters, the mapping found by search and checked against transformers' logits.
#pragma once
#include <string>

namespace ss {

struct ImportOptions {
  std::string file;
  std::string folder;
  std::string output;
  std::string function = "forward";
  std::string python;
  bool verbose = false;
  std::string color = "auto";
};

// Exit status: 0 imported, 1 the file has errors or no reading agrees, 2 usage (unreadable file, no such folder).
int run_import_weights(const ImportOptions& options);

}  // namespace ss
