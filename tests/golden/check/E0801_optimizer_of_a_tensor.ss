dim D = 8

model Probe:
    param w: [D D] = normal(std=0.02)

fn main():
    m = init(Probe)
    opt = adamw(m.w, lr=1e-3)
    x = init(D)
    train_mode(opt)
