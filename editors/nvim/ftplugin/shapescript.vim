" ShapeScript: comments with #, 4-space indentation, blocks after a line ending in ':'.
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal commentstring=#\ %s
setlocal comments=:##,:#
setlocal expandtab shiftwidth=4 softtabstop=4 tabstop=8
setlocal formatoptions-=t formatoptions+=croql
setlocal iskeyword=@,48-57,_
setlocal suffixesadd=.ss

let b:undo_ftplugin = 'setlocal commentstring< comments< expandtab< shiftwidth< softtabstop< tabstop<'
      \ . ' formatoptions< iskeyword< suffixesadd<'
