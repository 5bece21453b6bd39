"""Chapter 6 shows stored post-norm and pre-norm scales: they must be what the code computes.

``tools/norm_placement.py`` wrote ``transformer_lib/pretrained/norm_placement.json``; here the
scales are computed again (a 24-layer encoder, eight initialisations per placement, float64: a few
seconds of one core) and must agree with the file, layer by layer, to float64 rounding.
"""

import math

from transformer_lib.pretrained.norm_placement import PLACEMENTS, compute_norm_placement, stored_norm_placement


def test_the_stored_scales_are_what_the_code_computes():
    stored, computed = stored_norm_placement(), compute_norm_placement()
    assert list(stored) == list(computed) == list(PLACEMENTS)
    for name in PLACEMENTS:
        assert stored[name].keys() == computed[name].keys() == {"activation", "gradient"}
        for quantity, values in computed[name].items():
            assert len(stored[name][quantity]) == len(values) == 24
            # two CPUs agree to about 1e-15 in float64; a changed encoder or seed moves every number
            assert all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(stored[name][quantity], values, strict=True)), (
                name, quantity)
