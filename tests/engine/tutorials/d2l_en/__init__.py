"""A stand-in for d2l-en's d2l package: only ``d2l_en/torch.py``, made of lines of d2l-en's own
library (see ``sources.toml``, entry ``d2l_en_library``). The d2l-en extracts find it as ``d2l``
(``from d2l import torch as d2l``; run_as_torch.py, ``library``)."""
