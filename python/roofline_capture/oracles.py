"""Reference models and independent FLOP counts used by the tests and by
tools/fixtures/make_capture_fixtures.py. Every model is built with random weights (nothing is
downloaded). Needs torchvision / diffusers only for the models that use them."""

from __future__ import annotations

from typing import Any, Dict, Tuple

import torch

from ._capture import _mha_fastpath_off

# torchvision's model documentation (the "weights" tables of torchvision.models):
#   ResNet50_Weights.IMAGENET1K_V1: num_params 25,557,032, GFLOPS 4.09
#   ViT_B_16_Weights.IMAGENET1K_V1: num_params 86,567,656, GFLOPS 17.56
# torchvision's "GFLOPS" counts multiply-accumulates (its docs: "FLOPs" computed with the MAC
# convention), so in this project's convention (2 FLOP per multiply-accumulate) they are 8.18 and
# 35.13 GFLOP.
TORCHVISION_DOCS = {
    "resnet50": {"parameters": 25_557_032, "gmacs": 4.09},
    "vit_b_16": {"parameters": 86_567_656, "gmacs": 17.56},
}

# A small diffusers UNet2DConditionModel: the structure of Stable Diffusion's UNet (cross-attention
# down/up blocks, a mid block with attention, time embedding) at sizes that run in a second on a
# CPU.
UNET_SMALL_CONFIG = dict(
    sample_size=32, in_channels=4, out_channels=4, layers_per_block=1,
    block_out_channels=(32, 64),
    down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
    up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
    cross_attention_dim=32, attention_head_dim=8, norm_num_groups=8,
)


def build(name: str) -> Tuple[torch.nn.Module, Tuple, Dict[str, Any], Dict[str, Any]]:
    """-> (model in eval mode, example args, example kwargs, capture options) for "resnet50",
    "vit_b_16" or "unet_small"; batch 1, fixed seed."""
    torch.manual_seed(0)
    if name == "resnet50":
        import torchvision
        model = torchvision.models.resnet50(weights=None).eval()
        return model, (torch.randn(1, 3, 224, 224),), {}, {"input_names": ["input"]}
    if name == "vit_b_16":
        import torchvision
        model = torchvision.models.vit_b_16(weights=None).eval()
        return model, (torch.randn(1, 3, 224, 224),), {}, {"input_names": ["input"]}
    if name == "unet_small":
        from diffusers import UNet2DConditionModel
        model = UNet2DConditionModel(**UNET_SMALL_CONFIG).eval()
        args = (torch.randn(1, 4, 32, 32), torch.tensor([10]))
        kwargs = {"encoder_hidden_states": torch.randn(1, 77, 32)}
        return model, args, kwargs, {"input_names": ["sample", "timestep"]}
    raise ValueError(f"unknown reference model {name!r}")


def flop_counter_total(model: torch.nn.Module, args: Tuple, kwargs: Dict[str, Any] = None) -> int:
    """torch.utils.flop_counter.FlopCounterMode's total for one forward pass.

    Convention: FlopCounterMode (torch 2.5) has no formula for the CPU flash-attention kernel
    (aten._scaled_dot_product_flash_attention_for_cpu), so it would count attention as 0 on a CPU.
    The count is taken with SDPA's math backend, where attention runs as two batched matmuls
    (Q K^T and P V) that FlopCounterMode does count: 2*B*H*Lq*Lk*(D+Dv), the graph format's
    attention formula. nn.MultiheadAttention's fast path (one opaque op) is off, as in capture().
    """
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode
    with torch.no_grad(), _mha_fastpath_off(), sdpa_kernel(SDPBackend.MATH), \
            FlopCounterMode(display=False) as counter:
        model(*args, **(kwargs or {}))
    return int(counter.get_total_flops())


def parameter_total(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def distinct_weights(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """A copy of `model` whose every parameter and floating-point buffer holds distinct random
    values (running variances stay positive). Freshly initialised networks have many identical
    tensors (every BatchNorm starts at weight 1, bias 0, mean 0, variance 1), and the TorchScript
    ONNX exporter stores identical initializers once, behind Identity nodes, which would make
    the exported file's parameter total smaller than the model's."""
    import copy
    model = copy.deepcopy(model)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if t.is_floating_point() and t.device.type != "meta":
                noise = torch.rand(t.shape, generator=gen, dtype=t.dtype) * 0.01 + 0.001
                t.add_(noise)   # positive: a running variance stays positive
    return model


def export_onnx(model: torch.nn.Module, args: Tuple, kwargs: Dict[str, Any], path: str,
                input_names, opset: int = 17) -> None:
    """torch.onnx.export with the TorchScript exporter (dynamo=False), dim 0 of every input
    named "batch".

    Conventions, so that the file holds the model's parameters one for one: the weights are made
    distinct first (distinct_weights), and the export uses training=TrainingMode.PRESERVE on the
    model in eval mode (BatchNormalization nodes with training_mode=0): the default (EVAL) mode
    folds each BatchNorm into the preceding convolution, which removes the BatchNorm's 2*C
    parameters and adds a C-element bias to the convolution. FLOPs are the same either way."""
    model = distinct_weights(model)
    names = list(input_names) + list(kwargs)
    all_args = tuple(args) + tuple(kwargs.values())
    dynamic = {n: {0: "batch"} for n, a in zip(names, all_args)
               if isinstance(a, torch.Tensor) and a.dim() > 0}
    dynamic["output"] = {0: "batch"}

    class _Positional(torch.nn.Module):  # kwargs -> positional, for the exporter
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *xs):
            out = self.inner(*xs[:len(args)], **dict(zip(kwargs, xs[len(args):])))
            if hasattr(out, "to_tuple"):
                out = out.to_tuple()[0]
            return out

    kw = {"dynamo": False} if "dynamo" in torch.onnx.export.__code__.co_varnames else {}
    with torch.no_grad(), _mha_fastpath_off():
        torch.onnx.export(_Positional(model.eval()), all_args, path, opset_version=opset,
                          input_names=names, output_names=["output"], dynamic_axes=dynamic,
                          training=torch.onnx.TrainingMode.PRESERVE, **kw)


def main(argv=None) -> int:
    """python -m roofline_capture.oracles {resnet50|vit_b_16|unet_small} [--onnx PATH]
    [--graph PATH]: prints FlopCounterMode's count and the parameter total, and writes the ONNX
    export (export_onnx's conventions) and/or the captured graph (batch_dim=0)."""
    import argparse
    import json
    parser = argparse.ArgumentParser(prog="python -m roofline_capture.oracles")
    parser.add_argument("model", choices=["resnet50", "vit_b_16", "unet_small"])
    parser.add_argument("--onnx", help="write torch.onnx.export's file here")
    parser.add_argument("--graph", help="write the captured graph here")
    ns = parser.parse_args(argv)
    model, args, kwargs, opts = build(ns.model)
    print(json.dumps({"model": ns.model,
                      "flop_counter_flops": flop_counter_total(model, args, kwargs),
                      "parameters": parameter_total(model), "torch": torch.__version__}))
    if ns.onnx:
        export_onnx(model, args, kwargs, ns.onnx, opts["input_names"])
    if ns.graph:
        from ._capture import capture
        capture(model, args, kwargs, name=ns.model, batch_dim=0, **opts).save(ns.graph)
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main())
