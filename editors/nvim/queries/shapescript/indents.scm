; ShapeScript indents (nvim-treesitter conventions). A block is indented after a line ending in
; `:`; brackets indent their contents; `|>` continuation lines are indented by convention.

[
  (function)
  (model)
  (for_statement)
  (if_statement)
  (elif_clause)
  (else_clause)
] @indent.begin

(argument_list "(" @indent.begin ")" @indent.end)
(parameter_list "(" @indent.begin ")" @indent.end)
(axis_list "[" @indent.begin "]" @indent.end)

[")" "]"] @indent.branch

["elif" "else"] @indent.branch

(pipe_expression "|>" @indent.begin)
