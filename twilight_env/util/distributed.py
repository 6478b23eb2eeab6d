"""Run a study's deals on a Ray cluster (``--ray [auto|ADDRESS]``).

The local process pool (:func:`twilight_env.experiments.common.run_tasks`) stays the default. Inside
``with ray_runner(address):`` the same ``run_tasks`` call hands its tasks to Ray instead:
the tasks are cut into blocks, each block is one Ray task (``_run_block``) that calls the
module-level worker function on each of its tasks, and the results come back **in task
order**, whatever order the blocks finish in, so callers (checkpoints, figures) see
exactly what the local runner gives them. Every deal is seeded by (seed, deal index,
play), never by where or when it runs, so per-deal points are byte-identical on every
runner.

Fault tolerance: a block whose worker process dies (a killed process, a lost node) is
re-run by Ray (``max_retries``); its results are taken once, from the run that
finishes, so nothing is lost and nothing counted twice. An exception raised by the
worker function itself is a bug in the deal, not a lost worker: it is not retried and
ends the run with its traceback. Ctrl-C cancels the blocks still pending.

Addresses (``--ray``):

- ``auto`` (the default of a bare ``--ray``): join the cluster this machine belongs to
  (``RAY_ADDRESS``, or one started with ``ray start``), else start a local one with all
  cores;
- ``local``: always start a local one;
- ``HOST:PORT`` or ``ray://HOST:10001``: that cluster (head node address, or the Ray
  Client address).

Every node needs the same version of this package installed (``pip install
twilight-env`` or an editable install of the same commit); the driver checks it on a
worker before the first block and refuses a mismatch.

``ray`` is an optional dependency (the ``dist`` extra): importing this module does not
import it.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Callable, Iterator, Sequence

_ADDRESS: contextvars.ContextVar[str | None] = contextvars.ContextVar("twilight_ray_address", default=None)

MAX_RETRIES = 5
"""Times Ray re-runs a block whose worker process died."""
MAX_BLOCK = 16
"""Most tasks (deals, or lockstep blocks of deals) in one Ray task."""


def add_ray_argument(p) -> None:
    """Add ``--ray [auto|local|ADDRESS]`` to an argparse parser (dest ``ray``, default None)."""
    p.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                   help="run the deals on a Ray cluster: 'auto' (the default of a bare --ray: join this machine's "
                        "cluster or start a local one), 'local', or a head address HOST:PORT / ray://HOST:PORT; "
                        "needs the 'dist' extra. Same figures as the local run")


def check_address(address: str) -> str:
    """Return ``address`` if it is a valid ``--ray`` value.

    Raises:
        ValueError: an empty or malformed address (allowed: ``auto``, ``local``,
            ``HOST:PORT``, ``ray://HOST:PORT``).
    """
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"--ray takes 'auto', 'local', HOST:PORT or ray://HOST:PORT, got {address!r}")
    a = address.strip()
    if a in ("auto", "local"):
        return a
    host_port = a[len("ray://"):] if a.startswith("ray://") else a
    host, sep, port = host_port.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--ray takes 'auto', 'local', HOST:PORT or ray://HOST:PORT, got {address!r}")
    return a


@contextlib.contextmanager
def ray_runner(address: str | None) -> Iterator[None]:
    """Within the block, :func:`twilight_env.experiments.common.run_tasks` runs its tasks on Ray.

    Args:
        address: ``auto``, ``local``, ``HOST:PORT`` or ``ray://HOST:PORT``; None keeps
            the local process pool (so callers can pass ``args.ray`` through).

    Raises:
        ValueError: a malformed address.
    """
    if address is None:
        yield
        return
    token = _ADDRESS.set(check_address(address))
    try:
        yield
    finally:
        _ADDRESS.reset(token)


def prepare_runner(address: str | None) -> None:
    """Check ``--ray`` and connect to its cluster, so that a run refuses a bad or silent
    address before it makes its output folder or plays anything; the later
    :func:`ray_runner` block reuses the connection. None (the local pool) does nothing.

    Raises:
        ValueError: a malformed address, or no Ray cluster answers there.
        ModuleNotFoundError: ray is not installed (the ``dist`` extra).
    """
    if address is not None:
        connect(check_address(address))


def runner_label(address: str | None) -> str:
    """How a run's deals were played, for its output files: ``local`` or ``ray:ADDRESS``."""
    return "local" if address is None else f"ray:{address}"


def current_address() -> str | None:
    """The address set by the innermost :func:`ray_runner`, or None (local runner)."""
    return _ADDRESS.get()


def connect(address: str):
    """Initialise Ray for ``address`` unless this process already has; returns the module.

    Raises:
        ModuleNotFoundError: ray is not installed (the ``dist`` extra).
        ValueError: no cluster answers at ``address``, or its workers run another
            version of this package.
    """
    import ray

    if not ray.is_initialized():
        kwargs = {"include_dashboard": False, "logging_level": "ERROR", "log_to_driver": False}
        try:
            if address == "local":
                ray.init(address="local", **kwargs)
            elif address == "auto":
                # joins RAY_ADDRESS or a cluster started on this machine, else starts one
                ray.init(**kwargs)
            else:
                if not address.startswith("ray://"):
                    _probe(address)
                ray.init(address=address, **kwargs)
        except ConnectionError as e:
            raise ValueError(f"--ray {address}: no Ray cluster answers there ({e})") from None
    _check_versions(ray)
    return ray


PROBE_TIMEOUT_S = 5.0
"""Seconds :func:`_probe` waits for a ``HOST:PORT`` cluster to accept a connection."""


def _probe(address: str) -> None:
    """Raise ValueError unless something accepts a TCP connection at ``HOST:PORT`` (Ray
    itself would retry an unreachable address for minutes)."""
    import socket

    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT_S).close()
    except (OSError, ValueError) as e:
        raise ValueError(f"--ray {address}: nothing answers there ({e}); start a cluster with "
                         f"`ray start --head --port {port}` on that machine, or use --ray auto") from None


def _worker_version() -> str:
    from twilight_env import __version__

    return __version__


_checked: set[str] = set()


def _check_versions(ray) -> None:
    from twilight_env import __version__

    key = ray.get_runtime_context().get_job_id()
    if key in _checked:
        return
    theirs = ray.get(ray.remote(num_cpus=0)(_worker_version).remote())
    if theirs != __version__:
        raise ValueError(f"the Ray workers run twilight-env {theirs}, this process {__version__}; "
                         "install the same version on every node")
    _checked.add(key)


def _run_block(fn: Callable, block: Sequence) -> list:
    """Ray task body: ``[fn(t) for t in block]``."""
    return [fn(t) for t in block]


def block_size(n_tasks: int, cpus: int) -> int:
    """Tasks per Ray task: about four blocks per CPU, at most :data:`MAX_BLOCK`."""
    return max(1, min(MAX_BLOCK, math.ceil(n_tasks / (4 * max(1, cpus)))))


def run_tasks_ray(fn: Callable, tasks: Sequence, address: str, on_result: Callable | None = None,
                  bar=None, block: int | None = None) -> list:
    """``[fn(t) for t in tasks]`` on Ray, results in task order (module docstring).

    Args:
        fn: a module-level function (pickled by reference to the workers).
        tasks: picklable task arguments.
        address: as :func:`ray_runner`.
        on_result: called in this process with each result, in task order.
        bar: a tqdm bar to advance by one per task, or None.
        block: tasks per Ray task (default :func:`block_size`).

    Raises:
        ValueError: as :func:`connect`.
        Exception: the first exception raised by ``fn`` (Ray re-raises it here).
    """
    if not tasks:
        return []
    ray = connect(address)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    size = block or block_size(len(tasks), cpus)
    blocks = [list(tasks[i:i + size]) for i in range(0, len(tasks), size)]
    remote = ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False)(_run_block)
    fn_ref = ray.put(fn)
    refs = [remote.remote(fn_ref, b) for b in blocks]
    index = {ref: k for k, ref in enumerate(refs)}
    results: dict[int, list] = {}
    out: list = []
    next_block = 0
    pending = list(refs)
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                results[index[ref]] = ray.get(ref)
            # hand results on in task order, as the local runner does
            while next_block in results:
                for r in results.pop(next_block):
                    out.append(r)
                    if on_result is not None:
                        on_result(r)
                    if bar is not None:
                        bar.update(1)
                next_block += 1
    except BaseException:
        for ref in pending:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        raise
    return out


def cluster_cpus(address: str) -> int:
    """CPUs of the cluster at ``address`` (connecting as :func:`connect` does)."""
    ray = connect(address)
    return int(ray.cluster_resources().get("CPU", 1))

