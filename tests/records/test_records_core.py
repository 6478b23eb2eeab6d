"""Records: building, files, replay against directly played games, the env, the JSON Schema."""

from __future__ import annotations

import copy
import gzip
import json
import types

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from records_helpers import CONFIG_IDS, CONFIGS, one_deal, play_match, state_fields
from twilight_env.records import game_records as records
from twilight_env.rules.cards import CARDS
from twilight_env.rules.engine import NEW_MOON, Config, State, hands_to_codes


# ---------------------------------------------------------------------------------
# building
# ---------------------------------------------------------------------------------

def test_deal_record_fields_4p():
    rec, game = one_deal(Config(), 3)
    assert rec["format"] == "twilight-deal" and rec["version"] == 1
    assert rec["config"] == {"num_players": 4, "target": 1000, "goals_333": False,
                             "three_player_scoring": "team", "fixed_solo": False}
    assert rec["solo"] is None and rec["leader"] == (rec["dealer"] + 1) % 4  # R2.4
    assert [a["action"] for a in rec["actions"]] == game["actions"]
    assert rec["deal_points"] == game["deal_points"] == rec["side_scores"]  # 4p lines are the sides
    assert rec["totals_after"] == game["totals"] and rec["totals_before"] == [0, 0]
    assert rec["lines"] == ["sun", "moon"] and len(rec["tricks"]) == 7
    assert rec["created"].endswith("Z") and rec["agents"] == ["random"] * 4 and rec["seed"] == 3
    json.dumps(rec)  # JSON values only


def test_action_entries_follow_r3_2():
    """A request names the requested holder and no card; its card names the same holder."""
    rec, _ = one_deal(Config(), 11)
    acts = rec["actions"]
    requests = [i for i, a in enumerate(acts) if a["action"] >= 28]
    assert requests, "seed 11 should hold at least one request"
    for i in requests:
        req, play = acts[i], acts[i + 1]
        assert req["card"] is None and req["holder"] == (req["chooser"] + req["action"] - 27) % 4
        assert play["chooser"] == req["chooser"] and play["holder"] == req["holder"]
        assert play["card"] is not None and play["seat"] == play["holder"]
    own = [a for a in acts if a["action"] < 28 and a["holder"] == a["chooser"]]
    assert all(a["card"] == CARDS[a["action"]] for a in own)
    # each trick's cards are the cards of its actions, in order
    cards = [a["card"] for a in acts if a["card"] is not None]
    assert [c for t in rec["tricks"] for c in t["cards"]] == cards


def test_3p_new_moon_decided_by_solo_seat():
    """R7.3: actions at the new-moon seat are decided by seat 0."""
    rec, _ = one_deal(Config(num_players=3), 5)
    nm = [a for a in rec["actions"] if (a["holder"] if a["action"] < 28 and a["holder"] != a["chooser"]
                                        else a["chooser"]) == NEW_MOON]
    assert nm and all(a["seat"] == 0 for a in nm)


def test_deal_record_from_history_equals_from_actions():
    rec, game = one_deal(Config(num_players=3), 9)
    st = State.from_deal(rec["deal"], 0, 3)
    for a in game["actions"]:
        st.apply(a)
    again = records.deal_record(st, None, config=Config(num_players=3), solo=rec["solo"], agents=["random"] * 4,
                                seed=9, meta={"deal_index": 0})
    assert {k: v for k, v in again.items() if k != "created"} == {k: v for k, v in rec.items() if k != "created"}
    assert records.actions_of_history(st.history) == game["actions"]


def test_deal_record_takes_numpy_actions():
    rec, game = one_deal(Config(), 2)
    st = State.from_deal(rec["deal"], rec["leader"])
    again = records.deal_record(st, np.array(game["actions"], dtype=np.int64))
    assert again["actions"] == rec["actions"] and again["dealer"] == rec["dealer"]


@pytest.mark.parametrize("kwargs, match", [
    ({"dealer": "next"}, "does not fit the deal"),
    ({"solo": 0}, "solo is only for 3 players"),
    ({"config": Config(num_players=3)}, "config.num_players is 3"),
    ({"config": "4p"}, "config must be an engine Config"),
    ({"config": Config(three_player_scoring="individual")}, "3-player variants"),
    ({"agents": ["random"] * 3}, "agents must be 4 agent specs"),
    ({"seed": 1.5}, "seed must be an int"),
    ({"meta": {"x": object()}}, "meta must hold only JSON values"),
    ({"scores": [1, 2, 3]}, "scores must be 2 ints"),
])
def test_deal_record_bad_arguments(kwargs, match):
    rec, game = one_deal(Config(), 4)
    st = State.from_deal(rec["deal"], rec["leader"])
    if kwargs.get("dealer") == "next":
        kwargs = {"dealer": (rec["dealer"] + 1) % 4}
    with pytest.raises(ValueError, match=match):
        records.deal_record(st, game["actions"], **kwargs)


def test_deal_record_refuses_bad_actions():
    rec, game = one_deal(Config(), 4)
    st = State.from_deal(rec["deal"], rec["leader"])
    with pytest.raises(records.RecordError) as e:
        records.deal_record(st, game["actions"][:-1])
    assert e.value.step == len(game["actions"]) - 1 and e.value.field == "actions"
    with pytest.raises(ValueError, match="not finished"):
        records.deal_record(st, None)
    with pytest.raises(ValueError, match="ints 0..30"):
        records.deal_record(st, ["SC1"])
    with pytest.raises(ValueError, match="first trick"):
        records.deal_record(State.from_deal(rec["deal"], 2, 3), game["actions"])  # 3p: the solo (seat 0) leads
    with pytest.raises(ValueError, match="engine State"):
        records.deal_record({"deal": rec["deal"]}, game["actions"])


def test_match_record_fields():
    deals, match, games = play_match(Config(target=300), 1)
    assert match["format"] == "twilight-match" and match["deals_played"] == len(deals) == len(games)
    assert match["done"] is True and match["totals"] == games[-1]["totals"]
    assert match["scores"] == [0, 0] and len(match["winners"]) == 1
    assert match["deals"] == deals


def test_match_record_refuses_deals_that_do_not_continue():
    deals, _, _ = play_match(Config(target=10**6), 2, max_deals=3)
    with pytest.raises(records.RecordError) as e:
        records.match_record([deals[0], deals[2]], config=Config(target=10**6))
    assert e.value.deal == 1 and e.value.field in ("totals_before", "dealer")
    with pytest.raises(records.RecordError) as e:
        records.match_record(deals, config=Config(target=500))  # another config
    assert e.value.deal == 0 and e.value.field == "config"
    with pytest.raises(ValueError, match="at least one deal"):
        records.match_record([], config=Config())


# ---------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["r.json", "r.json.gz"])
def test_dump_load_round_trip(tmp_path, name):
    deals, match, _ = play_match(Config(num_players=3, target=300), 4)
    for rec in (deals[0], match):
        path = tmp_path / name
        records.dump(rec, path)
        assert records.load(path) == rec
    if name.endswith(".gz"):
        with gzip.open(tmp_path / name, "rt") as f:
            assert json.load(f) == match


@pytest.mark.parametrize("name", ["r.jsonl", "r.jsonl.gz"])
def test_dump_many_load_many_round_trip(tmp_path, name):
    deals, match, _ = play_match(Config(target=300), 5)
    many = deals + [match]
    path = tmp_path / name
    assert records.dump_many(iter(many), path) == len(many)
    it = records.load_many(path)
    assert isinstance(it, types.GeneratorType)  # iterates, one line at a time
    assert list(it) == many
    assert records.load_any(path) == many
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt") as f:
        assert len(f.read().splitlines()) == len(many)


def test_load_reports_file_and_line(tmp_path):
    rec, _ = one_deal(Config(), 1)
    bad = copy.deepcopy(rec)
    bad["deal"][1][2] = "SX"
    path = tmp_path / "many.jsonl"
    path.write_text(json.dumps(rec) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(records.RecordError, match=r"line 2: unknown card code 'SX'") as e:
        list(records.load_many(path))
    assert e.value.field == "deal[1][2]"
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(records.RecordError, match="is not valid JSON"):
        records.load(tmp_path / "x.json")
    with pytest.raises(records.RecordError, match="missing key 'tricks'"):
        records.dump({k: v for k, v in rec.items() if k != "tricks"}, tmp_path / "y.json")


# ---------------------------------------------------------------------------------
# replay reproduces the directly played game
# ---------------------------------------------------------------------------------

@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_replay_reproduces_every_state_field(config):
    for seed in range(3):
        deals, match, games = play_match(config, seed, max_deals=4)
        for rec, game in zip(deals, games):
            states = records.replay(rec)
            assert [state_fields(s) for s in states] == game["states"]
        flat = [s for g in games for s in g["states"]]
        assert [state_fields(s) for s in records.replay(match)] == flat


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_replay_of_loaded_file_reproduces_states(tmp_path, config):
    deals, _, games = play_match(config, 7, max_deals=2)
    records.dump_many(deals, tmp_path / "d.jsonl.gz")
    for rec, game in zip(records.load_many(tmp_path / "d.jsonl.gz"), games):
        assert [state_fields(s) for s in records.replay(rec)] == game["states"]


@given(seed=st.integers(0, 2**32 - 1), which=st.integers(0, len(CONFIGS) - 1))
def test_property_record_replays_and_rebuilds(seed, which):
    """Over seeds and configs: replay checks out, gives the played states, and building the
    record again from the replayed final state gives the same record."""
    rec, game = one_deal(CONFIGS[which], seed)
    states = records.replay(json.loads(json.dumps(rec)))
    assert [state_fields(s) for s in states] == game["states"]
    again = records.deal_record(states[-1], None, config=CONFIGS[which], dealer=rec["dealer"], solo=rec["solo"],
                                agents=rec["agents"], seed=rec["seed"], meta=rec["meta"])
    assert {k: v for k, v in again.items() if k != "created"} == {k: v for k, v in rec.items() if k != "created"}


# ---------------------------------------------------------------------------------
# the PettingZoo env reproduces the record
# ---------------------------------------------------------------------------------

def _agent_of(rec: dict, seat: int) -> str:
    """The agent deciding at ``seat`` (3 players: players by R7.4 from the solo)."""
    if rec["config"]["num_players"] == 4:
        return f"player_{seat}"
    return f"player_{(rec['solo'] + (0, 1, 0, 2)[seat]) % 3}"


def _step_env_through(rec: dict, episode: str = "deal"):
    import twilight_env

    env = twilight_env.env(**records.env_config(rec, episode=episode))
    env.reset(seed=123, options=records.to_env_options(rec, episode=episode))
    raw = env.unwrapped
    assert rec["deal"] == hands_to_codes(raw._match.state.initial_hands)
    for i, entry in enumerate(rec["actions"]):
        agent = env.agent_selection
        assert agent == _agent_of(rec, entry["seat"]), f"step {i}"
        obs, reward, term, trunc, info = env.last()
        assert obs["action_mask"][entry["action"]] == 1 and not term
        hold = entry["card"] is not None and entry["holder"] != entry["chooser"]  # a requested holder's card
        assert info["seat"] == (entry["holder"] if hold else entry["chooser"]), f"step {i}"
        env.step(entry["action"])
    return env


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_env_reproduces_steps_rewards_and_scores(config):
    for seed in range(3):
        rec, game = one_deal(config, 100 + seed)
        env = _step_env_through(rec)
        names = env.possible_agents
        raw = env.unwrapped
        assert all(env.terminations[a] for a in names)
        assert [state_fields(raw._match.state)[f] for f in ("history", "captured", "neutral")] == \
            [game["states"][-1][f] for f in ("history", "captured", "neutral")]
        info = env.infos[names[0]]
        assert list(info["deal_points"].values()) == rec["deal_points"]
        # deal rewards (R5; individual R8) from the record's own points
        pts = rec["deal_points"]
        for i, a in enumerate(names):
            if config.num_players == 4:
                side = i & 1
                want = (rec["side_scores"][side] - rec["side_scores"][1 - side]) / 360
            elif config.three_player_scoring == "individual":
                want = (pts[i] - (sum(pts) - pts[i]) / 3) / 360
            else:
                seat = (0, 1, 3)[(i - rec["solo"]) % 3]
                side = seat & 1
                want = (rec["side_scores"][side] - rec["side_scores"][1 - side]) / 360
            assert env.rewards[a] == pytest.approx(want)
            assert env._cumulative_rewards[a] == pytest.approx(want)


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_env_match_episode_reproduces_totals(config):
    """A later deal of a match, started from its totals_before, ends on its totals_after."""
    deals, _, games = play_match(config, 21, max_deals=3)
    rec = deals[-1]
    env = _step_env_through(rec, episode="match")
    info = env.infos[env.possible_agents[0]]
    assert list(info["deal_points"].values()) == rec["deal_points"]
    totals = info["totals"]
    if config.num_players == 4:
        assert [totals["player_0"], totals["player_1"]] == rec["totals_after"]
    else:
        assert list(totals.values()) == rec["totals_after"]


def test_to_env_options_shapes():
    deals, match, _ = play_match(Config(num_players=3, target=400), 3)
    opts = records.to_env_options(match, index=len(deals) - 1, episode="match")
    assert set(opts) == {"deal", "solo", "scores"} and opts["scores"] == deals[-1]["totals_before"]
    assert records.to_env_options(deals[0]) == {"deal": deals[0]["deal"], "solo": deals[0]["solo"]}
    with pytest.raises(ValueError, match="index must be a deal"):
        records.to_env_options(match, index=len(deals))
    with pytest.raises(ValueError, match="episode must be"):
        records.to_env_options(deals[0], episode="game")


# ---------------------------------------------------------------------------------
# JSON Schema
# ---------------------------------------------------------------------------------

def _schema_validator():
    jsonschema = pytest.importorskip("jsonschema")
    with open(records.SCHEMA_FILE) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_sample_records_match_the_json_schema(config):
    v = _schema_validator()
    deals, match, _ = play_match(config, 8, max_deals=3)
    for rec in deals + [match]:
        errors = list(v.iter_errors(rec))
        assert not errors, errors[0].message


def test_json_schema_lists_the_keys_and_codes_of_validate():
    """The shipped schema and validate() name the same keys, card codes and version."""
    with open(records.SCHEMA_FILE) as f:
        schema = json.load(f)
    defs = schema["$defs"]
    for kind, keys in (("deal", records.DEAL_KEYS), ("match", records.MATCH_KEYS)):
        assert defs[kind]["required"] == list(keys) and set(defs[kind]["properties"]) == set(keys)
        assert defs[kind]["additionalProperties"] is False
    assert defs["action"]["required"] == list(records.ACTION_KEYS)
    assert defs["trick"]["required"] == list(records.TRICK_KEYS)
    assert defs["config"]["required"] == list(records.CONFIG_KEYS)
    assert defs["code"]["enum"] == list(CARDS)
    assert defs["deal"]["properties"]["version"]["const"] == records.VERSION
    assert defs["deal"]["properties"]["format"]["const"] == records.FORMAT_DEAL
    assert defs["match"]["properties"]["format"]["const"] == records.FORMAT_MATCH


@pytest.mark.parametrize("edit", ["missing", "code", "version", "type", "extra"])
def test_schema_and_validate_refuse_the_same_faults(edit):
    v = _schema_validator()
    rec, _ = one_deal(Config(), 6)
    bad = copy.deepcopy(rec)
    if edit == "missing":
        del bad["tricks"]
    elif edit == "code":
        bad["actions"][0]["card"] = "SZ"
    elif edit == "version":
        bad["version"] = 2
    elif edit == "type":
        bad["tricks"][2]["taker"] = "seat 1"
    else:
        bad["winner"] = 0
    assert not v.is_valid(bad)
    with pytest.raises(records.RecordError):
        records.validate(bad)


def test_the_records_package_names_the_record_functions():
    """``from twilight_env import records; records.replay(...)``, as the docs write it."""
    from twilight_env import records as pkg
    from twilight_env.records import game_records

    assert pkg.replay is game_records.replay and pkg.load_many is game_records.load_many
    assert all(getattr(pkg, name) is getattr(game_records, name) for name in pkg.__all__)
