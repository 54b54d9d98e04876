"""A stand-in for ``torchvision`` with what d2l's Fashion-MNIST sections call, and no downloads.

``datasets.FashionMNIST`` makes synthetic images of the real dataset's shape (28 x 28 grey PIL
images, labels 0-9) instead of downloading the real ones: the same numbers on every run and with
either engine (NumPy's generator with a fixed seed draws them, not torch's), so what the engine
prints can be compared with what PyTorch printed. Each class is a blurred template plus noise, so
the book's models learn it (d2l's ``train_ch3`` asserts a training accuracy above 0.7). There are
fewer images than in the real set (``TRAIN_SIZE``, ``TEST_SIZE``) to keep the test suite short.
``transforms.ToTensor``, ``Resize`` and ``Compose`` do what torchvision's do, with whichever
``torch`` is imported (the engine when the runner put it in torch's place).
"""
from . import datasets, transforms
