" ShapeScript commands. The language server starts after require('shapescript').setup({...}).
if exists('g:loaded_shapescript')
  finish
endif
let g:loaded_shapescript = 1
command! -nargs=? ShapeScriptExplain lua require('shapescript').explain(<q-args>)
command! ShapeScriptExport lua require('shapescript').export()
