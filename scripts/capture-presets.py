#!/usr/bin/env python3
"""Captures the diffusion and vision presets (data/graphs/*.json, listed by `roofline models
list`) from the libraries' own model classes and configs, with no weights in memory: each model
is built on PyTorch's meta device (shapes only, no storage, no arithmetic) and traced by
roofline_capture with a symbolic batch. Every capture is checked before it is written:

  * parameters: the graph's count equals the model's own (sum of p.numel()), and the published
    figure where one is quoted below;
  * matrix FLOPs: the graph's count (roofline_capture's reference arithmetic) equals
    torch.utils.flop_counter.FlopCounterMode on the same meta run, at the captured batch (with
    SDPA's math backend, so that attention is counted: roofline_capture.oracles).

    .venv-capture/bin/python scripts/capture-presets.py [--out data/graphs] [--only ID ...]

Needs torch, torchvision, diffusers and transformers (scripts/install-python-deps.sh). Prints one
line per preset: parameters, nodes, matrix FLOPs, capture time and the process's peak memory.
"""

import argparse
import json
import os
import resource
import sys
import time

import torch
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from roofline_capture import capture  # noqa: E402
from roofline_capture.oracles import flop_counter_total  # noqa: E402


def IMAGE_DIMS(side: int, step: int):
    """Symbolic batch, height and width (image pixels), captured at side x side, the sides on
    multiples of `step` (every resize inside the network divides it)."""
    return {"batch": 1, "height": (side, step), "width": (side, step)}


def _image(dt):
    """A fixed 224x224 image (ViTs: the position table fixes the resolution): batch only."""
    def inputs(batch):
        return (torch.randn(batch, 3, 224, 224, dtype=dt),), {}
    return inputs


def sd15_unet():
    from diffusers import UNet2DConditionModel
    # runwayml/stable-diffusion-v1-5, unet/config.json
    unet = UNet2DConditionModel(
        sample_size=64, in_channels=4, out_channels=4, layers_per_block=2,
        block_out_channels=(320, 640, 1280, 1280),
        down_block_types=("CrossAttnDownBlock2D",) * 3 + ("DownBlock2D",),
        up_block_types=("UpBlock2D",) + ("CrossAttnUpBlock2D",) * 3,
        cross_attention_dim=768, attention_head_dim=8)
    dt = torch.float16

    def inputs(batch, height, width):   # image pixels; the latent is 8x smaller
        return ((torch.randn(batch, 4, height // 8, width // 8, dtype=dt),
                 torch.tensor([999.0] * batch)),
                {"encoder_hidden_states": torch.randn(batch, 77, 768, dtype=dt)})
    return unet.to(dt), inputs, IMAGE_DIMS(512, 64), dict(
        name="Stable Diffusion 1.5 UNet", published=859_520_964,
        source="diffusers UNet2DConditionModel with runwayml/stable-diffusion-v1-5 "
               "unet/config.json; 512x512 image (64x64x4 latent), 77 CLIP tokens, fp16",
        per="one denoising step (one UNet evaluation)")


def sdxl_unet():
    from diffusers import UNet2DConditionModel
    # stabilityai/stable-diffusion-xl-base-1.0, unet/config.json
    unet = UNet2DConditionModel(
        sample_size=128, in_channels=4, out_channels=4, layers_per_block=2,
        block_out_channels=(320, 640, 1280),
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"),
        transformer_layers_per_block=(1, 2, 10), attention_head_dim=(5, 10, 20),
        cross_attention_dim=2048, use_linear_projection=True, addition_embed_type="text_time",
        addition_time_embed_dim=256, projection_class_embeddings_input_dim=2816)
    dt = torch.float16

    def inputs(batch, height, width):
        return ((torch.randn(batch, 4, height // 8, width // 8, dtype=dt),
                 torch.tensor([999.0] * batch)),
                {"encoder_hidden_states": torch.randn(batch, 77, 2048, dtype=dt),
                 "added_cond_kwargs": {"text_embeds": torch.randn(batch, 1280, dtype=dt),
                                       "time_ids": torch.randn(batch, 6, dtype=dt)}})
    return unet.to(dt), inputs, IMAGE_DIMS(1024, 32), dict(
        name="Stable Diffusion XL base UNet", published=2_567_463_684,
        source="diffusers UNet2DConditionModel with stabilityai/stable-diffusion-xl-base-1.0 "
               "unet/config.json; 1024x1024 image (128x128x4 latent), 77 tokens, fp16",
        per="one denoising step (one UNet evaluation)")


def dit_xl_2():
    from diffusers import DiTTransformer2DModel
    # facebook/DiT-XL-2-256, transformer/config.json
    dit = DiTTransformer2DModel(
        num_attention_heads=16, attention_head_dim=72, in_channels=4, out_channels=8,
        num_layers=28, sample_size=32, patch_size=2, num_embeds_ada_norm=1000,
        norm_type="ada_norm_zero")
    dt = torch.bfloat16

    def inputs(batch):   # the position table is fixed at 256x256: batch only
        return ((torch.randn(batch, 4, 32, 32, dtype=dt),),
                {"timestep": torch.tensor([999] * batch), "class_labels": torch.tensor([1] * batch)})
    return dit.to(dt), inputs, {"batch": 1}, dict(
        name="DiT-XL/2 (256x256)", published=None,
        source="diffusers DiTTransformer2DModel with facebook/DiT-XL-2-256 "
               "transformer/config.json; 256x256 image (32x32x4 latent), bf16",
        per="one denoising step")


def flux_dev():
    from diffusers import FluxTransformer2DModel
    # black-forest-labs/FLUX.1-dev, transformer/config.json
    flux = FluxTransformer2DModel(
        patch_size=1, in_channels=64, num_layers=19, num_single_layers=38,
        attention_head_dim=128, num_attention_heads=24, joint_attention_dim=4096,
        pooled_projection_dim=768, guidance_embeds=True, axes_dims_rope=(16, 56, 56))
    dt = torch.bfloat16
    text = 512

    def inputs(batch, height, width):
        # 1024x1024: a 128x128x16 latent packed 2x2 -> (1024/16)^2 = 4096 tokens of 64
        tokens = (height // 16) * (width // 16)
        return ((torch.randn(batch, tokens, 64, dtype=dt),),
                {"encoder_hidden_states": torch.randn(batch, text, 4096, dtype=dt),
                 "pooled_projections": torch.randn(batch, 768, dtype=dt),
                 "timestep": torch.tensor([1.0] * batch, dtype=dt),
                 "img_ids": torch.zeros(tokens, 3, dtype=dt),
                 "txt_ids": torch.zeros(text, 3, dtype=dt),
                 "guidance": torch.tensor([3.5] * batch, dtype=dt), "return_dict": False})
    return flux.to(dt), inputs, IMAGE_DIMS(1024, 16), dict(
        name="FLUX.1-dev transformer (MMDiT)", published=None,
        source="diffusers FluxTransformer2DModel with black-forest-labs/FLUX.1-dev "
               "transformer/config.json; 1024x1024 image (4096 latent tokens), 512 T5 tokens, "
               "bf16",
        per="one denoising step (guidance-distilled: no classifier-free guidance batch)")


class _VaeDecoder(nn.Module):
    """AutoencoderKL.decode without the encoder: post_quant_conv, then the decoder."""

    def __init__(self, vae):
        super().__init__()
        self.post_quant_conv = vae.post_quant_conv
        self.decoder = vae.decoder

    def forward(self, z):
        return self.decoder(self.post_quant_conv(z))


def sd_vae_decoder():
    from diffusers import AutoencoderKL
    # runwayml/stable-diffusion-v1-5, vae/config.json
    vae = AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, layers_per_block=2,
        block_out_channels=(128, 256, 512, 512), sample_size=512,
        down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4)
    dt = torch.float16

    def inputs(batch, height, width):
        return (torch.randn(batch, 4, height // 8, width // 8, dtype=dt),), {}
    return _VaeDecoder(vae).to(dt), inputs, IMAGE_DIMS(512, 8), dict(
        name="Stable Diffusion VAE decoder", published=None,
        source="diffusers AutoencoderKL with runwayml/stable-diffusion-v1-5 vae/config.json, "
               "post_quant_conv and decoder; 64x64x4 latent to a 512x512 image, fp16",
        per="one decode (once per image)")


def clip_vit_l_14():
    from transformers import CLIPVisionConfig, CLIPVisionModelWithProjection
    # openai/clip-vit-large-patch14, config.json vision_config and projection_dim
    cfg = CLIPVisionConfig(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
                           num_attention_heads=16, image_size=224, patch_size=14,
                           projection_dim=768, hidden_act="quick_gelu")
    model = CLIPVisionModelWithProjection(cfg)
    dt = torch.float16
    return model.to(dt), _image(dt), {"batch": 1}, dict(
        name="CLIP ViT-L/14 image encoder", published=None,
        source="transformers CLIPVisionModelWithProjection with openai/clip-vit-large-patch14 "
               "vision_config; 224x224 image, fp16", per="one image")


def vit_b_16():
    import torchvision
    return torchvision.models.vit_b_16(), _image(torch.float32), {"batch": 1}, dict(
        name="ViT-B/16", published=86_567_656,
        source="torchvision.models.vit_b_16 (weights=None); 224x224 image, fp32",
        per="one image")


def resnet_50():
    import torchvision
    def inputs(batch, height, width):
        return (torch.randn(batch, 3, height, width),), {}
    return torchvision.models.resnet50(), inputs, IMAGE_DIMS(224, 32), dict(
        name="ResNet-50", published=25_557_032,
        source="torchvision.models.resnet50 (weights=None); 224x224 image, fp32",
        per="one image")


PRESETS = {
    "sd15-unet": sd15_unet, "sdxl-unet": sdxl_unet, "dit-xl-2": dit_xl_2,
    "flux-dev": flux_dev, "sd-vae-decoder": sd_vae_decoder, "clip-vit-l-14": clip_vit_l_14,
    "vit-b-16": vit_b_16, "resnet-50": resnet_50,
}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "data/graphs"))
    ap.add_argument("--only", nargs="*", choices=sorted(PRESETS))
    ap.add_argument("--check", action="store_true",
                    help="capture into a temporary folder and fail unless every graph and oracle "
                         "entry equals the committed one (data/graphs/, the oracle file)")
    ap.add_argument("--oracle", default=os.path.join(ROOT, "tests/fixtures/graph_presets_oracle.json"),
                    help="where to write FlopCounterMode's count and the model's parameter count "
                         "per preset (the C++ tests compare the tool with it)")
    a = ap.parse_args(argv)
    if a.check:
        import tempfile
        committed_graphs, committed_oracle = a.out, a.oracle
        with tempfile.TemporaryDirectory() as tmp:
            a.out, a.oracle = os.path.join(tmp, "graphs"), os.path.join(tmp, "oracle.json")
            status = capture_all(a)
            with open(committed_oracle, encoding="utf-8") as f:
                want_oracle = json.load(f)["presets"]
            with open(a.oracle, encoding="utf-8") as f:
                got_oracle = json.load(f)["presets"]
            for pid in a.only or PRESETS:
                with open(os.path.join(committed_graphs, pid + ".json"), encoding="utf-8") as f:
                    want = json.load(f)
                with open(os.path.join(a.out, pid + ".json"), encoding="utf-8") as f:
                    got = json.load(f)
                same = want == got and want_oracle.get(pid) == got_oracle.get(pid)
                print(f"check {pid}: {'the committed graph and oracle entry' if same else 'DIFFERS from the committed files'}")
                status |= 0 if same else 1
        return status
    return capture_all(a)


def capture_all(a) -> int:
    os.makedirs(a.out, exist_ok=True)
    failures = 0
    oracle = {}
    if os.path.exists(a.oracle):
        with open(a.oracle, encoding="utf-8") as f:
            oracle = json.load(f)["presets"]
    for pid in a.only or PRESETS:
        t0 = time.time()
        with torch.device("meta"):
            model, make_inputs, dims, meta = PRESETS[pid]()
            # Tensors a constructor makes from numpy (DiT's sin-cos position table) start on the
            # CPU: every buffer onto the meta device too.
            model = model.to("meta").eval()
            graph = capture(model, make_inputs, dims=dims, name=pid)
            seconds = time.time() - t0
            base = {d: (v[0] if isinstance(v, tuple) else v) for d, v in dims.items()}
            args, kwargs = make_inputs(**base)
            # Off the captured sizes (not one of the runs the shapes were fitted from): batch 2
            # and, for images, 1.5 x 0.75 of the sides on their steps.
            other = {d: (2 if d == "batch" else
                         (v[0] * 3 // 2 if d == "height" else v[0] * 3 // 4) // v[1] * v[1])
                     for d, v in dims.items()}
            args2, kwargs2 = make_inputs(**other)
        params = sum(p.numel() for p in model.parameters())
        # FlopCounterMode with SDPA's math backend (attention as two bmm): the convention of
        # roofline_capture.oracles.flop_counter_total (python/README.md).
        flops, ours = flop_counter_total(model, args, kwargs), graph.matrix_flops()
        flops2, ours2 = flop_counter_total(model, args2, kwargs2), graph.matrix_flops(other)
        problems = []
        if ours2 != flops2:
            problems.append(f"matrix FLOPs at {other} {ours2} != FlopCounterMode's {flops2}")
        if graph.parameter_count() != params:
            problems.append(f"parameters {graph.parameter_count()} != the model's {params}")
        if meta["published"] is not None and params != meta["published"]:
            problems.append(f"parameters {params} != published {meta['published']}")
        if ours != flops:
            problems.append(f"matrix FLOPs {ours} != FlopCounterMode's {flops}")
        data = graph.to_dict()
        data["name"] = meta["name"]
        data["notes"] = [f"preset {pid}: {meta['source']}; costs {meta['per']}; captured on the "
                         "meta device by scripts/capture-presets.py"] + data.get("notes", [])
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{pid}: {params:,} parameters, {len(graph.nodes)} nodes, {ours / 1e9:.1f} G matrix"
              f" FLOP at {base} (FlopCounterMode {flops / 1e9:.1f} G; {ours2 / 1e9:.1f} G at {other}, "
              f"FlopCounterMode {flops2 / 1e9:.1f} G), captured in "
              f"{seconds:.1f} s, peak memory so far {peak:.0f} MB"
              + ("" if not problems else "; FAILED: " + "; ".join(problems)))
        if problems:
            failures += 1
            continue
        with open(os.path.join(a.out, pid + ".json"), "w", encoding="utf-8") as f:
            json.dump(data, f, separators=(",", ":"), sort_keys=False)
            f.write("\n")
        oracle[pid] = {"dims": graph.dims, "parameters": params, "flop_counter_mode": flops,
                       "at": {"dims": other, "flop_counter_mode": flops2}}
    with open(a.oracle, "w", encoding="utf-8") as f:
        json.dump({"comment": "Written by scripts/capture-presets.py: per preset of data/graphs/, "
                              "the model's own parameter count (sum of p.numel()) and "
                              "torch.utils.flop_counter.FlopCounterMode's total for one forward "
                              "pass at these dims (SDPA's math backend), and at the dims of "
                              "'at' (other sizes than the capture's), torch "
                              + torch.__version__,
                   "presets": dict(sorted(oracle.items()))}, f, indent=1)
        f.write("\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
