/* The compiled core of twilight_env.engine.State: the hot path of random play.
 *
 * StateCore holds the 17 fields of a deal state as ordinary Python objects (ints,
 * lists, tuples), exactly as the pure-Python state does, so every reader and every
 * state built field by field work unchanged. It implements three things in C:
 *
 *   apply(action)      a legal action in the 0..30 encoding (R3.2-R4.4);
 *   legal_actions()    the sorted legal actions (R3.2, R3.5);
 *   done               True once all 7 tricks are played.
 *
 * Only the common case runs here: an exact int action that is legal, on a state whose
 * fields are all set and hold exact ints and lists. Anything else (an illegal action, a
 * NumPy integer, a field not set, a hand held as a NumPy integer, ...) is handed to the
 * pure-Python method of engine._Rules, so errors, messages and odd inputs behave exactly
 * as in the pure-Python engine. Every check is made before the first change, so a
 * hand-over never sees a half-applied action.
 *
 * legal_actions() in the choose phase returns one shared tuple per (cult, requestable
 * seats, own half mask), built on first use and kept: at most 2 x 7 x 9,908 tuples (own
 * cards: at most 7 of the cult's 14), about 14 MB once every such hand has been met; a
 * long random run fills it slowly (about 2.5 MB after 60,000 deals).
 *
 * The tables (card strengths, the card ids of each half mask, the requests allowed by the
 * held mask, the Purgatory mask) come from engine.py through _init(), so the rules'
 * numbers live in one place. tests/engine/test_compiled_core.py holds this core equal to
 * the pure-Python engine over random deals, for 4 and 3 players.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define NUM_TRICKS 7
#define HALF 0x3FFFL

/* The fields, in engine._FIELDS order; each use below expands this one list. */
#define STATE_FIELDS(X) X(seat_cult) X(num_players) X(hands) X(leader) X(trick) X(place) \
    X(phase) X(holder) X(cards) X(holders) X(pending) X(captured) X(neutral) X(history) \
    X(initial_hands) X(first_leader) X(held)

#define DECLARE(name) PyObject *name;
typedef struct {
    PyObject_HEAD
    STATE_FIELDS(DECLARE)
} StateCore;

/* tables set by _init */
static int strength[28];
static long purgatory_mask;
static PyObject *half_ids[2];        /* half_ids[cult]: tuple of 16384 tuples */
static PyObject *requests;          /* requests[r]: the request actions of a 3-bit mask r of offsets */
static PyObject **legal_cache[2][8]; /* [cult][r][half]: own cards + requests, built on first use */
static PyObject *py_apply, *py_legal, *py_done;  /* pure-Python fallbacks */
static int ready = 0;

static const long cult_mask[2] = {0x3FFFL, 0x3FFFL << 14};

/* An exact int in [lo, hi] read into *out; 0 when the object is not one. */
static inline int
small_int(PyObject *o, long lo, long hi, long *out)
{
    if (o == NULL || !PyLong_CheckExact(o))
        return 0;
    int overflow;
    long v = PyLong_AsLongAndOverflow(o, &overflow);
    if (overflow || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

static inline int
list4(PyObject *o)
{
    return o != NULL && PyList_CheckExact(o) && PyList_GET_SIZE(o) == 4;
}

/* Replace a field (steals the new reference); 0 on allocation failure. */
static inline int
set_field(PyObject **field, PyObject *value)
{
    if (value == NULL)
        return 0;
    PyObject *old = *field;
    *field = value;
    Py_XDECREF(old);
    return 1;
}

static inline int
set_item(PyObject *list, Py_ssize_t i, long v)
{
    PyObject *o = PyLong_FromLong(v);
    if (o == NULL)
        return 0;
    PyObject *old = PyList_GET_ITEM(list, i);
    PyList_SET_ITEM(list, i, o);
    Py_DECREF(old);
    return 1;
}

static long
held_of(const long h[4])
{
    long m = 0;
    for (int s = 0; s < 4; s++) {
        if (h[s] & cult_mask[0])
            m |= 1L << s;
        if (h[s] & cult_mask[1])
            m |= 1L << (4 + s);
    }
    return m;
}

static PyObject *
fallback(PyObject *fn, PyObject *self, PyObject *arg)
{
    if (fn == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "twilight_env._engine_c: _init() was not called");
        return NULL;
    }
    if (arg == NULL)
        return PyObject_CallOneArg(fn, self);
    PyObject *args[2] = {self, arg};
    return PyObject_Vectorcall(fn, args, 2, NULL);
}

/* -- apply ----------------------------------------------------------------------- */
static PyObject *
StateCore_apply(StateCore *self, PyObject *action)
{
    long a, place, leader, holder, trick, cult, hv[4];
    if (!ready || !small_int(action, 0, 30, &a) || !small_int(self->place, 0, 3, &place)
        || !small_int(self->leader, 0, 3, &leader) || !small_int(self->holder, -1, 3, &holder)
        || !small_int(self->trick, 0, NUM_TRICKS - 1, &trick) || !list4(self->hands)
        || !list4(self->cards) || !list4(self->holders) || !list4(self->captured)
        || self->history == NULL || !PyList_CheckExact(self->history)
        || self->seat_cult == NULL || !PyTuple_CheckExact(self->seat_cult)
        || PyTuple_GET_SIZE(self->seat_cult) != 4 || self->phase == NULL)
        return fallback(py_apply, (PyObject *)self, action);
    for (int s = 0; s < 4; s++)
        if (!small_int(PyList_GET_ITEM(self->hands, s), 0, (1L << 28) - 1, &hv[s]))
            return fallback(py_apply, (PyObject *)self, action);
    long c = (leader + place) & 3;
    if (!small_int(PyTuple_GET_ITEM(self->seat_cult, c), 0, 1, &cult))
        return fallback(py_apply, (PyObject *)self, action);

    if (a >= 28) {  /* a request of the seat at offset a - 27 (R3.2, R3.5) */
        long h = (c + a - 27) & 3;
        if (holder >= 0 || !(hv[h] & cult_mask[cult]))
            return fallback(py_apply, (PyObject *)self, action);
        if (!set_field(&self->phase, PyLong_FromLong(1)) || !set_field(&self->holder, PyLong_FromLong(h)))
            return NULL;
        Py_RETURN_NONE;
    }

    /* a card of the chooser's cult, from the chooser's hand or the holder's (R3.2) */
    long card = a, h = holder < 0 ? c : holder, bit = 1L << card;
    if ((card >= 14) != cult || !(hv[h] & bit))
        return fallback(py_apply, (PyObject *)self, action);
    long held = 0, pending = 0, neutral = 0, cap = 0, others[3];
    int held_set = 0;
    if (!((hv[h] - bit) & cult_mask[cult])) {  /* the seat's last card of this cult */
        held_set = self->held != NULL;
        if (held_set && !small_int(self->held, 0, 255, &held))
            return fallback(py_apply, (PyObject *)self, action);
    }
    if (place == 3) {  /* the trick is full: read what resolving it needs, first */
        for (int p = 0; p < 3; p++)
            if (!small_int(PyList_GET_ITEM(self->cards, p), 0, 27, &others[p]))
                return fallback(py_apply, (PyObject *)self, action);
        if (!small_int(self->pending, 0, (1L << 28) - 1, &pending)
            || !small_int(self->neutral, 0, (1L << 28) - 1, &neutral))
            return fallback(py_apply, (PyObject *)self, action);
    }

    /* from here on the action is applied */
    hv[h] -= bit;
    if (!set_item(self->hands, h, hv[h]))
        return NULL;
    if (!(hv[h] & cult_mask[cult])) {
        held = held_set ? held & ~(1L << (4 * cult + h)) : held_of(hv);
        if (!set_field(&self->held, PyLong_FromLong(held)))
            return NULL;
    }
    if (h != c) {
        if (!set_field(&self->phase, PyLong_FromLong(0)) || !set_field(&self->holder, PyLong_FromLong(-1)))
            return NULL;
    }
    PyObject *rec = PyTuple_New(3);
    if (rec == NULL)
        return NULL;
    PyTuple_SET_ITEM(rec, 0, PyLong_FromLong(c));  /* small ints: cached, never NULL */
    PyTuple_SET_ITEM(rec, 1, PyLong_FromLong(h));
    PyTuple_SET_ITEM(rec, 2, PyLong_FromLong(card));
    int err = PyList_Append(self->history, rec);
    Py_DECREF(rec);
    if (err < 0)
        return NULL;
    if (place != 3) {
        if (!set_item(self->cards, place, card) || !set_item(self->holders, place, h)
            || !set_field(&self->place, PyLong_FromLong(place + 1)))
            return NULL;
        Py_RETURN_NONE;
    }

    /* resolve the trick (R4.1-R4.4) and start the next one */
    long tc[4] = {others[0], others[1], others[2], card};
    long tmask = (1L << tc[0]) | (1L << tc[1]) | (1L << tc[2]) | (1L << tc[3]);
    long next_leader;
    int capture_seat = -1;
    if (tmask & purgatory_mask) {
        /* R4.3: the trick goes pending; the seat of the first Purgatory leads next */
        int first = 0;
        while (!((1L << tc[first]) & purgatory_mask))
            first++;
        pending |= tmask;
        next_leader = (leader + first) & 3;
        if (trick == NUM_TRICKS - 1) {  /* R4.4: a Purgatory in the last trick: all neutral */
            neutral |= pending;
            pending = 0;
        }
    } else {
        /* R4.1: highest strength wins, ties to the earliest place */
        int w = 0, best = strength[tc[0]];
        for (int p = 1; p < 4; p++)
            if (strength[tc[p]] > best) {
                best = strength[tc[p]];
                w = p;
            }
        capture_seat = (int)((leader + w) & 3);
        long cv;
        if (!small_int(PyList_GET_ITEM(self->captured, capture_seat), 0, (1L << 28) - 1, &cv))
            cv = -1;
        cap = cv;
        next_leader = capture_seat;
    }
    if (capture_seat >= 0) {
        if (cap < 0) {  /* a captured mask that is not a plain int: or it in Python */
            PyObject *m = PyLong_FromLong(tmask | pending);
            if (m == NULL)
                return NULL;
            PyObject *old = PyList_GET_ITEM(self->captured, capture_seat);
            PyObject *new_ = PyNumber_Or(old, m);
            Py_DECREF(m);
            if (new_ == NULL)
                return NULL;
            PyList_SET_ITEM(self->captured, capture_seat, new_);
            Py_DECREF(old);
        } else if (!set_item(self->captured, capture_seat, cap | tmask | pending)) {
            return NULL;
        }
        pending = 0;
    }
    if (!set_field(&self->pending, PyLong_FromLong(pending))
        || !set_field(&self->neutral, PyLong_FromLong(neutral))
        || !set_field(&self->leader, PyLong_FromLong(next_leader))
        || !set_field(&self->trick, PyLong_FromLong(trick + 1))
        || !set_field(&self->place, PyLong_FromLong(0)))
        return NULL;
    for (int p = 0; p < 4; p++)
        if (!set_item(self->cards, p, -1) || !set_item(self->holders, p, -1))
            return NULL;
    Py_RETURN_NONE;
}

/* -- legal_actions --------------------------------------------------------------- */
static PyObject *
StateCore_legal_actions(StateCore *self, PyObject *Py_UNUSED(ignored))
{
    long place, leader, holder, cult, hand, held;
    if (!ready || !small_int(self->place, 0, 3, &place) || !small_int(self->leader, 0, 3, &leader)
        || !small_int(self->holder, -1, 3, &holder) || !list4(self->hands)
        || self->seat_cult == NULL || !PyTuple_CheckExact(self->seat_cult)
        || PyTuple_GET_SIZE(self->seat_cult) != 4)
        return fallback(py_legal, (PyObject *)self, NULL);
    long c = (leader + place) & 3;
    if (!small_int(PyTuple_GET_ITEM(self->seat_cult, c), 0, 1, &cult)
        || !small_int(PyList_GET_ITEM(self->hands, holder >= 0 ? holder : c), 0, (1L << 28) - 1, &hand))
        return fallback(py_legal, (PyObject *)self, NULL);
    PyObject *own = PyTuple_GET_ITEM(half_ids[cult], (hand >> (14 * cult)) & HALF);
    if (holder >= 0) {
        Py_INCREF(own);
        return own;
    }
    if (!small_int(self->held, 0, 255, &held))
        return fallback(py_legal, (PyObject *)self, NULL);
    /* own cards, then the requests: one shared tuple per (cult, requests, half mask) */
    long r = 0;
    for (long o = 1; o <= 3; o++)
        if ((held >> (4 * cult + ((c + o) & 3))) & 1)
            r |= 1L << (o - 1);
    if (r == 0) {
        Py_INCREF(own);
        return own;
    }
    PyObject **slot = &legal_cache[cult][r][(hand >> (14 * cult)) & HALF];
    if (*slot == NULL) {
        *slot = PySequence_Concat(own, PyTuple_GET_ITEM(requests, r));
        if (*slot == NULL)
            return NULL;
    }
    Py_INCREF(*slot);
    return *slot;
}

/* -- done ------------------------------------------------------------------------ */
static PyObject *
StateCore_get_done(StateCore *self, void *Py_UNUSED(closure))
{
    long trick;
    if (!small_int(self->trick, 0, NUM_TRICKS, &trick))
        return fallback(py_done, (PyObject *)self, NULL);
    return PyBool_FromLong(trick == NUM_TRICKS);
}

/* -- type plumbing --------------------------------------------------------------- */
#define VISIT(name) Py_VISIT(self->name);
static int
StateCore_traverse(StateCore *self, visitproc visit, void *arg)
{
    STATE_FIELDS(VISIT)
    return 0;
}

#define CLEAR(name) Py_CLEAR(self->name);
static int
StateCore_clear(StateCore *self)
{
    STATE_FIELDS(CLEAR)
    return 0;
}

static void
StateCore_dealloc(StateCore *self)
{
    PyObject_GC_UnTrack(self);
    StateCore_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

#define MEMBER(name) {#name, T_OBJECT_EX, offsetof(StateCore, name), 0, NULL},
static PyMemberDef StateCore_members[] = {
    STATE_FIELDS(MEMBER)
    {NULL}
};

static PyMethodDef StateCore_methods[] = {
    {"apply", (PyCFunction)StateCore_apply, METH_O,
     "Apply one action in place (R3.2-R4.4); see engine.State.apply."},
    {"legal_actions", (PyCFunction)StateCore_legal_actions, METH_NOARGS,
     "Sorted legal actions in the 0..30 encoding (R3.2, R3.5); see engine.State.legal_actions."},
    {NULL}
};

static PyGetSetDef StateCore_getset[] = {
    {"done", (getter)StateCore_get_done, NULL, "True once all 7 tricks are played.", NULL},
    {NULL}
};

static PyTypeObject StateCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "twilight_env._engine_c.StateCore",
    .tp_doc = "Fields and hot path of a deal state; subclassed by twilight_env.engine.State.",
    .tp_basicsize = sizeof(StateCore),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)StateCore_dealloc,
    .tp_traverse = (traverseproc)StateCore_traverse,
    .tp_clear = (inquiry)StateCore_clear,
    .tp_members = StateCore_members,
    .tp_methods = StateCore_methods,
    .tp_getset = StateCore_getset,
};

/* _init(strength, purgatory_mask, half_ids, requests, py_apply, py_legal, py_done) */
static PyObject *
engine_init(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *st, *hi, *rb, *fa, *fl, *fd;
    long pm;
    if (!PyArg_ParseTuple(args, "O!lO!O!OOO", &PyTuple_Type, &st, &pm, &PyTuple_Type, &hi,
                          &PyTuple_Type, &rb, &fa, &fl, &fd))
        return NULL;
    if (PyTuple_GET_SIZE(st) != 28 || PyTuple_GET_SIZE(hi) != 2 || PyTuple_GET_SIZE(rb) != 8) {
        PyErr_SetString(PyExc_ValueError, "_init: strength needs 28 entries, half_ids 2 (by cult), requests 8");
        return NULL;
    }
    for (int r = 0; r < 8; r++)
        if (!PyTuple_CheckExact(PyTuple_GET_ITEM(rb, r))) {
            PyErr_SetString(PyExc_ValueError, "_init: requests entries must be tuples");
            return NULL;
        }
    for (int i = 0; i < 28; i++) {
        long v = PyLong_AsLong(PyTuple_GET_ITEM(st, i));
        if (v == -1 && PyErr_Occurred())
            return NULL;
        strength[i] = (int)v;
    }
    for (int cult = 0; cult < 2; cult++) {
        PyObject *h = PyTuple_GET_ITEM(hi, cult);
        if (!PyTuple_Check(h) || PyTuple_GET_SIZE(h) != HALF + 1) {
            PyErr_SetString(PyExc_ValueError, "_init: half_ids[cult] needs 16384 tuples");
            return NULL;
        }
        for (Py_ssize_t i = 0; i <= HALF; i++)
            if (!PyTuple_CheckExact(PyTuple_GET_ITEM(h, i))) {
                PyErr_SetString(PyExc_ValueError, "_init: half_ids entries must be tuples");
                return NULL;
            }
        Py_INCREF(h);
        Py_XSETREF(half_ids[cult], h);
        for (int r = 0; r < 8; r++) {  /* a fresh cache (the tables may have changed) */
            if (legal_cache[cult][r] != NULL) {
                for (long i = 0; i <= HALF; i++)
                    Py_XDECREF(legal_cache[cult][r][i]);
                PyMem_Free(legal_cache[cult][r]);
            }
            legal_cache[cult][r] = PyMem_Calloc(HALF + 1, sizeof(PyObject *));
            if (legal_cache[cult][r] == NULL)
                return PyErr_NoMemory();
        }
    }
    Py_INCREF(rb);
    Py_XSETREF(requests, rb);
    purgatory_mask = pm;
    Py_INCREF(fa); Py_XSETREF(py_apply, fa);
    Py_INCREF(fl); Py_XSETREF(py_legal, fl);
    Py_INCREF(fd); Py_XSETREF(py_done, fd);
    ready = 1;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"_init", engine_init, METH_VARARGS, "Set the rule tables and the pure-Python fallbacks."},
    {NULL}
};

static struct PyModuleDef engine_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_engine_c",
    .m_doc = "Compiled core of twilight_env.engine.State (apply, legal_actions, done).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__engine_c(void)
{
    if (PyType_Ready(&StateCoreType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&engine_module);
    if (m == NULL)
        return NULL;
#ifndef TWILIGHT_SOURCE_HASH
#define TWILIGHT_SOURCE_HASH "unknown"
#endif
    if (PyModule_AddStringConstant(m, "SOURCE_HASH", TWILIGHT_SOURCE_HASH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&StateCoreType);
    if (PyModule_AddObject(m, "StateCore", (PyObject *)&StateCoreType) < 0) {
        Py_DECREF(&StateCoreType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
