dim C = 4

## A stride of 2 over any `h` rounds down differently for odd and even h.
fn halve(img: [b C h w]) -> [b C h w]:
    return max_pool2d(img, kernel_size=2)

## Written as `2h`, the size is exact: (2h - 2) / 2 + 1 = h.
fn halve_even(img: [b C 2h 2w]) -> [b C h w]:
    return max_pool2d(img, kernel_size=2)

fn strided_conv(x: [b C t], w: [C C 3]) -> [b C t]:
    return conv1d(x, w, stride=2, padding=1)
