// E33xx: what a serving engine can run. Filled in with `--hf --vllm` support.
#include "check_internal.h"

namespace ss {

void check_serving_rules(Checker&, Severity) {}

}  // namespace ss
