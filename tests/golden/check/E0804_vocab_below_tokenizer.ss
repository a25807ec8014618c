# A tokenizer whose ids reach 299 needs a vocabulary of at least 300.
dim B = 2
dim T = 8
dim V = 256

fn main():
    data = dataset("text.txt", tokenizer="data/tiny_tokenizer.json", batch=B, length=T, vocab=V)
