dim B = 8
dim T = 32
dim V = 100

fn main(n: Int):
    small = dataset("text.txt", batch=B, length=T, vocab=V)
    dynamic = dataset("text.txt", batch=n, length=T, vocab=256)
    ids, targets = next_batch(small)
    more = next_batch(ids)
