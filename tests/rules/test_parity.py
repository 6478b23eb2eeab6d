"""The parity harness: every fast copy of a rule against the rules reference.

The specification is :mod:`twilight_env.rules.reference` (R1-R9 written plainly); the
observation reference is the pure-Python encoder ``twilight_env/obs/encoding.py::_encode``.
Every copy below is played on positions of the one generator, ``positions.py`` (random
deals and random legal play by the reference, from a seed), and fails on the first
difference, naming the copy, the position's seed and the field. ``COPIES`` is the list
of copies; ``docs/ARCHITECTURE.md`` (section "Where each rule is written") names the same
copies, which ``test_the_copies_are_the_ones_the_architecture_page_names`` checks.

The default run is small (a few hundred positions per copy); ``pytest -m slow`` runs
the larger sweep.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest

from positions import deal_outcomes, engine_fields, first_difference, lockstep_draws, position, reference_fields
from twilight_env.rules import engine
from twilight_env.rules import reference as R
from twilight_env.rules import state as engine_state
from twilight_env.rules.engine import NUM_ACTIONS, Config, Match, PurePythonState, State

ROOT = Path(__file__).resolve().parents[2]

COPIES = (
    # (copy, what is compared with the reference, the test that compares it)
    ("twilight_env/rules/state.py::PurePythonState",
     "legal actions and every deal field after every action, side and seat scores (R3-R5, R7.1-R7.3, R8)",
     "test_python_engine"),
    ("twilight_env/rules/_engine_c.c",
     "State with the compiled core: the same as PurePythonState; every illegal action refused as Python refuses it",
     "test_compiled_core"),
    ("twilight_env/rules/match.py::Match",
     "dealer and solo rotation, first leader, totals by line, winners, match end (R2.4, R6-R8)",
     "test_engine_match"),
    ("twilight_env/envs/vector_engine.py::VectorEngine (numpy)",
     "legal masks and every deal field after every action, side and seat scores (R3-R5, R8)",
     "test_batch_engine_numpy"),
    ("twilight_env/envs/vector_engine.py::VectorEngine (torch)",
     "the same on the torch backend",
     "test_batch_engine_torch"),
    ("agents/solver.py::Solver (python)",
     "value and every action's value against plain minimax on the reference, 1-2 tricks left (R3-R5)",
     "test_solver_python"),
    ("agents/_solver_nb.py",
     "the same for the numba backend, and its closed-form last trick (R4.1, R4.4)",
     "test_solver_numba"),
    ("agents/_rollout_nb.py",
     "whole heuristic rollouts (agents/fast_rollout.py): every action legal, final deal fields, side scores",
     "test_compiled_rollout"),
    ("agents/_ismcts_nb.py",
     "the compiled search's legal_into, apply, side_scores and seat_score, step by step",
     "test_compiled_search_steps"),
    ("experiments/edge/matches.py::simulate_fixed_solo",
     "fixed-solo matches from deal points: winner and length (R6.1, R7.6); also the simulator of handicap.py",
     "test_fixed_solo_simulator"),
    ("experiments/edge/goals_333.py",
     "simulate_fixed_solo with goals_333 (R6.2), which goals_333.py reads through matches.match_figures",
     "test_goals_333_simulator"),
    ("experiments/edge/matches.py::simulate_rotating",
     "rotating 3-player matches: solo order, credited lines, winner, final totals (R7.4, R7.5)",
     "test_rotating_simulator"),
    ("experiments/edge/individual_edge.py::simulate_lines",
     "the four-line match of individual scoring: winner, final totals (R8)",
     "test_four_line_simulator"),
    ("twilight_env/obs/encoding.py::encode_infoset",
     "the observation from an InfoSet, byte for byte",
     "test_infoset_encoder"),
    ("twilight_env/obs/_encoding_nb.py::encode_into",
     "the compiled observation and action mask, byte for byte",
     "test_compiled_encoder"),
    ("twilight_env/obs/vector_obs.py::observe (compiled=False)",
     "batch observations by array passes, deciding seat and other viewers",
     "test_batch_encoder_arrays"),
    ("twilight_env/obs/vector_obs.py::observe (compiled=True)",
     "batch observations by the compiled encoder, deciding seat and other viewers",
     "test_batch_encoder_compiled"),
    ("twilight_env/rules/cards.py::trick_so_far",
     "the best card so far, its place and what the taker gets (R4.1-R4.3), before every action",
     "test_best_card_so_far"),
    ("agents/nn/features.py::compact_row",
     "row 24, the best card so far and its seat (R4.1), against reference.best_place",
     "test_features_best_so_far"),
    ("training/vec_selfplay.py::vector_rows",
     "the batch engine's compact rows equal features.state_row of the same position",
     "test_vector_rows"),
    ("agents/_guided_nb.py::compact_row_into",
     "the guided search's compact rows and history from its own world steps (apply_tracked) equal "
     "features.state_row and the engine's state, deciding seat and other viewers",
     "test_guided_search_rows"),
)
"""Every fast copy of a rule the harness holds to the reference (module path, what is
compared, the test)."""

SEEDS = range(240)
"""Positions of the default run (even seeds 4 players, odd seeds 3 players)."""

needs_core = pytest.mark.skipif(engine.backend() != "compiled",
                                reason="the compiled core is not built (or TWILIGHT_ENV_PURE_PYTHON=1)")


def _have(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


needs_numba = pytest.mark.skipif(not _have("numba"), reason="numba is not installed")


def fail(copy: str, seed: int, where: str, what: str):
    pytest.fail(f"{copy}: position seed {seed}, {where}: {what}", pytrace=False)


# ---------------------------------------------------------------------------------
# the table against the architecture page
# ---------------------------------------------------------------------------------

def test_every_copy_has_its_test():
    names = {c for c, _, _ in COPIES}
    assert len(names) == len(COPIES), "a copy is listed twice"
    for copy, _, test in COPIES:
        assert callable(globals().get(test)), f"{copy}: no test named {test}"
        path = copy.split("::")[0]
        assert (ROOT / path).is_file(), f"{copy}: no file {path}"


def architecture_copies(text: str) -> set[str]:
    """The copies that the tables of the "Where each rule is written" section bind with
    ``tests/rules/test_parity.py``: the first column's backticked name, with the words
    in parentheses right after it (a variant such as ``(numpy)``)."""
    section = text.split("## Where each rule is written", 1)[1].split("\n## ", 1)[0]
    found = set()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or "tests/rules/test_parity.py" not in cells[-1]:
            continue
        m = re.match(r"`([^`]+)`(?:\s*\((numpy|torch|python|compiled=False|compiled=True)\))?", cells[0])
        if m:
            found.add(m.group(1) + (f" ({m.group(2)})" if m.group(2) else ""))
    return found


def test_the_copies_are_the_ones_the_architecture_page_names():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = architecture_copies(text)
    listed = {c for c, _, _ in COPIES}
    assert named == listed, (f"only in docs/ARCHITECTURE.md: {sorted(named - listed)}; "
                             f"only in the harness: {sorted(listed - named)}")


def test_the_page_check_sees_a_missing_copy():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("| `agents/_ismcts_nb.py`"))
    assert "agents/_ismcts_nb.py" not in architecture_copies(text.replace(line + "\n", ""))


# ---------------------------------------------------------------------------------
# the positions reach every rule
# ---------------------------------------------------------------------------------

def test_positions_reach_every_rule():
    """The default positions hold each rare case, so a copy that breaks it fails."""
    seen = dict.fromkeys(("4 players", "3 players", "request R3.2", "new moon requested R7.3",
                          "pending pile R4.3", "pending pile taken later R4.3", "neutral pile R4.4",
                          "equal best cards R4.1", "no own sanctuary R5.3"), 0)
    for seed in SEEDS:
        pos = position(seed)
        d = pos.reference(0)
        seen[f"{pos.num_players} players"] += 1
        for a in pos.actions:
            if a >= 28:
                seen["request R3.2"] += 1
                seen["new moon requested R7.3"] += pos.num_players == 3 and (d.chooser() + a - 27) % 4 == 2
            pending_before = len(d.pending)
            if len(d.places) == 3:
                cards = ([c for _, _, c in d.places] + [R.CARDS[a]]) if a < 28 else []  # the full trick
                if cards and not any(R.kind_of(c) == "P" for c in cards):
                    best = R.strength(cards[R.best_place(cards)])
                    seen["equal best cards R4.1"] += sum(R.strength(c) == best for c in cards) > 1
                    seen["pending pile taken later R4.3"] += pending_before > 0
            d.play(a)
            seen["pending pile R4.3"] += len(d.pending) > pending_before
        seen["neutral pile R4.4"] += bool(d.neutral)
        seen["no own sanctuary R5.3"] += 0 in d.side_scores()
    assert min(seen.values()) >= 10, f"cases few positions reached: {seen}"


# ---------------------------------------------------------------------------------
# deal rules: one loop for every copy that steps a deal
# ---------------------------------------------------------------------------------

def play_against_reference(copy: str, seed: int, start, legal, step, fields, scores=None) -> None:
    """Replay position ``seed`` on a copy and compare it with the reference after every
    action: ``start(pos)`` builds the copy's deal, ``legal(x)`` its sorted legal actions,
    ``step(x, a)`` plays, ``fields(x)`` its fields (a subset of ``positions.FIELDS``),
    ``scores(x)`` its ``(side scores, seat scores)`` at the end."""
    pos = position(seed)
    ref = pos.reference(0)
    x = start(pos)
    for k, a in enumerate(pos.actions):
        got, want = list(legal(x)), ref.legal_actions()
        if got != want:
            fail(copy, seed, f"before action {k}", f"legal actions {got}, reference {want}")
        step(x, a)
        ref.play(a)
        f = fields(x)
        diff = first_difference(f, {k2: v for k2, v in reference_fields(ref).items() if k2 in f})
        if diff:
            fail(copy, seed, f"after action {k} ({a})", diff)
    if list(legal(x)):
        fail(copy, seed, "at the end", f"legal actions {list(legal(x))} after the last trick")
    if scores is not None:
        got, want = scores(x), (ref.side_scores(), ref.seat_scores())
        if tuple(map(tuple, got)) != tuple(map(tuple, want)):
            fail(copy, seed, "at the end", f"field scores (side, seat): got {got}, reference {want}")


def _engine_copy(cls, copy, seeds):
    for seed in seeds:
        play_against_reference(copy, seed, lambda p: p.state(cls), lambda s: s.legal_actions(),
                               lambda s, a: s.apply(a), engine_fields,
                               lambda s: (s.side_scores(), s.seat_scores()))
        end = position(seed).state(cls, len(position(seed).actions))
        if not end.done:
            fail(copy, seed, "at the end", "field done: got False, reference True")


def test_python_engine():
    _engine_copy(PurePythonState, "twilight_env/rules/state.py::PurePythonState", SEEDS)
    for seed in SEEDS[:40]:  # R2.5: the public card-back counts
        pos = position(seed)
        st, ref = pos.state(PurePythonState), pos.reference(0)
        for k, a in enumerate(pos.actions):
            if [tuple(c) for c in st.counts()] != ref.card_backs():
                fail("twilight_env/rules/state.py::PurePythonState", seed, f"before action {k}",
                     f"field counts: got {st.counts()}, reference {ref.card_backs()}")
            st.apply(a)
            ref.play(a)


def test_engines_on_any_seed():
    """Both engines (the compiled core when it is built) on positions of seeds drawn by
    hypothesis (the ``test`` extra)."""
    hypothesis = pytest.importorskip("hypothesis")

    @hypothesis.settings(max_examples=40)
    @hypothesis.given(seed=hypothesis.strategies.integers(10_000, 2**32 - 1))
    def check(seed):
        _engine_copy(PurePythonState, "twilight_env/rules/state.py::PurePythonState", [seed])
        if engine.backend() == "compiled":
            _engine_copy(State, "twilight_env/rules/_engine_c.c", [seed])

    check()


@needs_core
def test_compiled_core():
    copy = "twilight_env/rules/_engine_c.c"
    assert issubclass(State, engine_state._core.StateCore)
    _engine_copy(State, copy, SEEDS)
    # every illegal action at every step of a few deals: refused as Python refuses it, unchanged
    for seed in SEEDS[:12]:
        pos = position(seed)
        a, b = pos.state(State), pos.state(PurePythonState)
        for k, act in enumerate(pos.actions):
            legal = set(b.legal_actions())
            for bad in range(-1, NUM_ACTIONS + 1):
                if bad in legal:
                    continue
                outcomes = []
                for s in (a, b):
                    try:
                        s.apply(bad)
                        outcomes.append("accepted")
                    except ValueError as e:
                        outcomes.append(str(e))
                if outcomes[0] != outcomes[1] or engine_fields(a) != engine_fields(b):
                    fail(copy, seed, f"before action {k}, illegal action {bad}",
                         f"outcome {outcomes[0]!r}, Python {outcomes[1]!r}")
            a.apply(act)
            b.apply(act)


def test_engine_match():
    """Matches of every variant through ``Match`` and :class:`reference.MatchScore`, each
    deal played by random legal actions of the reference deal."""
    copy = "twilight_env/rules/match.py::Match"
    variants = [dict(num_players=4), dict(num_players=4, goals_333=True),
                dict(num_players=3), dict(num_players=3, goals_333=True),
                dict(num_players=3, three_player_scoring="individual"),
                dict(num_players=3, fixed_solo=True), dict(num_players=3, fixed_solo=True, goals_333=True)]
    goal_wins = 0
    for seed in range(56):
        kw = variants[seed % len(variants)]
        rng = random.Random(seed)
        target = rng.choice([200, 400, 1000, 1200])
        cfg = Config(target=target, **kw)
        n = cfg.num_players
        first = rng.randrange(4) if n == 4 else rng.randrange(3)
        lines = R.score_lines(n, cfg.three_player_scoring)
        start = [rng.choice([0, 0, 250, 333, 666, 999]) for _ in range(lines)]  # a deal scoring 0 stays on a goal
        if cfg.fixed_solo and cfg.three_player_scoring == "team":
            sun = [p for p in range(3) if p != first]
            start[sun[1]] = start[sun[0]]  # the Sun players share one score line (R7.6)
        m = Match(cfg, deal=R.deal(rng), scores=start, **({"dealer": first} if n == 4 else {"solo": first}))
        ref = R.MatchScore(n, target, cfg.goals_333, cfg.three_player_scoring, cfg.fixed_solo, totals=start,
                           **({"dealer": first} if n == 4 else {"first_solo": first}))
        for k in range(60):
            st = m.state
            got = (m.dealer, st.leader) if n == 4 else (m.solo, st.leader)
            want = (ref.dealer, ref.leader) if n == 4 else (ref.solo, ref.leader)
            if got != want:
                fail(copy, seed, f"deal {k}", f"field (dealer or solo, leader): got {got}, reference {want}")
            d = R.Deal([[R.CARDS[i] for i in range(28) if h >> i & 1] for h in st.hands], st.leader, n)
            while not d.done:
                a = rng.choice(d.legal_actions())
                d.play(a)
                st.apply(a)
            m.finish_deal()
            winners = ref.add_deal(d.side_scores(), d.seat_scores())
            if m.totals != ref.totals:
                fail(copy, seed, f"after deal {k}", f"field totals: got {m.totals}, reference {ref.totals}")
            if m.winners != winners or m.done != bool(winners):
                fail(copy, seed, f"after deal {k}", f"field winners: got {m.winners}, reference {winners}")
            if m.done:
                goal_wins += any(m.totals[line] in R.GOALS_333 and m.totals[line] < target for line in winners)
                break
            m.next_deal(None, deal=R.deal(rng))
    assert goal_wins > 0, "no match ended on a goal of R6.2"


# -- the batch engine -------------------------------------------------------------

def _batch_against_reference(backend: str, seeds) -> None:
    """Row i of a batch plays position ``seeds[i]``; when it ends, every third row is
    reset in place (the other rows going on) to play a second position."""
    from twilight_env.envs.vector import VectorEngine

    copy = f"twilight_env/envs/vector_engine.py::VectorEngine ({backend})"
    for n in (4, 3):
        batch = [s for s in seeds if (s % 2 == 0) == (n == 4)]
        queue = [[position(s)] + ([position(s + 2 * len(seeds))] if i % 3 == 0 else []) for i, s in enumerate(batch)]
        B = len(batch)
        eng = VectorEngine(B, n, backend=backend)
        o = eng.ops
        pos = [q.pop(0) for q in queue]
        eng.reset(deals=np.array([p.masks for p in pos], np.int64), leaders=np.array([p.leader for p in pos]))
        refs = [p.reference(0) for p in pos]
        step = [0] * B
        scored = [False] * B
        while True:
            g = {name: o.to_numpy(getattr(eng, name)) for name in (
                "hands", "leader", "trick", "place", "phase", "holder", "cards", "holders", "pending", "captured",
                "neutral", "done")}
            mask = o.to_numpy(eng.legal_mask())
            hist = o.to_numpy(eng.history)
            deciding = o.to_numpy(eng.deciding_seat)
            for i, (p, ref) in enumerate(zip(pos, refs)):
                want = reference_fields(ref)
                got = {name: (g[name][i].tolist()) for name in want if name in g}
                got["history"] = [x for x in hist[i].tolist() if x >= 0]
                got["deciding"] = -1 if g["done"][i] else int(deciding[i])
                want["history"] = [x for _, _, x in want["history"]]
                diff = first_difference(got, want)
                if diff:
                    fail(copy, p.seed, f"after {step[i]} actions", diff)
                legal = np.flatnonzero(mask[i]).tolist()
                if legal != ref.legal_actions():
                    fail(copy, p.seed, f"before action {step[i]}", f"legal actions {legal}, "
                         f"reference {ref.legal_actions()}")
                if bool(g["done"][i]) != ref.done:
                    fail(copy, p.seed, f"after {step[i]} actions", f"field done: got {bool(g['done'][i])}")
            ended = [i for i in range(B) if refs[i].done and not scored[i]]
            if ended:
                _batch_scores(copy, eng, ended, pos, refs)
                for i in ended:
                    scored[i] = True
                again = [i for i in ended if queue[i]]
                if again:  # reset in place: fresh deals in these rows only
                    for i in again:
                        pos[i], step[i], scored[i] = queue[i].pop(0), 0, False
                        refs[i] = pos[i].reference(0)
                    eng.reset(np.array(again), deals=np.array([pos[i].masks for i in again], np.int64),
                              leaders=np.array([pos[i].leader for i in again]))
                    continue
            active = np.array([not ref.done for ref in refs])
            if not active.any():
                break
            acts = np.array([p.actions[k] if on else 0 for p, k, on in zip(pos, step, active)], np.int64)
            eng.apply(acts, active=active)
            for i in np.flatnonzero(active):
                refs[i].play(pos[i].actions[step[i]])
                step[i] += 1


def _batch_scores(copy, eng, rows, pos, refs) -> None:
    """Scores, returns and ``to_state`` of the finished ``rows`` (R5, R8)."""
    o = eng.ops
    side, seat, ret = o.to_numpy(eng.side_scores()), o.to_numpy(eng.seat_scores()), o.to_numpy(eng.returns())
    for i in rows:
        p, ref = pos[i], refs[i]
        a, b = ref.side_scores()
        if (tuple(side[i]), tuple(seat[i]), tuple(ret[i])) != ((a, b), ref.seat_scores(), (a - b, b - a) * 2):
            fail(copy, p.seed, "at the end", f"field scores (side, seat, returns): got {side[i].tolist()} "
                 f"{seat[i].tolist()} {ret[i].tolist()}, reference {(a, b)} {ref.seat_scores()}")
        diff = first_difference(engine_fields(eng.to_state(i)), reference_fields(ref))
        if diff:
            fail(copy, p.seed, "at the end, to_state", diff)


def test_batch_engine_numpy():
    _batch_against_reference("numpy", SEEDS)


def test_batch_engine_torch():
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _batch_against_reference("torch", SEEDS[:80])
    finally:
        torch.set_num_threads(threads)


# -- the solvers ------------------------------------------------------------------

def _endgames(seeds, tricks_left, late=False):
    """(seed, actions played, engine state, reference deal) with ``tricks_left`` tricks
    left; ``late``: at the last action of that trick's first three places (plain minimax
    on the reference is slow from earlier)."""
    for seed in seeds:
        pos = position(seed)
        if late:
            cut = max(k for k in range(len(pos.actions)) if pos.tricks[k] == 7 - tricks_left)
        else:
            cut = pos.endgame_cut(tricks_left, random.Random(seed))
        yield seed, cut, pos.state(State, cut), pos.reference(cut)


def _solver_against_reference(backend: str, seeds, two_trick_seeds, three_trick_seeds=()) -> None:
    from twilight_env.agents.solver import Solver

    copy = "agents/solver.py::Solver (python)" if backend == "python" else "agents/_solver_nb.py"
    solvers = {4: Solver(4, backend), 3: Solver(3, backend)}
    hold_roots = 0
    for tricks_left, batch in ((1, seeds), (2, two_trick_seeds), (3, three_trick_seeds)):
        for seed, cut, st, ref in _endgames(batch, tricks_left, late=tricks_left == 3):
            solver = solvers[st.num_players]
            before = engine_fields(st)
            got, want = solver.solve(st), R.minimax_value(ref)
            if got != want:
                fail(copy, seed, f"{tricks_left} tricks left, after {cut} actions", f"value {got}, minimax {want}")
            got, want = solver.action_values(st), R.action_values(ref)
            if got != want:
                fail(copy, seed, f"{tricks_left} tricks left, after {cut} actions",
                     f"action values {got}, minimax {want}")
            if engine_fields(st) != before:
                fail(copy, seed, f"{tricks_left} tricks left, after {cut} actions", "the solver changed the state")
            hold_roots += ref.requested is not None
    assert hold_roots > 0, "no root in the hold phase (R3.2)"


def test_solver_python():
    _solver_against_reference("python", SEEDS[:120], SEEDS[:24], SEEDS[:4])


@needs_numba
def test_solver_numba():
    _solver_against_reference("numba", SEEDS[:120], SEEDS[:24], SEEDS[:4])
    from twilight_env.agents import _solver_nb
    from twilight_env.agents.solver import Solver

    # 3 tricks left from any place: the numba search gives the python search's values
    # (both held to the reference above)
    for seed, cut, st, _ in _endgames(SEEDS[:12], 3):
        py, nb = Solver(st.num_players, "python"), Solver(st.num_players, "numba")
        if nb.action_values(st) != py.action_values(st):
            fail("agents/_solver_nb.py", seed, f"3 tricks left, after {cut} actions",
                 f"action values {nb.action_values(st)}, python backend {py.action_values(st)}")
    # the closed-form last trick from the start of the last trick (R4.1, R4.4, R3.5)
    equal_tops = 0
    for seed in SEEDS:
        pos = position(seed)
        cut = pos.tricks.index(6)
        st, ref = pos.state(State, cut), pos.reference(cut)
        root = Solver(st.num_players, "python")._root(st)
        _, _, _, _, _, _, ps, pm0, pm1, s0, m0, s1, m1, _ = root
        h = st.hands
        got = _solver_nb._last_trick(h[0], h[1], h[2], h[3], st.leader, ps, pm0, pm1, s0, m0, s1, m1,
                                     0 if st.num_players == 4 else 1)
        if got != R.minimax_value(ref):
            fail("agents/_solver_nb.py", seed, "last trick (closed form)", f"value {got}, minimax {R.minimax_value(ref)}")
        left = [c for hand in ref.hands for c in hand]
        tops = [max(R.strength(c) for c in left if R.cult_of(c) == cult) for cult in (R.SUN, R.MOON)]
        equal_tops += tops[0] == tops[1] and tops[0] < 7
    assert equal_tops >= 20, "few last tricks with equal top cards (the closed form's tie branch, R4.1)"


# -- the compiled rollout and search ----------------------------------------------

def _kernel_array(pos) -> np.ndarray:
    """The compiled kernels' state array of the dealt position (layout in agents/_rollout_nb.py)."""
    h = pos.masks
    return np.array([h[0], h[1], h[2], h[3], pos.leader, 0, 0, 0, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0,
                     1 if pos.num_players == 3 else 0], dtype=np.int64)


def _kernel_fields(st) -> dict:
    return {"hands": st[0:4].tolist(), "leader": int(st[4]), "trick": int(st[5]), "place": int(st[6]),
            "phase": int(st[7]), "holder": int(st[8]), "cards": st[9:13].tolist(), "pending": int(st[13]),
            "captured": st[14:18].tolist(), "neutral": int(st[18])}


@needs_numba
def test_compiled_rollout():
    from twilight_env.agents import fast_rollout

    copy = "agents/_rollout_nb.py"
    for seed in SEEDS:
        pos = position(seed)
        cut = random.Random(seed).randrange(len(pos.actions))
        st, ref = pos.state(State, cut), pos.reference(cut)
        acts = fast_rollout.rollout_actions(st)
        for k, a in enumerate(acts):
            if a not in ref.legal_actions():
                fail(copy, seed, f"rollout from action {cut}, its action {k}",
                     f"illegal action {a}; reference legal {ref.legal_actions()}")
            ref.play(a)
        if not ref.done:
            fail(copy, seed, f"rollout from action {cut}", "field done: the rollout stopped before the deal's end")
        end = fast_rollout.rollout(st.clone())
        diff = first_difference(engine_fields(end), reference_fields(ref))
        if diff:
            fail(copy, seed, f"rollout from action {cut}, final state", diff)
        if fast_rollout.rollout_scores(st) != ref.side_scores():
            fail(copy, seed, f"rollout from action {cut}",
                 f"field side scores: got {fast_rollout.rollout_scores(st)}, reference {ref.side_scores()}")


@needs_numba
def test_compiled_search_steps():
    from twilight_env.agents import _ismcts_nb

    copy = "agents/_ismcts_nb.py"
    legal = np.empty(64, np.int64)

    def kernel_legal(st):
        return legal[:_ismcts_nb.legal_into(st, legal)].tolist()

    for seed in SEEDS:
        play_against_reference(copy, seed, _kernel_array, kernel_legal, _ismcts_nb.apply, _kernel_fields,
                               lambda st: (tuple(int(v) for v in _ismcts_nb.side_scores(st)),
                                           tuple(int(_ismcts_nb.seat_score(st, s)) for s in range(4))))


# ---------------------------------------------------------------------------------
# match rules: the edge study's simulators
# ---------------------------------------------------------------------------------

def _simulator_case(seed: int, goals: bool = False):
    """A target and a pool size; with ``goals`` mostly targets above 666, where two goals
    can be reached in one deal (R6.2)."""
    rng = random.Random(seed)
    return rng.choice([333, 700, 1000, 1000] if goals else [150, 333, 500, 700, 1000]), rng.choice([3, 5, 8])


def _compare_pools(copy, seed, got: dict, want: dict) -> None:
    for key, value in want.items():
        g = np.asarray(got[key], dtype=float)
        if not np.array_equal(g, np.asarray(value, dtype=float), equal_nan=True):
            b = int(np.flatnonzero(~np.isclose(g, value, equal_nan=True).reshape(len(g), -1).all(axis=1))[0])
            fail(copy, seed, f"pool {b}", f"field {key}: got {g[b].tolist()}, reference {np.asarray(value)[b].tolist()}")


def _fixed_solo(copy: str, goals: bool, seeds) -> tuple[int, int]:
    """Compare ``simulate_fixed_solo`` with the reference on the pools of ``seeds``;
    returns how many matches the reference saw end on a goal of R6.2, and how many ended
    with both sides on different goals (the goal listed first wins)."""
    from twilight_env.experiments.edge.matches import simulate_fixed_solo

    pools, max_deals = 60, 60
    goal_wins = both_on_goals = 0
    for seed in seeds:
        target, per_pool = _simulator_case(seed, goals)
        pts = deal_outcomes(seed, pools, per_pool, 2)
        moon, sun = pts[:, :, 0], pts[:, :, 1]

        def result(b, draws):
            ms = R.MatchScore(3, target, goals, "team", fixed_solo=True)
            for j in draws:
                if ms.add_deal((int(moon[b, j]), int(sun[b, j]))):
                    break
            return ms

        draws = lockstep_draws(np.random.default_rng(seed), per_pool, pools, lambda b, d: bool(result(b, d).winners),
                               max_deals)
        got = simulate_fixed_solo(moon, sun, np.random.default_rng(seed), 1, target, max_deals, goals_333=goals)
        ends = [result(b, draws[b]) for b in range(pools)]
        want = {"p_solo": [float(e.winners == (0,)) if e.winners else np.nan for e in ends],
                "deals": [float(e.deals) if e.winners else np.nan for e in ends],
                "undecided": [0 if e.winners else 1 for e in ends]}
        _compare_pools(copy, seed, got, want)
        for e in ends:
            on_goal = [t for t in e.totals if t in R.GOALS_333 and t < target]
            goal_wins += bool(e.winners) and e.totals[e.winners[0]] in on_goal
            both_on_goals += bool(e.winners) and len(set(on_goal)) == 2
    return goal_wins, both_on_goals


def test_fixed_solo_simulator():
    from twilight_env.experiments.edge import handicap, matches

    # handicap.py finds the fair handicap with this simulator (the handicap added to the Moon points)
    assert handicap.simulate_fixed_solo is matches.simulate_fixed_solo
    _fixed_solo("experiments/edge/matches.py::simulate_fixed_solo", False, range(12))


def test_goals_333_simulator():
    from twilight_env.experiments.edge import goals_333, matches

    assert goals_333.match_figures is matches.match_figures  # goals_333.py reads these figures
    goal_wins, both_on_goals = _fixed_solo("experiments/edge/goals_333.py", True, range(100, 160))
    assert goal_wins > 0, "no match ended on a goal (R6.2)"
    assert both_on_goals >= 8, "few matches ended with both sides on different goals (R6.2)"


def _highest_total(copy: str, seeds, lines: int, simulate, add_deal, line_of) -> None:
    pools, max_deals = 30, 60
    for seed in seeds:
        target, per_pool = _simulator_case(seed)
        pts = deal_outcomes(seed, pools, per_pool, 2 if lines == 3 else 4)

        def result(b, draws):
            ms = R.MatchScore(3, target, scoring="team" if lines == 3 else "individual",
                              fixed_solo=lines == 4)
            for j in draws:
                if add_deal(ms, pts[b, j]):
                    break
            return ms

        draws = lockstep_draws(np.random.default_rng(seed), per_pool, pools, lambda b, d: bool(result(b, d).winners),
                               max_deals)
        got = simulate(pts, np.random.default_rng(seed), target, max_deals)
        ends = [result(b, draws[b]) for b in range(pools)]
        p_win, totals = [], []
        for e in ends:
            order = [e.totals[line_of.index(col)] for col in range(lines)]
            totals.append(order if e.winners else [np.nan] * lines)
            p_win.append([float(e.winners == (line_of[col],)) for col in range(lines)] if e.winners
                         else [np.nan] * lines)
        want = {"p_win": p_win, "totals": totals, "deals": [float(e.deals) if e.winners else np.nan for e in ends],
                "undecided": [0 if e.winners else 1 for e in ends]}
        _compare_pools(copy, seed, got, want)


def test_rotating_simulator():
    from twilight_env.experiments.edge.matches import simulate_rotating

    _highest_total("experiments/edge/matches.py::simulate_rotating", range(16), 3,
                   lambda pts, rng, target, md: simulate_rotating(pts[:, :, 0], pts[:, :, 1], rng, 1, target, md),
                   lambda ms, p: ms.add_deal((int(p[0]), int(p[1]))), [0, 1, 2])


def test_four_line_simulator():
    from twilight_env.experiments.edge.individual_edge import simulate_lines

    # the simulator's columns are seats (solo, Sun left, new moon, Sun right); the
    # reference's lines are players 0, 1, 2 (seats 0, 1, 3 with player 0 solo) and the new moon
    _highest_total("experiments/edge/individual_edge.py::simulate_lines", range(16), 4,
                   lambda pts, rng, target, md: simulate_lines(pts, rng, 1, target, md),
                   lambda ms, p: ms.add_deal((0, 0), tuple(int(x) for x in p)), [0, 1, 3, 2])


# ---------------------------------------------------------------------------------
# observations and network features
# ---------------------------------------------------------------------------------

def _viewers(n: int) -> tuple[int, ...]:
    return (0, 1, 2, 3) if n == 4 else (0, 1, 3)


def reference_observation(st, seat, totals=None, target=None):
    """The reference encoder's vector and mask (the pure-Python ``_encode``)."""
    from twilight_env.obs import encoding as E

    E.backend()  # settle the compiled encoder first, so that it is restored below
    keep = E._ENCODE_INTO
    E._ENCODE_INTO = False
    try:
        return E.observation_and_mask(st, seat, totals, target)
    finally:
        E._ENCODE_INTO = keep


def _decision_points(seeds, every=3):
    """(seed, k, engine state after k actions) at every ``every``-th action, and the end."""
    for seed in seeds:
        pos = position(seed)
        st = pos.state(State)
        for k, a in enumerate(pos.actions):
            if k % every == 0:
                yield seed, k, st.clone()
            st.apply(a)
        yield seed, len(pos.actions), st


def test_infoset_encoder():
    from twilight_env.obs import encoding as E
    from twilight_env.rules.infoset import InfoSet

    for seed, k, st in _decision_points(SEEDS[:60], every=5):
        for seat in _viewers(st.num_players):
            for totals, target in ((None, None), ((100, 250, 300, 0), 666)):
                want = reference_observation(st, seat, totals, target)[0]
                got = E.encode_infoset(InfoSet(st, seat, totals, target))
                if got.tobytes() != want.tobytes():
                    fail("twilight_env/obs/encoding.py::encode_infoset", seed, f"after {k} actions, seat {seat}",
                         f"observation index {int(np.flatnonzero(got != want)[0])}")


def test_compiled_encoder():
    from twilight_env.obs import encoding as E

    if E.backend() != "numba":
        pytest.skip("numba is not installed (or TWILIGHT_ENV_PURE_PYTHON=1): only the reference encoder runs")
    for seed, k, st in _decision_points(SEEDS[:80], every=2):
        for seat in _viewers(st.num_players):
            for totals, target in ((None, None), ((100, 250, 300, 0), 666)):
                want, want_mask = reference_observation(st, seat, totals, target)
                got, got_mask = E.observation_and_mask(st, seat, totals, target)
                for name, g, w in (("observation", got, want), ("action mask", got_mask, want_mask),
                                   ("observation", E.encode_observation(st, seat, totals, target), want)):
                    if g.tobytes() != w.tobytes():
                        fail("twilight_env/obs/_encoding_nb.py::encode_into", seed, f"after {k} actions, seat {seat}",
                             f"{name} index {int(np.flatnonzero(g != w)[0])}")


def _batch_observations(copy: str, compiled: bool, seeds) -> None:
    from twilight_env.envs.vector import VectorEngine
    from twilight_env.obs import vector_obs

    for n in (4, 3):
        pos = [position(s) for s in seeds if (s % 2 == 0) == (n == 4)]
        eng = VectorEngine(len(pos), n)
        eng.reset(deals=np.array([p.masks for p in pos], np.int64), leaders=np.array([p.leader for p in pos]))
        states = [p.state(State) for p in pos]
        rng = random.Random(n)
        for k in range(max(len(p.actions) for p in pos) + 1):
            seats = np.array([st.deciding_seat if not st.done else 0 for st in states])
            others = np.array([rng.choice(_viewers(n)) for _ in pos])
            for viewers, what in ((seats, "the deciding seat"), (others, "another viewer")):
                got = vector_obs.observe(eng, None if what == "the deciding seat" else viewers, compiled=compiled)
                for i, (p, st) in enumerate(zip(pos, states)):
                    if st.done and what == "the deciding seat":
                        continue
                    want = reference_observation(st, int(viewers[i]))[0]
                    if got[i].tobytes() != want.tobytes():
                        fail(copy, p.seed, f"after {k} actions, {what} (seat {int(viewers[i])})",
                             f"observation index {int(np.flatnonzero(got[i] != want)[0])}")
            active = np.array([k < len(p.actions) for p in pos])
            if not active.any():
                break
            eng.apply(np.array([p.actions[k] if k < len(p.actions) else 0 for p in pos], np.int64), active=active)
            for p, st, on in zip(pos, states, active):
                if on:
                    st.apply(p.actions[k])


def test_batch_encoder_arrays():
    _batch_observations("twilight_env/obs/vector_obs.py::observe (compiled=False)", False, SEEDS[:64])


def test_batch_encoder_compiled():
    from twilight_env.obs import encoding as E

    if E.backend() != "numba":
        pytest.skip("numba is not installed (or TWILIGHT_ENV_PURE_PYTHON=1): no compiled batch path")
    _batch_observations("twilight_env/obs/vector_obs.py::observe (compiled=True)", True, SEEDS[:64])


def test_best_card_so_far():
    """``cards.trick_so_far``, the one "best card so far" of the heuristic, the features, the
    solver and the deal log, against ``reference.best_place`` in every trick, full ones
    included (a Purgatory makes it 7: the trick goes pending, R4.3)."""
    from twilight_env.rules.cards import trick_so_far

    copy = "twilight_env/rules/cards.py::trick_so_far"
    for seed in SEEDS:
        pos = position(seed)
        ref = pos.reference(0)
        for k, a in enumerate(pos.actions):
            trick = [c for _, _, c in ref.places]
            pending = sum(1 << R.card_id(c) for c in ref.pending)
            tricks = [trick] if trick else []
            if a < 28 and len(trick) == 3:
                tricks.append(trick + [R.CARDS[a]])  # the full trick this action completes
            for cards in tricks:
                ids = [R.card_id(c) for c in cards]
                p = R.best_place(cards)
                want = (R.strength(cards[p]), p, pending | sum(1 << i for i in ids))
                got = tuple(trick_so_far(ids + [-1] * (4 - len(ids)), len(ids), pending))
                if got != want:
                    fail(copy, seed, f"before action {k}, {len(ids)} cards",
                         f"(best, place, stake) {got}, reference {want}")
            ref.play(a)


def test_features_best_so_far():
    pytest.importorskip("torch")  # agents/nn is importable without torch, but its tests travel with training
    from twilight_env.agents.nn.features import state_row

    checked = 0
    for seed in SEEDS:
        pos = position(seed)
        st, ref = pos.state(State), pos.reference(0)
        for k, a in enumerate(pos.actions):
            if ref.places:
                viewer = st.deciding_seat
                misc2 = state_row(st)[24]
                cards = [c for _, _, c in ref.places]
                p = R.best_place(cards)
                want_seat = (ref.places[p][0] - viewer) % 4
                got_seat = [r for r in range(4) if misc2 >> (4 + r) & 1]
                got_str = [s for s in range(8) if misc2 >> (8 + s) & 1]
                if got_seat != [want_seat] or got_str != [R.strength(cards[p])]:
                    fail("agents/nn/features.py::compact_row", seed, f"before action {k}",
                         f"row 24: best seat {got_seat} strength {got_str}, reference "
                         f"[{want_seat}] [{R.strength(cards[p])}]")
                checked += 1
            st.apply(a)
            ref.play(a)
    assert checked > 1000


def test_vector_rows():
    pytest.importorskip("torch")
    from twilight_env.agents.nn.features import state_row
    from twilight_env.envs.vector import VectorEngine
    from twilight_env.training.vec_selfplay import vector_rows

    for n in (4, 3):
        pos = [position(s) for s in SEEDS[:64] if (s % 2 == 0) == (n == 4)]
        eng = VectorEngine(len(pos), n)
        eng.reset(deals=np.array([p.masks for p in pos], np.int64), leaders=np.array([p.leader for p in pos]))
        states = [p.state(State) for p in pos]
        rng = random.Random(n)
        for k in range(max(len(p.actions) for p in pos)):
            rows = vector_rows(eng)
            others = np.array([rng.choice(_viewers(n)) for _ in pos])
            rows_other = vector_rows(eng, others)
            for i, (p, st) in enumerate(zip(pos, states)):
                if st.done:
                    continue
                for got, viewer in ((rows[i], st.deciding_seat), (rows_other[i], int(others[i]))):
                    if got.tolist() != state_row(st, viewer):
                        want = state_row(st, viewer)
                        j = next(j for j in range(len(want)) if got[j] != want[j])
                        fail("training/vec_selfplay.py::vector_rows", p.seed, f"after {k} actions, viewer {viewer}",
                             f"compact row entry {j}: got {int(got[j])}, features.state_row {want[j]}")
            active = np.array([k < len(p.actions) for p in pos])
            eng.apply(np.array([p.actions[k] if k < len(p.actions) else 0 for p in pos], np.int64), active=active)
            for p, st, on in zip(pos, states, active):
                if on:
                    st.apply(p.actions[k])


@needs_numba
def test_guided_search_rows():
    pytest.importorskip("torch")
    from twilight_env.agents import _guided_nb as G
    from twilight_env.agents.fast_rollout import state_array
    from twilight_env.agents.nn.features import state_row

    copy = "agents/_guided_nb.py::compact_row_into"
    rng = random.Random(5)
    for seed in SEEDS[:96]:
        pos = position(seed)
        st = pos.state(State)
        arr = state_array(st)
        hist = np.zeros(8, dtype=np.int64)
        out = np.zeros(25, dtype=np.int64)
        for k, a in enumerate(pos.actions):
            if arr.tolist() != state_array(st).tolist():
                fail(copy, seed, f"after {k} actions", "apply_tracked's state differs from the engine's")
            for viewer in (st.deciding_seat, rng.choice(_viewers(pos.num_players))):
                G.compact_row_into(arr, hist, viewer, out)
                want = state_row(st, viewer)
                if out.tolist() != want:
                    j = next(j for j in range(len(want)) if out[j] != want[j])
                    fail(copy, seed, f"after {k} actions, viewer {viewer}",
                         f"compact row entry {j}: got {int(out[j])}, features.state_row {want[j]}")
            if G.deciding_seat(arr) != st.deciding_seat:
                fail(copy, seed, f"after {k} actions", "deciding seat")
            G.apply_tracked(arr, hist, a)
            st.apply(a)


# ---------------------------------------------------------------------------------
# the larger sweep
# ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_slow_sweep():
    """Ten times the default positions for the deal copies, more match simulations, and
    the solvers on more endgames (4 tricks left: the numba backend against the python one)."""
    seeds = range(240, 2640)
    _engine_copy(PurePythonState, "twilight_env/rules/state.py::PurePythonState", seeds)
    if engine.backend() == "compiled":
        _engine_copy(State, "twilight_env/rules/_engine_c.c", seeds)
    _batch_against_reference("numpy", seeds)
    _fixed_solo("experiments/edge/matches.py::simulate_fixed_solo", False, range(200, 400))
    _fixed_solo("experiments/edge/goals_333.py", True, range(400, 600))
    if _have("numba"):
        from twilight_env.agents.solver import Solver

        for seed, cut, st, _ in _endgames(seeds[:6], 4):  # 4 tricks left: the two backends agree
            if Solver(st.num_players, "numba").solve(st) != Solver(st.num_players, "python").solve(st):
                fail("agents/_solver_nb.py", seed, f"4 tricks left, after {cut} actions", "value differs from python")
        _solver_against_reference("numba", seeds[:600], seeds[:60])
