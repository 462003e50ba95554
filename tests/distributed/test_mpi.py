"""The real thing: ``tdflow launch -n 2`` (mpiexec from the mpich wheel, mpi4py). Skipped with
the reason when mpi4py or mpiexec is absent (the ``distributed`` extra)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from tdflow.distributed.launch import mpi_available

ROOT = Path(__file__).resolve().parents[2]
WHY = mpi_available()
needs_mpi = pytest.mark.skipif(WHY is not None, reason=f"MPI absent: {WHY}")


def _launch(script: Path, *args: str, n: int = 2, timeout: float = 120):
    return subprocess.run([sys.executable, "-m", "tdflow", "launch", "-n", str(n), str(script),
                           *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(body))
    return path


@needs_mpi
def test_mpi_collectives_and_a_program_match_numpy(tmp_path):
    script = _script(tmp_path, """
        import numpy as np
        import tdflow.distributed as dist
        from tdflow.distributed.comm import MpiComm
        comm = dist.current()
        assert isinstance(comm, MpiComm) and comm.size == 2, comm
        r = comm.rank
        data = [np.random.default_rng(k).standard_normal(5) for k in range(2)]
        assert np.array_equal(comm.allreduce(data[r]), data[0] + data[1])
        assert np.allclose(comm.reduce_scatter(data[r], [3, 2]), (data[0] + data[1])[3 * r:3 + 2 * r])
        assert comm.allgather(np.arange(r + 1)).tolist() == [0, 0, 1]
        got = comm.alltoall([np.full(j + r + 1, 10 * r + j) for j in range(2)])
        assert [g.tolist() for g in got] == [[r] * (r + 1), [10 + r] * (r + 2)]
        x = np.arange(-7.0, 8.0).reshape(5, 3)
        rows = 3 - r
        prog = dist.compile_physical(
            lambda k: (f'func.func @f(%x: tensor<{rows}x3xf64>) -> tensor<{rows}x3xf64> {{\\n'
                       f'  %y = "tdflow.relu"(%x) : (tensor<{rows}x3xf64>) -> tensor<{rows}x3xf64>\\n'
                       f'  return %y : tensor<{rows}x3xf64>\\n}}'),
            nproc=2, arg_sbp=["S(0)"], result_sbp=["S(0)"], arg_shapes=[(5, 3)],
            result_shapes=[(5, 3)])
        assert np.array_equal(prog(x), np.maximum(x, 0))
        open(f"{tmp}/ok{r}", "w").write(f"{dist.rank()} {dist.world_size()}")
        """.replace("{tmp}", str(tmp_path)))
    done = _launch(script)
    assert done.returncode == 0, done.stderr
    assert [(tmp_path / f"ok{r}").read_text() for r in range(2)] == ["0 2", "1 2"]


@needs_mpi
def test_train_mlp_on_two_mpi_ranks_gives_the_single_process_losses(tmp_path):
    out = tmp_path / "losses.npy"
    script = _script(tmp_path, f"""
        import sys
        import numpy as np
        sys.path.insert(0, {str(ROOT / 'examples')!r})
        import train_mlp, tdflow.distributed as dist
        run = train_mlp.train("graph", 8, seed=1, nproc=2, dtype="f64")
        if dist.rank() == 0:
            np.save({str(out)!r}, np.array(run.losses))
        """)
    done = _launch(script)
    assert done.returncode == 0, done.stderr
    sys.path.insert(0, str(ROOT / "examples"))
    import train_mlp

    single = train_mlp.train("graph", 8, seed=1, nproc=1, dtype="f64")
    np.testing.assert_allclose(np.load(out), single.losses, rtol=1e-12, atol=0)


@needs_mpi
def test_a_failing_rank_ends_the_job_with_its_error(tmp_path):
    script = _script(tmp_path, """
        import numpy as np, tdflow.distributed as dist
        if dist.rank() == 1:
            raise ValueError("rank one broke")
        dist.current().allreduce(np.ones(3))   # rank 0 waits here for ever without the abort
        """)
    t0 = time.perf_counter()
    done = _launch(script, timeout=60)
    assert done.returncode != 0
    assert time.perf_counter() - t0 < 20
    assert "ValueError: rank one broke" in done.stderr


@needs_mpi
def test_a_killed_rank_ends_the_job_non_zero_within_seconds(tmp_path):
    script = _script(tmp_path, """
        import os, signal, time
        import numpy as np, tdflow.distributed as dist
        if dist.rank() == 1:
            time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGKILL)
        dist.current().allreduce(np.ones(3))
        """)
    t0 = time.perf_counter()
    done = _launch(script, timeout=60)
    assert done.returncode != 0
    assert time.perf_counter() - t0 < 20


def test_launch_without_mpi_is_one_clear_line(monkeypatch, capsys):
    from tdflow.cli import main
    from tdflow.distributed import launch

    monkeypatch.setattr(launch, "find_mpiexec", lambda: None)
    monkeypatch.setattr(launch, "mpi_available",
                        lambda: f"no mpiexec found: {launch.INSTALL_HINT}")
    status = main(["launch", "-n", "2", str(ROOT / "examples" / "train_mlp.py")])
    err = capsys.readouterr().err
    assert status == 1
    assert "pip install 'tdflow[distributed]'" in err
    assert len(err.strip().splitlines()) <= 2


def test_run_mpi_without_mpi_is_one_clear_line(monkeypatch, capsys):
    from tdflow.cli import main
    from tdflow.distributed import cli

    monkeypatch.setattr(cli, "mpi_available", lambda: "mpi4py is not installed: pip install "
                                                      "'tdflow[distributed]'")
    status = main(["run", str(ROOT / "examples" / "mlp.mlir"), "--nproc", "2", "--mpi"])
    err = capsys.readouterr().err
    assert status == 1
    assert "tdflow run --mpi: mpi4py is not installed" in err
    assert len(err.strip().splitlines()) <= 2
