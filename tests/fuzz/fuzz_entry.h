// The one entry point both fuzz targets drive: check a byte string as a ShapeScript file and
// use everything a client of the checker would use (rendering, spans, positions).
#pragma once
#include <string_view>

namespace ss_fuzz {

// Checks `bytes` as the file "fuzz.ss". Aborts (with a message on stderr) when the checker breaks
// an invariant a client relies on; a crash, sanitizer report or hang inside is the finding itself.
void check_one(std::string_view bytes);

}  // namespace ss_fuzz
