#!/usr/bin/env python3
"""Measured GEMM efficiency -> the gemm_max of cost.cc's shape law (docs/MODEL.md, "GEMM").

cost.cc prices a bf16 GEMM m x k x n at peak * gemm_max * k/(k+gemm_k_half) * waves(m, n), with
128 x 128 output tiles spread over the SMs in waves. Dividing each measured efficiency by the
depth and wave factors leaves an estimate of gemm_max; the median over the shapes is what the
presets pin (efficiency_pinned). Usage: tools/fit_gemm_shape.py [--k-half 100]
"""
import argparse
import csv
import json
import math
import pathlib
import re
import statistics

ROOT = pathlib.Path(__file__).resolve().parent.parent
TILE = 128


def waves(m, n, sms):
    tiles = math.ceil(m / TILE) * math.ceil(n / TILE)
    return tiles / (math.ceil(tiles / sms) * sms)


def h100_rows():
    """(m, k, n, efficiency) of the bf16 GEMMs >= 10 GFLOP in data/measurements (H100 SXM)."""
    rows = []
    path = ROOT / "data/measurements/h100_small_kernels.csv"
    for r in csv.reader(open(path)):
        if r[0] != "gemm":
            continue
        m, k, n = map(int, re.search(r"(\d+)x(\d+)x(\d+)$", r[1]).groups())
        if 2.0 * m * n * k < 1e10:  # launch-bound: priced by the kernel floor instead
            continue
        rows.append((m, k, n, float(r[2]) / 989.4))
    return rows


def b200_rows():
    """SimuMax's measured dense matmuls on B200 (efficiency of its 2250 TFLOP/s peak)."""
    path = ROOT.parent / "shared/measurements/simumax_b200_bf16_system.json"
    table = json.load(open(path))["accelerator"]["op"]["matmul"]["accurate_efficient_factor"]
    rows = []
    for key, eff in table.items():
        g = dict(re.findall(r"(\w+)=([\w.]+)", key))
        if int(g["b"]) == 1:
            rows.append((int(g["m"]), int(g["k"]), int(g["n"]), eff))
    return rows


def gemm_max(rows, sms, k_half):
    est = [e / ((k / (k + k_half)) * waves(m, n, sms)) for m, k, n, e in rows]
    return statistics.median(est), len(est)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--k-half", type=float, default=100.0)
    a = ap.parse_args()
    for name, rows, sms in (("h100_sxm_80gb", h100_rows(), 132), ("b200_sxm_180gb", b200_rows(), 148)):
        g, n = gemm_max(rows, sms, a.k_half)
        print(f"{name}: gemm_max {g:.4f} (median of {n} shapes, gemm_k_half {a.k_half:g})")


if __name__ == "__main__":
    main()
