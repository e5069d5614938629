"""What the scratch detector sees in an image (NumPy only), shared by ../build.py and predict.py.

A scratch is a thin line brighter or darker than the surface around it. The detector looks for
it with fine line filters: at every pixel, for each of four directions (0, 45, 90 and 135
degrees), the second difference *across* the direction (2·centre − the two neighbours one or
two pixels away), averaged over five pixels *along* it. A one-pixel line of contrast c gives
about 2c there; the surface's grain gives a few grey levels. The features are, for each of the
two distances, the logarithms of the largest response over the image and of its 99.5th
percentile, for the strongest direction and averaged over the four.

The filter is deliberately fine-grained, as a detector trained only on sharp photos often is:
it measures the line's sharp edge, not the line. That is what the `blur` transform in
../release.yaml finds out.
"""

import numpy as np

# Unit steps along each direction (row, column) and across it.
DIRECTIONS = (((0, 1), (1, 0)), ((1, 1), (1, -1)), ((1, 0), (0, 1)), ((1, -1), (1, 1)))
REACH = 2  # five pixels along: -2 .. 2
STEPS = (1, 2)
NAMES = tuple(f"{name}_step{step}" for step in STEPS for name in ("log_max", "log_p995", "log_max_mean", "log_p995_mean"))


def _shift(a, dr, dc):
    """a shifted by (dr, dc), edges repeated (so the border never looks like a line)."""
    p = max(abs(dr), abs(dc))
    padded = np.pad(a, p, mode="edge")
    h, w = a.shape
    return padded[p + dr:p + dr + h, p + dc:p + dc + w]


def responses(pixels, step=1):
    """|line filter| for each direction: an array of shape (4, height, width). ``step`` is the
    distance to the neighbours across the line (1: the finest scale)."""
    a = np.asarray(pixels, dtype=np.float64)
    out = []
    for (ar, ac), (cr, cc) in DIRECTIONS:
        across = 2.0 * a - _shift(a, step * cr, step * cc) - _shift(a, -step * cr, -step * cc)
        along = sum(_shift(across, k * ar, k * ac) for k in range(-REACH, REACH + 1)) / (2 * REACH + 1)
        out.append(np.abs(along))
    return np.stack(out)


def features(pixels):
    """The detector's features of one greyscale image (2-D array of 0..255)."""
    out = []
    for step in STEPS:
        flat = responses(pixels, step).reshape(len(DIRECTIONS), -1)
        top = flat.max(axis=1)
        p995 = np.percentile(flat, 99.5, axis=1)
        best = int(np.argmax(top))
        out.extend([top[best], p995[best], top.mean(), p995.mean()])
    return np.log1p(np.array(out))
