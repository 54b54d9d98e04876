"""``torch.backends.cudnn``: NVIDIA's cuDNN is not here. Its switches can be set, as in PyTorch's CPU
build, and change nothing."""
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
