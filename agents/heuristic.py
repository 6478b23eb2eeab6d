"""``heuristic``: a fast rule-based agent that plays like a decent human.

It sees only the information set: its own hand, the open new-moon hand in 3 players
(R7.1), the public card-back counts (R2.5), every card played (it remembers them), the
current trick, the pending pile and what each side took. It is also the rollout policy
of ``pimc`` and ``ismcts``, so it works on plain ints and precomputed tables.

How it decides
--------------
Every candidate card ``y`` for the chooser ``c`` at the current place gets an estimate
``E(y)`` of the deal points it brings to the chooser's side ``k``:

1. *Who takes the trick* (R4.1, R4.3). With ``y`` added, the trick's best card is the
   strongest, ties to the earlier place. A later chooser of the other side can beat it
   only with a strictly stronger card of its own cult, which it can get from its own
   or its partner's hand (or by a request). The *reach* of a later seat is the strongest
   card of its cult that its side may hold: the cards of that cult not yet played, not in
   a hand the viewer knows to be on the other side. If no later seat of the other side
   reaches above the best card, the best card's side takes the trick surely
   (``P = 1``), else ``P = 0.3``.
2. *Purgatory* (R4.3, R4.4): a trick with a Purgatory goes pending: nobody takes it
   now, and the seat of the first Purgatory leads next, worth ``±LEAD``; in the last
   trick the pile turns neutral (worth 0).
3. *What the trick is worth*: a side ``j`` that takes card ``y`` gains
   ``ws_j · souls(y) + wm_j · own-cult multiplier(y)`` with ``ws_j = 1 + multiplier
   taken so far`` and ``wm_j = 10 + souls taken so far`` (the deal score is souls ×
   multiplier, R5.3: a soul is worth the multiplier, a sanctuary the souls); taking a
   sanctuary of the *other* cult also earns ``DENY · wm_other`` per multiplier point,
   which the other side loses for good (R5.2). The trick's cards, the pending pile and
   ``y`` count, plus a small allowance for the cards the later places add (a partner
   adds a good card to a trick its side takes, an opponent dumps a low one).
   ``E = P_k · value_k − (1 − P_k) · value_other``.
4. *Keeping strength*: playing one of the side's own strong cards (Purgatory, clerics)
   costs ``KEEP_BY_STRENGTH[strength]``, half of it in the second-to-last trick and
   nothing in the last. The constants were set by duplicate matches of the heuristic
   against its earlier settings (raising the keep costs sixfold and ``DENY`` from 0.3
   to 0.7 each gained about 15-30 deal points per deal, 4 and 3 players).

Rules that follow from the estimate, and explicit rules on top of it:

- it leads strength when a card is sure to take the trick, above all when souls or its
  own cult's sanctuaries are at stake (the pending pile counts);
- it keeps its side's sanctuaries for tricks its side takes: an own-cult sanctuary put
  into a trick the other side takes is charged as the denial term of ``value_other``;
- it dumps low cards (few souls, low strength, no own sanctuary) into tricks it will lose;
- a chooser whose partner plays last in the trick (place 1) does not request the
  partner when it may request an opponent, and an opponent request gets a ``TIP``
  bonus (the publisher's tip);
- requests: an opponent holder gives its worst card for the chooser, a partner holder
  its best; for a hidden hand the expected minimum (maximum) of the holder's cards of
  that cult, drawn from the cards the viewer has not seen, is used;
- as holder for an opponent chooser it gives the card with the lowest ``E`` for the
  chooser's side, and never a sanctuary of the chooser's cult (the opponent's cult)
  when another card will do, unless its own side's card already in the trick surely
  takes it (then the sanctuary is denied to the opponents, R5.2);
- as holder for its partner (or, in 3 players, the solo for the new moon and back,
  R7.3) it gives the card with the highest ``E − keep``.

3 players: the solo decides for seat 0 and the new moon (seat 2) and knows both hands;
the Sun players know their own hand and the open new-moon hand (R7.1, R7.3).
Ties between actions go to the lowest action id, so the agent is deterministic.
"""

from __future__ import annotations

from math import comb

from twilight_env.rules.cards import (
    CULT_MASK,
    HALF_COUNT,
    HALF_IDS,
    HALF_MAX_STRENGTH,
    MULT_OF_CULT,
    SANCTUARY,
    SOULS,
    STRENGTH,
    SUN_MASK,
    multiplier_of,
    souls_of,
    trick_so_far,
)
from twilight_env.rules.engine import HOLD, NUM_TRICKS, REQUEST_BASE


LEAD = 4.0
"""Value of leading the next trick after a Purgatory trick (deal points, rough)."""
TIP = 3.0
"""Bonus for requesting an opponent when the partner plays last (publisher's tip)."""
LATER_OWN = 5.0
"""Expected value a later place of the taking side adds to a trick."""
LATER_OTHER = 1.5
"""Expected value a later place of the losing side adds (it dumps low)."""
DENY = 0.7
"""Share of a sanctuary's value that a side loses when the other side takes it (it
would have had a fair chance to take it itself later, R5.2)."""
P_UNSURE = 0.3
"""Chance that a best card which a later opponent can still beat takes the trick."""
KEEP_BY_STRENGTH = (0.0, 0.0, 9.0, 18.0, 27.0, 36.0, 45.0, 54.0)
"""Cost of spending one of the side's own cards of strength 0..7 while tricks remain."""

_KEEP = tuple(KEEP_BY_STRENGTH[STRENGTH[i]] for i in range(28))


def _order_weights(n_max: int = 14):
    """W[n][k][i]: probability that the i-th smallest of n values is the minimum of a
    uniformly drawn k-subset: C(n-1-i, k-1) / C(n, k)."""
    table = [[()] * (n_max + 1) for _ in range(n_max + 1)]
    for n in range(1, n_max + 1):
        for k in range(1, n + 1):
            total = comb(n, k)
            table[n][k] = tuple(comb(n - 1 - i, k - 1) / total for i in range(n))
    return table


_W = _order_weights()


def _expected_extreme(values: list, k: int, want_max: bool) -> float:
    """Expected min (or max) of ``k`` values drawn without replacement from ``values``."""
    n = len(values)
    if n == 0:
        return 0.0
    if k >= n:
        return max(values) if want_max else min(values)
    if k < 1:
        k = 1
    values.sort(reverse=want_max)
    t = 0.0
    for w, v in zip(_W[n][k], values):
        t += w * v
    return t


def decide(num_players: int, seat_cult, decider: int, leader: int, place: int, phase: int, holder: int,
           cards, pending: int, known, unseen: int, captured, trick: int, legal, counts=None) -> int:
    """The heuristic's action from plain facts the deciding seat knows.

    The steps, each its own function: the trick so far (the rules'
    :func:`~twilight_env.rules.cards.trick_so_far`), how far the later places reach
    (:func:`_later_places`), the estimate ``E(y)`` of every card (:func:`_estimator`),
    then the choice: :func:`_give_for_own_side` or :func:`_give_for_opponent` in the
    hold phase, :func:`_choose` in the choose phase (module docstring).

    Args:
        num_players: 3 or 4.
        seat_cult: 4 ints, cult (0 Sun, 1 Moon) of each seat.
        decider: the deciding seat (3 players: the solo, 0, also for the new moon).
        leader, place, phase, holder: as in the engine (``phase`` 0 choose / 1 hold).
        cards: 4 card ids of the current trick by place (-1 empty).
        pending: mask of the pending pile (R4.3).
        known: 4 masks, the cards the decider sees in each hand (0 for hidden hands).
        unseen: mask of the cards not played and not in a known hand.
        captured: 4 masks of cards taken by each seat.
        trick: tricks finished (0..6).
        legal: the legal actions (engine encoding).
        counts: optional callable ``counts(seat, cult) -> int`` (cards of that cult in the
            seat's hand, public by R2.5); needed for requests of hidden hands.

    Returns:
        One action of ``legal``.
    """
    chooser = (leader + place) & 3
    side = chooser & 1  # the chooser's side, for which E(y) is estimated
    now = trick_so_far(cards, place, pending)  # R4.1, R4.3: best card so far, what the taker gets
    later = _later_places(seat_cult, leader, place, unseen, known)
    value = _estimator(seat_cult, side, leader, place, trick, now, captured, later)
    keep_scale = 0.0 if trick == NUM_TRICKS - 1 else (1.0 if trick < NUM_TRICKS - 2 else 0.5)
    if phase == HOLD:
        if (holder & 1) == side:  # for the partner (or 3p: solo <-> new moon)
            return _give_for_own_side(value, legal, keep_scale)
        return _give_for_opponent(value, legal, seat_cult[chooser], side, holder, leader, now, later, unseen, known)
    return _choose(value, legal, keep_scale, chooser, seat_cult[chooser], place, unseen, known, counts)


def _later_places(seat_cult, leader: int, place: int, unseen: int, known) -> tuple[list, list]:
    """What the places after this one may bring: ``(reach_against, later_count)``.

    ``reach_against[j]`` is the strongest card a later seat *not* of side ``j`` may bring,
    the card that could beat side ``j``'s best (-1 when none): a later chooser plays its
    own cult (R3.2), from the cards of that cult its side may hold (unseen, or in a hand
    the decider sees on that side). ``later_count[j]`` counts the later places of side ``j``.
    """
    reach_against = [-1, -1]
    later_count = [0, 0]
    for q in range(place + 1, 4):
        s = (leader + q) & 3
        j = s & 1
        later_count[j] += 1
        avail = unseen | known[j] | known[j + 2]
        r = HALF_MAX_STRENGTH[(avail >> (14 * seat_cult[s])) & SUN_MASK]
        if r > reach_against[1 - j]:
            reach_against[1 - j] = r
    return reach_against, later_count


def _estimator(seat_cult, k: int, leader: int, place: int, trick: int, now, captured, later):
    """``E(y)``: the deal points card ``y`` played at this place brings side ``k``.

    Args:
        seat_cult, leader, place, trick, captured: as in :func:`decide`.
        k: the chooser's side.
        now: :func:`~twilight_env.rules.cards.trick_so_far`'s result; later: :func:`_later_places`'s result.

    Returns:
        ``value(y) -> float`` (module docstring, steps 1-3).
    """
    bstr, bplace, tp = now
    reach_against, later_cnt = later
    cult0, cult1 = seat_cult[0], seat_cult[1]
    tsouls = souls_of(tp)
    tm = (multiplier_of(tp, cult0), multiplier_of(tp, cult1))  # own-cult multiplier for side 0 / 1
    # weights: a soul is worth the multiplier, a multiplier point the souls (R5.3)
    cap0 = captured[0] | captured[2]
    cap1 = captured[1] | captured[3]
    ws = (1.0 + multiplier_of(cap0, cult0), 1.0 + multiplier_of(cap1, cult1))
    wm = (10.0 + souls_of(cap0), 10.0 + souls_of(cap1))
    # a side taking a card gains its souls and own-cult multiplier, and denies the other
    # side that side's sanctuaries (R5.2), which it would likely have taken later
    base = (ws[0] * tsouls + wm[0] * tm[0] + DENY * wm[1] * tm[1],
            ws[1] * tsouls + wm[1] * tm[1] + DENY * wm[0] * tm[0])
    o = 1 - k
    ck = base[k] + LATER_OWN * later_cnt[k] + LATER_OTHER * later_cnt[o]
    co = base[o] + LATER_OWN * later_cnt[o] + LATER_OTHER * later_cnt[k]
    wsk, wso, wmk, wmo = ws[k], ws[o], wm[k], wm[o]
    dmk, dmo = DENY * wmo, DENY * wmk
    mk_tab = MULT_OF_CULT[(cult0, cult1)[k]]
    mo_tab = MULT_OF_CULT[(cult0, cult1)[o]]
    ra0, ra1 = reach_against
    lead_now = LEAD if trick != NUM_TRICKS - 1 else 0.0

    def value(y: int) -> float:
        """E(y) for side k: y played at this place for the chooser."""
        st = STRENGTH[y]
        if st > bstr:
            nb, np_ = st, place
        else:
            nb, np_ = bstr, bplace
        bs = (leader + np_) & 1
        if nb == 7:  # R4.3 pending (the first Purgatory's seat leads); R4.4 neutral in the last trick
            return lead_now if bs == k else -lead_now
        sure = (ra1 if bs else ra0) <= nb
        sy = SOULS[y]
        my = mk_tab[y]
        oy = mo_tab[y]
        if bs == k:
            pk = 1.0 if sure else P_UNSURE
        else:
            pk = 0.0 if sure else 1.0 - P_UNSURE
        return pk * (ck + wsk * sy + wmk * my + dmk * oy) - (1.0 - pk) * (co + wso * sy + wmo * oy + dmo * my)

    return value


def _give_for_own_side(value, legal, keep_scale: float) -> int:
    """Hold phase, for the partner (3 players: the solo for the new moon and back, R7.3):
    the card with the highest ``E − keep``; ties to the lowest action."""
    best_a, best_v = legal[0], None
    for y in legal:
        v = value(y) - keep_scale * _KEEP[y]
        if best_v is None or v > best_v:
            best_a, best_v = y, v
    return best_a


def _give_for_opponent(value, legal, cult: int, k: int, holder: int, leader: int, now, later, unseen: int,
                       known) -> int:
    """Hold phase, for an opponent chooser of cult ``cult`` and side ``k``: the weakest,
    least valuable card for that side. Never a sanctuary of the chooser's cult when another
    card will do, unless the holder's side surely takes the trick already (then the
    sanctuary is denied to the chooser's side, R5.2)."""
    bstr, bplace, _ = now
    ours_sure = False
    if bstr >= 0 and bstr != 7:  # a card is in the trick and no Purgatory leads it
        bs = (leader + bplace) & 1
        ours_sure = bs == (holder & 1) and later[0][bs] <= bstr and HALF_MAX_STRENGTH[
            ((unseen | known[k] | known[k + 2]) >> (14 * cult)) & SUN_MASK] <= bstr
    cands = legal
    if not ours_sure:
        non_sanct = [y for y in legal if not SANCTUARY[y]]
        if non_sanct:
            cands = non_sanct  # never give the opponents their own sanctuary if avoidable
    best_a, best_v = cands[0], None
    for y in cands:
        v = value(y) + 0.01 * STRENGTH[y]
        if best_v is None or v < best_v:
            best_a, best_v = y, v
    return best_a


def _choose(value, legal, keep_scale: float, chooser: int, cult: int, place: int, unseen: int, known,
            counts) -> int:
    """Choose phase: the action with the highest estimate; ties to the lowest action.

    A card is worth ``E − keep``. A request is worth what the requested holder will give:
    its best card for the chooser (partner) or its worst (opponent), exact for a hand the
    decider sees, else the expected extreme over the unseen cards of the chooser's cult
    (:func:`_expected_extreme`, with the holder's public count, R2.5). When the partner
    plays last (place 1), the partner is not requested if an opponent may be, and an
    opponent request gets the ``TIP`` bonus (the publisher's tip).
    """
    k = chooser & 1
    shift = 14 * cult
    best_a, best_v = legal[0], None
    cmask = CULT_MASK[cult]
    opp_request = REQUEST_BASE in legal or REQUEST_BASE + 2 in legal  # an opponent may be requested (+1, +3)
    pool = pool_vals = None
    for a in legal:
        if a < REQUEST_BASE:
            v = value(a) - keep_scale * _KEEP[a]
        else:
            h = (chooser + a - REQUEST_BASE + 1) & 3
            hk = known[h] & cmask
            partner = (h & 1) == k
            if partner and place == 1 and opp_request:
                continue  # the partner plays last: request an opponent instead (publisher's tip)
            if hk:  # a hand the decider sees: the holder's exact best (partner) or worst card
                ys = HALF_IDS[cult][(hk >> shift) & SUN_MASK]
                if partner:
                    v = max(value(y) - keep_scale * _KEEP[y] for y in ys)
                else:
                    v = min(value(y) for y in ys)
            else:  # hidden hand: expected extreme of its cards among the unseen ones
                if pool is None:
                    pool = HALF_IDS[cult][((unseen & cmask) >> shift) & SUN_MASK]
                    pool_vals = [value(y) for y in pool]
                n_h = counts(h, cult) if counts is not None else 1
                if partner:
                    v = _expected_extreme([pool_vals[i] - keep_scale * _KEEP[y] for i, y in enumerate(pool)],
                                          n_h, True)
                else:
                    v = _expected_extreme(pool_vals[:], n_h, False)
            if not partner and place == 1:
                v += TIP  # partner plays last: request an opponent (publisher's tip)
        if best_v is None or v > best_v + 1e-9:
            best_a, best_v = a, v
    return best_a


def decide_state(state) -> int:
    """The heuristic's action in an engine State, using only what the deciding seat may
    know there (its own hand, the open new-moon hand in 3 players, public facts). For
    rollouts in determinized worlds."""
    d = state.deciding_seat
    hands = state.hands
    known = [0, 0, 0, 0]
    known[d] = hands[d]
    if state.num_players == 3:
        known[2] = hands[2]
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal[0]
    rem = hands[0] | hands[1] | hands[2] | hands[3]
    unseen = rem & ~(known[0] | known[1] | known[2] | known[3])

    def counts(seat, cult, hands=hands):
        m = (hands[seat] >> (14 * cult)) & SUN_MASK
        return HALF_COUNT[m]

    return decide(state.num_players, state.seat_cult, d, state.leader, state.place, state.phase, state.holder,
                  state.cards, state.pending, known, unseen, state.captured, state.trick, legal, counts)


def decide_infoset(infoset, legal) -> int:
    """The heuristic's action for an :class:`~twilight_env.rules.infoset.InfoSet` that is to act."""
    counts_tab = infoset.hand_counts
    return decide(infoset.num_players, infoset.seat_cult, infoset.deciding_seat, infoset.leader, infoset.place,
                  HOLD if infoset.phase == "hold" else 0, infoset.holder, infoset.trick_cards, infoset.pending,
                  infoset.known_masks, infoset.unseen_mask, infoset.captured, infoset.trick, tuple(legal),
                  lambda seat, cult: counts_tab[seat][cult])


class HeuristicAgent:
    """Rule-based agent (see the module docstring). Deterministic: ``rng`` is unused.

    Raises:
        ValueError: from :meth:`act` if ``legal_actions`` is empty.
    """

    stateless = True
    """Decisions depend only on (information set, legal actions, rng): one instance may
    play many deals at once (``twilight_env.experiments.common.play_lockstep``)."""

    def __init__(self):
        self.name = "heuristic"

    def reset(self) -> None:
        """Nothing to reset: the agent keeps no state between decisions."""

    def act(self, infoset, legal_actions, rng=None) -> int:
        if not legal_actions:
            raise ValueError("heuristic.act needs at least one legal action (the deal may be over)")
        if len(legal_actions) == 1:
            return legal_actions[0]
        return decide_infoset(infoset, legal_actions)


__all__ = ["HeuristicAgent", "decide", "decide_state", "decide_infoset"]


# The declaration (twilight_env.agents.declaration): read from this source without importing it.
from twilight_env.agents.base import AgentDecl, declare  # noqa: E402

declare(AgentDecl(name="heuristic", factory=HeuristicAgent, summary="the rule-based player (deterministic)",
                   served=True, exact_target=True))
