"""Linear algebra (``tf.linalg``): the matrix product of the op table (MatMul for
matrices, BatchMatMulV2 for batches of them)."""

from ._xdev import matmul

__all__ = ["matmul"]
