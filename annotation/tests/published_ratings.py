"""Rating sets published with reference coefficients, shared by the agreement tests that check against them."""

import math

nan = math.nan

# irrCAC's cac.raw4raters: Krippendorff's (2011) 12 units rated by 4 raters, with missing ratings (Gwet 2014, p. 120).
# Published on it: Fleiss' kappa 0.76117 (fleiss.kappa.raw), AC1 0.7754 (gwet.ac1.raw).
CAC_RAW4RATERS = [
    [1, 1, nan, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [nan, 5, 5, 5],
    [nan, nan, 1, 1],
    [nan, nan, 3, nan],
]
