"""The runtime's one rotary permutation: a projection's rows, head by head, reordered between the
two ways rotary embeddings pair features. Hugging Face models rotate (i, i + hd/2) together (NEOX
form); Meta's checkpoints and llama.cpp's NORM form rotate (2i, 2i+1). import-weights tries both
directions on a folder's tensors; --gguf writes Q and K rows in llama.cpp's order."""
from __future__ import annotations


def permute_rows(t, head_dim, to_interleaved=True, matrix=True):
    """`t`'s rows per head reordered: (i, i+hd/2) -> (2i, 2i+1) when to_interleaved, else back.
    The rows are t's second-to-last axis for a matrix ([... rows cols]), its last for a vector (a
    bias, [... rows]); leading axes (blocks, experts) are kept."""
    rest = t.shape[-1:] if matrix else ()
    lead = t.shape[:-2] if matrix else t.shape[:-1]
    rows = t.shape[-2] if matrix else t.shape[-1]
    heads = rows // head_dim
    halves = (2, head_dim // 2) if to_interleaved else (head_dim // 2, 2)
    u = t.reshape(*lead, heads, *halves, *rest).transpose(len(lead) + 1, len(lead) + 2)
    return u.reshape(t.shape).contiguous()
