# SYNTAX TEST "source.shapescript" "examples/export_bad.ss: import python, strings, as, arithmetic axes"
import python torch
# <------ keyword.control.import.shapescript
#      ^^^^^^ keyword.other.python.shapescript
#             ^^^^^ entity.name.namespace.shapescript

dim D = 768

export fn load_qkv() -> [D 3*D]:
#         ^^^^^^^^ entity.name.function.shapescript
#                       ^ punctuation.definition.type.begin.shapescript
#                          ^ meta.type.tensor.shapescript constant.numeric.integer.shapescript
#                           ^ meta.type.tensor.shapescript keyword.operator.arithmetic.shapescript
#                            ^ meta.type.tensor.shapescript entity.name.type.axis.shapescript
    return torch.load("w_qkv.pt") as [D 3*D]
#          ^^^^^ variable.other.shapescript
#               ^ punctuation.accessor.shapescript
#                ^^^^ variable.other.property.shapescript
#                     ^ string.quoted.double.shapescript punctuation.definition.string.begin.shapescript
#                      ^^^^^^^^ string.quoted.double.shapescript
#                                 ^^ keyword.operator.word.shapescript
#                                    ^^^^^^^ meta.type.tensor.shapescript
