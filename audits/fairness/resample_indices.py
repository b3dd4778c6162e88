"""The resample indices scipy.stats.bootstrap draws for a seed, drawn from the bit generator's words directly."""

from __future__ import annotations

import numpy as np

WORDS_CHUNK = 1 << 17  # 32-bit words mapped at a time (their float64 products stay in the L3 cache)


def index_words(n_questions: int, n_boot: int, seed: int) -> np.ndarray:
    """The 32-bit words Generator.integers(0, n_questions, (n_boot, n_questions)) maps to its draws.

    For 1 < n < 2**32, Generator.integers reads the stream of 32-bit words of the PCG64 bit generator
    (each 64-bit output split, low half first) and maps each word u to floor(u n / 2**32) (Lemire's
    method), rejecting the rare words whose low product (u n mod 2**32) falls below (2**32 - n) mod n and
    reading the next word instead. This returns the accepted words, n_boot · n_questions of them.
    """
    size = n_boot * n_questions
    n32 = np.uint32(n_questions)
    threshold = np.uint32((2**32 - n_questions) % n_questions)
    spare = 64  # rejections are about n**2 / 2**33 per resample: a few per cell at most
    while True:
        bitgen = np.random.default_rng(seed).bit_generator
        total = size + spare
        words = bitgen.random_raw((total + 1) // 2).view(np.uint32)[:total]
        low = np.empty(min(total, WORDS_CHUNK), dtype=np.uint32)
        rejected = []
        for start in range(0, total, WORDS_CHUNK):
            stop = min(total, start + WORDS_CHUNK)
            part = low[: stop - start]
            np.multiply(words[start:stop], n32, out=part)
            if part.min() < threshold:
                rejected.append(start + np.flatnonzero(part < threshold))
        if rejected:
            words = np.delete(words, np.concatenate(rejected))
        if words.size >= size:
            return words[:size]
        spare *= 16  # more rejections than spare words: draw again with more


def map_words(words: np.ndarray, n_questions: int, out: np.ndarray, buffer: np.ndarray) -> None:
    """out[:] = floor(words * n / 2**32), exactly (the float64 product is exact for n < 2**21)."""
    product = buffer[: words.size]
    np.multiply(words, n_questions * 2.0**-32, out=product)
    out[:] = product


def bootstrap_indices(n_questions: int, n_boot: int, seed: int) -> np.ndarray:
    """The (n_boot, n_questions) resample-index matrix, drawn exactly as scipy.stats.bootstrap draws it:
    ``np.random.default_rng(seed).integers(0, n_questions, (n_boot, n_questions))``."""
    if n_questions <= 1 or n_boot == 0 or n_questions >= 2**21:
        if n_questions == 0:
            return np.empty((n_boot, 0), dtype=np.int64)
        return np.random.default_rng(seed).integers(0, n_questions, (n_boot, n_questions))
    words = index_words(n_questions, n_boot, seed)
    out = np.empty(words.size, dtype=np.int64)
    buffer = np.empty(WORDS_CHUNK)
    for start in range(0, words.size, WORDS_CHUNK):
        stop = min(words.size, start + WORDS_CHUNK)
        map_words(words[start:stop], n_questions, out[start:stop], buffer)
    return out.reshape(n_boot, n_questions)
