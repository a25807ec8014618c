// The ShapeScript language server: `shapescript-lsp`, or `shapescript lsp` from the CLI.
#pragma once

// Speaks LSP over stdin/stdout until `exit` or the end of stdin. Options:
//   --log-file PATH   log there instead of stderr (stdout is the protocol's)
//   --log-level L     trace, debug, info (default), warn, error, off
//   --debounce-ms N   wait this long after an edit before checking (default 30) when the
//                     document's recent checks took longer and the edit came sooner after the
//                     last than they take (typing); else check at once
//   --full-check      check the whole file after each edit, not only the functions it reaches
// A first argument `lsp` is skipped, so the CLI may pass its own argv through.
// Returns 0 after `shutdown` then `exit`, 1 otherwise, 2 for bad options.
int run_language_server(int argc, char** argv);
