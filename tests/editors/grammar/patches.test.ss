# SYNTAX TEST "source.shapescript" "examples/patches.ss: dim, doc comment, export fn, scaled axes 16gh, |>, axis patterns"
dim D = 768
# <--- storage.type.dim.shapescript
#   ^ variable.other.constant.dim.shapescript
#     ^ keyword.operator.assignment.shapescript
#       ^^^ constant.numeric.integer.shapescript

## Splits each image into 16×16 patches.
# <-- comment.line.documentation.shapescript punctuation.definition.comment.shapescript
#  ^^^^^^ comment.line.documentation.shapescript
#                         ^^^^^ comment.line.documentation.shapescript
export fn patchify(img: [b 3 16gh 16gw]) -> [b (gh gw) D]:
# <------ storage.modifier.shapescript
#      ^^ storage.type.function.shapescript
#         ^^^^^^^^ entity.name.function.shapescript
#                  ^^^ variable.parameter.shapescript
#                       ^ meta.type.tensor.shapescript punctuation.definition.type.begin.shapescript
#                        ^ meta.type.tensor.shapescript entity.name.type.axis.shapescript
#                          ^ meta.type.tensor.shapescript constant.numeric.integer.shapescript
#                            ^^ meta.axis.scaled.shapescript constant.numeric.integer.axis-scale.shapescript
#                              ^^ meta.axis.scaled.shapescript entity.name.type.axis.shapescript
#                                 ^^^^ meta.axis.scaled.shapescript
#                                     ^ meta.type.tensor.shapescript punctuation.definition.type.end.shapescript
#                                        ^^ keyword.operator.arrow.shapescript
#                                               ^^ meta.type.tensor.shapescript meta.axis.group.shapescript entity.name.type.axis.shapescript
#                                                      ^ meta.type.tensor.shapescript entity.name.type.axis.shapescript
#                                                        ^ punctuation.separator.colon.shapescript
    return img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c))
#   ^^^^^^ keyword.control.flow.shapescript
#          ^^^ variable.other.shapescript
#              ^^ keyword.operator.pipe.shapescript
#                 ^^^^^^^^^ support.function.builtin.shapescript
#                             ^ meta.function-call.axis-pattern.shapescript entity.name.type.axis.shapescript
#                                   ^^ meta.axis.group.shapescript entity.name.type.axis.shapescript
#                                               ^^ meta.function-call.axis-pattern.shapescript keyword.operator.arrow.shapescript
#                                                                ^^ meta.axis.group.shapescript entity.name.type.axis.shapescript
