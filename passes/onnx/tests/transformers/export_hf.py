#!/usr/bin/env python3
"""Exports transformer architectures of the `transformers` library with small configurations
and random weights (every parameter perturbed, so that no bias is zero) by `torch.onnx.export`: encoders (BERT, DistilBERT, RoBERTa, ALBERT, ELECTRA,
T5's encoder), decoders (GPT-2, GPT-Neo, LLaMA), an encoder-decoder (BART) and vision
transformers (ViT, MobileViT), each at opsets 14 and 17, with static shapes and with a dynamic
batch and sequence (`_dynamic`).

Usage: export_hf.py OUT_DIR [NAME ...]   (default: every model)
"""
import os
import sys
import warnings

import torch
import transformers as tf

warnings.filterwarnings("ignore")
torch.manual_seed(20261128)

SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
             vocab_size=1000, max_position_embeddings=128)


def text(cls, config):
    return lambda: (cls(config), "text")


MODELS = {
    "bert": text(tf.BertModel, tf.BertConfig(**SMALL)),
    "distilbert": text(tf.DistilBertModel, tf.DistilBertConfig(
        dim=64, n_layers=2, n_heads=4, hidden_dim=128, vocab_size=1000, max_position_embeddings=128)),
    "roberta": text(tf.RobertaModel, tf.RobertaConfig(**SMALL)),
    "albert": text(tf.AlbertModel, tf.AlbertConfig(embedding_size=32, **SMALL)),
    "electra": text(tf.ElectraModel, tf.ElectraConfig(embedding_size=32, **SMALL)),
    "t5_encoder": text(tf.T5EncoderModel, tf.T5Config(
        d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4, vocab_size=1000)),
    "gpt2": text(tf.GPT2Model, tf.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=1000,
                                             n_positions=128, use_cache=False)),
    "gpt_neo": text(tf.GPTNeoModel, tf.GPTNeoConfig(
        hidden_size=64, num_layers=2, num_heads=4, attention_types=[[["global", "local"], 1]],
        vocab_size=1000, max_position_embeddings=128, window_size=8, use_cache=False)),
    "llama": text(tf.LlamaModel, tf.LlamaConfig(
        num_key_value_heads=4, use_cache=False, **SMALL)),
    "bart": text(tf.BartModel, tf.BartConfig(
        d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, vocab_size=1000,
        max_position_embeddings=128, use_cache=False)),
    "vit": lambda: (tf.ViTModel(tf.ViTConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        image_size=64, patch_size=16)), "image"),
    "mobilevit": lambda: (tf.MobileViTModel(tf.MobileViTConfig(
        image_size=64, hidden_sizes=[48, 64, 80], neck_hidden_sizes=[16, 16, 24, 24, 32, 32, 64])),
        "image"),
}


class Outputs(torch.nn.Module):
    """The model with its first output only (the last hidden state), a plain tensor."""

    def __init__(self, model, names):
        super().__init__()
        self.model, self.names = model, names

    def forward(self, *args):
        return self.model(**dict(zip(self.names, args)), return_dict=False)[0]


def export(name, out_dir, opset, dynamic):
    model, kind = MODELS[name]()
    # As trained weights are: no bias zero, no normalisation scale exactly 1.
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.02)
    if kind == "image":
        args = (torch.randn(1, 3, 64, 64),)
        names = ["pixel_values"]
        axes = {"pixel_values": {0: "batch"}, "output": {0: "batch"}}
    else:
        ids = torch.randint(0, 1000, (1, 16))
        mask = torch.ones(1, 16, dtype=torch.long)
        mask[0, 12:] = 0
        args = (ids, mask)
        names = ["input_ids", "attention_mask"]
        axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                "output": {0: "batch", 1: "seq"}}
        if name == "bart":
            args = (ids, mask, ids)
            names.append("decoder_input_ids")
            axes["decoder_input_ids"] = {0: "batch", 1: "seq"}
    model = Outputs(model.eval(), names)
    suffix = "_dynamic" if dynamic else ""
    path = os.path.join(out_dir, f"{name}{suffix}_opset{opset}.onnx")
    with torch.no_grad():
        torch.onnx.export(model, args, path, opset_version=opset, input_names=names,
                          output_names=["output"], do_constant_folding=True,
                          dynamic_axes=axes if dynamic else None)
    return path


def main():
    out_dir = sys.argv[1]
    wanted = sys.argv[2:] or list(MODELS)
    os.makedirs(out_dir, exist_ok=True)
    for name in wanted:
        for opset in (14, 17):
            for dynamic in (False, True):
                print(export(name, out_dir, opset, dynamic), flush=True)


if __name__ == "__main__":
    main()
