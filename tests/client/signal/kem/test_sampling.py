"""The samplers under ML-KEM: SampleNTT gives 256 values below q, the same for the same
seed and indices and others for others; CBD_2 gives noise in [-2, 2] centred on zero."""

from custom_components.pacerelle.client.signal.kem.ntt import N, Q
from custom_components.pacerelle.client.signal.kem.sampling import (
    prf,
    sample_cbd2,
    sample_matrix,
    sample_ntt,
)

RHO = bytes(range(32))


def test_sample_ntt_is_uniform_below_q_and_fixed_by_its_seed() -> None:
    values = sample_ntt(RHO, 0, 1)
    assert len(values) == N
    assert all(0 <= value < Q for value in values)
    assert sample_ntt(RHO, 0, 1) == values
    assert sample_ntt(RHO, 1, 0) != values


def test_the_transposed_matrix_is_the_transpose() -> None:
    matrix = sample_matrix(RHO, 3, transposed=False)
    transposed = sample_matrix(RHO, 3, transposed=True)
    assert all(matrix[i][j] == transposed[j][i] for i in range(3) for j in range(3))


def test_cbd2_noise_is_small_and_depends_on_the_nonce() -> None:
    seed = b"s" * 32
    noise = sample_cbd2(seed, 0)
    assert len(noise) == N
    assert set(noise) <= {-2, -1, 0, 1, 2}
    assert abs(sum(noise)) < N // 4  # centred: 256 draws of variance 1
    assert sample_cbd2(seed, 1) != noise
    assert prf(seed, 0) != prf(seed, 1)
