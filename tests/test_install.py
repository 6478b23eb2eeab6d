"""The installed distribution: one top-level import name, everything it needs inside, and
room for other packages that use generic names.

The repository keeps the top-level folders agents/, training/ and experiments/; the wheel
installs them as ``twilight_env.agents``, ``twilight_env.training`` and
``twilight_env.experiments`` (``pyproject.toml``, ``package-dir``), so that
``pip install twilight-env openai-agents`` leaves both importable: the OpenAI Agents SDK's
import name is ``agents``.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from source_copy import copy_source

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built from a copy of the clone's files (the C core compiled when a
    compiler is present) into a temporary folder."""
    out = tmp_path_factory.mktemp("wheel")
    src = copy_source(tmp_path_factory.mktemp("src"))
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(out), str(src)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    (path,) = out.glob("twilight_env-*.whl")
    return path


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The wheel installed (without dependencies) into a folder of its own, for a child
    process to import from instead of the checkout."""
    target = tmp_path_factory.mktemp("site")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                        str(wheel)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return target


def _package_folders() -> set[str]:
    """Installed names of every folder of the repository that holds package modules."""
    names = set()
    for top, installed_as in (("twilight_env", "twilight_env"), ("agents", "twilight_env.agents"),
                              ("training", "twilight_env.training"), ("experiments", "twilight_env.experiments")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top).parts
            names.add(".".join((installed_as,) + rel))
    return names


def test_the_wheel_adds_one_top_level_name_and_holds_every_package_license_and_data(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    tops = {n.split("/", 1)[0] for n in names}
    dist_info = [t for t in tops if t.endswith(".dist-info")]
    assert tops - set(dist_info) == {"twilight_env"}, sorted(tops)
    folders = {"/".join(n.split("/")[:-1]).replace("/", ".") for n in names if n.endswith("/__init__.py")}
    assert folders == _package_folders(), sorted(folders ^ _package_folders())
    assert any(n.endswith("/licenses/LICENSE") for n in names)
    for data in ("twilight_env/agents/weights/neural_3p.npz", "twilight_env/agents/weights/inference_4p.pt",
                 "twilight_env/agents/weights/policy_3p.npz", "twilight_env/agents/weights/policy_4p.npz",
                 "twilight_env/records/deals/3p_seed0_500.json", "twilight_env/records/record.schema.json",
                 "twilight_env/serve/static/index.html"):
        assert data in names, data


def _child(code: str, installed: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(installed))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def test_installed_beside_openai_agents_both_import_and_twilight_edge_runs(installed, tmp_path):
    """With the OpenAI Agents SDK installed, ``import agents`` is the SDK and twilight-env's
    agents are ``twilight_env.agents``; the main command still runs (a 4-deal edge study)."""
    try:
        importlib.metadata.version("openai-agents")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("openai-agents is not installed (the test extra installs it)")
    code = (
        "import agents, twilight_env, twilight_env.agents.base, twilight_env.training.config\n"
        "from agents import Agent, Runner\n"  # the SDK's own names
        f"assert twilight_env.__file__.startswith({str(installed)!r}), twilight_env.__file__\n"
        f"assert not agents.__file__.startswith({str(installed)!r}), agents.__file__\n"
        "assert twilight_env.agents.base.make_agent('heuristic').act is not None\n"
        "from twilight_env.cli import main\n"
        "raise SystemExit(main(['edge', '--deals', '4', '--workers', '1', '--boot', '20', '--out', 'edge_out']))\n")
    r = _child(code, installed, tmp_path)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-3000:])
    assert "Moon" in r.stdout or "solo" in r.stdout, r.stdout[-2000:]


def test_installed_package_needs_no_checkout(installed, tmp_path):
    """From the installed copy alone: the env, the compiled agents and the shipped weights."""
    code = ("import numpy as np, twilight_env\n"
            "from twilight_env.agents.base import make_agent, play_deal\n"
            "from twilight_env.rules.engine import State\n"
            "env = twilight_env.env(num_players=3); env.reset(seed=1)\n"
            "st = State.random(np.random.default_rng(0), 0, 3)\n"
            "play_deal(st, [make_agent('neural:default,backend=numpy')] * 4, np.random.default_rng(0))\n"
            "assert st.done\n"
            "st = State.random(np.random.default_rng(1), 0, 3)\n"
            "play_deal(st, [make_agent('guided:default,iterations=20,batch=4')] * 4, np.random.default_rng(0))\n"
            "assert st.done\nprint('ok')\n")
    r = _child(code, installed, tmp_path)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


def _editable_here() -> bool:
    """Whether the installed twilight-env is this checkout, installed editable."""
    import json
    for dist in importlib.metadata.distributions(name="twilight-env"):  # a checkout's egg-info has no direct_url
        info = json.loads(dist.read_text("direct_url.json") or "{}")
        if info.get("dir_info", {}).get("editable") and info.get("url", "").rstrip("/") == ROOT.as_uri():
            return True
    return False


def test_the_editable_install_maps_the_top_level_folders(tmp_path):
    """The README's ``pip install -e .`` maps agents/, training/ and experiments/ to
    ``twilight_env.agents`` and the others (``package-dir``), from any directory and with
    no import hook of the package's own."""
    if not _editable_here():
        pytest.skip("twilight-env is not installed editable from this checkout (pip install -e .)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = ("import sys\nbefore = list(sys.meta_path)\n"
            "import twilight_env.agents.base, twilight_env.training.config, twilight_env.experiments.edge.matches\n"
            "import twilight_env\n"
            "assert not [f for f in sys.meta_path if f not in before and 'twilight_env' in type(f).__module__]\n"
            "for m in (twilight_env.agents.base, twilight_env.training.config, twilight_env.experiments.edge.matches):\n"
            "    print(m.__file__)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    files = r.stdout.split()
    assert files == [str(ROOT / "agents" / "base.py"), str(ROOT / "training" / "config.py"),
                     str(ROOT / "experiments" / "edge" / "matches.py")], files


def test_the_wheel_ships_the_docs_and_names_its_gymnasium_entry_point(wheel):
    """A wheel user finds the documents inside the package (``twilight_env/docs``), and
    Gymnasium's ``gymnasium.envs`` group names the registration function."""
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        text = z.read(entry_points).decode()
    docs = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert "RESULTS.md" in docs
    for name in docs:
        assert f"twilight_env/docs/{name}" in names, name
    assert "[gymnasium.envs]\ntwilight = twilight_env:register_gymnasium" in text, text


def test_the_installed_package_points_at_its_own_copy_of_the_docs(installed, tmp_path):
    """The path ``twilight edge`` prints for RESULTS.md exists in the install, outside any
    checkout (``docs/RESULTS.md`` relative to the working directory does not)."""
    code = ("import os\nfrom twilight_env.util.docs import doc_path\n"
            "from twilight_env.experiments.edge.solo_edge import STRENGTH_NOTE\n"
            "p = doc_path('RESULTS.md')\n"
            "assert os.path.isfile(p) and p in STRENGTH_NOTE, (p, STRENGTH_NOTE)\nprint(p)\n")
    r = _child(code, installed, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == str(installed / "twilight_env" / "docs" / "RESULTS.md")


def test_the_installed_command_names_its_documentation_folder(installed, tmp_path):
    """``twilight --help`` ends with the folder of the installed documents, which exists."""
    r = _child("import sys\nfrom twilight_env.cli import main\nsys.argv = ['twilight', '--help']\nmain(['--help'])\n",
               installed, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    folder = str(installed / "twilight_env" / "docs")
    assert f"Documentation: {folder}\n" in r.stdout, r.stdout  # on one line, whole: a path to copy
    assert (Path(folder) / "COMMANDS.md").is_file() and (Path(folder) / "API.md").is_file()
