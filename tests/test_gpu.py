"""One device, end to end, on a GPU: the same noise (drawn on the CPU from the inputs' streams, draws="cpu")
classified on the GPU in exact precision gives the CPU's CERTIFY decisions, run_method's predictions, and the
optimizations, RANCER's Hessian and UCAN's certification run there. Noise drawn on the GPU (draws="device", the
default there) does not depend on how it is cut into batches, and CERTIFY stays sound in every precision. The whole
module is skipped, with its reason printed by `-ra`, where torch finds no CUDA device; tests/test_devices.py and
tests/test_precision.py check the same logic on the CPU."""
import copy

import numpy as np
import pytest
import torch

if not torch.cuda.is_available():
    pytest.skip("CUDA is not available here: the GPU tests did not run", allow_module_level=True)

from ancer_lite.core import devices  # noqa: E402
from ancer_lite.core.certify import Smooth  # noqa: E402
from ancer_lite.core.noise import uniform_lambda  # noqa: E402
from ancer_lite.core.streams import ISOTROPIC, certify_streams  # noqa: E402
from ancer_lite.models.small import MLP, SmallCNN  # noqa: E402

GPU = devices.resolve("auto")
CPU = torch.device("cpu")
N0, N, ALPHA = 100, 10_000, 0.001


def _models() -> dict[str, tuple[torch.nn.Module, tuple[int, ...]]]:
    """Seeded, untrained base classifiers: the MNIST SmallCNN and the digits MLP of the quick profile."""
    torch.manual_seed(0)
    cnn = SmallCNN((1, 28, 28), 10).eval()
    torch.manual_seed(1)
    mlp = MLP((1, 8, 8), 10, hidden=(64, 64)).eval()
    return {"cnn": (cnn, (1, 28, 28)), "mlp": (mlp, (1, 8, 8))}


@pytest.mark.parametrize("name", ["cnn", "mlp"])
@pytest.mark.parametrize("noise", ["gaussian", "uniform"])
def test_certify_decisions_agree_on_cpu_and_gpu(name, noise):
    """Every CERTIFY decision: the class, its count out of N, and the bound and radius to float tolerance."""
    model, shape = _models()[name]
    theta = 0.25 if noise == "gaussian" else uniform_lambda(0.25)
    x = torch.rand(3, *shape, generator=torch.Generator().manual_seed(7))
    per_device = {}
    for dev in (CPU, GPU):
        m = copy.deepcopy(model).to(dev)
        smooth = Smooth(m, 10, shape, noise, batch_size=2_000, seed=0, device=dev, draws="cpu")
        per_device[dev.type] = [smooth.certify(x[k], theta, N0, N, ALPHA, generator=certify_streams(3, k))
                                for k in range(len(x))]
    for k, (c, g) in enumerate(zip(per_device["cpu"], per_device[GPU.type])):
        assert (g.prediction, g.count, g.n) == (c.prediction, c.count, c.n), f"input {k}: CPU {c}, GPU {g}"
        assert g.p_lower == pytest.approx(c.p_lower, rel=1e-12, abs=1e-12)
        assert g.radius == pytest.approx(c.radius, rel=1e-6, abs=1e-9)
        assert g.radius_proxy == pytest.approx(c.radius_proxy, rel=1e-6, abs=1e-9)


def test_vote_counts_agree_for_many_points():
    """`vote_counts` over several points at once (the path `verify` takes), batch not dividing the draws."""
    model, shape = _models()["cnn"]
    pts = torch.rand(4, *shape, generator=torch.Generator().manual_seed(9))
    counts = {}
    for dev in (CPU, GPU):
        smooth = Smooth(copy.deepcopy(model).to(dev), 10, shape, "gaussian", batch_size=777, seed=0, device=dev,
                        draws="cpu")
        counts[dev.type] = smooth.vote_counts(pts, 0.5, 2_500, generator=torch.Generator().manual_seed(4))
    np.testing.assert_array_equal(counts["cpu"], counts[GPU.type])


@pytest.mark.parametrize("method", ["fixed", "isotropic", "ancer"])
def test_run_method_on_gpu_matches_cpu(tmp_path, toy_classifier, method):
    """run_method(device="cuda") against device="cpu" on a tiny seeded model: the same predictions; θ and the
    radii may differ in the last bits of the GPU's arithmetic."""
    from ancer_lite.methods.registry import OptimSettings
    from ancer_lite.runs.experiment import run_method

    model, x, y, idx = toy_classifier(6, 10)
    settings = OptimSettings(chunk=4).with_budget(5, 32)
    out = {}
    for dev in ("cpu", str(GPU)):
        m = copy.deepcopy(model)
        out[dev] = run_method(m, x, y, idx, "gaussian", 0.25, method, settings, tmp_path / dev, 20, 2_000, 0.001, 3,
                              seed=3, device=dev, draws="cpu")
        assert devices.model_device(m).type == torch.device(dev).type
        thetas = np.load(tmp_path / dev / "theta.npy")
        assert thetas.shape == tuple(x.shape) and np.isfinite(thetas).all()
    cpu, gpu = out["cpu"], out[str(GPU)]
    np.testing.assert_array_equal(cpu.predict.to_numpy(), gpu.predict.to_numpy())
    np.testing.assert_array_equal(cpu.status.to_numpy(), gpu.status.to_numpy())
    np.testing.assert_allclose(gpu.radius.to_numpy(), cpu.radius.to_numpy(), rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(gpu.radius_proxy.to_numpy(), cpu.radius_proxy.to_numpy(), rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(np.load(tmp_path / str(GPU) / "theta.npy"), np.load(tmp_path / "cpu" / "theta.npy"),
                               rtol=1e-4)


def test_optimize_isotropic_on_cuda_inputs():
    """Isotropic DD on inputs and a model on the GPU, drawing from CPU streams (and from one CPU generator):
    θ stays on the GPU, finite and above its floor, and matches the CPU's to float tolerance."""
    from ancer_lite.methods.optimize import input_streams, optimize_isotropic

    model, shape = _models()["mlp"]
    x = torch.rand(4, *shape, generator=torch.Generator().manual_seed(2))
    theta = {}
    for dev in (CPU, GPU):
        m, xd = copy.deepcopy(model).to(dev), x.to(dev)
        theta[dev.type] = optimize_isotropic(m, xd, 0.25, "gaussian", iterations=10, lr=0.01, samples=64,
                                             generator=input_streams("gaussian", xd, 0, [0, 1, 2, 3], ISOTROPIC,
                                                                     draws="cpu"))
        assert theta[dev.type].device.type == dev.type
        one = optimize_isotropic(m, xd, 0.25, "gaussian", iterations=3, lr=0.01, samples=16,
                                 generator=torch.Generator().manual_seed(0))
        assert one.device.type == dev.type and bool(torch.isfinite(one).all())
    g = theta[GPU.type]
    assert bool(torch.isfinite(g).all()) and bool((g >= 1e-3).all())
    torch.testing.assert_close(g.cpu(), theta["cpu"], rtol=1e-4, atol=1e-6)


def test_input_hessian_on_gpu_matches_cpu():
    from ancer_lite.methods.hessian import input_hessian

    torch.manual_seed(0)
    model = MLP((1, 4, 4), 3, hidden=(16,), activation="softplus").eval()
    x = torch.rand(1, 4, 4, generator=torch.Generator().manual_seed(1))
    h_cpu = input_hessian(model, x)
    h_gpu = input_hessian(model, x, device=GPU)
    assert devices.model_device(model) == CPU  # the model itself stays where it is
    np.testing.assert_allclose(h_gpu, h_cpu, rtol=1e-9, atol=1e-12)


def test_rancer_end_to_end_on_gpu_matches_cpu(tmp_path):
    """RANCER's rotations (the Hessian on the GPU), its ascent and its rotated CERTIFY on the GPU give the CPU's
    predictions, and scales and radii to float tolerance."""
    from ancer_lite.methods import rancer
    from ancer_lite.runs import rancer_runs

    torch.manual_seed(0)
    model = MLP((1, 3, 3), 3, hidden=(8,), activation="softplus").eval()
    x = torch.rand(4, 1, 3, 3, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        y = model(x).argmax(1)
    settings = rancer.RancerSettings(iterations=5, samples=32, lr=0.05)
    out = {}
    for dev in (CPU, GPU):
        m = copy.deepcopy(model)
        scales, rot, eig = rancer.rancer_parameters(m, x, np.full(4, 0.25), settings, seed=0, device=dev, draws="cpu")
        res = rancer_runs.run_rotated(m, x, y, np.arange(4), lambda: (scales, rot), {}, tmp_path / dev.type, 20, 2_000,
                                      0.001, 3, seed=0, device=dev, draws="cpu")
        out[dev.type] = scales, rot, res
    (s_c, r_c, cpu), (s_g, r_g, gpu) = out["cpu"], out[GPU.type]
    np.testing.assert_allclose(r_g, r_c, atol=1e-6)
    np.testing.assert_allclose(s_g, s_c, rtol=1e-4)
    np.testing.assert_array_equal(gpu.predict.to_numpy(), cpu.predict.to_numpy())
    np.testing.assert_allclose(gpu.radius.to_numpy(), cpu.radius.to_numpy(), rtol=1e-4, atol=1e-7)


def test_ucan_trains_and_certifies_on_gpu():
    """UCAN's joint training runs on the GPU (classifier and NPG moved there); certification of one trained pair on
    the GPU gives the CPU's decision and count."""
    from ancer_lite.methods import ucan

    x = torch.rand(32, 1, 6, 6, generator=torch.Generator().manual_seed(2))
    y = torch.arange(32) % 3
    torch.manual_seed(0)
    model, npg = MLP((1, 6, 6), 3, hidden=(16,)), ucan.build_npg("input", (1, 6, 6), growth=2)
    ucan.train_ucan(model, npg, x, y, lam=0.25, epochs=2, batch_size=8, seed=1, device=GPU)
    assert devices.model_device(model) == devices.model_device(npg) == GPU
    assert all(bool(torch.isfinite(p).all()) for p in [*model.parameters(), *npg.parameters()])
    certs = {}
    for dev in (CPU, GPU):
        m, g = copy.deepcopy(model), copy.deepcopy(npg)
        certs[dev.type] = ucan.certify(m, g, x[0], "gaussian", 0.25, 50, 2_000, 0.001, 3, certify_streams(0, 1),
                                       device=dev)
    c, g = certs["cpu"], certs[GPU.type]
    assert (g.prediction, g.count) == (c.prediction, c.count)
    assert g.min_theta == pytest.approx(c.min_theta, rel=1e-5)
    delta, p = ucan.search_violation(copy.deepcopy(model), copy.deepcopy(npg), x[0], 0, 0.25, 0.5, steps=3,
                                     samples=8, generator=torch.Generator().manual_seed(3), device=GPU)
    assert delta.device == CPU and np.isfinite(p)
    # the Gaussian drawn on the GPU (draws="device"): the same certificate whatever the batch size
    dev_certs = [ucan.certify(copy.deepcopy(model), copy.deepcopy(npg), x[0], "gaussian", 0.25, 50, 2_000, 0.001, 3,
                              certify_streams(0, 1), batch, device=GPU, draws="device") for batch in (300, 2_000)]
    assert dev_certs[0] == dev_certs[1] and dev_certs[0].n == 2_000


def test_training_and_checkpoints_on_gpu(tmp_path):
    from ancer_lite.models.architectures import get_architecture, load_checkpoint
    from ancer_lite.models.train import accuracy, train_classifier

    x = torch.rand(64, 1, 8, 8, generator=torch.Generator().manual_seed(5))
    y = torch.arange(64) % 4
    torch.manual_seed(0)
    model = MLP((1, 8, 8), 4, hidden=(32,))
    train_classifier(model, x, y, "gaussian", 0.25, epochs=3, batch_size=16, seed=0, device=GPU)
    assert devices.model_device(model) == GPU
    assert 0.0 <= accuracy(model, x, y, "gaussian", 0.25) <= 1.0
    net = get_architecture("cifar_resnet20", "cifar10")
    path = tmp_path / "checkpoint.pth.tar"
    torch.save({"arch": "cifar_resnet20", "state_dict": net.state_dict()}, path)
    loaded = load_checkpoint(path, device="auto")
    assert devices.model_device(loaded) == GPU
    assert all(t.device == GPU for t in loaded.state_dict().values())


def test_device_draws_do_not_depend_on_how_they_are_cut():
    """A BlockDrawStream on the GPU: any cut into batches gives the draws of one batch, block j is Philox's draw from
    block_seed(key, j), and CERTIFY's counts with device draws are the same for batch sizes 1,000 to 10,000 (exact
    precision) and for several points at once."""
    from ancer_lite.core.noise import BLOCK_ROWS, BlockDrawStream, block_seed
    from ancer_lite.core.streams import stream

    whole = BlockDrawStream("gaussian", (3, 8, 8), stream(0, 5, "estimate"), device=GPU).draw(5_500)
    cut = BlockDrawStream("gaussian", (3, 8, 8), stream(0, 5, "estimate"), device=GPU)
    parts = [cut.draw(k) for k in (1, 999, 1_000, 2_500, 1_000)]
    assert torch.equal(torch.cat(parts), whole) and whole.device.type == "cuda"
    block = torch.empty(BLOCK_ROWS, 3, 8, 8, device=GPU).normal_(
        generator=torch.Generator(GPU).manual_seed(block_seed(cut.key, 2)))
    assert torch.equal(whole[2 * BLOCK_ROWS:3 * BLOCK_ROWS], block)
    model, shape = _models()["cnn"]
    model = copy.deepcopy(model).to(GPU)
    pts = torch.rand(3, *shape, generator=torch.Generator().manual_seed(9))
    counts = [Smooth(model, 10, shape, batch_size=b, device=GPU).vote_counts(pts, 0.5, 10_000,
                                                                             generator=stream(1, 2, "estimate"))
              for b in (1_000, 2_000, 7_000, 10_000)]
    for c in counts[1:]:
        np.testing.assert_array_equal(c, counts[0])


@pytest.mark.parametrize("precision", ["exact", "tf32", "bf16"])
def test_certify_on_gpu_is_sound_in_every_precision(precision):
    """The closed-form check of tests/test_precision.py on the GPU: over 1,000 CERTIFY runs (n0 = 20, N = 100,
    alpha = 0.1) on a linear classifier with P(class 1) about 0.8 (measured by 1,000,000 draws for the classifier as
    evaluated in the precision), over-certification stays <= alpha + 3 SE."""
    import math

    from scipy.stats import norm

    from ancer_lite.core.names import ABSTAIN
    from ancer_lite.core.streams import stream

    n, n0, big_n, alpha, trials = 8, 20, 100, 0.1, 1_000
    rng = np.random.default_rng(21)
    sigma, w, x = rng.uniform(0.1, 1.0, n), rng.normal(size=n), rng.uniform(0.0, 1.0, n)
    lin = torch.nn.Linear(n, 1)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(w, dtype=torch.float32)[None])
        lin.bias.fill_(norm.ppf(0.8) * float(np.linalg.norm(sigma * w)) - float(w @ x))

    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lin

        def forward(self, z):
            s = self.lin(z)
            return torch.cat([torch.zeros_like(s), s], dim=1)

    smooth = Smooth(Two().to(GPU), 2, (n,), device=GPU, precision=precision)
    xt, st = torch.tensor(x, dtype=torch.float32), torch.tensor(sigma, dtype=torch.float32)
    counts = smooth.vote_counts(xt[None], st, 1_000_000, generator=stream(9, 0, "estimate"))[0]
    p = counts[1] / counts.sum()
    assert abs(p - 0.8) < 0.01
    p_up = p + 4.5 * math.sqrt(p * (1 - p) / counts.sum())
    over = 0
    for t in range(trials):
        c = smooth.certify(xt, st, n0, big_n, alpha, generator=certify_streams(1, t))
        over += c.prediction != ABSTAIN and (c.prediction != 1 or c.gap > norm.ppf(p_up))
    assert over / trials <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / trials), over / trials


@pytest.mark.parametrize("precision", ["tf32", "bf16"])
def test_fast_precisions_certify_the_cnn_as_exact_does(precision):
    """The MNIST SmallCNN certified in tf32 / bf16 (channels_last, timed cuDNN kernels) against exact, the same noise
    drawn on the GPU: the same predictions, and each count within 1% of N of exact's."""
    model, shape = _models()["cnn"]
    model = copy.deepcopy(model).to(GPU)
    x = torch.rand(4, *shape, generator=torch.Generator().manual_seed(7))
    got = {}
    for p in ("exact", precision):
        smooth = Smooth(model, 10, shape, batch_size=5_000, device=GPU, precision=p)
        got[p] = [smooth.certify(x[k], 0.25, N0, N, ALPHA, generator=certify_streams(3, k)) for k in range(len(x))]
    for e, f in zip(got["exact"], got[precision]):
        assert e.prediction == f.prediction and abs(e.count - f.count) <= N // 100, (e, f)
