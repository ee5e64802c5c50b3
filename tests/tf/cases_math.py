"""Cases for frontend/tf/ops_math.cc: elementwise math, comparisons, logic, reductions."""
import numpy as np

from check_ops import Case

CASES = []
