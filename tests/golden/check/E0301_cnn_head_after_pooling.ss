dim C1 = 8
dim C2 = 16
dim K = 10

## The head was sized for 32×32 images; these are 28×28, so the features are 16×7×7, not 16×8×8.
fn classify(img: [b 3 28 28], w1: [C1 3 3 3], w2: [C2 C1 3 3], head: [K C2*8*8]) -> [b K]:
    h = max_pool2d(relu(conv2d(img, w1, padding=1)), kernel_size=2)
    h = max_pool2d(relu(conv2d(h, w2, padding=1)), kernel_size=2)
    return linear(rearrange(h, b c y x -> b (c y x)), head)
