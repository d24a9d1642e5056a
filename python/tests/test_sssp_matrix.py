"""pathctl.sssp and bfs with layout="matrix": one row of n distances, as
apsp gives it for that one source (the package passed run's --result-peer
to sssp, which refused it)."""
import numpy as np
import pyarrow as pa
import pytest

import pathctl


@pytest.mark.parametrize("fn", ["sssp", "bfs"])
def test_one_source_matrix(fn):
    edges = pa.table({"src": [0, 1, 2, 0, 3], "dst": [1, 2, 3, 3, 4], "weight": [2, 2, 2, 7, 1]})
    got = getattr(pathctl, fn)(edges, 0, layout="matrix")
    want = pathctl.apsp(edges, sources=[0], layout="matrix",
                        **({"algorithm": "bfs"} if fn == "bfs" else {}))
    assert got.num_rows == 1
    np.testing.assert_array_equal(got.column("distance").combine_chunks().values.to_numpy(zero_copy_only=False),
                                  want.column("distance").combine_chunks().values.to_numpy(zero_copy_only=False))
