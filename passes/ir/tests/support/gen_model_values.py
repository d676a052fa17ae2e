#!/usr/bin/env python3
"""Expected outputs of examples/models/{mlp,gated_closures}.relay on deterministic inputs,
computed with numpy in float64 and rounded to float32 at each op boundary as the IR does.
The inputs follow `input(shape, seed)` below; ir_eval.rs builds the same ones.

    python3 core/tests/support/gen_model_values.py
"""
import numpy as np


def inp(shape, seed):
    n = int(np.prod(shape))
    k = np.arange(n, dtype=np.float64)
    return np.sin(0.37 * k + seed).reshape(shape).astype(np.float32) * np.float32(0.5)


def r(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32)


def dense(x, w):
    return r(x.astype(np.float64) @ w.astype(np.float64).T)


x = inp((1, 784), 1)
w1, b1 = inp((256, 784), 2), inp((256,), 3)
w2, b2 = inp((128, 256), 4), inp((128,), 5)
w3, b3 = inp((10, 128), 6), inp((10,), 7)
h = r(np.maximum(r(dense(x, w1) + b1), 0))
h = r(np.maximum(r(dense(h, w2) + b2), 0))
z = r(dense(h, w3) + b3).astype(np.float64)
e = np.exp(z - z.max(-1, keepdims=True))
print("mlp", ", ".join(repr(float(v)) for v in r(e / e.sum(-1, keepdims=True)).reshape(-1)))

x = inp((1, 64), 11)
w1, b1, w2, b2 = inp((64, 64), 12), inp((64,), 13), inp((64, 64), 14), inp((64,), 15)
for use_relu in (True, False):
    act = (lambda v: r(np.maximum(v, 0))) if use_relu else (lambda v: r(1 / (1 + np.exp(-v.astype(np.float64)))))
    h1 = act(r(dense(x, w1) + b1))
    h2 = act(r(dense(h1, w2) + b2))
    out = r(h2 * np.float32(1.0 if use_relu else 0.5))
    print("gated", use_relu, repr(float(r(out.astype(np.float64).sum()))), repr(float(out[0, 0])), repr(float(out[0, 63])))
