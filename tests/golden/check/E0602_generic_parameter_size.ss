dim D = 64

model Tiny:
    param wpe: [n D] = normal(std=0.02)
