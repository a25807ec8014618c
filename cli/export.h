// `shapescript export`: check, generate PyTorch, and run the Python export runtime in a subprocess.
#pragma once
#include <nlohmann/json.hpp>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "check/analysis.h"
#include "model/model_layout.h"
#include "emit/codegen.h"
#include "emit/codegen_hf.h"
#include "process.h"
#include "targets.h"

namespace ss {

struct ExportOptions {
  std::string file;
  std::string output;    // -o: a program target's file; empty: FUNCTION.pt2 in the current directory
  std::string function;  // empty: the file's only export fn
  // What each target's option gave (targets.h): its path ("--hf DIR"), or "1" for a flag on -o's file ("--aoti").
  std::map<std::string, std::string, std::less<>> targets;
  std::string python;    // empty: the active virtualenv's, then python3
  bool verbose = false;
  std::string color = "auto";
  bool vllm = false;     // --vllm: insist that vLLM can serve it (the E33xx rules are errors)
  std::optional<int64_t> tensor_parallel;  // --tp K: insist that K devices split its heads and weights evenly (E3310)
  std::string weights;   // --weights ckpt.pt: trained parameters for --hf or --gguf
  std::string tokenizer; // --tokenizer PATH: a tokenizer.json or HF folder (--hf, --gguf), or a GGUF file's vocabulary (--gguf)
  std::vector<std::string> torchrun;  // non-empty: the script runs on every rank, launched by launch.py with these torchrun flags

  // The target asked for: the row whose option was given, else pt2.
  const ExportTarget& target() const;
  // Where it goes: its option's path, else -o's (empty: the default).
  std::string path(const ExportTarget& target) const;
};

// The runtime's export spec (python/shapescript/runtime/SPEC.md) for one exported function.
// For a model's forward, `weights` is the checkpoint its parameters come from (empty: initializers).
nlohmann::json export_spec(const Analysis& analysis, const ExportSignature& signature, const GeneratedModule& module,
                           const std::string& output, const std::string& format, const std::string& weights = "");

// Whether to colour diagnostics on `stream`: --color always/never, or auto (a terminal, no NO_COLOR, not TERM=dumb).
bool use_color(const std::string& mode, FILE* stream);

// Which Python runs the export: --python, else $VIRTUAL_ENV's, else python3.
std::string choose_python(const std::string& requested);

// What a runtime script ran to: its output, and the reply it wrote (run_runtime's `reply`).
struct RuntimeResult {
  ProcessResult process;
  nlohmann::json reply;
};

// How a runtime script runs: `quiet`, its output shown on failure or with --verbose; `progress`, its
// stderr shown as it comes (import-weights' search); `program`, a user's program (`run`): its
// progress as it comes, and Ctrl-C passed on to it, which saves first.
enum class RuntimeMode { quiet, progress, program };

// Runs one of the embedded runtime's scripts (python/shapescript/runtime) on `spec`; see export.cpp.
// On failure `exit_status` is the command's: 1 the runtime failed, 2 files, 128 + signal interrupted.
std::optional<RuntimeResult> run_runtime(const std::string& script, nlohmann::json spec, const ExportOptions& options,
                                         const std::string& failed, bool reply, RuntimeMode mode = RuntimeMode::quiet,
                                         int* exit_status = nullptr);

// Reads and checks `file`; on failure prints why and sets `status` (2: unreadable, 1: errors).
std::unique_ptr<Analysis> checked_file(const std::string& file, const AnalyzeOptions& options, const std::string& color, int& status);

// What the runtime's searches over a language model read (gguf_export.py, import_weights.py): its
// parameters (shapes, stacked or not), layers, embedding and output layer, reference module, built-ins.
// The model description of `function`: the one analyze found, when it was found for that function.
ModelLayout describe_model(const Analysis& analysis, const std::string& function);

// Why `layout`'s function isn't a language model's forward, as `file.ss:12:5: rule`; empty when it is one.
std::string why_not_language_model(const Analysis& analysis, const ModelLayout& layout);
// Why it is neither a language model's forward nor an encoder's (import-weights, verify); empty when it is one.
std::string why_not_described_model(const Analysis& analysis, const ModelLayout& layout);

// The model description the runtime reads (SPEC.md, "description"), version 1.
nlohmann::json model_description(const Analysis& analysis, const ModelLayout& layout, const HfModel& model);

// The facts of a language model's forward, its spans named `file:line:col`.
LanguageModelFacts language_model_facts(const Analysis& analysis, const ModelLayout& layout);
nlohmann::json language_model_spec(const Analysis& analysis, const ModelLayout& layout, const LanguageModelFacts& model, const std::string& function);

int run_export(const ExportOptions& options);

// `shapescript run FILE`: compiles the file and runs a function of it (`main`) in Python, with the
// training built-ins of python/shapescript/runtime/train.py.
struct RunOptions {
  std::string file;
  std::string function = "main";
  std::string python;
  std::string resume;      // a checkpoint to continue from
  std::string checkpoint;  // where Ctrl-C saves (default: FILE's stem + .ckpt.pt, here)
  std::string log;         // log_scalar's JSON lines (default: FILE's stem + .log.jsonl, here)
  // Several processes under torchrun (0: one process, as before); the rest as torchrun's flags.
  int nproc_per_node = 0;
  std::string nnodes;         // "M", or "MIN:MAX" for an elastic run
  int node_rank = -1;         // -1: the rendezvous assigns it (c10d), else torchrun's static one
  std::string rdzv_endpoint;  // HOST:PORT, where the nodes meet
  std::string rdzv_id = "shapescript";
  bool verbose = false;
  std::string color = "auto";
};
int run_program(const RunOptions& options);

}  // namespace ss
