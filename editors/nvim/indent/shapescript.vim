" ShapeScript indentation: indent after a line ending in ':' (comments aside), keep it otherwise;
" `elif`/`else` line up with their `if`.
if exists('b:did_indent')
  finish
endif
let b:did_indent = 1

setlocal indentexpr=ShapeScriptIndent(v:lnum)
setlocal indentkeys=!^F,o,O,<:>,0),0],=elif,=else
setlocal autoindent
let b:undo_indent = 'setlocal indentexpr< indentkeys< autoindent<'

if exists('*ShapeScriptIndent')
  finish
endif

function! ShapeScriptIndent(lnum) abort
  let prev = prevnonblank(a:lnum - 1)
  if prev == 0
    return 0
  endif
  let ptext = substitute(getline(prev), '\s*#.*$', '', '')
  let ind = indent(prev)
  let sw = shiftwidth()
  let cur = getline(a:lnum)
  if ptext =~# ':\s*$'
    let ind += sw
  elseif ptext =~# '^\s*return\>' && cur !~# '^\s*|>'
    let ind -= sw
  endif
  if cur =~# '^\s*\(elif\|else\)\>'
    let ind = indent(prev) - (ptext =~# ':\s*$' ? 0 : sw)
  endif
  return ind < 0 ? 0 : ind
endfunction
