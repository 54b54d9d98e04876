"""``ToTensor``, ``Resize``, ``Compose``: as torchvision's, for grey PIL images."""
import numpy as np
import torch
from PIL import Image


class ToTensor:
    """A PIL image (H x W) as a float tensor (1 x H x W) of its pixels / 255, as torchvision makes it."""

    def __call__(self, picture):
        pixels = torch.from_numpy(np.array(picture, np.uint8, copy=True))
        return pixels.view(picture.size[1], picture.size[0], 1).permute((2, 0, 1)).contiguous().float().div(255)


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
