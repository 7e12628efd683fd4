/*
 * _tree.h: the Realtime-Database-style tree in `ember._ember` (included by _ember.c, after the
 * Database, Pending and Listener types it uses).
 *
 * Responsible for: TreeRef (ember_ref: navigation, set / update / remove, get, observe),
 * TreeQuery (ember_tree_query: the builder, get, observe) and DataSnapshot (ember_tree_snapshot:
 * key, value, exists, children, child, child_count). The pure-Python layer (ember/_tree.py)
 * gives them docs/python.md's shapes. Values travel as MessagePack; the GIL is released around
 * every ABI call that may block or wait for a callback.
 */

/* ------------------------------------------------------------------ DataSnapshot */

typedef struct {
    PyObject_HEAD
    ember_tree_snapshot *s; /* one reference owned */
} TreeSnapObject;

static PyTypeObject TreeSnapType;

static PyObject *tree_snap_wrap(ember_tree_snapshot *s) {
    if (!s) return NULL;
    TreeSnapObject *o = PyObject_New(TreeSnapObject, &TreeSnapType);
    if (!o) { ember_tree_snapshot_release(s); return NULL; }
    o->s = s;
    return (PyObject *)o;
}

static void TreeSnap_dealloc(TreeSnapObject *self) {
    ember_tree_snapshot_release(self->s);
    PyObject_Free(self);
}

static PyObject *TreeSnap_key(TreeSnapObject *self, void *u) {
    const char *k = ember_tree_snapshot_key(self->s);
    if (!k) Py_RETURN_NONE;
    return PyUnicode_FromString(k);
}

static PyObject *TreeSnap_exists(TreeSnapObject *self, void *u) { return PyBool_FromLong(ember_tree_snapshot_exists(self->s)); }

static PyObject *TreeSnap_child_count(TreeSnapObject *self, void *u) {
    return PyLong_FromSize_t(ember_tree_snapshot_child_count(self->s));
}

/* value: a plain Python value (dict in the snapshot's order, list for dense integer keys), or None */
static PyObject *TreeSnap_value(TreeSnapObject *self, void *u) {
    ember_error err;
    size_t n;
    char *p = ember_tree_snapshot_value(self->s, EMBER_FORMAT_MSGPACK, &n, &err);
    if (!p) return raise_err(&err);
    PyObject *r = decode_buffer(p, n, NULL);
    ember_free(p);
    return r;
}

static PyObject *TreeSnap_children(TreeSnapObject *self, void *u) {
    size_t n = ember_tree_snapshot_child_count(self->s);
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (!list) return NULL;
    for (size_t i = 0; i < n; i++) {
        const ember_tree_snapshot *c = ember_tree_snapshot_child_at(self->s, i);
        PyObject *o = c ? tree_snap_wrap(ember_tree_snapshot_retain(c)) : NULL;
        if (!o) {
            Py_DECREF(list);
            return c ? NULL : raise_code(EMBER_ERR_INTERNAL, "child snapshot missing");
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, o);
    }
    return list;
}

static PyObject *TreeSnap_child(TreeSnapObject *self, PyObject *path_o) {
    const char *path = str_arg(path_o, "path");
    if (!path) return NULL;
    ember_error err;
    ember_tree_snapshot *c = ember_tree_snapshot_child(self->s, path, &err);
    if (!c) return raise_err(&err);
    return tree_snap_wrap(c);
}

static PyObject *TreeSnap_repr(TreeSnapObject *self) {
    const char *k = ember_tree_snapshot_key(self->s);
    return PyUnicode_FromFormat("<ember.DataSnapshot key=%s%s>", k ? k : "(root)", ember_tree_snapshot_exists(self->s) ? "" : " (no data)");
}

static PyMethodDef TreeSnap_methods[] = {
    {"child", (PyCFunction)TreeSnap_child, METH_O, "child(path) -> DataSnapshot of the relative path 'a/b' (may not exist)"},
    {NULL}};

static PyGetSetDef TreeSnap_getset[] = {
    {"key", (getter)TreeSnap_key, NULL, "the location's last path segment (None at the root)", NULL},
    {"value", (getter)TreeSnap_value, NULL, "the data as a plain Python value, or None", NULL},
    {"exists", (getter)TreeSnap_exists, NULL, "whether there is data at the location", NULL},
    {"children", (getter)TreeSnap_children, NULL, "the direct children, as DataSnapshots in the query's order", NULL},
    {"child_count", (getter)TreeSnap_child_count, NULL, "the number of direct children", NULL},
    {NULL}};

static PyTypeObject TreeSnapType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember.DataSnapshot",
    .tp_doc = "The data at a tree location as an event or read saw it (immutable).",
    .tp_basicsize = sizeof(TreeSnapObject),
    .tp_dealloc = (destructor)TreeSnap_dealloc,
    .tp_repr = (reprfunc)TreeSnap_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = TreeSnap_methods,
    .tp_getset = TreeSnap_getset,
    .tp_new = Doc_new_refuse,
};

/* ------------------------------------------------------------------ observer callbacks */

/* Runs on the event thread. */
static void tree_event_cb(void *ctx, const ember_tree_snapshot *snap, const char *prev, const ember_error *error) {
    if (EMBER_IS_FINALIZING()) return;
    lctx *c = ctx;
    cbgil g = cb_enter(c); /* the event thread's kept thread state, as document listeners do */
    if (snap) {
        PyObject *s = tree_snap_wrap(ember_tree_snapshot_retain(snap));
        PyObject *p = prev ? PyUnicode_FromString(prev) : Py_NewRef(Py_None);
        if (s && p) {
            PyObject *r = PyObject_CallFunctionObjArgs(c->callback, s, p, NULL);
            if (!r) report_callback_error(c->callback);
            Py_XDECREF(r);
        } else {
            report_callback_error(c->callback);
        }
        Py_XDECREF(s);
        Py_XDECREF(p);
    } else {
        /* the observer ended with an error: nothing to hand the (snapshot, prev_key) callback */
        PyObject *e = make_error(error ? error->code : EMBER_ERR_UNKNOWN, error ? error->message : "observer failed");
        if (e) { PyErr_SetObject((PyObject *)Py_TYPE(e), e); Py_DECREF(e); }
        report_callback_error(c->callback);
    }
    cb_leave(g);
}

static int event_type_arg(PyObject *o, int *out) {
    long t = PyLong_AsLong(o);
    if (t == -1 && PyErr_Occurred()) return -1;
    *out = (int)t;
    return 0;
}

/* ------------------------------------------------------------------ TreeRef */

typedef struct {
    PyObject_HEAD
    ember_ref *ref;
    DbObject *db;
} TreeRefObject;

static PyTypeObject TreeRefType;

static PyObject *tree_ref_wrap(DbObject *db, ember_ref *r) {
    if (!r) return NULL;
    TreeRefObject *o = PyObject_New(TreeRefObject, &TreeRefType);
    if (!o) { ember_ref_release(r); return NULL; }
    o->ref = r;
    o->db = (DbObject *)Py_NewRef((PyObject *)db);
    return (PyObject *)o;
}

static void TreeRef_dealloc(TreeRefObject *self) {
    ember_ref_release(self->ref);
    Py_XDECREF(self->db);
    PyObject_Free(self);
}

/* tree_ref(db, path=None) -> TreeRef */
static PyObject *mod_tree_ref(PyObject *m, PyObject *args) {
    PyObject *db_o, *path_o = Py_None;
    if (!PyArg_ParseTuple(args, "O!|O", &DbType, &db_o, &path_o)) return NULL;
    DbObject *db = (DbObject *)db_o;
    if (db_check(db) < 0) return NULL;
    const char *path = NULL;
    if (path_o != Py_None && !(path = str_arg(path_o, "path"))) return NULL;
    ember_error err;
    ember_ref *r = ember_ref_new(db->db, path, &err);
    if (!r) return raise_err(&err);
    return tree_ref_wrap(db, r);
}

static PyObject *TreeRef_key(TreeRefObject *self, void *u) {
    const char *k = ember_ref_key(self->ref);
    if (!k) Py_RETURN_NONE;
    return PyUnicode_FromString(k);
}

static PyObject *TreeRef_path(TreeRefObject *self, void *u) { return PyUnicode_FromString(ember_ref_path(self->ref)); }

static PyObject *TreeRef_parent(TreeRefObject *self, PyObject *u) {
    ember_ref *p = ember_ref_parent(self->ref);
    if (!p) Py_RETURN_NONE;
    return tree_ref_wrap(self->db, p);
}

static PyObject *TreeRef_child(TreeRefObject *self, PyObject *path_o) {
    const char *path = str_arg(path_o, "path");
    if (!path) return NULL;
    ember_error err;
    ember_ref *c = ember_ref_child(self->ref, path, &err);
    if (!c) return raise_err(&err);
    return tree_ref_wrap(self->db, c);
}

static PyObject *TreeRef_push(TreeRefObject *self, PyObject *u) {
    ember_error err;
    ember_ref *c = ember_ref_push(self->ref, &err);
    if (!c) return raise_err(&err);
    return tree_ref_wrap(self->db, c);
}

enum { TW_SET, TW_UPDATE, TW_REMOVE, TW_OD_SET, TW_OD_UPDATE, TW_OD_REMOVE, TW_OD_CANCEL };

/* One write; returns a Pending (None with want_pending 0: fire and forget). */
static PyObject *tree_write_ex(TreeRefObject *self, int kind, PyObject *value, int want_pending) {
    if ((kind == TW_UPDATE || kind == TW_OD_UPDATE) && !PyDict_Check(value))
        return raise_invalid("update(value): expected a dict from relative paths ('a/b') to values");
    enc_t e;
    enc_init(&e, ENC_VALUE, "value");
    int has_value = kind == TW_SET || kind == TW_UPDATE || kind == TW_OD_SET || kind == TW_OD_UPDATE;
    if (has_value && enc_value(&e, value) < 0) { enc_free(&e); return NULL; }
    wstate *w = NULL;
    if (want_pending && !(w = wstate_new())) { enc_free(&e); return NULL; }
    ember_write_cb cb = w ? write_done : NULL;
    ember_error err;
    bool ok = false;
    Py_BEGIN_ALLOW_THREADS
    switch (kind) {
    case TW_SET: ok = ember_ref_set(self->ref, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, cb, w, &err); break;
    case TW_UPDATE: ok = ember_ref_update(self->ref, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, cb, w, &err); break;
    case TW_OD_SET: ok = ember_ref_on_disconnect_set(self->ref, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, cb, w, &err); break;
    case TW_OD_UPDATE: ok = ember_ref_on_disconnect_update(self->ref, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, cb, w, &err); break;
    case TW_OD_REMOVE: ok = ember_ref_on_disconnect_remove(self->ref, cb, w, &err); break;
    case TW_OD_CANCEL: ok = ember_ref_on_disconnect_cancel(self->ref, cb, w, &err); break;
    default: ok = ember_ref_remove(self->ref, cb, w, &err); break;
    }
    Py_END_ALLOW_THREADS
    enc_free(&e);
    if (!ok) {
        if (w) { wstate_unref(w); wstate_unref(w); }
        return raise_err(&err);
    }
    if (!w) Py_RETURN_NONE;
    return pending_new(w);
}

static PyObject *tree_write(TreeRefObject *self, int kind, PyObject *value) { return tree_write_ex(self, kind, value, 1); }

static PyObject *TreeRef_set(TreeRefObject *self, PyObject *v) { return tree_write(self, TW_SET, v); }
static PyObject *TreeRef_update(TreeRefObject *self, PyObject *v) { return tree_write(self, TW_UPDATE, v); }
static PyObject *TreeRef_remove(TreeRefObject *self, PyObject *u) { return tree_write(self, TW_REMOVE, NULL); }
/* onDisconnect: written by the server when this client's connection ends */
static PyObject *TreeRef_od_set(TreeRefObject *self, PyObject *v) { return tree_write(self, TW_OD_SET, v); }
static PyObject *TreeRef_od_update(TreeRefObject *self, PyObject *v) { return tree_write(self, TW_OD_UPDATE, v); }
static PyObject *TreeRef_od_remove(TreeRefObject *self, PyObject *u) { return tree_write(self, TW_OD_REMOVE, NULL); }
static PyObject *TreeRef_od_cancel(TreeRefObject *self, PyObject *u) { return tree_write(self, TW_OD_CANCEL, NULL); }

/* push_set(value) -> TreeRef: a push id child set to value at once, fire and forget (one call
 * for push(value); the write is local at once and acknowledged later) */
static PyObject *TreeRef_push_set(TreeRefObject *self, PyObject *v) {
    ember_error err;
    ember_ref *c = ember_ref_push(self->ref, &err);
    if (!c) return raise_err(&err);
    PyObject *child = tree_ref_wrap(self->db, c);
    if (!child) return NULL;
    PyObject *p = tree_write_ex((TreeRefObject *)child, TW_SET, v, 0);
    if (!p) { Py_DECREF(child); return NULL; }
    Py_DECREF(p);
    return child;
}

static PyObject *tree_value_result(char *p, size_t n, ember_error *err) {
    if (!p) return raise_err(err);
    PyObject *r = decode_buffer(p, n, NULL);
    ember_free(p);
    return r;
}

static PyObject *TreeRef_get(TreeRefObject *self, PyObject *u) {
    ember_error err;
    size_t n = 0;
    char *p;
    Py_BEGIN_ALLOW_THREADS
    p = ember_ref_get(self->ref, EMBER_FORMAT_MSGPACK, &n, &err);
    Py_END_ALLOW_THREADS
    return tree_value_result(p, n, &err);
}

static PyObject *tree_observe_result(ember_listener_token t, lctx *c, ember_error *err) {
    if (!t) { lctx_drop(c); return raise_err(err); }
    return listener_new(t);
}

/* observe(event_type, callback(DataSnapshot, prev_key)) -> Listener */
static PyObject *TreeRef_observe(TreeRefObject *self, PyObject *args) {
    PyObject *type_o, *cb;
    int type;
    if (!PyArg_ParseTuple(args, "OO", &type_o, &cb)) return NULL;
    if (event_type_arg(type_o, &type) < 0) return NULL;
    lctx *c = lctx_new(self->db, cb);
    if (!c) return NULL;
    ember_error err;
    ember_listener_token t;
    Py_BEGIN_ALLOW_THREADS
    t = ember_ref_observe(self->ref, type, tree_event_cb, c, lctx_free, &err);
    Py_END_ALLOW_THREADS
    return tree_observe_result(t, c, &err);
}

static PyObject *TreeRef_remove_observer(TreeRefObject *self, PyObject *handle) {
    if (!PyObject_TypeCheck(handle, &ListenerType)) {
        PyErr_Format(PyExc_TypeError, "remove_observer(handle): expected the handle observe() returned, not %s", Py_TYPE(handle)->tp_name);
        return NULL;
    }
    ember_listener_token t = ((ListenerObject *)handle)->token;
    Py_BEGIN_ALLOW_THREADS
    ember_ref_remove_observer(self->ref, t);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *TreeRef_remove_all_observers(TreeRefObject *self, PyObject *u) {
    Py_BEGIN_ALLOW_THREADS
    ember_ref_remove_all_observers(self->ref);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ transactions */

/* The update function (event thread): calls state._update(current) -> (write, value); a value
 * that cannot be encoded is handed to state._failed(exception) and the attempt aborts. */
static bool tree_tx_update(void *ctx, const void *current, size_t len, ember_tree_tx *tx) {
    if (EMBER_IS_FINALIZING()) return false;
    lctx *c = ctx;
    cbgil g = cb_enter(c);
    bool write = false;
    PyObject *cur = decode_buffer(current, len, NULL);
    PyObject *r = cur ? PyObject_CallMethod(c->callback, "_update", "O", cur) : NULL;
    Py_XDECREF(cur);
    if (r && PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2 && PyObject_IsTrue(PyTuple_GET_ITEM(r, 0)) == 1) {
        enc_t e;
        enc_init(&e, ENC_VALUE, "transaction value");
        if (enc_value(&e, PyTuple_GET_ITEM(r, 1)) == 0) {
            ember_error err;
            if (ember_tree_tx_set(tx, e.data.p, e.data.len, &err)) write = true;
            else { PyObject *x = make_error(err.code, err.message); if (x) PyErr_SetObject((PyObject *)Py_TYPE(x), x); Py_XDECREF(x); }
        }
        enc_free(&e);
    }
    Py_XDECREF(r);
    if (PyErr_Occurred()) {
        PyObject *type, *exc, *tb;
        PyErr_Fetch(&type, &exc, &tb);
        PyErr_NormalizeException(&type, &exc, &tb);
        if (exc && tb) PyException_SetTraceback(exc, tb);
        PyObject *f = PyObject_CallMethod(c->callback, "_failed", "O", exc ? exc : Py_None);
        if (!f) report_callback_error(c->callback);
        Py_XDECREF(f);
        Py_XDECREF(type);
        Py_XDECREF(exc);
        Py_XDECREF(tb);
        write = false;
    }
    cb_leave(g);
    return write;
}

/* The completion (event thread, once): state._done(code, message, committed, value). */
static void tree_tx_done(void *ctx, const ember_error *error, bool committed, const ember_tree_snapshot *snap) {
    if (EMBER_IS_FINALIZING()) return;
    lctx *c = ctx;
    cbgil g = cb_enter(c);
    PyObject *value = NULL;
    if (snap) {
        size_t n = 0;
        char *p = ember_tree_snapshot_value(snap, EMBER_FORMAT_MSGPACK, &n, NULL);
        value = p ? decode_buffer(p, n, NULL) : Py_NewRef(Py_None);
        ember_free(p);
    } else {
        value = Py_NewRef(Py_None);
    }
    PyObject *r = value ? PyObject_CallMethod(c->callback, "_done", "isOO", error->code, error->message,
                                              committed ? Py_True : Py_False, value) : NULL;
    if (!r) report_callback_error(c->callback);
    Py_XDECREF(r);
    Py_XDECREF(value);
    cb_leave(g);
    lctx_free(c);
}

/* transaction(state, apply_locally): starts a transaction whose update and completion call the
 * state object's _update / _failed / _done (the Python layer waits for _done). */
static PyObject *TreeRef_transaction(TreeRefObject *self, PyObject *args) {
    PyObject *state;
    int apply_locally = 1;
    if (!PyArg_ParseTuple(args, "O|p", &state, &apply_locally)) return NULL;
    if (!PyObject_HasAttrString(state, "_update") || !PyObject_HasAttrString(state, "_done")) {
        PyErr_SetString(PyExc_TypeError, "transaction(state): state needs _update and _done");
        return NULL;
    }
    lctx *c = PyMem_Malloc(sizeof *c);
    if (!c) return PyErr_NoMemory();
    c->callback = Py_NewRef(state);
    c->db = (DbObject *)Py_NewRef((PyObject *)self->db);
    c->bound = NULL;
    ember_error err;
    bool ok;
    Py_BEGIN_ALLOW_THREADS
    ok = ember_ref_transaction(self->ref, EMBER_FORMAT_MSGPACK, apply_locally, tree_tx_update, tree_tx_done, c, &err);
    Py_END_ALLOW_THREADS
    if (!ok) { lctx_drop(c); return raise_err(&err); }
    Py_RETURN_NONE;
}

static PyObject *tree_query_wrap(DbObject *db, ember_tree_query *q);

static PyObject *TreeRef_query(TreeRefObject *self, PyObject *u) {
    ember_error err;
    ember_tree_query *q = ember_tree_query_new(self->ref, &err);
    if (!q) return raise_err(&err);
    return tree_query_wrap(self->db, q);
}

static PyMethodDef TreeRef_methods[] = {
    {"child", (PyCFunction)TreeRef_child, METH_O, NULL},
    {"push", (PyCFunction)TreeRef_push, METH_NOARGS, NULL},
    {"push_set", (PyCFunction)TreeRef_push_set, METH_O, NULL},
    {"parent", (PyCFunction)TreeRef_parent, METH_NOARGS, NULL},
    {"set", (PyCFunction)TreeRef_set, METH_O, NULL},
    {"update", (PyCFunction)TreeRef_update, METH_O, NULL},
    {"remove", (PyCFunction)TreeRef_remove, METH_NOARGS, NULL},
    {"on_disconnect_set", (PyCFunction)TreeRef_od_set, METH_O, NULL},
    {"on_disconnect_update", (PyCFunction)TreeRef_od_update, METH_O, NULL},
    {"on_disconnect_remove", (PyCFunction)TreeRef_od_remove, METH_NOARGS, NULL},
    {"on_disconnect_cancel", (PyCFunction)TreeRef_od_cancel, METH_NOARGS, NULL},
    {"get", (PyCFunction)TreeRef_get, METH_NOARGS, NULL},
    {"observe", (PyCFunction)TreeRef_observe, METH_VARARGS, NULL},
    {"remove_observer", (PyCFunction)TreeRef_remove_observer, METH_O, NULL},
    {"remove_all_observers", (PyCFunction)TreeRef_remove_all_observers, METH_NOARGS, NULL},
    {"query", (PyCFunction)TreeRef_query, METH_NOARGS, NULL},
    {"transaction", (PyCFunction)TreeRef_transaction, METH_VARARGS, NULL},
    {NULL}};

static PyGetSetDef TreeRef_getset[] = {
    {"key", (getter)TreeRef_key, NULL, NULL, NULL},
    {"path", (getter)TreeRef_path, NULL, NULL, NULL},
    {NULL}};

static PyTypeObject TreeRefType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ember.TreeRef",
    .tp_basicsize = sizeof(TreeRefObject),
    .tp_dealloc = (destructor)TreeRef_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = TreeRef_methods,
    .tp_getset = TreeRef_getset,
};

/* ------------------------------------------------------------------ TreeQuery */

typedef struct {
    PyObject_HEAD
    ember_tree_query *q;
    DbObject *db;
} TreeQueryObject;

static PyTypeObject TreeQueryType;

static PyObject *tree_query_wrap(DbObject *db, ember_tree_query *q) {
    if (!q) return NULL;
    TreeQueryObject *o = PyObject_New(TreeQueryObject, &TreeQueryType);
    if (!o) { ember_tree_query_release(q); return NULL; }
    o->q = q;
    o->db = (DbObject *)Py_NewRef((PyObject *)db);
    return (PyObject *)o;
}

static void TreeQuery_dealloc(TreeQueryObject *self) {
    ember_tree_query_release(self->q);
    Py_XDECREF(self->db);
    PyObject_Free(self);
}

static PyObject *TreeQuery_copy(TreeQueryObject *self, PyObject *u) {
    ember_tree_query *c = ember_tree_query_copy(self->q);
    if (!c) return PyErr_NoMemory();
    return tree_query_wrap(self->db, c);
}

static PyObject *tq_result(bool ok, ember_error *err) {
    if (!ok) return raise_err(err);
    Py_RETURN_NONE;
}

static PyObject *TreeQuery_order_by_key(TreeQueryObject *self, PyObject *u) {
    ember_error err;
    return tq_result(ember_tree_query_order_by_key(self->q, &err), &err);
}

static PyObject *TreeQuery_order_by_value(TreeQueryObject *self, PyObject *u) {
    ember_error err;
    return tq_result(ember_tree_query_order_by_value(self->q, &err), &err);
}

static PyObject *TreeQuery_order_by_child(TreeQueryObject *self, PyObject *path_o) {
    const char *path = str_arg(path_o, "path");
    if (!path) return NULL;
    ember_error err;
    return tq_result(ember_tree_query_order_by_child(self->q, path, &err), &err);
}

/* limit(last: bool, n) */
static PyObject *TreeQuery_limit(TreeQueryObject *self, PyObject *args) {
    int last;
    PyObject *n_o;
    if (!PyArg_ParseTuple(args, "pO", &last, &n_o)) return NULL;
    if (!PyLong_Check(n_o) || PyBool_Check(n_o)) return raise_invalid("limit: expected a positive int");
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(n_o, &overflow);
    if (overflow) n = overflow > 0 ? INT64_MAX : INT64_MIN;
    if (n == -1 && PyErr_Occurred()) return NULL;
    ember_error err;
    bool ok = last ? ember_tree_query_limit_to_last(self->q, n, &err) : ember_tree_query_limit_to_first(self->q, n, &err);
    return tq_result(ok, &err);
}

/* bound(kind, value, key=None) */
static PyObject *TreeQuery_bound(TreeQueryObject *self, PyObject *args) {
    int kind;
    PyObject *value, *key_o = Py_None;
    if (!PyArg_ParseTuple(args, "iO|O", &kind, &value, &key_o)) return NULL;
    const char *key = NULL;
    if (key_o != Py_None && !(key = str_arg(key_o, "key"))) return NULL;
    enc_t e;
    if (enc_plain(&e, value, "value") < 0) return NULL;
    ember_error err;
    bool ok = ember_tree_query_bound(self->q, kind, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, key, &err);
    enc_free(&e);
    return tq_result(ok, &err);
}

static PyObject *TreeQuery_get(TreeQueryObject *self, PyObject *u) {
    ember_error err;
    size_t n = 0;
    char *p;
    Py_BEGIN_ALLOW_THREADS
    p = ember_tree_query_get(self->q, EMBER_FORMAT_MSGPACK, &n, &err);
    Py_END_ALLOW_THREADS
    return tree_value_result(p, n, &err);
}

static PyObject *TreeQuery_observe(TreeQueryObject *self, PyObject *args) {
    PyObject *type_o, *cb;
    int type;
    if (!PyArg_ParseTuple(args, "OO", &type_o, &cb)) return NULL;
    if (event_type_arg(type_o, &type) < 0) return NULL;
    lctx *c = lctx_new(self->db, cb);
    if (!c) return NULL;
    ember_error err;
    ember_listener_token t;
    Py_BEGIN_ALLOW_THREADS
    t = ember_tree_query_observe(self->q, type, tree_event_cb, c, lctx_free, &err);
    Py_END_ALLOW_THREADS
    return tree_observe_result(t, c, &err);
}

static PyObject *TreeQuery_remove_all_observers(TreeQueryObject *self, PyObject *u) {
    Py_BEGIN_ALLOW_THREADS
    ember_tree_query_remove_all_observers(self->q);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyMethodDef TreeQuery_methods[] = {
    {"copy", (PyCFunction)TreeQuery_copy, METH_NOARGS, NULL},
    {"order_by_key", (PyCFunction)TreeQuery_order_by_key, METH_NOARGS, NULL},
    {"order_by_value", (PyCFunction)TreeQuery_order_by_value, METH_NOARGS, NULL},
    {"order_by_child", (PyCFunction)TreeQuery_order_by_child, METH_O, NULL},
    {"limit", (PyCFunction)TreeQuery_limit, METH_VARARGS, NULL},
    {"bound", (PyCFunction)TreeQuery_bound, METH_VARARGS, NULL},
    {"get", (PyCFunction)TreeQuery_get, METH_NOARGS, NULL},
    {"observe", (PyCFunction)TreeQuery_observe, METH_VARARGS, NULL},
    {"remove_all_observers", (PyCFunction)TreeQuery_remove_all_observers, METH_NOARGS, NULL},
    {NULL}};

static PyTypeObject TreeQueryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ember.TreeQuery",
    .tp_basicsize = sizeof(TreeQueryObject),
    .tp_dealloc = (destructor)TreeQuery_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = TreeQuery_methods,
};

/* ------------------------------------------------------------------ durable storage */

static PyObject *mod_set_index_configuration(PyObject *m, PyObject *args) {
    PyObject *db_o;
    const char *json;
    if (!PyArg_ParseTuple(args, "O!s", &DbType, &db_o, &json)) return NULL;
    DbObject *db = (DbObject *)db_o;
    if (db_check(db) < 0) return NULL;
    ember_error err;
    bool ok;
    Py_BEGIN_ALLOW_THREADS
    ok = ember_db_set_index_configuration(db->db, json, &err);
    Py_END_ALLOW_THREADS
    return tq_result(ok, &err);
}

static PyObject *mod_index_auto_creation(PyObject *m, PyObject *args) {
    PyObject *db_o;
    int on;
    if (!PyArg_ParseTuple(args, "O!p", &DbType, &db_o, &on)) return NULL;
    DbObject *db = (DbObject *)db_o;
    if (db_check(db) < 0) return NULL;
    ember_error err;
    bool ok;
    Py_BEGIN_ALLOW_THREADS
    ok = ember_db_index_auto_creation(db->db, on, &err);
    Py_END_ALLOW_THREADS
    return tq_result(ok, &err);
}

static PyObject *mod_delete_all_indexes(PyObject *m, PyObject *args) {
    PyObject *db_o;
    if (!PyArg_ParseTuple(args, "O!", &DbType, &db_o)) return NULL;
    DbObject *db = (DbObject *)db_o;
    if (db_check(db) < 0) return NULL;
    ember_error err;
    bool ok;
    Py_BEGIN_ALLOW_THREADS
    ok = ember_db_delete_all_indexes(db->db, &err);
    Py_END_ALLOW_THREADS
    return tq_result(ok, &err);
}

static PyObject *mod_index_count(PyObject *m, PyObject *args) {
    PyObject *db_o;
    if (!PyArg_ParseTuple(args, "O!", &DbType, &db_o)) return NULL;
    DbObject *db = (DbObject *)db_o;
    if (db_check(db) < 0) return NULL;
    ember_error err;
    int64_t n = ember_db_index_count(db->db, &err);
    if (n < 0) return raise_err(&err);
    return PyLong_FromLongLong(n);
}

static PyObject *mod_is_persistent(PyObject *m, PyObject *args) {
    PyObject *db_o;
    if (!PyArg_ParseTuple(args, "O!", &DbType, &db_o)) return NULL;
    DbObject *db = (DbObject *)db_o;
    return PyBool_FromLong(db->db && !db->closed && ember_db_is_persistent(db->db));
}

static PyObject *mod_clear_persistence(PyObject *m, PyObject *arg) {
    PyObject *fs = PyOS_FSPath(arg);
    if (!fs) return NULL;
    if (!PyUnicode_Check(fs)) { Py_DECREF(fs); PyErr_SetString(PyExc_TypeError, "path must be str or os.PathLike[str]"); return NULL; }
    const char *path = c_string(fs, "path");
    if (!path) { Py_DECREF(fs); return NULL; }
    ember_error err;
    bool ok;
    Py_BEGIN_ALLOW_THREADS
    ok = ember_clear_persistence(path, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(fs);
    return tq_result(ok, &err);
}

#define TREE_MODULE_METHODS \
    {"tree_ref", mod_tree_ref, METH_VARARGS, "tree_ref(db, path=None) -> TreeRef"}, \
    {"set_index_configuration", mod_set_index_configuration, METH_VARARGS, NULL}, \
    {"index_auto_creation", mod_index_auto_creation, METH_VARARGS, NULL}, \
    {"delete_all_indexes", mod_delete_all_indexes, METH_VARARGS, NULL}, \
    {"index_count", mod_index_count, METH_VARARGS, NULL}, \
    {"is_persistent", mod_is_persistent, METH_VARARGS, NULL}, \
    {"clear_persistence", mod_clear_persistence, METH_O, NULL},

/* Readies the tree types and adds them and the event constants to the module. */
static int tree_module_init(PyObject *m) {
    PyTypeObject *types[] = {&TreeSnapType, &TreeRefType, &TreeQueryType};
    const char *names[] = {"DataSnapshot", "TreeRef", "TreeQuery"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        if (PyType_Ready(types[i]) < 0) return -1;
        if (PyModule_AddObjectRef(m, names[i], (PyObject *)types[i]) < 0) return -1;
    }
    if (PyModule_AddIntConstant(m, "EVENT_CHILD_ADDED", EMBER_EVENT_CHILD_ADDED) < 0 ||
        PyModule_AddIntConstant(m, "EVENT_CHILD_REMOVED", EMBER_EVENT_CHILD_REMOVED) < 0 ||
        PyModule_AddIntConstant(m, "EVENT_CHILD_CHANGED", EMBER_EVENT_CHILD_CHANGED) < 0 ||
        PyModule_AddIntConstant(m, "EVENT_CHILD_MOVED", EMBER_EVENT_CHILD_MOVED) < 0 ||
        PyModule_AddIntConstant(m, "EVENT_VALUE", EMBER_EVENT_VALUE) < 0 ||
        PyModule_AddIntConstant(m, "TREE_START_AT", EMBER_TREE_START_AT) < 0 ||
        PyModule_AddIntConstant(m, "TREE_START_AFTER", EMBER_TREE_START_AFTER) < 0 ||
        PyModule_AddIntConstant(m, "TREE_END_AT", EMBER_TREE_END_AT) < 0 ||
        PyModule_AddIntConstant(m, "TREE_END_BEFORE", EMBER_TREE_END_BEFORE) < 0 ||
        PyModule_AddIntConstant(m, "TREE_EQUAL_TO", EMBER_TREE_EQUAL_TO) < 0)
        return -1;
    return 0;
}
