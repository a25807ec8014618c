/**
 * @file Tree-sitter grammar for ShapeScript, an indentation-based language whose types carry
 *       tensor shapes.
 *
 * The node names and fields are a contract with the C++ core (`core/syntax/syntax.cpp`): see
 * CONTRACT.md next to this file before renaming anything.
 */

/* eslint-disable arrow-parens */
/* eslint-disable camelcase */
/* eslint-disable-next-line spaced-comment */
/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

// Precedence table, lowest binding first (modelled on tree-sitter-python's PREC).
//
//   level     construct                        associativity
//   -------   ------------------------------   -------------
//   lambda    i => body                        right (the body extends as far right as it can)
//   pipe      x |> f, x |> f(a)                left  (the right side is not an expression, so
//                                                      `a |> f |> g` nests to the left by shape)
//   as        e as T                           left
//   or        a or b                           left
//   and       a and b                          left
//   compare   == != < <= > >=                  left
//   plus      + -                              left
//   times     * / // %                         left
//   unary     -x, !x                           prefix
//   call      f(a), a.b, a[n m]                postfix (these live in _primary_expression, so they
//                                                       always bind tightest)
//
// Sizes (inside axis lists, axis patterns, `dim` values) have their own two levels:
//
//   size_plus   n+1, n-1                       left
//   size_times  3*D, D/H, n//2, l%2            left
//
// Juxtaposition is not an operator: `[L 3*D D]` is three axes, because an axis list is a
// sequence of sizes and an operator binds its two neighbours into one.
const PREC = {
  lambda: 1,
  pipe: 2,
  as: 3,
  or: 4,
  and: 5,
  not: 6,  // Python's `not`, read where Python reads it so the checker can say `!`
  compare: 7,
  plus: 8,
  times: 9,
  unary: 10,
  power: 11,  // Python's `**`, tighter than a sign as in Python (`-x ** 2` is `-(x ** 2)`)
  call: 12,

  size_plus: 1,
  size_times: 2,
};

/**
 * One or more `rule` separated by commas.
 *
 * @param {RuleOrLiteral} rule
 * @returns {SeqRule}
 */
function commaSep1(rule) {
  return seq(rule, repeat(seq(',', rule)));
}

module.exports = grammar({
  name: 'shapescript',

  // Layout tokens come from src/scanner.c. `_error_sentinel` is never used by a rule: the scanner
  // sees it as valid only while the parser is recovering from an error (when every token is valid).
  //
  // Error recovery on half-written lines: `identifier` is lexed by the grammar, never by the
  // scanner; listing it here makes the scanner run wherever a name may come. When the line so far
  // is unfinished (`x = linear(`, `fn f(x: [b`, `y = x |>`) and the next line starts with an item
  // or statement keyword, the scanner emits `_break`, which only the places where an item or
  // statement may start accept. The parser then wraps the broken line in an ERROR and goes on with
  // the next line, instead of reading the keyword as a name and losing the rest of the file.
  externals: $ => [
    $._newline,
    $._indent,
    $._dedent,
    $._break,
    $._error_sentinel,
    $.identifier,
  ],

  extras: $ => [
    $.comment,
    /[\s\f\uFEFF\u2060\u200B]/,
  ],

  word: $ => $.identifier,

  // In an argument list a name or number can start an expression or an axis pattern
  // (`rearrange(b c (gh p1) -> ...)`); `b (` could be a call or a group, `a * b` an expression or a
  // size. The GLR parser keeps both readings until one dies, which happens at the latest at `->`
  // (only patterns have it) or at `,` / `)` (a pattern without `->` is incomplete).
  conflicts: $ => [
    [$._primary_expression, $._size],
  ],

  rules: {
    source_file: $ => repeat(choice($._item, $._break)),

    _item: $ => choice(
      $.dim_item,
      $.python_import,
      $.extern_fn,
      $.function,
      $.model,
    ),

    // ----------------------------------------------------------------------------------- items

    // A dim without its value (`dim F`) parses, so the core can say what it needs rather than
    // lose the lines after it to error recovery.
    dim_item: $ => seq(
      'dim',
      field('name', $.identifier),
      optional(seq('=', field('value', $._size))),
      $._newline,
    ),

    python_import: $ => seq(
      'import',
      'python',
      field('module', $.dotted_name),
      $._newline,
    ),

    dotted_name: $ => seq($.identifier, repeat(seq('.', $.identifier))),

    extern_fn: $ => seq(
      'extern',
      'fn',
      field('name', $.identifier),
      field('parameters', $.parameter_list),
      '->',
      field('result', $._type),
      '=',
      field('target', $.string),
      $._newline,
    ),

    function: $ => seq(
      optional(field('export', 'export')),
      'fn',
      field('name', $.identifier),
      field('parameters', $.parameter_list),
      optional(seq('->', field('result', $._type))),
      ':',
      $._indent,
      field('body', $.block),
    ),

    model: $ => seq(
      'model',
      field('name', $.identifier),
      ':',
      $._indent,
      field('body', $.model_body),
    ),

    model_body: $ => seq(repeat(choice($.param_decl, $._break)), $._dedent),

    param_decl: $ => seq(
      'param',
      field('name', $.identifier),
      ':',
      field('type', $._type),
      optional(seq('=', field('init', $._expression))),
      $._newline,
    ),

    parameter_list: $ => seq(
      '(',
      optional(seq(commaSep1($.parameter), optional(','))),
      ')',
    ),

    parameter: $ => seq(
      field('name', $.identifier),
      ':',
      field('type', $._type),
    ),

    // ----------------------------------------------------------------------------------- types

    _type: $ => choice($.tensor_type, $.element_type),

    tensor_type: $ => seq(
      field('axes', $.axis_list),
      optional(field('element', $.element_type)),
    ),

    axis_list: $ => seq('[', repeat($._size), ']'),

    element_type: $ => seq(
      field('name', $.identifier),
      optional(choice(
        seq('[', field('bound', $._size), ']'),
        seq('over', field('over', $.identifier)),
      )),
    ),

    // ----------------------------------------------------------------------------------- sizes

    _size: $ => choice(
      $.number,
      $.identifier,
      $.scaled_size,
      $.unknown_size,
      $.group_size,
      $.binary_size,
    ),

    // Integers and decimals (listed before scaled_size, so a tie like `1e5` is a number): `1`, `0.02`, `1e-5`. (`0..L` lexes as `0` `..` `L`.)
    number: _ => token(choice(
      /\d+/,
      /\d+\.\d+([eE][+-]?\d+)?/,
      /\d+[eE][+-]?\d+/,
    )),

    // `16gh`: digits immediately followed by a name, one token.
    scaled_size: _ => /\d+[A-Za-z_][A-Za-z0-9_]*/,

    unknown_size: $ => seq('?', field('name', $.identifier)),

    group_size: $ => seq('(', repeat1($._size), ')'),

    binary_size: $ => choice(
      ...[
        ['+', PREC.size_plus],
        ['-', PREC.size_plus],
        ['*', PREC.size_times],
        ['/', PREC.size_times],
        ['//', PREC.size_times],
        ['%', PREC.size_times],
      ].map(([operator, precedence]) => prec.left(/** @type {number} */ (precedence), seq(
        field('left', $._size),
        field('operator', /** @type {RuleOrLiteral} */ (operator)),
        field('right', $._size),
      ))),
    ),

    axis_sequence: $ => repeat1($._size),

    // `b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c)`; several inputs only after `:` in a call.
    axis_pattern: $ => seq(
      commaSep1(field('input', $.axis_sequence)),
      '->',
      field('output', $.axis_sequence),
    ),

    _single_axis_pattern: $ => seq(
      field('input', $.axis_sequence),
      '->',
      field('output', $.axis_sequence),
    ),

    // ------------------------------------------------------------------------------ statements

    // The scanner never produces _indent directly followed by _dedent, so in a file without syntax
    // errors a block has at least one statement. `repeat` rather than `repeat1` is for recovery:
    // when the first line of a block is broken, the block can still end before the next line.
    // `_break` only comes after a syntax error.
    block: $ => seq(repeat(choice($._statement, $._break)), $._dedent),

    _statement: $ => choice(
      $.assignment,
      $.return_statement,
      $.expression_statement,
      $.for_statement,
      $.if_statement,
      $.python_block,
    ),

    // Python's `with torch.no_grad():`, `while c:` and `try:` blocks, read so that the core can say
    // what to write and check their lines, rather than lose the rest of the function.
    python_block: $ => choice(
      seq(
        field('keyword', choice('with', 'while')),
        field('value', $._expression),
        ':',
        $._indent,
        field('body', $.block),
      ),
      seq(
        field('keyword', 'try'),
        ':',
        $._indent,
        field('body', $.block),
        repeat1($.python_handler),
      ),
    ),

    // A `try`'s `except ValueError:` or `finally:`.
    python_handler: $ => seq(
      field('keyword', choice('except', 'finally')),
      optional(field('value', $._expression)),
      ':',
      $._indent,
      field('body', $.block),
    ),

    assignment: $ => seq(
      field('targets', $.target_list),
      '=',
      field('value', $._expression),
      $._newline,
    ),

    target_list: $ => commaSep1($.identifier),

    return_statement: $ => seq(
      'return',
      field('value', choice($._expression, alias($._bare_tuple, $.tuple))),
      $._newline,
    ),

    expression_statement: $ => seq($._expression, $._newline),

    for_statement: $ => seq(
      'for',
      field('variable', $.identifier),
      'in',
      // Python's `for l in range(L):` and `for layer in layers:` parse too, as an `iterable`, so
      // the checker can say what to write and check the body, rather than lose the whole loop.
      choice(
        seq(field('start', $._expression), '..', field('end', $._expression)),
        field('iterable', $._expression),
      ),
      ':',
      $._indent,
      field('body', $.block),
    ),

    if_statement: $ => seq(
      'if',
      field('condition', $._expression),
      ':',
      $._indent,
      field('body', $.block),
      repeat($.elif_clause),
      optional($.else_clause),
    ),

    elif_clause: $ => seq(
      'elif',
      field('condition', $._expression),
      ':',
      $._indent,
      field('body', $.block),
    ),

    else_clause: $ => seq(
      'else',
      ':',
      $._indent,
      field('body', $.block),
    ),

    // ----------------------------------------------------------------------------- expressions

    _expression: $ => choice(
      $.lambda,
      $.pipe_expression,
      $.as_expression,
      $.binary_expression,
      $.unary_expression,
      $._primary_expression,
    ),

    // Atoms and postfix forms: everything that can be called, indexed or dotted without parentheses.
    _primary_expression: $ => choice(
      $.identifier,
      $.number,
      $.string,
      $.parenthesized_expression,
      $.tuple,
      $.python_list,
      $.call,
      $.attribute,
      $.subscript,
    ),

    lambda: $ => prec.right(PREC.lambda, seq(
      field('parameter', $.identifier),
      '=>',
      field('body', $._expression),
    )),

    pipe_expression: $ => prec.left(PREC.pipe, seq(
      field('value', $._expression),
      '|>',
      field('function', choice($.identifier, $.attribute, $.call)),
    )),

    as_expression: $ => prec.left(PREC.as, seq(
      field('value', $._expression),
      'as',
      field('type', $._type),
    )),

    binary_expression: $ => choice(
      ...[
        ['or', PREC.or],
        ['and', PREC.and],
        ['==', PREC.compare],
        ['!=', PREC.compare],
        ['<', PREC.compare],
        ['<=', PREC.compare],
        ['>', PREC.compare],
        ['>=', PREC.compare],
        // Python's `x is None` and `x is not None` (one token), which the checker reports.
        ['is', PREC.compare],
        [alias(token(seq('is', /[ \t]+/, 'not')), 'is not'), PREC.compare],
        ['+', PREC.plus],
        ['-', PREC.plus],
        ['*', PREC.times],
        ['/', PREC.times],
        ['//', PREC.times],
        ['%', PREC.times],
        // Python's matrix product, which the checker reports (its fix writes the `einsum`).
        ['@', PREC.times],
      ].map(([operator, precedence]) => prec.left(/** @type {number} */ (precedence), seq(
        field('left', $._expression),
        field('operator', /** @type {RuleOrLiteral} */ (operator)),
        field('right', $._expression),
      ))),
      // Python's power, right-associative, which the checker reports (its fix writes `x * x`, `sqrt`).
      prec.right(PREC.power, seq(
        field('left', $._expression),
        field('operator', '**'),
        field('right', $._expression),
      )),
    ),

    unary_expression: $ => choice(
      prec(PREC.unary, seq(
        field('operator', choice('-', '!')),
        field('operand', $._expression),
      )),
      prec(PREC.not, seq(
        field('operator', 'not'),
        field('operand', $._expression),
      )),
    ),

    call: $ => prec(PREC.call, seq(
      field('function', $._primary_expression),
      field('arguments', $.argument_list),
    )),

    attribute: $ => prec(PREC.call, seq(
      field('object', $._primary_expression),
      '.',
      field('attribute', $.identifier),
    )),

    subscript: $ => prec(PREC.call, seq(
      field('value', $._primary_expression),
      field('index', choice($.axis_list, $.python_index)),
    )),

    parenthesized_expression: $ => seq('(', $._expression, ')'),

    // Python's indexing, `x[:, -1, :]`, `x[0, 1]`, `x[:-1]`: the language indexes one axis, by
    // sizes (`x[l]`), but this parses, so the checker can write the ShapeScript for it.
    python_index: $ => seq(
      '[',
      choice(
        seq($._python_index_item, ',', optional(seq(commaSep1($._python_index_item), optional(',')))),
        $.python_slice,
      ),
      ']',
    ),
    _python_index_item: $ => choice($._expression, $.python_slice),
    python_slice: $ => seq(optional(field('start', $._expression)), ':', optional(field('end', $._expression))),

    // Python's tuples, `(x, y)`, `(D,)`, and `return x, y` (below): the language has none, but they
    // parse, so the checker can say so once rather than lose the line. (Not `t = x, y`: error
    // recovery would read a call's `over=2,` as one.)
    tuple: $ => seq('(', $._expression, ',', optional(seq(commaSep1($._expression), optional(','))), ')'),
    // Python's lists, `[x, y]`, `[D]`: none in the language either; they parse, so that
    // `torch.cat([x, y], dim=-1)` is read as its tensors and `F.rms_norm(x, [D], w)` as its shape.
    python_list: $ => seq('[', commaSep1($._expression), optional(','), ']'),
    _bare_tuple: $ => seq($._expression, ',', optional(seq(commaSep1($._expression), optional(',')))),

    // `f(a, b, key=c)`, `rearrange(b n -> n b)`, and the einsum form
    // `einsum(q, k: b H n Dh, b H m Dh -> b H n m)`. The grammar accepts a `:` pattern after any
    // argument list; the core checks that only expressions come before it.
    argument_list: $ => seq(
      '(',
      optional(seq(commaSep1($._argument), optional(','))),
      optional(seq(':', $.axis_pattern)),
      ')',
    ),

    _argument: $ => choice(
      $._expression,
      $.keyword_argument,
      alias($._single_axis_pattern, $.axis_pattern),
    ),

    keyword_argument: $ => seq(
      field('name', $.identifier),
      '=',
      field('value', $._expression),
    ),

    // ---------------------------------------------------------------------------------- tokens

    identifier: _ => /[A-Za-z_][A-Za-z0-9_]*/,

    // Python's single quotes are read too, so the core can say to write double ones (E0101).
    string: _ => /"([^"\\\n]|\\[^\n])*"|'([^'\\\n]|\\[^\n])*'/,

    // `#` to the end of the line; `##` doc comments are comments too (the core reads them from the
    // source text, queries tell them apart by their text).
    comment: _ => token(seq('#', /.*/)),
  },
});
