# ?k flowing on: the entries a mask selects, a data-dependent number of them, then their mean.
# Dynamic: b, n; k at run time.
extern fn masked_select(x: [b n], mask: [b n] Bool) -> [?k] = "torch.masked_select"

## The mean of the entries above a threshold, and how many there were.
export fn mean_above(x: [b n], threshold: Real) -> Real:
    picked = masked_select(x, x > threshold)
    return mean(picked, over=k) + sum(picked * 0.0 + 1.0, over=k)
