"""No hidden global state: what a part changes in the process (torch threads and random
state, the recursion limit, the plotting backend) is put back."""

import subprocess
import sys

import torch
from conftest import ROOT

import psro


# -- no hidden global state -----------------------------------------------------------------
def test_training_leaves_torch_threads_and_random_state_as_they_were():
    threads = torch.get_num_threads()
    torch.manual_seed(1234)
    expected = torch.rand(3)
    torch.manual_seed(1234)
    config = psro.RunConfig(game="kuhn_poker", oracle="ppo",
                            ppo={"env_steps": 600, "num_envs": 8, "steps_per_update": 128})
    psro.PSRO(config=config).run(iterations=1)
    assert torch.get_num_threads() == threads
    assert torch.equal(torch.rand(3), expected)


def test_recursion_limit_restored_and_report_import_keeps_the_plotting_backend():
    limit = sys.getrecursionlimit()
    psro.SequenceFormGame(psro.PSRO("kuhn_poker").tree.game)
    assert sys.getrecursionlimit() == limit
    code = ("import matplotlib; matplotlib.use('svg'); import psro.reports; "
            "print(matplotlib.get_backend())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "svg", out.stderr


