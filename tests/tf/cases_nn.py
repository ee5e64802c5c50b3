"""Cases for frontend/tf/ops_nn.cc: matmul, conv, pooling, normalization, activations."""
import numpy as np

from check_ops import Case

CASES = []
