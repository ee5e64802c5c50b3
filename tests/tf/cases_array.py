"""Cases for frontend/tf/ops_array.cc: shapes and data movement."""
import numpy as np

from check_ops import Case

CASES = []
