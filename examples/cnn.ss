# A small image classifier: conv, relu, pool, conv, relu, pool, and a linear head over the
# flattened features. The checker computes each size: 32 -> 32 -> 16 -> 16 -> 8, so the head reads
# C2*8*8 = 1024 features; a 28×28 image would give 7×7 and E0301 at the head, naming each step.

dim C1 = 8
dim C2 = 16
dim K = 10

model Cnn:
    param conv1_w: [C1 3 3 3] = normal(std=0.2)
    param conv1_b: [C1] = zeros
    param conv2_w: [C2 C1 3 3] = normal(std=0.1)
    param conv2_b: [C2] = zeros
    param head_w: [K C2*8*8] = normal(std=0.03)
    param head_b: [K] = zeros

## Class logits of a batch of 32×32 RGB images.
fn forward(m: Cnn, img: [b 3 32 32]) -> [b K]:
    h = relu(conv2d(img, m.conv1_w, m.conv1_b, padding=1))
    h = max_pool2d(h, kernel_size=2)
    h = relu(conv2d(h, m.conv2_w, m.conv2_b, padding=1))
    h = max_pool2d(h, kernel_size=2)
    features = rearrange(h, b c y x -> b (c y x))
    return linear(features, m.head_w, m.head_b)
