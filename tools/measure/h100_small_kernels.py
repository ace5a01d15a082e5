#!/usr/bin/env python3
"""Kernel-level measurements for the small-model cost model (issue 9), run on one GPU.

Writes $OUT/small_kernels.csv (section,name,value,unit,note) and prints each row as it goes.
Sections:
  floor     - back-to-back duration of tiny kernels replayed from a CUDA graph (kernel floor)
  eager     - host time per eagerly issued op / per kernel of a tiny training step (host issue)
  compiled  - the same tiny training step under torch.compile and CUDA graphs
  optimizer - AdamW step over GPT-2-small parameter tensors: for-loop, foreach, fused
  muon      - Newton-Schulz (5 iterations) on GPT-2-small hidden matrices
  gemm      - bf16 matmul throughput at small-model and large-model shapes
  attn      - SDPA flash attention; FlexAttention block-sparse sliding window / document masks
  ce        - cross-entropy over a 50304 vocabulary, eager and compiled
  block     - one GPT-2-small block forward+backward at 65536 tokens
Timings: CUDA events or triton.testing.do_bench medians after warm-up.
"""
import csv
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.environ.get("OUT", ".")
DEV = "cuda"
ROWS = []
T0 = time.time()


def rec(section, name, value, unit, note=""):
    ROWS.append((section, name, value, unit, note))
    print(f"{section:9s} {name:46s} {value:12.4f} {unit:8s} {note}", flush=True)


def flush():
    with open(os.path.join(OUT, "small_kernels.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["section", "name", "value", "unit", "note"])
        w.writerows(ROWS)


def bench_ms(fn, warmup=25, rep=100):
    import triton.testing as tt
    return tt.do_bench(fn, warmup=warmup, rep=rep, return_mode="median")


def graph_per_kernel_us(make_op, n=2000):
    """Captures n dependent launches of make_op in a CUDA graph; returns us per kernel."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = make_op(None)
        for _ in range(3):
            y = make_op(y)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = make_op(None)
        for _ in range(n - 1):
            y = make_op(y)
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    reps = 10
    st = torch.cuda.Event(enable_timing=True)
    en = torch.cuda.Event(enable_timing=True)
    st.record()
    for _ in range(reps):
        g.replay()
    en.record()
    en.synchronize()
    return st.elapsed_time(en) * 1e3 / (reps * n)


def eager_per_op_us(make_op, n=2000):
    y = make_op(None)
    for _ in range(20):
        y = make_op(y)
    torch.cuda.synchronize()
    t = time.perf_counter()
    y = make_op(None)
    for _ in range(n - 1):
        y = make_op(y)
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e6 / n


def section_floor():
    x = torch.randn(256, device=DEV)
    a = torch.randn(64, 64, device=DEV, dtype=torch.bfloat16)
    v = torch.randn(64, 64, device=DEV, dtype=torch.bfloat16)
    ln_x = torch.randn(64, 768, device=DEV, dtype=torch.bfloat16)
    ops = {
        "add_256": lambda y: (x if y is None else y) + 1,
        "mm_64x64x64_bf16": lambda y: a @ (v if y is None else y),
        "layer_norm_64x768_bf16": lambda y: F.layer_norm(ln_x if y is None else y, (768,)),
        "gelu_64x768_bf16": lambda y: F.gelu(ln_x if y is None else y),
    }
    for name, op in ops.items():
        rec("floor", "graph_" + name, graph_per_kernel_us(op), "us/kernel", "CUDA graph replay")
        rec("eager", "eager_" + name, eager_per_op_us(op), "us/op", "eager loop, host bound")
    flush()


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, 2)
        q = q.view(b, t, self.h, c // self.h).transpose(1, 2)
        k = k.view(b, t, self.h, c // self.h).transpose(1, 2)
        v = v.view(b, t, self.h, c // self.h).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc(self.ln2(x))))


class Tiny(nn.Module):
    def __init__(self, layers=12, d=64, heads=2, vocab=512):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, tgt):
        x = self.emb(idx)
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), tgt.view(-1))


def count_kernels(step):
    from torch.profiler import ProfilerActivity, profile
    step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    n = 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and "Memcpy" not in e.name and "Memset" not in e.name:
            n += 1
    return n


def time_step(step, n=30):
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n


def section_tiny_training():
    torch.manual_seed(0)
    idx = torch.randint(0, 512, (1, 64), device=DEV)
    tgt = torch.randint(0, 512, (1, 64), device=DEV)
    model = Tiny().to(DEV)

    def fwd_bwd(m):
        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = m(idx, tgt)
            loss.backward()
        return step

    for label, m in (("eager", model),):
        step = fwd_bwd(m)
        k = count_kernels(step)
        t = time_step(step)
        rec("eager", "tiny12_fwd_bwd_step", t * 1e6, "us", f"{k} kernels")
        rec("eager", "tiny12_fwd_bwd_per_kernel", t * 1e6 / k, "us/kernel", "host issue, eager autograd")
    flush()
    try:
        cm = torch.compile(model)
        step = fwd_bwd(cm)
        step()
        k = count_kernels(step)
        t = time_step(step)
        rec("compiled", "tiny12_compile_fwd_bwd_step", t * 1e6, "us", f"{k} kernels")
        rec("compiled", "tiny12_compile_per_kernel", t * 1e6 / k, "us/kernel", "torch.compile default")
    except Exception as e:  # noqa: BLE001
        print("compile failed", e, flush=True)
    flush()
    try:
        torch.compiler.reset()
        cg = torch.compile(model, mode="reduce-overhead")
        step = fwd_bwd(cg)
        for _ in range(3):
            step()
        k = count_kernels(step)
        t = time_step(step)
        rec("compiled", "tiny12_cudagraph_fwd_bwd_step", t * 1e6, "us", f"{k} kernels")
        rec("compiled", "tiny12_cudagraph_per_kernel", t * 1e6 / max(k, 1), "us/kernel", "reduce-overhead")
    except Exception as e:  # noqa: BLE001
        print("cudagraph compile failed", e, flush=True)
    flush()


def gpt2_small_params(d=768, layers=12, vocab=50304):
    shapes = [(vocab, d), (1024, d)]
    for _ in range(layers):
        shapes += [(d,), (d,), (3 * d, d), (3 * d,), (d, d), (d,), (d,), (d,), (4 * d, d), (4 * d,), (d, 4 * d), (d,)]
    shapes += [(d,), (d,)]
    return [torch.randn(s, device=DEV, requires_grad=True) for s in shapes]


def section_optimizer():
    params = gpt2_small_params()
    for p in params:
        p.grad = torch.randn_like(p)
    n = len(params)
    for mode in ("forloop", "foreach", "fused"):
        kw = {"foreach": False} if mode == "forloop" else ({"foreach": True} if mode == "foreach" else {"fused": True})
        opt = torch.optim.AdamW(params, lr=1e-4, **kw)
        t = time_step(opt.step, n=20)
        k = count_kernels(opt.step)
        rec("optimizer", f"adamw_{mode}_gpt2small", t * 1e6, "us", f"{n} tensors, {k} kernels")
    gn = lambda: torch.nn.utils.clip_grad_norm_(params, 1.0)  # noqa: E731
    t = time_step(gn, n=20)
    rec("optimizer", "clip_grad_norm_gpt2small", t * 1e6, "us", f"{n} tensors, {count_kernels(gn)} kernels")
    flush()


def newton_schulz(g, steps=5):
    a, b, c = (3.4445, -4.7750, 2.0315)
    x = g.bfloat16()
    if g.size(0) > g.size(1):
        x = x.T
    x = x / (x.norm() + 1e-7)
    for _ in range(steps):
        am = x @ x.T
        bm = b * am + c * am @ am
        x = a * x + bm @ x
    if g.size(0) > g.size(1):
        x = x.T
    return x


def section_muon():
    for d in (768, 1024):
        mats = []
        for _ in range(12 if d == 768 else 16):
            mats += [torch.randn(3 * d, d, device=DEV), torch.randn(d, d, device=DEV),
                     torch.randn(4 * d, d, device=DEV), torch.randn(d, 4 * d, device=DEV)]
        ms = bench_ms(lambda: [newton_schulz(m) for m in mats], warmup=5, rep=50)
        flops = 0
        for m in mats:
            r, c = min(m.shape), max(m.shape)
            flops += 5 * (4 * r * r * c + 2 * r ** 3)
        rec("muon", f"ns5_all_hidden_d{d}", ms * 1e3, "us", f"{len(mats)} matrices, {flops/ms/1e9:.1f} TFLOP/s")
    flush()


GEMMS = [
    # (label, m, k, n)
    ("g2s_qkv_fwd", 65536, 768, 2304), ("g2s_proj_fwd", 65536, 768, 768),
    ("g2s_fc_fwd", 65536, 768, 3072), ("g2s_fc2_fwd", 65536, 3072, 768),
    ("g2s_head_fwd", 65536, 768, 50304), ("g2s_qkv_dgrad", 65536, 2304, 768),
    ("g2s_fc_wgrad", 768, 65536, 3072), ("g2s_head_wgrad", 768, 65536, 50304),
    ("g2s_qkv_fwd_T16k", 16384, 768, 2304), ("g2s_fc_fwd_T8k", 8192, 768, 3072),
    ("g2m_qkv_fwd", 65536, 1024, 3072), ("g2m_fc_fwd", 65536, 1024, 4096),
    ("g2m_fc2_fwd", 65536, 4096, 1024), ("g2m_head_fwd", 65536, 1024, 50304),
    ("l8b_qkv_fwd", 8192, 4096, 6144), ("l8b_fc1_fwd", 8192, 4096, 28672),
    ("l8b_fc2_fwd", 8192, 14336, 4096), ("l70b_tp8_fc1", 8192, 8192, 7168),
    ("sq_4096", 4096, 4096, 4096), ("sq_8192", 8192, 8192, 8192),
    ("sq_1024", 1024, 1024, 1024), ("sq_512", 512, 512, 512), ("sq_256", 256, 256, 256),
]


def section_gemm():
    for label, m, k, n in GEMMS:
        a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(k, n, device=DEV, dtype=torch.bfloat16)
        ms = bench_ms(lambda: a @ b)
        rec("gemm", f"{label}_{m}x{k}x{n}", 2 * m * n * k / (ms * 1e-3) / 1e12, "TFLOP/s", f"{ms*1e3:.1f} us")
        del a, b
    flush()


def section_attention():
    for b, h, s, d in ((64, 12, 1024, 64), (64, 6, 1024, 128), (24, 6, 2048, 128), (1, 6, 65536, 128)):
        q = torch.randn(b, h, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn_like(q, requires_grad=True)
        v = torch.randn_like(q, requires_grad=True)
        flops = 4 * b * h * s * s * d / 2
        ms = bench_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
        rec("attn", f"sdpa_causal_fwd_b{b}h{h}s{s}d{d}", flops / (ms * 1e-3) / 1e12, "TFLOP/s", f"{ms*1e3:.1f} us")
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        g = torch.randn_like(o)
        ms = bench_ms(lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True))
        rec("attn", f"sdpa_causal_bwd_b{b}h{h}s{s}d{d}", 2.5 * flops / (ms * 1e-3) / 1e12, "TFLOP/s", f"{ms*1e3:.1f} us")
        del q, k, v, o, g
    flush()


def section_flex():
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    flex = torch.compile(flex_attention, dynamic=False)
    s, h, d = 65536, 6, 128
    pos = torch.arange(s, device=DEV)
    configs = [("win1792", 1792, None), ("win1792_doc620", 1792, 620), ("win896_doc620", 896, 620),
               ("causal_doc620", None, 620)]
    q = torch.randn(1, h, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn_like(q, requires_grad=True)
    v = torch.randn_like(q, requires_grad=True)
    for name, w, doc in configs:
        if time.time() - T0 > 420:
            print("skip flex (time)", flush=True)
            break
        docs = pos // doc if doc else torch.zeros_like(pos)

        def mask_mod(b, hh, qi, ki, w=w, docs=docs):
            m = (qi >= ki) & (docs[qi] == docs[ki])
            if w is not None:
                m = m & (qi - ki < w)
            return m

        bm = create_block_mask(mask_mod, B=None, H=None, Q_LEN=s, KV_LEN=s, device=DEV, BLOCK_SIZE=128)
        dense_blocks = (s // 128) ** 2
        rec("attn", f"flex_{name}_block_density", 1 - bm.sparsity() / 100, "frac", f"of {dense_blocks} blocks")
        ms = bench_ms(lambda: flex(q, k, v, block_mask=bm), warmup=5, rep=30)
        rec("attn", f"flex_{name}_fwd", ms * 1e3, "us", "")
        o = flex(q, k, v, block_mask=bm)
        g = torch.randn_like(o)
        ms = bench_ms(lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True), warmup=5, rep=30)
        rec("attn", f"flex_{name}_bwd", ms * 1e3, "us", "")
        flush()


def section_ce():
    t, vocab = 65536, 50304
    logits = torch.randn(t, vocab, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    y = torch.randint(0, vocab, (t,), device=DEV)

    def eager():
        loss = F.cross_entropy(logits.float(), y)
        loss.backward()

    ms = bench_ms(eager, warmup=3, rep=20)
    rec("ce", "eager_float_ce_fwd_bwd_65536x50304", ms * 1e3, "us", f"{t*vocab*2/1e9:.2f} GB bf16 logits")
    ce_c = torch.compile(lambda z: F.cross_entropy(z.float(), y))

    def comp():
        loss = ce_c(logits)
        loss.backward()

    comp()
    ms = bench_ms(comp, warmup=3, rep=20)
    rec("ce", "compiled_float_ce_fwd_bwd_65536x50304", ms * 1e3, "us", "")
    flush()


def section_block():
    blk = Block(768, 12).to(DEV)
    x = torch.randn(64, 1024, 768, device=DEV, requires_grad=True)

    def step(m):
        def f():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = m(x)
            out.sum().backward()
        return f

    ms = bench_ms(step(blk), warmup=3, rep=20)
    rec("block", "gpt2s_block_eager_fwd_bwd_64x1024", ms * 1e3, "us", "autocast bf16, fp32 master")
    cb = torch.compile(blk)
    f = step(cb)
    f()
    ms = bench_ms(f, warmup=3, rep=20)
    rec("block", "gpt2s_block_compiled_fwd_bwd_64x1024", ms * 1e3, "us", "")
    flush()


def main():
    print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0), flush=True)
    rec("meta", "sm_count", torch.cuda.get_device_properties(0).multi_processor_count, "", torch.cuda.get_device_name(0))
    order = sys.argv[1:] or ["floor", "tiny", "optimizer", "muon", "gemm", "attn", "ce", "block", "flex"]
    for name in order:
        fn = {"floor": section_floor, "tiny": section_tiny_training, "optimizer": section_optimizer,
              "muon": section_muon, "gemm": section_gemm, "attn": section_attention, "ce": section_ce,
              "block": section_block, "flex": section_flex}[name]
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            print(f"section {name} failed: {e!r}", flush=True)
        torch.cuda.empty_cache()
        print(f"-- {name} done at {time.time()-T0:.0f}s", flush=True)
    flush()


if __name__ == "__main__":
    main()
