"""`core.allocator.keep_freed_memory`: glibc's malloc keeps freed memory for reuse, so that CERTIFY's batches stop
faulting fresh pages, and CERTIFY's numbers are the same with and without it."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

from ancer_lite.core import allocator

GLIBC = platform.libc_ver()[0] == "glibc"

#: CERTIFY of three inputs on an MNIST-sized SmallCNN at the quick profile's N and batch size, after a warm-up input;
#: prints the certificates and the minor page faults of the three
SCRIPT = r"""
import json, resource
import torch
from ancer_lite.core.certify import Smooth
from ancer_lite.core.streams import certify_streams
from ancer_lite.models.small import SmallCNN
torch.set_num_threads(1)
torch.manual_seed(0)
model = SmallCNN((1, 28, 28), 10).eval()
x = torch.rand(4, 1, 28, 28, generator=torch.Generator().manual_seed(1))
smooth = Smooth(model, 10, (1, 28, 28), batch_size=2000)
smooth.certify(x[3], 0.25, 100, 4000, 0.001, generator=certify_streams(0, 3))
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
certs = [smooth.certify(x[k], 0.25, 100, 10_000, 0.001, generator=certify_streams(0, k)) for k in range(3)]
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(json.dumps(dict(certs=[[c.prediction, c.count, c.p_lower, c.radius] for c in certs], faults=faults)))
"""


def certify_in_a_process(switch: str) -> dict:
    env = dict(os.environ, **{allocator.ENV_SWITCH: switch})
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not GLIBC, reason="malloc is glibc's on Linux only: keep_freed_memory changes nothing here")
def test_certify_is_the_same_and_its_batches_stop_faulting_pages():
    kept, plain = certify_in_a_process("1"), certify_in_a_process("0")
    assert kept["certs"] == plain["certs"]
    # without it, each batch's tensors (6.3 MB of noise, 12.5 MB of activations) are fresh pages: 15 batches of
    # ~4,600 pages at the least; with it, the pages of the warm-up's batches are reused
    assert plain["faults"] > 30_000
    assert kept["faults"] < plain["faults"] / 10


@pytest.mark.skipif(not GLIBC, reason="malloc is glibc's on Linux only: keep_freed_memory changes nothing here")
def test_it_sets_glibcs_thresholds_and_can_be_switched_off():
    assert allocator.keep_freed_memory({}) is True
    assert allocator.keep_freed_memory({allocator.ENV_SWITCH: "1"}) is True
    assert allocator.keep_freed_memory({allocator.ENV_SWITCH: "0"}) is False


@pytest.mark.parametrize("value", ["", "yes", "2", "true"])
def test_a_bad_switch_names_the_variable_and_its_value(value):
    with pytest.raises(ValueError, match=rf"{allocator.ENV_SWITCH} must be '0' .* or '1' .*got {value!r}"):
        allocator.keep_freed_memory({allocator.ENV_SWITCH: value})
