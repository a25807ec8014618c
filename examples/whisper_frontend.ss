# Whisper's encoder front end: two 1-d convolutions over the log-mel frames (the second with
# stride 2 halves them, rounding down: (2P + 2 - 2 - 1) / 2 + 1 = P), GELU after each, and a learned
# position per output frame. transformers' WhisperEncoder computes the same (conv1, conv2,
# embed_positions); tests/python/test_convolution.py compares them.

dim Mel = 16
dim D = 32
dim P = 24
dim Frames = 2 * P

model WhisperFrontend:
    param conv1_w: [D Mel 3] = normal(std=0.1)
    param conv1_b: [D] = zeros
    param conv2_w: [D D 3] = normal(std=0.1)
    param conv2_b: [D] = zeros
    param embed_positions: [P D] = normal(std=0.02)

## The frames Whisper's encoder layers read: [b P D] from [b Mel 2P] log-mel features.
fn forward(m: WhisperFrontend, mel: [b Mel Frames]) -> [b P D]:
    h = gelu(conv1d(mel, m.conv1_w, m.conv1_b, padding=1))
    h = gelu(conv1d(h, m.conv2_w, m.conv2_b, stride=2, padding=1))
    return rearrange(h, b d t -> b t d) + m.embed_positions
