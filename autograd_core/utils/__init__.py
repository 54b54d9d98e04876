"""``torch.utils``: only ``utils.data`` (datasets and the loader that batches them)."""
from . import data
