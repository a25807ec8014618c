; ShapeScript highlights. When several patterns match one node, the earliest wins (as in
; tree-sitter-highlight), so specific patterns come before general ones.

; Comments: `##` doc comments first.
((comment) @comment.documentation
  (#match? @comment.documentation "^##"))
(comment) @comment

; Keywords
[
  "dim"
  "import"
  "python"
  "extern"
  "model"
  "param"
  "export"
] @keyword

"fn" @keyword.function
"return" @keyword.return
["for" "in"] @keyword.repeat
["if" "elif" "else"] @keyword.conditional
["and" "or" "not" "as" "over"] @keyword.operator

; Definitions
(function name: (identifier) @function)
(extern_fn name: (identifier) @function)
(model name: (identifier) @type.definition)
(dim_item name: (identifier) @constant)
(param_decl name: (identifier) @property)
(parameter name: (identifier) @variable.parameter)
(lambda parameter: (identifier) @variable.parameter)
(keyword_argument name: (identifier) @variable.parameter)
(for_statement variable: (identifier) @variable)
(python_import module: (dotted_name (identifier) @module))

; Types: element types, and every size: tensor axes, axis patterns, subscripts, dim values.
((element_type name: (identifier) @type.builtin)
  (#any-of? @type.builtin "Real" "NonNeg" "Int" "Bool" "Index" "Logit"))
(element_type name: (identifier) @type)
(element_type over: (identifier) @type)
(axis_list (identifier) @type)
(axis_sequence (identifier) @type)
(group_size (identifier) @type)
(binary_size (identifier) @type)
(unknown_size name: (identifier) @type)
(dim_item value: (identifier) @type)
(scaled_size) @type

; Calls, built-ins included, and the functions of pipes.
(call function: (identifier) @function.call)
(call function: (attribute attribute: (identifier) @function.method.call))
(pipe_expression function: (identifier) @function.call)
(pipe_expression function: (attribute attribute: (identifier) @function.method.call))

(attribute attribute: (identifier) @property)

; Literals
(number) @number
(extern_fn target: (string) @string.special)
(string) @string

((identifier) @constant.builtin
  (#eq? @constant.builtin "inf"))

(identifier) @variable

; Operators and punctuation
[
  "+"
  "-"
  "*"
  "/"
  "//"
  "%"
  "=="
  "!="
  "<"
  "<="
  ">"
  ">="
  "!"
  "="
  "?"
  "|>"
  "->"
  "=>"
  ".."
] @operator

["(" ")" "[" "]"] @punctuation.bracket
["," "." ":"] @punctuation.delimiter
