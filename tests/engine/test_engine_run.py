"""``python -m autograd_core.run script.py`` and ``%load_ext autograd_core``: a PyTorch script, unchanged,
on the engine; what is beyond the engine stops it with one line naming the feature."""
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from kit_paths import ROOT
from engine_helpers import import_torch
from test_tutorials import assert_prints_alike

TUTORIALS = Path(__file__).resolve().parent / "tutorials"


def run(script, *args, cwd):
    return subprocess.run([sys.executable, "-m", "autograd_core.run", str(script), *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_a_script_of_the_suite_prints_what_pytorch_printed(tmp_path):
    name = "pytorch_polynomial_custom_function"  # (it draws no random numbers: PyTorch's seed differs per process)
    done = run(TUTORIALS / "extracts" / f"{name}.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    entry = tomllib.loads((TUTORIALS / "sources.toml").read_text(encoding="utf-8"))[name]
    assert_prints_alike(done.stdout, (TUTORIALS / "extracts" / f"{name}.out").read_text(encoding="utf-8"), entry)


def test_the_script_gets_its_arguments_and_its_imports_find_the_engine(tmp_path):
    script = tmp_path / "args.py"
    script.write_text(
        "import sys\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "from torch.utils.data import DataLoader\nfrom torch import optim\nimport torch.backends.cudnn\n"
        "print(sys.argv, torch.__name__, nn.Linear.__module__.split('.')[0], F.one_hot(torch.tensor([1]), 2))\n"
        "sys.exit(3)\n"
    )
    done = run(script, "--epochs", "2", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (3, "")
    assert done.stdout == f"['{script}', '--epochs', '2'] autograd_core autograd_core tensor([[0, 1]])\n"


@pytest.mark.parametrize("code, feature", [
    ("import torch\nx = torch.ones(4)\ny = torch.fft.fft(x)\n", "torch.fft"),
    ("import torch.fft\n", "torch.fft"),
    ("from torch import linalg\n", "torch.linalg"),
    ("import torch\ntorch.ones(8).stft(4)\n", "Tensor.stft"),
    ("import torch.nn as nn\nnn.Transformer()\n", "torch.nn.Transformer"),
    ("import torch.nn.functional as F\nimport torch\nF.gelu(torch.ones(2))\n", "torch.nn.functional.gelu"),
    ("from torch.distributions import Normal\n", "torch.distributions"),
    ("import torch\nmodel = torch.compile(lambda x: x)\n", "torch.compile"),
    ("from torch.optim import LBFGS\n", "torch.optim.LBFGS"),
    ("from torch.nn import Transformer, Linear\n", "torch.nn.Transformer"),
    ("from torch.utils.data import IterableDataset\n", "torch.utils.data.IterableDataset"),
    ("from torch.fft import fft\n", "torch.fft"),
])
def test_reaching_beyond_the_engine_stops_with_one_line_naming_the_feature(tmp_path, code, feature):
    script = tmp_path / "beyond.py"
    script.write_text(code)
    done = run(script, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith(f"NotImplementedError: {feature} is beyond autograd_core; the engine covers ")
    assert done.stderr.count("\n") == 1


# Run in a fresh interpreter (the engine takes torch's place there): for every name of every namespace
# beyond.py knows that PyTorch has and the engine lacks, ``from NAMESPACE import NAME`` and
# ``NAMESPACE.NAME`` raise the same one-line error; printed as JSON: the names tried, and the differences.
FROM_IMPORT_EACH_NAME = """
import importlib, json
from autograd_core import beyond, run
run.engine_as_torch()
tried, differ = 0, []
for namespace in beyond.NAMESPACES:
    if namespace == "Tensor":
        continue
    for package in (namespace, "autograd_core" + namespace[len("torch"):]):
        module = importlib.import_module(package)
        for name in sorted(beyond.torch_names(namespace)):
            if name.startswith("_") or name in vars(module):
                continue
            try:
                getattr(module, name)
                continue  # (the engine has it after all)
            except AttributeError as exc:
                expected = (type(exc).__name__, str(exc))
            try:
                exec(f"from {package} import {name}", {})
                got = None
            except Exception as exc:
                got = (type(exc).__name__, str(exc))
            tried += 1
            if got != expected or not expected[1].endswith(beyond.COVERS):
                differ.append([package, name, expected, got])
print(json.dumps([tried, differ]))
"""


def test_a_from_import_of_what_is_beyond_raises_the_error_an_attribute_access_raises():
    done = subprocess.run([sys.executable, "-c", FROM_IMPORT_EACH_NAME], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    tried, differ = json.loads(done.stdout)
    assert tried > 1000 and differ == []


def test_a_from_import_of_a_name_pytorch_lacks_too_is_pythons_import_error():
    done = subprocess.run([sys.executable, "-c", "from autograd_core.nn import NoSuchLayer"], capture_output=True,
                          text=True, timeout=60)
    assert done.stderr.splitlines()[-1].startswith("ImportError: cannot import name 'NoSuchLayer' from 'autograd_core.nn'")


def test_hasattr_and_getattr_see_what_is_beyond_as_not_there(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text("import torch\nprint(hasattr(torch, 'compile'), getattr(torch.backends, 'mkldnn', None),"
                      " torch.backends.mps.is_available())\n")
    done = run(script, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "False None False\n", "")


def test_the_scripts_own_error_is_shown_from_the_script_on(tmp_path):
    script = tmp_path / "mistake.py"
    script.write_text("import torch\n\ndef f():\n    return torch.ones(2).no_such_method()\n\nf()\n")
    done = run(script, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == "Traceback (most recent call last):"
    assert done.stderr.splitlines()[-1] == "AttributeError: 'Tensor' object has no attribute 'no_such_method'"
    assert "runpy" not in done.stderr and "autograd_core" not in done.stderr
    assert f'File "{script}", line 4, in f' in done.stderr


def test_a_missing_script_and_no_script_are_one_line_errors(tmp_path):
    done = run(tmp_path / "nowhere.py", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, f"autograd_core.run: no such script: {tmp_path / 'nowhere.py'}\n")
    done = subprocess.run([sys.executable, "-m", "autograd_core.run"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (2, "usage: python -m autograd_core.run SCRIPT.py [ARGUMENTS ...]\n")


def test_the_notebook_magic_puts_the_engine_in_torchs_place_in_a_real_kernel(tmp_path):
    cells = [
        "%load_ext autograd_core",
        "import torch\nimport torch.nn.functional as F\nprint(torch.__name__, F.one_hot(torch.tensor([2]), 3))",
        "torch.fft.fft(torch.ones(2))",
        "print('still running', torch.ones(2).sum().item())",
        "%unload_ext autograd_core\nimport sys\nprint('torch' in sys.modules)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True, iopub_timeout=60,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [cell.outputs for cell in nb.cells]
    printed = ["".join(o["text"] for o in out if o["output_type"] == "stream") for out in outputs]  # a print may come in parts
    assert outputs[0] == []
    assert printed[1] == "autograd_core tensor([[0, 0, 1]])\n"
    (error,) = outputs[2]
    assert error["output_type"] == "error" and error["ename"] == "NotImplementedError"
    assert error["traceback"] == [f"NotImplementedError: {error['evalue']}"]
    assert error["evalue"].startswith("torch.fft is beyond autograd_core; the engine covers ")
    assert printed[3] == "still running 2.0\n"
    assert printed[4] == "False\n"


def test_the_recorded_names_are_those_of_the_installed_pytorch():
    torch = import_torch()
    from autograd_core import torch_names

    assert torch.__version__.startswith("2.13.")
    # in a fresh interpreter: what dir(torch.nn) holds grows with the submodules imported so far
    done = subprocess.run([sys.executable, "-c", "import json; from autograd_core import beyond; "
                           "print(json.dumps(beyond.names_of_installed_torch()))"],
                          capture_output=True, text=True, timeout=300, check=True)
    recorded = {namespace: sorted(names.split()) for namespace, names in torch_names.NAMES.items()}
    assert recorded == json.loads(done.stdout)
