dim C1 = 8
dim C2 = 16
dim K = 10

## The head was sized for 32×32 images; these are 28×28, so the features are 16×7×7, not 16×8×8.
fn classify(img: [b 3 28 28], w1: [C1 3 3 3], w2: [C2 C1 3 3], head: [K C2*8*8]) -> [b K]:
    h = max_pool2d(relu(conv2d(img, w1, padding=1)), kernel_size=2)
    h = max_pool2d(relu(conv2d(h, w2, padding=1)), kernel_size=2)
    return linear(rearrange(h, b c y x -> b (c y x)), head)

## Wider than high: 28 × 32 gives 7 × 8; the head wants 8 × 8, which a height of 32–35 gives.
fn wide(img: [b 3 28 32], w1: [C1 3 3 3], head: [K C1*8*8]) -> [b K]:
    h = max_pool2d(max_pool2d(relu(conv2d(img, w1, padding=1)), kernel_size=2), kernel_size=2)
    return linear(rearrange(h, b c y x -> b (c y x)), head)

## No input size gives 1000 = 8 × 125: only the weight can change.
fn no_size_fits(img: [b 3 16 16], w1: [C1 3 3 3], head: [K 1000]) -> [b K]:
    h = max_pool2d(relu(conv2d(img, w1, padding=1)), kernel_size=2)
    return linear(rearrange(h, b c y x -> b (c y x)), head)
