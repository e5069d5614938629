"""Every transform kind, by its ``perturb: {kind: ...}`` in release.yaml.

Families: ``tabular`` (declared: numeric_noise, categorical_swap), ``image`` (blur, brightness,
occlusion, jpeg) and ``text`` (typos, case, whitespace, word_swap), the last two validated by
human labels. Adding a kind is a module entry and one name in the tuple below.
"""

from __future__ import annotations

from oloproof.transforms import image, tabular, text
from oloproof.transforms.base import TransformKind

REGISTRY: dict[str, TransformKind] = {
    kind.name: kind
    for kind in (
        tabular.NUMERIC_NOISE,
        tabular.CATEGORICAL_SWAP,
        image.BLUR,
        image.BRIGHTNESS,
        image.OCCLUSION,
        image.JPEG,
        text.TYPOS,
        text.CASE,
        text.WHITESPACE,
        text.WORD_SWAP,
    )
}
