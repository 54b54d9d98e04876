"""``torch.accelerator``: which accelerator (GPU, MPS, ...) is there? None, here."""


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0
