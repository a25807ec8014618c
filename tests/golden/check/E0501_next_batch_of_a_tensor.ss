fn main():
    x = zeros[2 8]
    batch = next_batch(x)
