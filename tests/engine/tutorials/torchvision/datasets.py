"""``FashionMNIST``: synthetic images of Fashion-MNIST's shape (see the package docstring)."""
import numpy as np
from PIL import Image

TRAIN_SIZE, TEST_SIZE = 2000, 500


def _images(count, seed):
    rng = np.random.default_rng(seed)
    templates = np.random.default_rng(0).uniform(0, 255, (10, 28, 28))
    templates = (templates + np.roll(templates, 1, 1) + np.roll(templates, 1, 2) + np.roll(templates, 1, (1, 2))) / 4
    labels = rng.integers(0, 10, count)
    noise = rng.normal(0, 60, (count, 28, 28))
    pixels = np.clip(templates[labels] + noise, 0, 255).astype(np.uint8)
    return pixels, labels


class FashionMNIST:
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.train, self.transform, self.target_transform = train, transform, target_transform
        self.data, self.targets = _images(TRAIN_SIZE, 1) if train else _images(TEST_SIZE, 2)

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        image, target = Image.fromarray(self.data[index], mode="L"), int(self.targets[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target
