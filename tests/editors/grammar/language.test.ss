# SYNTAX TEST "source.shapescript" "examples/tiny.ss and the sketch: model, param, element types, for, keyword arguments, lambdas"
# A plain comment with keywords fn model return 16gh |> that stay a comment
# <- comment.line.number-sign.shapescript punctuation.definition.comment.shapescript
#                                     ^^^^^^ comment.line.number-sign.shapescript
model Tiny:
# <----- storage.type.model.shapescript
#     ^^^^ entity.name.type.model.shapescript
    param wte:   [V D]     = normal(std=0.02)  # init
#   ^^^^^ storage.type.param.shapescript
#         ^^^ variable.other.property.param.shapescript
#                 ^ meta.type.tensor.shapescript entity.name.type.axis.shapescript
#                            ^^^^^^ support.function.builtin.shapescript
#                                   ^^^ variable.parameter.keyword.shapescript
#                                       ^^^^ constant.numeric.float.shapescript
#                                              ^^^^^^ comment.line.number-sign.shapescript
    param norm:  [L D]     = ones
#                            ^^^^ support.function.builtin.shapescript

fn forward(m: Tiny, ids: [b n] Index[V]) -> [b n V] Logit over V:
# <-- storage.type.function.shapescript
#  ^^^^^^^ entity.name.function.shapescript
#          ^ variable.parameter.shapescript
#             ^^^^ entity.name.type.shapescript
#                              ^^^^^ support.type.element.shapescript
#                                    ^ meta.type.sized.shapescript entity.name.type.axis.shapescript
#                                                   ^^^^^ support.type.element.shapescript
#                                                         ^^^^ keyword.operator.word.shapescript
#                                                              ^ entity.name.type.axis.shapescript
    x = embedding(ids, m.wte)
#       ^^^^^^^^^ support.function.builtin.shapescript
    for l in 0..L:
#   ^^^ keyword.control.flow.shapescript
#         ^^ keyword.control.flow.shapescript
#            ^ constant.numeric.integer.shapescript
#             ^^ keyword.operator.range.shapescript
        x = x + attention(rms_norm(x, over=D, weight=m.norm[l]), m.w_qkv[l], m.w_o[l])
#               ^^^^^^^^^ entity.name.function.call.shapescript
#                         ^^^^^^^^ support.function.builtin.shapescript
#                                     ^^^^ variable.parameter.keyword.shapescript
#                                             ^^^^^^ variable.parameter.keyword.shapescript
#                                                           ^ meta.subscript.shapescript variable.other.shapescript
    att = att |> masked_fill(!causal[n m], -inf) |> softmax(over=m)
#                            ^ keyword.operator.logical.shapescript
#                             ^^^^^^ support.function.builtin.shapescript
#                                      ^ meta.type.sized.shapescript entity.name.type.axis.shapescript
#                                          ^ keyword.operator.arithmetic.shapescript
#                                           ^^^ constant.language.infinity.shapescript
#                                                ^^ keyword.operator.pipe.shapescript
    q = einsum(q, k: b H n Dh, b H m Dh -> b H n m)
#       ^^^^^^ support.function.builtin.shapescript
#                 ^ variable.other.shapescript
#                          ^^ entity.name.type.axis.shapescript
    y = n |> map(i => i * 2)
#                  ^^ keyword.operator.lambda.shapescript
    return linear(x, m.wte)
#          ^^^^^^ support.function.builtin.shapescript

extern fn erfc(x: Real) -> NonNeg = "torch.special.erfc"
# <------ storage.modifier.shapescript
#         ^^^^ entity.name.function.shapescript
#                 ^^^^ support.type.element.shapescript
#                          ^^^^^^ support.type.element.shapescript
#                                   ^^^^^^^^^^^^^^^^^^^^ string.quoted.double.shapescript

fn unknown(x: [?k D], q, k: [b 2*n+1]) -> Bool:
#              ^ keyword.operator.unknown-size.shapescript
#               ^ entity.name.type.axis.unknown.shapescript
#                                 ^ keyword.operator.arithmetic.shapescript
#                                         ^^^^ support.type.element.shapescript
    if x == 1.5e3:
#   ^^ keyword.control.flow.shapescript
#        ^^ keyword.operator.comparison.shapescript
#           ^^^^^ constant.numeric.float.shapescript
        return x and y or z
#                ^^^ keyword.operator.word.shapescript
