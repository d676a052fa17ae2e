#!/usr/bin/env python3
"""Exports the models ONNX Runtime judges irpass on: torchvision's classification models with
random weights, and small BERT-style and GPT-style transformer stacks, each at opsets 13 and
17, with `torch.onnx.export` (Debian's python3-torch and python3-torchvision). The `_dynamic`
ones are exported as most export scripts do it: a ResNet-18 with a dynamic batch, the
transformer stacks with a dynamic batch and sequence length (`dim_param` `batch` and `seq`).
The `_unfolded` ones (opset 17 only) are the vision models exported without the exporter's own
work: `do_constant_folding=False` and `TrainingMode.PRESERVE`, so every batch norm is still a
`BatchNormalization` node and no constant expression is folded.

Usage: export_torch.py OUT_DIR [NAME ...]   (default: every model)
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torchvision.models as tvm

torch.manual_seed(20261125)

VISION = {
    "resnet18": lambda: tvm.resnet18(),
    "mobilenet_v2": lambda: tvm.mobilenet_v2(),
    "mobilenet_v3_small": lambda: tvm.mobilenet_v3_small(),
    "efficientnet_b0": lambda: tvm.efficientnet_b0(),
    "densenet121": lambda: tvm.densenet121(),
    "googlenet": lambda: tvm.googlenet(aux_logits=False, init_weights=True),
    "shufflenet_v2_x0_5": lambda: tvm.shufflenet_v2_x0_5(),
    "squeezenet1_1": lambda: tvm.squeezenet1_1(),
    "mnasnet0_5": lambda: tvm.mnasnet0_5(),
    "regnet_x_400mf": lambda: tvm.regnet_x_400mf(),
    "convnext_tiny": lambda: tvm.convnext_tiny(),
    "vit_tiny": lambda: tvm.VisionTransformer(
        image_size=224, patch_size=16, num_layers=2, num_heads=3, hidden_dim=192, mlp_dim=768
    ),
}


class Attention(nn.Module):
    def __init__(self, d, heads, causal):
        super().__init__()
        self.h, self.d, self.causal = heads, d, causal
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        shape = (b, t, self.h, d // self.h)
        q, k, v = (y.reshape(shape).transpose(1, 2) for y in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.h)
        if self.causal:
            steps = torch.arange(t)
            causal = steps[None, :] <= steps[:, None]
            scores = scores.masked_fill(~causal, float("-inf"))
        keep = mask[:, None, None, :].expand(b, self.h, t, t)
        scores = torch.where(keep == 0, torch.full_like(scores, -1e4), scores)
        y = torch.softmax(scores, dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d, heads, causal, decomposed_ln):
        super().__init__()
        self.att = Attention(d, heads, causal)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.decomposed_ln = decomposed_ln

    def norm(self, ln, x):
        if not self.decomposed_ln:
            return ln(x)
        mean = x.mean(-1, keepdim=True)
        var = (x - mean).pow(2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + ln.eps) * ln.weight + ln.bias

    def forward(self, x, mask):
        x = x + self.att(self.norm(self.ln1, x), mask)
        h = self.ff1(self.norm(self.ln2, x))
        h = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))  # GELU through Erf
        return x + self.ff2(h)


class Stack(nn.Module):
    """Embeddings by Gather, position ids from the input's shape, `layers` blocks."""

    def __init__(self, vocab=1000, d=128, heads=4, layers=2, causal=False, decomposed_ln=False):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(512, d)
        self.blocks = nn.ModuleList(Block(d, heads, causal, decomposed_ln) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)
        self.drop = nn.Dropout(0.1)

    def forward(self, ids, mask):
        t = ids.shape[1]
        pos = torch.arange(t, dtype=torch.long).unsqueeze(0)
        x = self.drop(self.tok(ids) + self.pos(pos))
        for b in self.blocks:
            x = b(x, mask)
        return self.head(self.ln(x))


TEXT = {
    "bert_2layer": lambda: Stack(),
    "bert_2layer_decomposed_ln": lambda: Stack(decomposed_ln=True),
    "gpt_2layer": lambda: Stack(causal=True),
}


DYNAMIC = {
    "resnet18_dynamic": ("resnet18", {"input": {0: "batch"}, "logits": {0: "batch"}}),
    "bert_2layer_dynamic": ("bert_2layer", None),
    "gpt_2layer_dynamic": ("gpt_2layer", None),
}
TEXT_AXES = {
    "input_ids": {0: "batch", 1: "seq"},
    "attention_mask": {0: "batch", 1: "seq"},
    "logits": {0: "batch", 1: "seq"},
}


UNFOLDED = [f"{name}_unfolded" for name in VISION]


def export(name, out_dir, opset):
    path = os.path.join(out_dir, f"{name}_opset{opset}.onnx")
    axes = None
    folded = not name.endswith("_unfolded")
    name = name.removesuffix("_unfolded")
    if name in DYNAMIC:
        name, axes = DYNAMIC[name]
        axes = axes or TEXT_AXES
    if name in VISION:
        model = VISION[name]().eval()
        args = (torch.randn(1, 3, 224, 224),)
        names = (["input"], ["logits"])
    else:
        model = TEXT[name]().eval()
        ids = torch.randint(0, 1000, (1, 16))
        mask = torch.ones(1, 16, dtype=torch.long)
        mask[0, 12:] = 0
        args = (ids, mask)
        names = (["input_ids", "attention_mask"], ["logits"])
    with torch.no_grad():
        torch.onnx.export(model, args, path, opset_version=opset, input_names=names[0],
                          output_names=names[1], do_constant_folding=folded, dynamic_axes=axes,
                          training=torch.onnx.TrainingMode.EVAL if folded else torch.onnx.TrainingMode.PRESERVE)
    return path


def main():
    out_dir = sys.argv[1]
    wanted = sys.argv[2:] or list(VISION) + list(TEXT) + list(DYNAMIC) + UNFOLDED
    os.makedirs(out_dir, exist_ok=True)
    for name in wanted:
        for opset in (17,) if name in UNFOLDED else (13, 17):
            print(export(name, out_dir, opset), flush=True)


if __name__ == "__main__":
    main()
