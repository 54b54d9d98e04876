"""``torch.backends.mps``: Apple's Metal GPUs are not here."""


def is_available():
    return False


def is_built():
    return False
