// Every target `shapescript export` writes, one row each: the option that asks for it, what it is,
// how `verify` checks it, and the function that writes it. A new target (ONNX, ExecuTorch) is a row
// here and a module in python/shapescript/runtime, in targets.py's row of the same key.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace ss {

class Analysis;
struct ExportOptions;
struct ExportTarget;

// Writes `target` as `options` ask; returns the command's exit status.
using TargetWriter = int (*)(const ExportOptions& options, const Analysis& analysis, const ExportTarget& target);

struct ExportTarget {
  std::string_view key;     // the runtime spec's `target`, and verify's artifact
  std::string_view option;  // export's option for it: "--hf" (its path), "--aoti" (a flag on -o's file), "" (the default)
  bool flag = false;        // `option` is a flag that changes how -o's file is written, not a path of its own
  std::string_view help;    // the option's help
  std::string_view what;    // what it is, as `verify` says it ("the .pt2 program")
  std::string_view as;      // what it is, said after `wrote FILE: \`f\`` by a program's writer (" as an AOTInductor package")
  std::string_view artifact;  // its name in verify's artifacts folder; empty: verify has no engine for it
  bool folder = false;        // a folder, swapped in whole
  bool encoders = true;       // verify writes it for an encoder's forward too
  bool tokenizer = false;     // it carries a tokenizer (--tokenizer)
  bool serving = false;       // a served model: the serving rules are checked (--vllm, --tp)
  std::string_view slow;      // said while a program's writer runs, when it takes a while
  TargetWriter write = nullptr;
};

const std::vector<ExportTarget>& export_targets();

// The writers the rows name (export.cpp): an `export fn` or a model's forward as a program (its
// export spec: pt2, aoti, onnx), a Hugging Face folder, a GGUF file.
int write_program(const ExportOptions& options, const Analysis& analysis, const ExportTarget& target);
int write_hf_folder(const ExportOptions& options, const Analysis& analysis, const ExportTarget& target);
int write_gguf_file(const ExportOptions& options, const Analysis& analysis, const ExportTarget& target);

}  // namespace ss
