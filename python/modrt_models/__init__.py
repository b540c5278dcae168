"""Whole models written with tinygrad (its `nn` and `Tensor`) that run on any tinygrad device.

- `modrt_models.decoder`: a GPT-2-shaped decoder (pre-norm blocks, learned
  positions, tied embeddings) with a KV cache and greedy decoding;
- `modrt_models.resnet`: a ResNet-18-shaped CNN (basic blocks, batch norm)
  with a jitted SGD training step;
- `modrt_models.weights`: weights made from a fixed seed with numpy (no
  downloads), identical on every device, so runs on two devices compare.

Each model has a full-size configuration (`DecoderConfig.gpt2_small()`,
`ResNetConfig.resnet18()`) and a small one for tests (`.tiny()`). Importing
this package imports nothing else; tinygrad is imported by the modules.
"""
