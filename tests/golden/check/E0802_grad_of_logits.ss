dim D = 8
dim V = 256

model Probe:
    param w: [V D] = normal(std=0.02)

fn step(m: Probe, x: [b D]):
    loss, g = grad(linear(x, m.w), m)
