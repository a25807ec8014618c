// Prints the built-ins' reference, the tables of docs/language.md, from the one built-in table
// (core/check/builtins.cpp): `builtin_reference core` for the pure built-ins and initializers,
// `builtin_reference training` for the training ones. tests/docs/builtin_reference.py compares
// them with the docs, so a built-in added to the table is documented or the test fails.
#include <iostream>
#include <string>
#include <string_view>

#include "check/builtins.h"

namespace {

// A table cell: a `|` would end it.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string code(std::string_view text) { return text.empty() ? "—" : "`" + cell(text) + "`"; }

}  // namespace

int main(int argc, char** argv) {
  std::string part = argc > 1 ? argv[1] : "";
  if (part != "core" && part != "training") {
    std::cerr << "usage: builtin_reference core | training\n";
    return 2;
  }
  bool training = part == "training";
  // The training built-ins combine no positions of a tensor: no "across" column.
  std::cout << (training ? "| built-in | signature | what it does |\n|---|---|---|\n" : "| built-in | signature | what it does | across |\n|---|---|---|---|\n");
  for (const ss::Builtin& b : ss::builtins()) {
    if ((b.effect == ss::BuiltinEffect::training) != training) continue;
    std::cout << "| `" << b.name << "` | " << code(b.signature) << " | " << cell(b.summary) << " |";
    if (!training) std::cout << " " << (b.works_across.empty() ? "—" : cell(b.works_across)) << " |";
    std::cout << "\n";
  }
  return 0;
}
