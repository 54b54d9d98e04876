"""A stand-in for the d2l package: only ``d2l/torch.py``, made of lines of d2l's own library
(see ``sources.toml``, entry ``d2l_zh_library``), so that ``from d2l import torch as d2l`` works."""
