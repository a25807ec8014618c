// libFuzzer target: the whole checker on arbitrary bytes. Built only with -DSHAPESCRIPT_FUZZ=ON and
// clang; see README.md and run_libfuzzer.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ss_fuzz::check_one(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
