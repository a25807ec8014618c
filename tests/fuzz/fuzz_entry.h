// The one entry point both fuzz targets drive: check a byte string as a ShapeScript file and
// use everything a client of the checker would use (rendering, spans, positions, JSON, generated code).
#pragma once
#include <string_view>

namespace ss_fuzz {

enum class Downstream {
  all,          // what every client does with the result: the CLI's JSON, the server's answers, and
                // for a file without errors the PyTorch and Hugging Face code generators
  diagnostics,  // only what is done on every keystroke: render and publish the diagnostics
};

// Checks `bytes` as the file "fuzz.ss" and runs `downstream` on the result. Aborts (with a message
// on stderr) when the checker, a generator or a JSON conversion breaks an invariant a client relies
// on (spans inside the file, JSON that serialises, generated Python with no line break but "\n");
// a crash, sanitizer report or hang inside is the finding itself.
void check_one(std::string_view bytes, Downstream downstream = Downstream::all);

// How many inputs reached each stage so far, so a run can show that it got past the checker.
struct Reached {
  size_t answered = 0;   // the server's answers and the CLI's JSON
  size_t generated = 0;  // a PyTorch module (the file had no errors)
  size_t hf = 0;         // a Hugging Face folder's code, for some function
};
const Reached& reached();

}  // namespace ss_fuzz
