dim C = 4

## Four halvings of 12: 12 -> 6 -> 3 -> 1, and the last pool of 2 finds nothing.
fn shrink(img: [b C 12 12]) -> [b C 1 1]:
    h = max_pool2d(img, kernel_size=2)
    h = max_pool2d(h, kernel_size=2)
    h = max_pool2d(h, kernel_size=2)
    return max_pool2d(h, kernel_size=2)

fn wide_kernel(x: [b C 4], w: [C C 7]) -> [b C 1]:
    return conv1d(x, w)

fn padded_pool(img: [b C 8 8]) -> [b C 4 4]:
    return max_pool2d(img, kernel_size=2, padding=2)

## A generic `t` may be 1, and a kernel of 3 needs 3: written `t+2`, the output is `t`.
fn valid(x: [b C t], w: [C C 3]) -> [b C t-2]:
    return conv1d(x, w)

fn valid_with_room(x: [b C t+2], w: [C C 3]) -> [b C t]:
    return conv1d(x, w)
