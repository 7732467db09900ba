"""`ancer-certify train --cluster`: a σ grid as one submitit job array, one task per σ, for the classifier recipes and
the UCAN recipes alike. Here without a torch thread fixture: the tasks' processes start with this one's environment,
so both train with the same threads."""
from __future__ import annotations

import torch

from ancer_lite.methods.ucan_recipes import NPG_KEY
from ancer_lite.tooling.cli import main


def test_a_job_array_trains_each_sigma_as_training_here_does(tmp_path, capsys, monkeypatch):
    """--cluster local: one submitit task per σ, for a classifier recipe and then a UCAN recipe on its checkpoints,
    each the same checkpoint, bit for bit, as training here."""
    monkeypatch.chdir(tmp_path)
    common = ["--sigma", "0.25", "0.5", "--max-train", "32"]
    array = ["--cluster", "local", "--log-dir", str(tmp_path / "submitit"), "--time", "10"]
    for where, extra in (("HERE", []), ("THERE", array)):
        assert main(["train", "digits", "tiny", f"{where}/cls", *common, *extra]) == 0
        assert main(["train", "digits", "tiny_ucan_input", f"{where}/ucan", *common, "--start", f"{where}/cls",
                     *extra]) == 0
    out = capsys.readouterr().out
    assert out.count("submitted 2 task(s)") == 2 and out.count("done: σ = ") == 4
    for part in ("cls", "ucan"):
        for sigma in (0.25, 0.5):
            a, b = (torch.load(f"{where}/{part}/sigma_{sigma}/checkpoint.pth.tar", weights_only=True)
                    for where in ("HERE", "THERE"))
            assert a.keys() == b.keys() and all(torch.equal(a["state_dict"][k], b["state_dict"][k])
                                                for k in a["state_dict"])
            if part == "ucan":
                assert all(torch.equal(v, b[NPG_KEY]["state_dict"][k]) for k, v in a[NPG_KEY]["state_dict"].items())
