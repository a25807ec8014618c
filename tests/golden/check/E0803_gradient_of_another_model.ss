dim D = 8

model Encoder:
    param w: [D D] = normal(std=0.02)

model Decoder:
    param w: [D D] = normal(std=0.02)

fn step(enc: Encoder, dec: Decoder, x: [b D]):
    opt = sgd(enc, lr=0.1)
    loss, g = grad(mean(sum(linear(x, dec.w), over=D), over=b), dec)
    update(opt, g)
    update(g, g)
