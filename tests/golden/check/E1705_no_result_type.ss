dim D = 64

export fn act(x: [b D]):
    y = relu(x)
