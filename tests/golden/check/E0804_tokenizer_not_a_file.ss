# A tokenizer path in an untrusted file is read as it is typed: only a regular file, so a device
# that never ends (or a FIFO that blocks) is refused, not read.
dim B = 2
dim T = 8
dim V = 256

fn main():
    data = dataset("text.txt", tokenizer="/dev/zero", batch=B, length=T, vocab=V)
