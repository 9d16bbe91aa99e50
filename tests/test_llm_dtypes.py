"""The model dtype follows what the machine computes natively (flags injected here; the
real load is checked in tests/test_llm_qwen.py)."""

from __future__ import annotations

import pytest

from pokegym.llm.dtypes import choose_dtype, cpu_flags


@pytest.mark.parametrize(
    "flags,expected",
    [({"avx2", "fma", "avx512f", "amx_bf16", "amx_tile"}, "bfloat16"),
     ({"avx2", "avx512f", "avx512_bf16"}, "bfloat16"),
     ({"fp", "asimd", "bf16"}, "bfloat16"),  # Armv8.6
     ({"avx2", "fma", "f16c"}, "float32"),  # an AVX2-only AMD EPYC
     ({"avx2", "avx512f", "avx512bw"}, "float32"),  # AVX-512 without BF16
     (set(), "float32")],  # nothing known
)  # fmt: skip
def test_auto_picks_bfloat16_only_where_the_cpu_computes_it(flags, expected):
    choice = choose_dtype("auto", "cpu", flags=flags)
    assert choice.dtype == expected
    assert choice.reason


def test_a_named_dtype_is_kept_and_gpus_get_a_half_type():
    assert choose_dtype("float32", "cpu", flags={"amx_bf16"}).dtype == "float32"
    assert choose_dtype("bfloat16", "cpu", flags=set()).dtype == "bfloat16"
    assert choose_dtype("auto", "cuda:0", cuda_bf16=True).dtype == "bfloat16"
    assert choose_dtype("auto", "cuda", cuda_bf16=False).dtype == "float16"


def test_an_unknown_dtype_is_a_clear_error():
    with pytest.raises(ValueError, match="auto, bfloat16, float32, float16"):
        choose_dtype("int4", "cpu")


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: fpu avx2 amx_bf16\n")
    assert cpu_flags(info) == {"fpu", "avx2", "amx_bf16"}
    assert cpu_flags(tmp_path / "missing") == frozenset()


def test_free_cores_read_the_runnable_tasks(tmp_path):
    from pokegym.llm.dtypes import free_cores

    loadavg = tmp_path / "loadavg"
    loadavg.write_text("0.50 0.40 0.30 1/300 4242\n")  # only this process runs
    assert free_cores(4, loadavg) == 4
    loadavg.write_text("6.10 5.00 4.00 4/300 4242\n")  # three others run
    assert free_cores(4, loadavg) == 1
    loadavg.write_text("9.70 8.00 7.00 9/300 4242\n")
    assert free_cores(2, loadavg) == 1  # never fewer than one
