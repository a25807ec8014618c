// External scanner for ShapeScript: the layout tokens _newline, _indent and _dedent.
//
// Python-style layout:
// - A stack of indentation widths (the bottom entry is 0). A line indented deeper than the top,
//   where a block may start, pushes and emits _indent; a line indented less pops one entry per
//   _dedent; the end of a simple statement or item emits _newline.
// - Newlines inside () and [] are ignored: the parser never accepts a layout token inside brackets,
//   so when none of them is valid the scanner declines and the newline is skipped as whitespace.
// - A line whose first token is `|>` continues the line before it: nothing is emitted before it.
// - Blank lines and comment-only lines do not count for indentation.
// - A tab in indentation advances to the next multiple of 8 (the core reports E0102 itself).
// - At the end of the file the pending _newline and all _dedents are emitted.
//
// Every token this scanner produces is zero-width: it ends where the scan started (before the line
// break), so comments and whitespace after it are left to the grammar's extras.
//
// The scanner must never crash or loop on any input: every loop advances the lexer or stops at the
// end of input, the stack is bounded, and deserialize accepts any byte string.

#include "tree_sitter/parser.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum TokenType {
  NEWLINE,
  INDENT,
  DEDENT,
  BREAK,           // only after a half-written line, see below
  ERROR_SENTINEL,  // never produced: valid only while the parser recovers from an error
  IDENTIFIER,      // never produced: its presence makes the parser call the scanner
};

// Serialized as one byte (breaks) and two bytes per entry of the stack, bottom entry not stored,
// within the 1024-byte serialization buffer.
#define MAX_INDENT_DEPTH 500
#define MAX_INDENT_WIDTH 65535u

typedef struct {
  uint8_t breaks;                            // counts _break tokens, see scan()
  uint32_t depth;                            // entries in use, at least 1
  uint16_t widths[MAX_INDENT_DEPTH + 1];     // widths[0] == 0
} Scanner;

static inline void skip(TSLexer *lexer) { lexer->advance(lexer, true); }

static inline bool is_name_char(int32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Whether the lexer is at a keyword that can only start an item or a statement. Such a line can
// never continue an expression, so a half-written line before it ends there.
static bool at_line_keyword(TSLexer *lexer) {
  static const char *const keywords[] = {
      "dim", "import", "extern", "fn", "export", "model", "param",
      "return", "for", "if", "elif", "else",
  };
  char word[8];
  unsigned length = 0;
  while (is_name_char(lexer->lookahead)) {
    if (length == sizeof(word) - 1) return false;  // longer than any keyword
    word[length++] = (char)lexer->lookahead;
    skip(lexer);
  }
  word[length] = '\0';
  if (length == 0) return false;
  for (unsigned i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++) {
    if (strcmp(word, keywords[i]) == 0) return true;
  }
  return false;
}

static void reset(Scanner *scanner) {
  scanner->breaks = 0;
  scanner->depth = 1;
  scanner->widths[0] = 0;
}

void *tree_sitter_shapescript_external_scanner_create(void) {
  Scanner *scanner = (Scanner *)calloc(1, sizeof(Scanner));
  if (scanner) reset(scanner);
  return scanner;
}

void tree_sitter_shapescript_external_scanner_destroy(void *payload) { free(payload); }

unsigned tree_sitter_shapescript_external_scanner_serialize(void *payload, char *buffer) {
  Scanner *scanner = (Scanner *)payload;
  unsigned size = 0;
  buffer[size++] = (char)scanner->breaks;
  for (uint32_t i = 1; i < scanner->depth && size + 2 <= TREE_SITTER_SERIALIZATION_BUFFER_SIZE; i++) {
    uint16_t width = scanner->widths[i];
    buffer[size++] = (char)(width & 0xff);
    buffer[size++] = (char)(width >> 8);
  }
  return size;
}

void tree_sitter_shapescript_external_scanner_deserialize(void *payload, const char *buffer,
                                                          unsigned length) {
  Scanner *scanner = (Scanner *)payload;
  reset(scanner);
  if (buffer == NULL || length == 0) return;
  scanner->breaks = (uint8_t)buffer[0];
  for (unsigned i = 1; i + 1 < length && scanner->depth <= MAX_INDENT_DEPTH; i += 2) {
    uint16_t width = (uint16_t)((uint8_t)buffer[i] | ((uint16_t)(uint8_t)buffer[i + 1] << 8));
    scanner->widths[scanner->depth++] = width;
  }
}

bool tree_sitter_shapescript_external_scanner_scan(void *payload, TSLexer *lexer,
                                                   const bool *valid_symbols) {
  Scanner *scanner = (Scanner *)payload;

  // While recovering from an error every token is valid, the sentinel included. Then indent and
  // dedent are still emitted (they keep the block structure), but not a newline.
  bool error_recovery = valid_symbols[ERROR_SENTINEL];

  // Inside () and [] and in the middle of a line no layout token is valid: the newline is skipped
  // as whitespace, unless the next line starts with an item or statement keyword (see below).
  bool layout_valid = valid_symbols[NEWLINE] || valid_symbols[INDENT] || valid_symbols[DEDENT];

  // Zero-width tokens: whatever is skipped below is not part of the token.
  lexer->mark_end(lexer);

  bool found_end_of_line = false;
  uint32_t indent = 0;
  for (;;) {
    if (lexer->eof(lexer)) {
      found_end_of_line = true;
      indent = 0;
      break;
    }
    int32_t c = lexer->lookahead;
    if (c == '\n') {
      found_end_of_line = true;
      indent = 0;
      skip(lexer);
    } else if (c == ' ') {
      if (indent < MAX_INDENT_WIDTH) indent++;
      skip(lexer);
    } else if (c == '\t') {
      indent = (indent / 8 + 1) * 8;
      if (indent > MAX_INDENT_WIDTH) indent = MAX_INDENT_WIDTH;
      skip(lexer);
    } else if (c == '\r' || c == '\f' || c == 0xFEFF) {
      indent = 0;
      skip(lexer);
    } else if (c == '#') {
      // A comment, after code or on a line of its own: look past it. The token ends before it,
      // so the grammar's extras still produce the comment, after the token (a trailing comment
      // stays out of the statement it follows), and a comment-only line does not count for
      // indentation.
      while (!lexer->eof(lexer) && lexer->lookahead != '\n') skip(lexer);
    } else {
      break;
    }
  }

  if (!found_end_of_line) return false;

  // `|>` first on the line continues the line before: no layout token at all.
  if (!lexer->eof(lexer) && lexer->lookahead == '|') {
    skip(lexer);
    if (lexer->lookahead == '>') return false;
  }

  uint16_t current = scanner->widths[scanner->depth - 1];

  if (!layout_valid) {
    // A half-written line (`x = linear(`, `fn f(x: [b`, `y = x |>`) followed by a line that starts
    // with an item or statement keyword: such a line can never continue the expression, so end
    // the broken line here with _break, which the parser does not expect here but does where an
    // item or statement starts. The parser wraps the broken line in an ERROR, goes back to the
    // nearest enclosing block, model body or file, and goes on with the next line; the layout
    // tokens follow from there. Where _break is valid, the line before is complete: no _break.
    //
    // `breaks` changes with every _break, so that the token changes the scanner's state: then the
    // parser does not also try the alternative of skipping it and reading the keyword as a name.
    // No _break while recovering (every token is valid then), so this cannot repeat at one place.
    if (error_recovery || valid_symbols[BREAK] || lexer->eof(lexer) || !at_line_keyword(lexer)) {
      return false;
    }
    scanner->breaks++;
    lexer->result_symbol = BREAK;
    return true;
  }

  if (valid_symbols[INDENT] && indent > current && scanner->depth <= MAX_INDENT_DEPTH) {
    scanner->widths[scanner->depth++] = (uint16_t)indent;
    lexer->result_symbol = INDENT;
    return true;
  }

  if (valid_symbols[DEDENT] && indent < current && scanner->depth > 1) {
    scanner->depth--;
    lexer->result_symbol = DEDENT;
    return true;
  }

  if (valid_symbols[NEWLINE] && !error_recovery) {
    lexer->result_symbol = NEWLINE;
    return true;
  }

  return false;
}
