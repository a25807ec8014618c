#include "targets.h"

namespace ss {

const std::vector<ExportTarget>& export_targets() {
  static const std::vector<ExportTarget> targets = {
      {.key = "pt2", .what = "the .pt2 program", .artifact = "model.pt2", .write = write_program},
      {.key = "aoti",
       .option = "--aoti",
       .flag = true,
       .help = "write an AOTInductor package, compiled ahead of time (needs a C++ compiler)",
       .what = "the AOTInductor package (compiling C++, a minute or two)",
       .as = " as an AOTInductor package",
       .artifact = "model.aoti.pt2",
       .slow = "AOTInductor: compiling C++, this takes a while",
       .write = write_program},
      {.key = "hf",
       .option = "--hf",
       .help = "write the model's forward as a Hugging Face folder DIR",
       .what = "the Hugging Face folder",
       .artifact = "hf",
       .folder = true,
       .encoders = false,
       .tokenizer = true,
       .serving = true,
       .write = write_hf_folder},
      {.key = "gguf",
       .option = "--gguf",
       .help = "write the model as a GGUF FILE for llama.cpp, if it is one of llama.cpp's architectures",
       .what = "the GGUF file",
       .artifact = "model.gguf",
       .tokenizer = true,
       .write = write_gguf_file},
      {.key = "onnx",
       .option = "--onnx",
       .help = "write an `export fn` (or, with --fn, a model's forward) as an ONNX FILE, its dynamic axes named by its dims",
       .what = "the ONNX model",
       .as = " as an ONNX model",
       .artifact = "model.onnx",
       .write = write_program},
  };
  return targets;
}

}  // namespace ss
