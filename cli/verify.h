// `shapescript verify FILE`: every artifact of a model's forward, run in its engine on the same
// inputs and compared with the compiled forward, in one table.
#pragma once
#include <string>

namespace ss {

struct VerifyOptions {
  std::string file;
  std::string function = "forward";
  std::string weights;    // a checkpoint; empty: the initializers
  std::string artifacts;  // where the artifacts are kept (those already there are checked as they are); empty: a temporary folder
  std::string python;     // the Python with torch (default: the active virtualenv's, then python3)
  std::string vllm_venv;  // vLLM's venv (default: $SHAPESCRIPT_VLLM_VENV, then ~/.cache/shapescript/vllm-venv)
  bool verbose = false;
  std::string color = "auto";
};

// Exit status: 0 every engine agrees, 1 one disagrees or the file has errors, 2 usage.
int run_verify(const VerifyOptions& options, const char* argv0);

}  // namespace ss
