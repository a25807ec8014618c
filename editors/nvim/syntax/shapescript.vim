" Vim syntax file for ShapeScript (no tree-sitter needed; Neovim 0.7+ and Vim).
if exists('b:current_syntax')
  finish
endif

syn keyword shapescriptKeyword import python extern param export
syn keyword shapescriptFunctionKeyword fn nextgroup=shapescriptFunctionName skipwhite
syn keyword shapescriptModelKeyword model nextgroup=shapescriptModelName skipwhite
syn keyword shapescriptDimKeyword dim nextgroup=shapescriptDimName skipwhite
syn keyword shapescriptReturn return
syn keyword shapescriptRepeat for in
syn keyword shapescriptConditional if elif else
syn keyword shapescriptOperatorWord and or as over
syn keyword shapescriptReserved mode dataset log grad optimizer
syn keyword shapescriptElementType Real NonNeg Int Bool Index Logit
syn keyword shapescriptBuiltin rearrange split einsum scale masked_fill causal softmax linear
syn keyword shapescriptBuiltin embedding rms_norm scaled_dot_product_attention sqrt map normal ones
syn keyword shapescriptBuiltin zeros layer_norm gelu silu exp sin cos sum mean max min concat
syn keyword shapescriptConstant inf

syn match shapescriptFunctionName '\h\w*' contained
syn match shapescriptModelName '\h\w*' contained
syn match shapescriptDimName '\h\w*' contained
syn match shapescriptCall '\<\h\w*\ze\s*(' contains=shapescriptBuiltin

syn match shapescriptNumber '\<\d\+\%(\.\d*\)\=\%([eE][+-]\=\d\+\)\=\>'
syn match shapescriptOperator '|>\|->\|=>\|\.\.\|[-+*/%=<>!?]'

" Tensor types [b 3 16gh 16gw]: axes, scaled axes (16gh), groups, unknown sizes (?k).
syn region shapescriptTensorType matchgroup=shapescriptBracket start='\%(\w\|\]\|)\)\@<!\[' end='\]'
      \ contains=shapescriptScaledAxis,shapescriptTypeNumber,shapescriptOperator,shapescriptAxis,shapescriptComment
syn match shapescriptScaledAxis '\<\d\+\h\w*\>' contained
syn match shapescriptTypeNumber '\<\d\+\>' contained
syn match shapescriptAxis '\<\h\w*\>' contained

syn region shapescriptString start='"' skip='\\.' end='"' oneline
syn match shapescriptComment '#.*$' contains=shapescriptTodo,@Spell
syn match shapescriptDocComment '##.*$' contains=shapescriptTodo,@Spell
syn keyword shapescriptTodo TODO FIXME XXX NOTE contained

hi def link shapescriptKeyword Keyword
hi def link shapescriptFunctionKeyword Keyword
hi def link shapescriptModelKeyword Keyword
hi def link shapescriptDimKeyword Keyword
hi def link shapescriptReturn Statement
hi def link shapescriptRepeat Repeat
hi def link shapescriptConditional Conditional
hi def link shapescriptOperatorWord Keyword
hi def link shapescriptReserved Keyword
hi def link shapescriptElementType Type
hi def link shapescriptBuiltin Function
hi def link shapescriptConstant Constant
hi def link shapescriptFunctionName Function
hi def link shapescriptModelName Type
hi def link shapescriptDimName Constant
hi def link shapescriptCall Function
hi def link shapescriptNumber Number
hi def link shapescriptTypeNumber Number
hi def link shapescriptScaledAxis Type
hi def link shapescriptAxis Type
hi def link shapescriptBracket Delimiter
hi def link shapescriptOperator Operator
hi def link shapescriptString String
hi def link shapescriptComment Comment
hi def link shapescriptDocComment SpecialComment
hi def link shapescriptTodo Todo

let b:current_syntax = 'shapescript'
