"""``ToTensor``, ``Resize``, ``Compose``: as torchvision's, for grey PIL images."""
import numpy as np
import torch
from PIL import Image


class ToTensor:
    """A PIL image (H x W) as a float tensor (1 x H x W) of its pixels / 255, as torchvision makes it."""

    def __call__(self, picture):
        # torchvision divides the float32 pixels by 255 in float32: NumPy's float32 division gives the
        # same bits, in one step instead of five tensor operations (this runs once per image per epoch)
        pixels = np.array(picture, np.float32).reshape(1, picture.size[1], picture.size[0])
        return torch.from_numpy(pixels / np.float32(255))


class Resize:
    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, picture):
        return picture.resize(self.size[::-1], Image.BILINEAR)


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, picture):
        for transform in self.transforms:
            picture = transform(picture)
        return picture
