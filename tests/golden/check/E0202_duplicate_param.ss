dim D = 64
dim V = 500

model Tiny:
    param wte: [V D] = normal(std=0.02)
    param norm: [D] = ones
    param wte: [V D] = zeros
