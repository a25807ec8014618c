dim D = 64
dim V = 500

model Tiny:
    param wte:  [V D] = uniform(std=0.02)
    param norm: [D]   = one
    param bias: [D]   = normal(sd=0.02)

fn f(x: [b D]) -> [b D]:
    return x + normal(std=1.0)
