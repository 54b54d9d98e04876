"""The layer maps drawn in a package's docstring (``autograd_core`` and ``grader`` draw one each)."""
import re


def drawn_layers(docstring):
    """``{unit: layer}`` from a map whose lines read ``    N name.py ...`` or ``      name/ ...``
    (a line without a number is in the layer above it; a subpackage is one unit)."""
    layers, layer = {}, None
    for line in docstring.splitlines():
        m = re.match(r"^ {4}(\d+)? +(\w+\.py|\w+/) ", line)
        if m:
            layer = int(m.group(1)) if m.group(1) else layer
            layers[m.group(2).removesuffix(".py").removesuffix("/")] = layer
    return layers
