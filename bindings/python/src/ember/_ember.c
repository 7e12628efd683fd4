/*
 * _ember.c: the CPython extension `ember._ember` over libember's C ABI (include/ember.h).
 *
 * Responsible for: the low-level objects the pure-Python layer (ember/_client.py, ...) builds on:
 * Database, Document (a document snapshot), Snapshot (a query snapshot), Query, Filter, Batch,
 * Transaction, Pending (a write's completion) and Listener. Values travel as MessagePack
 * (_codec.h). Rules (ARCHITECTURE.md, docs/python.md):
 *   - the GIL is released around every ABI call that may block (writes, reads, close, listener
 *     removal, waits), so callbacks on Ember's event thread can take it;
 *   - callbacks take the GIL on a thread state the event thread keeps (cb_enter) and do nothing
 *     once the interpreter is finalizing; an exception escaping a callback is handed to the
 *     Python-level hook;
 *   - errors become instances of the class registered for their code (ember/_errors.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <structmember.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <errno.h>

#include "ember.h"

#if PY_VERSION_HEX >= 0x030D0000
#define EMBER_IS_FINALIZING() Py_IsFinalizing()
#else
#define EMBER_IS_FINALIZING() _Py_IsFinalizing()
#endif

#include "_codec.h"

/* ------------------------------------------------------------------ module state */

static PyObject *ERROR_CLASSES;    /* dict: code -> exception class */
static PyObject *ERROR_BASE;       /* ember.EmberError */
static PyTypeObject *DOCUMENT_TYPE; /* class instantiated for documents (ember.DocumentSnapshot) */
static PyTypeObject *SNAPSHOT_TYPE; /* class instantiated for query snapshots (ember.QuerySnapshot) */

static PyObject *make_error(int32_t code, const char *message) {
    PyObject *cls = NULL;
    if (ERROR_CLASSES) {
        PyObject *key = PyLong_FromLong(code);
        if (!key) return NULL;
        cls = PyDict_GetItemWithError(ERROR_CLASSES, key);
        Py_DECREF(key);
        if (!cls && PyErr_Occurred()) return NULL;
        if (!cls) {
            key = PyLong_FromLong(EMBER_ERR_UNKNOWN);
            cls = key ? PyDict_GetItemWithError(ERROR_CLASSES, key) : NULL;
            Py_XDECREF(key);
        }
    }
    if (!cls) cls = PyExc_RuntimeError;
    return PyObject_CallFunction(cls, "si", message, (int)code);
}

static PyObject *raise_code(int32_t code, const char *message) {
    PyObject *exc = make_error(code, message);
    if (exc) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
    return NULL;
}

static PyObject *raise_err(const ember_error *err) { return raise_code(err->code, err->message); }

static PyObject *raise_invalid(const char *msg) { return raise_code(EMBER_ERR_INVALID_ARGUMENT, msg); }

/* Set on a thread once it ran an Ember callback: an event thread (it never waits for an acknowledgement,
 * which only it could deliver). */
static _Thread_local int on_event_thread;

/* A str that UTF-8 cannot encode (a lone surrogate): InvalidArgumentError instead of Python's
 * UnicodeEncodeError, as other bad input. Call right after PyUnicode_AsUTF8* failed. */
static void unencodable(const char *what) {
    if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return;
    PyErr_Clear();
    PyObject *m = PyUnicode_FromFormat("%s is not valid Unicode text (it holds a lone surrogate, which UTF-8 cannot encode)", what);
    if (m) {
        const char *t = PyUnicode_AsUTF8(m);
        if (t) raise_code(EMBER_ERR_INVALID_ARGUMENT, t);
        Py_DECREF(m);
    }
}

/* The UTF-8 of str `o`, borrowed from it, for a NUL-terminated argument of libember: NULL with
 * InvalidArgumentError when it holds a NUL character (C would read only what precedes it: another
 * document, another file), or when it holds a lone surrogate. */
static const char *c_string(PyObject *o, const char *what) {
    Py_ssize_t n = 0;
    const char *u = PyUnicode_AsUTF8AndSize(o, &n);
    if (!u) { unencodable(what); return NULL; }
    if ((size_t)n != strlen(u)) {
        PyObject *m = PyUnicode_FromFormat("%s must not contain a NUL character ('\\x00'): %R", what, o);
        if (m) {
            const char *t = PyUnicode_AsUTF8(m);
            if (t) raise_code(EMBER_ERR_INVALID_ARGUMENT, t);
            Py_DECREF(m);
        }
        return NULL;
    }
    return u;
}

static const char *str_arg(PyObject *o, const char *what) {
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %s", what, Py_TYPE(o)->tp_name);
        return NULL;
    }
    return c_string(o, what);
}

/* Reports an exception raised inside a callback (after the Python layer's own handling). */
static void report_callback_error(PyObject *where) {
    PyErr_WriteUnraisable(where);
}

/* ------------------------------------------------------------------ Database */

typedef struct {
    PyObject_HEAD
    ember_db *db;
    int closed;
    PyObject *ref_factory; /* path -> DocumentReference */
    PyObject *weakrefs;
} DbObject;

static PyTypeObject DbType;

static int db_check(DbObject *self) {
    if (!self->db) {
        raise_code(EMBER_ERR_FAILED_PRECONDITION, "the client is closed");
        return -1;
    }
    return 0;
}

static int Db_init(DbObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", "persistence", "cache_size_bytes", "host", "ssl", "auth_token", "ssl_ca_file", "database_host", NULL};
    PyObject *path = Py_None;
    PyObject *host = Py_None;
    PyObject *database_host = Py_None;
    PyObject *token = Py_None;
    PyObject *ca = Py_None;
    int persistence = 0;
    long long cache = 0;
    int ssl = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OpLOpOOO", kwlist, &path, &persistence, &cache, &host, &ssl, &token, &ca, &database_host)) return -1;
    ember_settings s;
    ember_settings_init(&s);
    /* borrowed from the arguments (kept alive by the caller) for the open below */
    if (host != Py_None) {
        s.host = str_arg(host, "host");
        if (!s.host) return -1;
    }
    if (database_host != Py_None) {
        s.database_host = str_arg(database_host, "database_host");
        if (!s.database_host) return -1;
    }
    if (token != Py_None) {
        s.auth_token = str_arg(token, "auth_token");
        if (!s.auth_token) return -1;
    }
    if (ca != Py_None) {
        s.ssl_ca_file = str_arg(ca, "ssl_ca_file");
        if (!s.ssl_ca_file) return -1;
    }
    s.ssl = ssl;
    if (path != Py_None) {
        PyObject *fs = PyOS_FSPath(path);
        if (!fs) return -1;
        if (!PyUnicode_Check(fs)) { Py_DECREF(fs); PyErr_SetString(PyExc_TypeError, "path must be str or os.PathLike[str]"); return -1; }
        s.path = c_string(fs, "path");
        if (!s.path) { Py_DECREF(fs); return -1; }
        path = fs; /* owned until after the open */
    } else {
        Py_INCREF(path);
    }
    s.persistence = persistence;
    s.cache_size_bytes = cache;
    ember_error err;
    ember_db *db;
    Py_BEGIN_ALLOW_THREADS
    db = ember_db_open(&s, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (!db) { raise_err(&err); return -1; }
    if (self->db) {
        ember_db *old = self->db;
        Py_BEGIN_ALLOW_THREADS
        ember_db_release(old);
        Py_END_ALLOW_THREADS
    }
    self->db = db;
    return 0;
}

static int Db_traverse(DbObject *self, visitproc visit, void *arg) { Py_VISIT(self->ref_factory); return 0; }
static int Db_clear(DbObject *self) { Py_CLEAR(self->ref_factory); return 0; }

static void Db_dealloc(DbObject *self) {
    PyObject_GC_UnTrack(self);
    if (self->weakrefs) PyObject_ClearWeakRefs((PyObject *)self);
    if (self->db) {
        ember_db *db = self->db;
        self->db = NULL;
        Py_BEGIN_ALLOW_THREADS
        ember_db_release(db);
        Py_END_ALLOW_THREADS
    }
    Db_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Db_close(DbObject *self, PyObject *unused) {
    if (!self->db || self->closed) Py_RETURN_NONE;
    self->closed = 1;
    ember_error err;
    bool ok;
    ember_db *db = self->db;
    Py_BEGIN_ALLOW_THREADS
    ok = ember_db_close(db, &err);
    Py_END_ALLOW_THREADS
    if (!ok && err.code != EMBER_ERR_FAILED_PRECONDITION) return raise_err(&err);
    Py_RETURN_NONE;
}

static PyObject *Db_network(DbObject *self, PyObject *arg) {
    if (db_check(self) < 0) return NULL;
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
    ember_error err;
    bool ok;
    Py_BEGIN_ALLOW_THREADS
    ok = on ? ember_db_enable_network(self->db, &err) : ember_db_disable_network(self->db, &err);
    Py_END_ALLOW_THREADS
    if (!ok) return raise_err(&err);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ Pending (a write's completion) */

typedef struct wstate {
    atomic_int refs;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    int32_t code;
    double ack_time; /* seconds since the epoch, local clock at the acknowledgement */
    char message[EMBER_ERROR_MESSAGE_SIZE];
} wstate;

static wstate *wstate_new(void) {
    wstate *w = PyMem_RawMalloc(sizeof *w);
    if (!w) { PyErr_NoMemory(); return NULL; }
    atomic_init(&w->refs, 2); /* the Pending object and the callback */
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->done = 0;
    w->code = 0;
    w->ack_time = 0;
    w->message[0] = 0;
    return w;
}

static void wstate_unref(wstate *w) {
    if (atomic_fetch_sub(&w->refs, 1) == 1) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        PyMem_RawFree(w);
    }
}

static double now_epoch(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs on the event thread; needs no GIL. */
static void write_done(void *ctx, const ember_error *error) {
    wstate *w = ctx;
    pthread_mutex_lock(&w->mu);
    w->code = error ? error->code : 0;
    if (error && error->code) {
        strncpy(w->message, error->message, sizeof w->message - 1);
        w->message[sizeof w->message - 1] = 0;
    }
    w->ack_time = now_epoch();
    w->done = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    wstate_unref(w);
}

typedef struct {
    PyObject_HEAD
    wstate *w;
} PendingObject;

static PyTypeObject PendingType;

static PyObject *pending_new(wstate *w) {
    PendingObject *p = PyObject_New(PendingObject, &PendingType);
    if (!p) { wstate_unref(w); wstate_unref(w); return NULL; }
    p->w = w;
    return (PyObject *)p;
}

static void Pending_dealloc(PendingObject *self) {
    if (self->w) wstate_unref(self->w);
    PyObject_Free(self);
}

/* wait(timeout=None) -> ack time (float seconds since the epoch); raises the write's error. */
static PyObject *Pending_wait(PendingObject *self, PyObject *args) {
    PyObject *timeout = Py_None;
    if (!PyArg_ParseTuple(args, "|O", &timeout)) return NULL;
    double t = -1;
    if (timeout != Py_None) {
        t = PyFloat_AsDouble(timeout);
        if (t == -1 && PyErr_Occurred()) return NULL;
        if (t != t) return raise_invalid("wait(timeout): the timeout is NaN");
        if (t < 0) t = 0;
        /* Longer than a year (inf included) waits as None does: a deadline that far cannot be
         * expressed as a timespec everywhere. */
        if (t > 365.0 * 86400) t = -1;
    }
    wstate *w = self->w;
    int done;
    pthread_mutex_lock(&w->mu);
    done = w->done;
    pthread_mutex_unlock(&w->mu);
    if (!done && on_event_thread)
        return raise_code(EMBER_ERR_FAILED_PRECONDITION,
                          "wait(): an Ember callback cannot wait for an acknowledgement, which only its own thread could deliver; wait outside the callback");
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&w->mu);
    if (t < 0) {
        while (!w->done) pthread_cond_wait(&w->cv, &w->mu);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double end = ts.tv_sec + ts.tv_nsec / 1e9 + t;
        ts.tv_sec = (time_t)end;
        ts.tv_nsec = (long)((end - (double)ts.tv_sec) * 1e9);
        while (!w->done) {
            if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) != 0) break;   /* ETIMEDOUT, or an error: never spin */
        }
    }
    done = w->done;
    pthread_mutex_unlock(&w->mu);
    Py_END_ALLOW_THREADS
    if (!done) return raise_code(EMBER_ERR_DEADLINE_EXCEEDED, "wait(timeout): the write was not acknowledged in time");
    if (w->code) return raise_code(w->code, w->message);
    return PyFloat_FromDouble(w->ack_time);
}

static PyObject *Pending_done(PendingObject *self, void *unused) {
    pthread_mutex_lock(&self->w->mu);
    int d = self->w->done;
    pthread_mutex_unlock(&self->w->mu);
    return PyBool_FromLong(d);
}

static PyObject *Pending_ack_time(PendingObject *self, void *unused) {
    pthread_mutex_lock(&self->w->mu);
    int d = self->w->done && !self->w->code;
    double t = self->w->ack_time;
    pthread_mutex_unlock(&self->w->mu);
    if (!d) Py_RETURN_NONE;
    return PyFloat_FromDouble(t);
}

static PyMethodDef Pending_methods[] = {
    {"wait", (PyCFunction)Pending_wait, METH_VARARGS, "wait(timeout=None): block until acknowledged; returns the ack time"},
    {NULL}};
static PyGetSetDef Pending_getset[] = {
    {"done", (getter)Pending_done, NULL, "acknowledged or failed", NULL},
    {"ack_time", (getter)Pending_ack_time, NULL, "seconds since the epoch at the acknowledgement, or None", NULL},
    {NULL}};

static PyTypeObject PendingType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ember.Pending",
    .tp_basicsize = sizeof(PendingObject),
    .tp_dealloc = (destructor)Pending_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = Pending_methods,
    .tp_getset = Pending_getset,
};

/* ------------------------------------------------------------------ write helpers */

typedef enum { W_SET, W_MERGE, W_UPDATE, W_DELETE, W_CREATE } wkind;
typedef enum { T_DB, T_BATCH, T_TX } wtarget;


/* Field paths of merge=[...] as a C array: the UTF-8 of strs held by a new list (`*fast_out`, for
 * the caller to release after the call), never of the caller's sequence, which a FieldPath's
 * to_api_repr() may change while this runs (and which is left as it was). */
static int merge_fields(PyObject *merge, PyObject **fast_out, const char ***fields, size_t *n) {
    *fast_out = NULL;
    *fields = NULL;
    *n = 0;
    if (merge == Py_None || merge == Py_True) return 0;
    PyObject *fast = PySequence_Fast(merge, "merge must be True, False or a list of field paths");
    if (!fast) return -1;
    Py_ssize_t k = PySequence_Fast_GET_SIZE(fast);
    if (k == 0) {
        Py_DECREF(fast);
        raise_invalid("merge: the list of field paths must not be empty");
        return -1;
    }
    PyObject *own = PyList_New(k);
    if (!own) { Py_DECREF(fast); return -1; }
    for (Py_ssize_t i = 0; i < k; i++) {
        if (PySequence_Fast_GET_SIZE(fast) != k) {
            Py_DECREF(own); Py_DECREF(fast);
            raise_invalid("merge: the list of field paths changed while it was read");
            return -1;
        }
        PyObject *it = PySequence_Fast_GET_ITEM(fast, i);
        Py_INCREF(it);
        PyObject *s = it;
        if (!PyUnicode_Check(it)) {
            /* FieldPath objects: use their to_api_repr() */
            if (!PyObject_HasAttrString(it, "to_api_repr")) {
                PyErr_Format(PyExc_TypeError, "merge: each field path must be a str or a FieldPath, not %s", Py_TYPE(it)->tp_name);
                Py_DECREF(it); Py_DECREF(own); Py_DECREF(fast); return -1;
            }
            s = PyObject_CallMethod(it, "to_api_repr", NULL);
            Py_DECREF(it);
            if (!s) { Py_DECREF(own); Py_DECREF(fast); return -1; }
            if (!PyUnicode_Check(s)) {
                Py_DECREF(s); Py_DECREF(own); Py_DECREF(fast);
                raise_invalid("merge: a FieldPath's to_api_repr() must return a str");
                return -1;
            }
        }
        PyList_SET_ITEM(own, i, s);   /* steals the reference */
    }
    Py_DECREF(fast);
    const char **arr = PyMem_Malloc(sizeof(char *) * (size_t)k);
    if (!arr) { Py_DECREF(own); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < k; i++) {
        arr[i] = c_string(PyList_GET_ITEM(own, i), "merge field path");
        if (!arr[i]) { PyMem_Free(arr); Py_DECREF(own); return -1; }
    }
    *fast_out = own;
    *fields = arr;
    *n = (size_t)k;
    return 0;
}

/*
 * One write to a database, batch or transaction. `merge` is NULL (plain set), Py_True (merge all)
 * or a list. Returns a Pending for T_DB, None otherwise.
 */
static PyObject *do_write(wtarget target, void *handle, wkind kind, PyObject *path_o, PyObject *data, PyObject *merge) {
    const char *path = str_arg(path_o, "path");
    if (!path) return NULL;
    enc_t e;
    buf_t tr;
    buf_init(&tr);
    enc_init(&e, kind == W_UPDATE ? ENC_UPDATE : ENC_SET, kind == W_UPDATE ? "field_updates" : "document_data");
    PyObject *fast = NULL;
    const char **fields = NULL;
    size_t nfields = 0;
    PyObject *result = NULL;
    if (kind != W_DELETE) {
        if (enc_document(&e, data, &tr) < 0) goto out;
        if (kind == W_MERGE && merge_fields(merge, &fast, &fields, &nfields) < 0) goto out;
    }
    const void *trp = tr.len ? tr.p : NULL;
    size_t trl = tr.len;
    ember_error err;
    bool ok = false;
    wstate *w = NULL;
    if (target == T_DB) {
        w = wstate_new();
        if (!w) goto out;
        ember_db *db = handle;
        Py_BEGIN_ALLOW_THREADS
        switch (kind) {
        case W_SET: ok = ember_doc_set(db, path, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, trp, trl, write_done, w, &err); break;
        case W_MERGE: ok = ember_doc_merge(db, path, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, trp, trl, fields, nfields, write_done, w, &err); break;
        case W_UPDATE: ok = ember_doc_update(db, path, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, trp, trl, write_done, w, &err); break;
        case W_DELETE: ok = ember_doc_delete(db, path, write_done, w, &err); break;
        case W_CREATE: ok = ember_doc_create(db, path, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, trp, trl, write_done, w, &err); break;
        }
        Py_END_ALLOW_THREADS
        if (!ok) { wstate_unref(w); wstate_unref(w); raise_err(&err); goto out; }
        result = pending_new(w);
    } else if (target == T_BATCH) {
        ember_batch *b = handle;
        switch (kind) {
        case W_SET: ok = ember_batch_set(b, path, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, trp, trl, &err); break;
        case W_MERGE: ok = ember_batch_merge(b, path, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, trp, trl, fields, nfields, &err); break;
        case W_UPDATE: ok = ember_batch_update(b, path, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, trp, trl, &err); break;
        case W_DELETE: ok = ember_batch_delete(b, path, &err); break;
        case W_CREATE: ok = ember_batch_create(b, path, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, trp, trl, &err); break;
        }
        if (!ok) { raise_err(&err); goto out; }
        result = Py_NewRef(Py_None);
    } else {
        ember_transaction *t = handle;
        switch (kind) {
        case W_SET: ok = ember_transaction_set(t, path, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, trp, trl, &err); break;
        case W_MERGE: ok = ember_transaction_merge(t, path, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, trp, trl, fields, nfields, &err); break;
        case W_UPDATE: ok = ember_transaction_update(t, path, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, trp, trl, &err); break;
        case W_DELETE: ok = ember_transaction_delete(t, path, &err); break;
        case W_CREATE: raise_code(EMBER_ERR_UNIMPLEMENTED, "create inside a C transaction"); goto out;
        }
        if (!ok) { raise_err(&err); goto out; }
        result = Py_NewRef(Py_None);
    }
out:
    enc_free(&e);
    buf_free(&tr);
    if (fields) PyMem_Free(fields);
    Py_XDECREF(fast);
    return result;
}

static int parse_write(PyObject *args, PyObject *kw, wkind kind, PyObject **path, PyObject **data, PyObject **merge) {
    static char *kw_set[] = {"path", "data", "merge", NULL};
    static char *kw_upd[] = {"path", "data", NULL};
    static char *kw_del[] = {"path", NULL};
    *data = NULL;
    *merge = Py_False;
    /* Positional calls (bulk loading makes one per document) skip the keyword parser. */
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    Py_ssize_t min = kind == W_DELETE ? 1 : 2, max = kind == W_SET ? 3 : min;
    if (!kw && n >= min && n <= max) {
        *path = PyTuple_GET_ITEM(args, 0);
        if (n > 1) *data = PyTuple_GET_ITEM(args, 1);
        if (n > 2) *merge = PyTuple_GET_ITEM(args, 2);
        return 1;
    }
    if (kind == W_SET) return PyArg_ParseTupleAndKeywords(args, kw, "OO|O", kw_set, path, data, merge);
    if (kind == W_UPDATE || kind == W_CREATE) return PyArg_ParseTupleAndKeywords(args, kw, "OO", kw_upd, path, data);
    return PyArg_ParseTupleAndKeywords(args, kw, "O", kw_del, path);
}

static PyObject *write_entry(wtarget target, void *handle, wkind kind, PyObject *args, PyObject *kw) {
    PyObject *path, *data, *merge;
    if (!parse_write(args, kw, kind, &path, &data, &merge)) return NULL;
    if (kind == W_SET) {
        int m = merge == Py_True ? 1 : (merge == Py_False || merge == Py_None) ? 0 : 2;
        if (m) kind = W_MERGE;
        if (m == 1) merge = Py_True;
    }
    return do_write(target, handle, kind, path, data, merge);
}

static PyObject *Db_set(DbObject *self, PyObject *args, PyObject *kw) {
    if (db_check(self) < 0) return NULL;
    return write_entry(T_DB, self->db, W_SET, args, kw);
}
static PyObject *Db_update(DbObject *self, PyObject *args, PyObject *kw) {
    if (db_check(self) < 0) return NULL;
    return write_entry(T_DB, self->db, W_UPDATE, args, kw);
}
static PyObject *Db_delete(DbObject *self, PyObject *args, PyObject *kw) {
    if (db_check(self) < 0) return NULL;
    return write_entry(T_DB, self->db, W_DELETE, args, kw);
}
/* list_collection_ids(parent_path or None) -> JSON text of the sorted ids */
static PyObject *Db_list_collection_ids(DbObject *self, PyObject *arg) {
    if (db_check(self) < 0) return NULL;
    const char *parent = NULL;
    if (arg != Py_None && !(parent = str_arg(arg, "parent"))) return NULL;
    ember_error err;
    size_t len = 0;
    char *out;
    Py_BEGIN_ALLOW_THREADS
    out = ember_db_list_collection_ids(self->db, parent, EMBER_FORMAT_JSON, &len, &err);
    Py_END_ALLOW_THREADS
    if (!out) return raise_err(&err);
    PyObject *r = PyUnicode_FromStringAndSize(out, (Py_ssize_t)len);
    ember_free(out);
    return r;
}

static PyObject *Db_create(DbObject *self, PyObject *args, PyObject *kw) {
    if (db_check(self) < 0) return NULL;
    return write_entry(T_DB, self->db, W_CREATE, args, kw);
}

static PyObject *Db_wait_for_pending_writes(DbObject *self, PyObject *unused) {
    if (db_check(self) < 0) return NULL;
    wstate *w = wstate_new();
    if (!w) return NULL;
    ember_error err;
    bool ok;
    Py_BEGIN_ALLOW_THREADS
    ok = ember_db_wait_for_pending_writes(self->db, write_done, w, &err);
    Py_END_ALLOW_THREADS
    if (!ok) { wstate_unref(w); wstate_unref(w); return raise_err(&err); }
    return pending_new(w);
}

/* ------------------------------------------------------------------ Document */

typedef struct {
    PyObject_HEAD
    const ember_document *doc;
    DbObject *db;
    char *raw;        /* the fields as MessagePack, fetched once (ember_free'd with the object) */
    size_t raw_len;
    PyObject *fields; /* `_fields`: the projection set by the Python layer, or NULL (reads as None) */
    PyObject *rt;     /* `_rt`: the read time the Python layer gave it, or NULL (reads as None) */
} DocObject;

static PyTypeObject DocType;

/* Takes ownership of `doc` (already retained). */
static PyObject *doc_wrap(DbObject *db, const ember_document *doc) {
    PyTypeObject *t = DOCUMENT_TYPE ? DOCUMENT_TYPE : &DocType;
    DocObject *o = (DocObject *)t->tp_alloc(t, 0);
    if (!o) { ember_document_release(doc); return NULL; }
    o->doc = doc;
    o->db = (DbObject *)Py_NewRef((PyObject *)db);
    o->raw = NULL;
    o->raw_len = 0;
    o->fields = NULL;
    o->rt = NULL;
    return (PyObject *)o;
}

static void Doc_dealloc(DocObject *self) {
    if (self->raw) ember_free(self->raw);
    if (self->doc) ember_document_release(self->doc);
    Py_XDECREF(self->db);
    Py_XDECREF(self->fields);
    Py_XDECREF(self->rt);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int doc_check(DocObject *self) {
    if (!self->doc) { raise_code(EMBER_ERR_FAILED_PRECONDITION, "this snapshot holds no document"); return -1; }
    return 0;
}

static PyObject *Doc_exists(DocObject *self, void *u) { if (doc_check(self) < 0) return NULL; return PyBool_FromLong(ember_document_exists(self->doc)); }
static PyObject *Doc_id(DocObject *self, void *u) { if (doc_check(self) < 0) return NULL; return PyUnicode_FromString(ember_document_id(self->doc)); }
static PyObject *Doc_path(DocObject *self, void *u) { if (doc_check(self) < 0) return NULL; return PyUnicode_FromString(ember_document_path(self->doc)); }
static PyObject *Doc_pending(DocObject *self, void *u) { if (doc_check(self) < 0) return NULL; return PyBool_FromLong(ember_document_has_pending_writes(self->doc)); }
static PyObject *Doc_cache(DocObject *self, void *u) { if (doc_check(self) < 0) return NULL; return PyBool_FromLong(ember_document_is_from_cache(self->doc)); }
static PyObject *Doc_ctime(DocObject *self, void *u) { if (doc_check(self) < 0) return NULL; return PyLong_FromLongLong(ember_document_create_time(self->doc)); }
static PyObject *Doc_utime(DocObject *self, void *u) { if (doc_check(self) < 0) return NULL; return PyLong_FromLongLong(ember_document_update_time(self->doc)); }

/* The document's fields as MessagePack, asked from libember once per snapshot object (a snapshot
 * is immutable): to_dict(), get() and the listener dispatch's comparisons then decode from it
 * without another call into the library. Existing documents only. */
static int doc_fields(DocObject *self, const char **p, size_t *n) {
    if (!self->raw) {
        ember_error err;
        size_t len;
        char *b = ember_document_data(self->doc, EMBER_FORMAT_MSGPACK, &len, &err);
        if (!b) { raise_err(&err); return -1; }
        self->raw = b;
        self->raw_len = len;
    }
    *p = self->raw;
    *n = self->raw_len;
    return 0;
}

/* _data() -> dict, or None when the document does not exist */
static PyObject *Doc_data(DocObject *self, PyObject *unused) {
    if (doc_check(self) < 0) return NULL;
    if (!ember_document_exists(self->doc)) Py_RETURN_NONE;
    const char *b;
    size_t n;
    if (doc_fields(self, &b, &n) < 0) return NULL;
    return decode_buffer(b, n, self->db->ref_factory);
}

/* _raw() -> the fields as MessagePack bytes (b"" when the document does not exist) */
static PyObject *Doc_raw(DocObject *self, PyObject *unused) {
    if (doc_check(self) < 0) return NULL;
    if (!ember_document_exists(self->doc)) return PyBytes_FromStringAndSize("", 0);
    const char *b;
    size_t n;
    if (doc_fields(self, &b, &n) < 0) return NULL;
    return PyBytes_FromStringAndSize(b, (Py_ssize_t)n);
}

/* A field path whose segments are all simple names ("score", "a.b_2"): FieldPath parsing splits
 * it on the dots and nothing else, so the value can be found in the MessagePack directly. */
static int simple_field_path(const char *s, Py_ssize_t n) {
    if (n == 0 || n > 1500) return 0;
    if (n == 8 && memcmp(s, "__name__", 8) == 0) return 0; /* the document's reference */
    Py_ssize_t start = 0;
    for (Py_ssize_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (!simple_segment(s + start, i - start)) return 0;
            start = i + 1;
        }
    }
    return 1;
}

/* _field(field_path) -> value; raises KeyError when absent */
static PyObject *Doc_field(DocObject *self, PyObject *fp) {
    if (doc_check(self) < 0) return NULL;
    const char *path = str_arg(fp, "field_path");
    if (!path) return NULL;
    Py_ssize_t plen = (Py_ssize_t)strlen(path);
    if (simple_field_path(path, plen) && ember_document_exists(self->doc)) {
        const char *b;
        size_t n;
        if (doc_fields(self, &b, &n) < 0) return NULL;
        dec_t d = {(const uint8_t *)b, (const uint8_t *)b + n, self->db->ref_factory};
        int found = mp_find_path(&d, path, plen);
        if (found < 0) return NULL;
        if (!found) { PyErr_SetObject(PyExc_KeyError, fp); return NULL; }
        return dec_value(&d, 0);
    }
    ember_error err;
    size_t n;
    char *b = ember_document_get(self->doc, path, EMBER_FORMAT_MSGPACK, &n, &err);
    if (!b) {
        if (err.code == EMBER_ERR_NOT_FOUND) { PyErr_SetObject(PyExc_KeyError, fp); return NULL; }
        return raise_err(&err);
    }
    PyObject *r = decode_buffer(b, n, self->db->ref_factory);
    ember_free(b);
    return r;
}

static PyObject *Doc_reference(DocObject *self, void *u) {
    if (doc_check(self) < 0) return NULL;
    PyObject *path = PyUnicode_FromString(ember_document_path(self->doc));
    if (!path || !self->db->ref_factory) return path;
    PyObject *r = PyObject_CallOneArg(self->db->ref_factory, path);
    Py_DECREF(path);
    return r;
}

static PyMethodDef Doc_methods[] = {
    {"_data", (PyCFunction)Doc_data, METH_NOARGS, NULL},
    {"_field", (PyCFunction)Doc_field, METH_O, NULL},
    {"_raw", (PyCFunction)Doc_raw, METH_NOARGS, NULL},
    {NULL}};
/* Attributes the Python layer sets on some snapshots only; an unset one reads as None, so reading
 * it costs no AttributeError (raising and catching one was about half of to_dict()'s time). */
static PyMemberDef Doc_members[] = {
    {"_fields", T_OBJECT, offsetof(DocObject, fields), 0, NULL},
    {"_rt", T_OBJECT, offsetof(DocObject, rt), 0, NULL},
    {NULL}};
static PyGetSetDef Doc_getset[] = {
    {"exists", (getter)Doc_exists, NULL, "whether the document exists", NULL},
    {"id", (getter)Doc_id, NULL, "the document's id", NULL},
    {"_path", (getter)Doc_path, NULL, NULL, NULL},
    {"reference", (getter)Doc_reference, NULL, "the DocumentReference of this document", NULL},
    {"_has_pending_writes", (getter)Doc_pending, NULL, NULL, NULL},
    {"_from_cache", (getter)Doc_cache, NULL, NULL, NULL},
    {"_create_micros", (getter)Doc_ctime, NULL, "backend create time (us since the epoch), 0 when unknown", NULL},
    {"_update_micros", (getter)Doc_utime, NULL, "backend update time (us since the epoch), 0 when unknown", NULL},
    {NULL}};

static PyObject *Doc_new_refuse(PyTypeObject *t, PyObject *a, PyObject *k) {
    PyErr_SetString(PyExc_TypeError, "document snapshots are created by Ember");
    return NULL;
}

static PyTypeObject DocType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ember.Document",
    .tp_basicsize = sizeof(DocObject),
    .tp_dealloc = (destructor)Doc_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_methods = Doc_methods,
    .tp_members = Doc_members,
    .tp_getset = Doc_getset,
    .tp_new = Doc_new_refuse,
};

static PyObject *Db_get(DbObject *self, PyObject *args) {
    PyObject *path_o;
    int source = 0;
    if (!PyArg_ParseTuple(args, "O|i", &path_o, &source)) return NULL;
    if (db_check(self) < 0) return NULL;
    const char *path = str_arg(path_o, "path");
    if (!path) return NULL;
    ember_error err;
    ember_document *d;
    Py_BEGIN_ALLOW_THREADS
    d = ember_doc_get(self->db, path, source, &err);
    Py_END_ALLOW_THREADS
    if (!d) return raise_err(&err);
    return doc_wrap(self, d);
}

/* ------------------------------------------------------------------ Snapshot (query results) */

typedef struct {
    PyObject_HEAD
    const ember_snapshot *snap;
    DbObject *db;
} SnapObject;

static PyTypeObject SnapType;

static PyObject *snap_wrap(DbObject *db, const ember_snapshot *s) {
    PyTypeObject *t = SNAPSHOT_TYPE ? SNAPSHOT_TYPE : &SnapType;
    SnapObject *o = (SnapObject *)t->tp_alloc(t, 0);
    if (!o) { ember_snapshot_release(s); return NULL; }
    o->snap = s;
    o->db = (DbObject *)Py_NewRef((PyObject *)db);
    return (PyObject *)o;
}

static void Snap_dealloc(SnapObject *self) {
    if (self->snap) ember_snapshot_release(self->snap);
    Py_XDECREF(self->db);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t Snap_len(SnapObject *self) { return self->snap ? (Py_ssize_t)ember_snapshot_size(self->snap) : 0; }

static PyObject *Snap_item(SnapObject *self, Py_ssize_t i) {
    Py_ssize_t n = Snap_len(self);
    if (i < 0) i += n;
    if (i < 0 || i >= n) { PyErr_SetString(PyExc_IndexError, "snapshot index out of range"); return NULL; }
    const ember_document *d = ember_snapshot_document(self->snap, (size_t)i);
    if (!d) { PyErr_SetString(PyExc_IndexError, "snapshot index out of range"); return NULL; }
    return doc_wrap(self->db, ember_document_retain(d));
}

static PyObject *Snap_subscript(SnapObject *self, PyObject *key) {
    if (PySlice_Check(key)) {
        Py_ssize_t start, stop, step, len = Snap_len(self);
        if (PySlice_Unpack(key, &start, &stop, &step) < 0) return NULL;
        Py_ssize_t k = PySlice_AdjustIndices(len, &start, &stop, step);
        PyObject *l = PyList_New(k);
        if (!l) return NULL;
        for (Py_ssize_t j = 0, i = start; j < k; j++, i += step) {
            PyObject *d = Snap_item(self, i);
            if (!d) { Py_DECREF(l); return NULL; }
            PyList_SET_ITEM(l, j, d);
        }
        return l;
    }
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    return Snap_item(self, i);
}

/* _changes() -> list of (type, Document, old_index, new_index); -1 where there is none */
static PyObject *Snap_changes(SnapObject *self, PyObject *unused) {
    size_t n = ember_snapshot_change_count(self->snap);
    PyObject *l = PyList_New((Py_ssize_t)n);
    if (!l) return NULL;
    for (size_t i = 0; i < n; i++) {
        ember_document_change c;
        ember_error err;
        if (!ember_snapshot_change(self->snap, i, &c, &err)) { Py_DECREF(l); return raise_err(&err); }
        PyObject *d = doc_wrap(self->db, ember_document_retain(c.document));
        if (!d) { Py_DECREF(l); return NULL; }
        PyObject *t = Py_BuildValue("(iNnn)", (int)c.type, d,
                                    c.old_index == EMBER_NPOS ? (Py_ssize_t)-1 : (Py_ssize_t)c.old_index,
                                    c.new_index == EMBER_NPOS ? (Py_ssize_t)-1 : (Py_ssize_t)c.new_index);
        if (!t) { Py_DECREF(l); return NULL; }
        PyList_SET_ITEM(l, (Py_ssize_t)i, t);
    }
    return l;
}

static PyObject *Snap_cache(SnapObject *self, void *u) { return PyBool_FromLong(ember_snapshot_is_from_cache(self->snap)); }
static PyObject *Snap_pending(SnapObject *self, void *u) { return PyBool_FromLong(ember_snapshot_has_pending_writes(self->snap)); }

static PyMethodDef Snap_methods[] = {{"_changes", (PyCFunction)Snap_changes, METH_NOARGS, NULL}, {NULL}};
static PyGetSetDef Snap_getset[] = {
    {"_from_cache", (getter)Snap_cache, NULL, NULL, NULL},
    {"_has_pending_writes", (getter)Snap_pending, NULL, NULL, NULL},
    {NULL}};
static PySequenceMethods Snap_seq = {.sq_length = (lenfunc)Snap_len, .sq_item = (ssizeargfunc)Snap_item};
static PyMappingMethods Snap_map = {.mp_length = (lenfunc)Snap_len, .mp_subscript = (binaryfunc)Snap_subscript};

static PyTypeObject SnapType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ember.Snapshot",
    .tp_basicsize = sizeof(SnapObject),
    .tp_dealloc = (destructor)Snap_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_methods = Snap_methods,
    .tp_getset = Snap_getset,
    .tp_as_sequence = &Snap_seq,
    .tp_as_mapping = &Snap_map,
    .tp_new = Doc_new_refuse,
};

/* ------------------------------------------------------------------ Listener */

typedef struct {
    PyObject_HEAD
    ember_listener_token token;
} ListenerObject;

static PyTypeObject ListenerType;

typedef struct {
    PyObject *callback;
    DbObject *db;
    PyThreadState *bound; /* the kept thread state its callbacks ran with (see cb_enter), or NULL */
} lctx;

/*
 * Callbacks arrive on Ember's event thread, which Python did not create. PyGILState_Ensure and
 * Release around each one made and destroyed a Python thread state per event (with its frame
 * stack: an mmap, page faults and a munmap each time). A thread Python does not know keeps the
 * thread state its first callback made: later callbacks resume it with PyEval_RestoreThread and
 * park it with PyEval_SaveThread. It is dropped on that thread when the last listener context
 * whose callbacks used it is freed there (lctx_free); if that happens on another thread (the
 * event thread already stopped), the state stays until the interpreter clears it at exit.
 */
static _Thread_local PyThreadState *cb_tstate;
static _Thread_local long cb_contexts;

typedef struct { int kept; PyGILState_STATE g; } cbgil;

static cbgil cb_enter(lctx *c) {
    cbgil s = {0, PyGILState_UNLOCKED};
    on_event_thread = 1;
    if (cb_tstate) {
        PyEval_RestoreThread(cb_tstate);
        s.kept = 1;
    } else if (PyGILState_GetThisThreadState() == NULL) {
        (void)PyGILState_Ensure(); /* counter 1 from now on: the state is kept */
        cb_tstate = PyThreadState_Get();
        s.kept = 1;
    } else {
        s.g = PyGILState_Ensure(); /* a thread Python knows: the usual way */
    }
    if (s.kept && c && !c->bound) {
        c->bound = cb_tstate;
        cb_contexts++;
    }
    return s;
}

static void cb_leave(cbgil s) {
    if (s.kept) PyEval_SaveThread(); else PyGILState_Release(s.g);
}

static void lctx_free(void *p) {
    lctx *c = p;
    if (EMBER_IS_FINALIZING()) return; /* leaked on purpose: no Python during shutdown */
    PyGILState_STATE g = PyGILState_Ensure();
    int drop = c->bound && c->bound == cb_tstate && --cb_contexts == 0;
    Py_XDECREF(c->callback);
    Py_XDECREF(c->db);
    PyMem_Free(c);
    PyGILState_Release(g);
    if (drop) {
        /* the last listener using this thread's kept state: undo its PyGILState_Ensure */
        PyEval_RestoreThread(cb_tstate);
        cb_tstate = NULL;
        PyGILState_Release(PyGILState_UNLOCKED);
    }
}

static void call_listener(lctx *c, PyObject *a, PyObject *err) {
    PyObject *r = PyObject_CallFunctionObjArgs(c->callback, a, err, NULL);
    if (!r) report_callback_error(c->callback);
    Py_XDECREF(r);
}

/* One event of a document or query listener (event thread): callback(payload, None) with the
 * borrowed `payload` retained and wrapped (a Document, or a Snapshot when `is_snapshot`), or
 * callback(None, error) when the listener ended with `error`. */
static void listener_event(void *ctx, const void *payload, int is_snapshot, const ember_error *error) {
    if (EMBER_IS_FINALIZING()) return;
    lctx *c = ctx;
    cbgil g = cb_enter(c);
    if (payload) {
        PyObject *o = is_snapshot ? snap_wrap(c->db, ember_snapshot_retain(payload))
                                  : doc_wrap(c->db, ember_document_retain(payload));
        if (o) call_listener(c, o, Py_None); else report_callback_error(c->callback);
        Py_XDECREF(o);
    } else {
        PyObject *e = make_error(error ? error->code : EMBER_ERR_UNKNOWN, error ? error->message : "listener failed");
        if (e) call_listener(c, Py_None, e); else report_callback_error(c->callback);
        Py_XDECREF(e);
    }
    cb_leave(g);
}

/* The C ABI's two listener callback types (ember_document_listener_cb, ember_query_listener_cb). */
static void doc_listener_cb(void *ctx, const ember_document *doc, const ember_error *error) {
    listener_event(ctx, doc, 0, error);
}

static void query_listener_cb(void *ctx, const ember_snapshot *snap, const ember_error *error) {
    listener_event(ctx, snap, 1, error);
}

static PyObject *listener_new(ember_listener_token t) {
    ListenerObject *o = PyObject_New(ListenerObject, &ListenerType);
    if (!o) {
        Py_BEGIN_ALLOW_THREADS
        ember_listener_remove(t);
        Py_END_ALLOW_THREADS
        return NULL;
    }
    o->token = t;
    return (PyObject *)o;
}

static PyObject *Listener_remove(ListenerObject *self, PyObject *unused) {
    ember_listener_token t = self->token;
    self->token = 0;
    if (t) {
        Py_BEGIN_ALLOW_THREADS
        ember_listener_remove(t);
        Py_END_ALLOW_THREADS
    }
    Py_RETURN_NONE;
}

static PyObject *Listener_active(ListenerObject *self, void *u) { return PyBool_FromLong(self->token != 0); }

static void Listener_dealloc(ListenerObject *self) { PyObject_Free(self); }

static PyMethodDef Listener_methods[] = {{"remove", (PyCFunction)Listener_remove, METH_NOARGS, "stop listening (idempotent)"}, {NULL}};
static PyGetSetDef Listener_getset[] = {{"active", (getter)Listener_active, NULL, NULL, NULL}, {NULL}};

static PyTypeObject ListenerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ember.Listener",
    .tp_basicsize = sizeof(ListenerObject),
    .tp_dealloc = (destructor)Listener_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = Listener_methods,
    .tp_getset = Listener_getset,
};

static lctx *lctx_new(DbObject *db, PyObject *cb) {
    if (!PyCallable_Check(cb)) { PyErr_SetString(PyExc_TypeError, "callback must be callable"); return NULL; }
    lctx *c = PyMem_Malloc(sizeof *c);
    if (!c) { PyErr_NoMemory(); return NULL; }
    c->callback = Py_NewRef(cb);
    c->db = (DbObject *)Py_NewRef((PyObject *)db);
    c->bound = NULL;
    return c;
}

static void lctx_drop(lctx *c) { Py_DECREF(c->callback); Py_DECREF(c->db); PyMem_Free(c); }

/* listen_document(path, flags, callback(Document|None, error|None)) -> Listener */
static PyObject *Db_listen_document(DbObject *self, PyObject *args) {
    PyObject *path_o, *cb;
    unsigned int flags;
    if (!PyArg_ParseTuple(args, "OIO", &path_o, &flags, &cb)) return NULL;
    if (db_check(self) < 0) return NULL;
    const char *path = str_arg(path_o, "path");
    if (!path) return NULL;
    lctx *c = lctx_new(self, cb);
    if (!c) return NULL;
    ember_error err;
    ember_listener_token t;
    Py_BEGIN_ALLOW_THREADS
    t = ember_doc_listen(self->db, path, flags, doc_listener_cb, c, lctx_free, &err);
    Py_END_ALLOW_THREADS
    if (!t) { lctx_drop(c); return raise_err(&err); }
    return listener_new(t);
}

/* ------------------------------------------------------------------ Filter */

typedef struct {
    PyObject_HEAD
    ember_filter *f;
} FilterObject;

static PyTypeObject FilterType;

static void Filter_dealloc(FilterObject *self) { ember_filter_release(self->f); PyObject_Free(self); }

static PyTypeObject FilterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ember.Filter",
    .tp_basicsize = sizeof(FilterObject),
    .tp_dealloc = (destructor)Filter_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
};

static PyObject *filter_wrap(ember_filter *f) {
    FilterObject *o = PyObject_New(FilterObject, &FilterType);
    if (!o) { ember_filter_release(f); return NULL; }
    o->f = f;
    return (PyObject *)o;
}

static int enc_plain(enc_t *e, PyObject *v, const char *what) {
    enc_init(e, ENC_VALUE, what);
    if (enc_value(e, v) < 0) { enc_free(e); return -1; }
    return 0;
}

/* filter_field(field_path, op, value) */
static PyObject *mod_filter_field(PyObject *m, PyObject *args) {
    const char *field;
    int op;
    PyObject *value;
    if (!PyArg_ParseTuple(args, "siO", &field, &op, &value)) return NULL;
    enc_t e;
    if (enc_plain(&e, value, "value") < 0) return NULL;
    ember_error err;
    ember_filter *f = ember_filter_field(field, op, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, &err);
    enc_free(&e);
    if (!f) return raise_err(&err);
    return filter_wrap(f);
}

static PyObject *filter_composite(PyObject *args, int is_or) {
    PyObject *seq;
    if (!PyArg_ParseTuple(args, "O", &seq)) return NULL;
    PyObject *fast = PySequence_Fast(seq, "filters must be a list");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    const ember_filter **arr = PyMem_Malloc(sizeof(void *) * (size_t)(n ? n : 1));
    if (!arr) { Py_DECREF(fast); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyObject_TypeCheck(it, &FilterType)) {
            PyMem_Free(arr);
            Py_DECREF(fast);
            PyErr_SetString(PyExc_TypeError, "filters must hold Filter objects");
            return NULL;
        }
        arr[i] = ((FilterObject *)it)->f;
    }
    ember_error err;
    ember_filter *f = is_or ? ember_filter_or(arr, (size_t)n, &err) : ember_filter_and(arr, (size_t)n, &err);
    PyMem_Free(arr);
    Py_DECREF(fast);
    if (!f) return raise_err(&err);
    return filter_wrap(f);
}
static PyObject *mod_filter_and(PyObject *m, PyObject *args) { return filter_composite(args, 0); }
static PyObject *mod_filter_or(PyObject *m, PyObject *args) { return filter_composite(args, 1); }

/* ------------------------------------------------------------------ Query */

typedef struct {
    PyObject_HEAD
    ember_query *q;
    DbObject *db;
} QueryObject;

static PyTypeObject QueryType;

static PyObject *query_wrap(DbObject *db, ember_query *q) {
    QueryObject *o = PyObject_New(QueryObject, &QueryType);
    if (!o) { ember_query_release(q); return NULL; }
    o->q = q;
    o->db = (DbObject *)Py_NewRef((PyObject *)db);
    return (PyObject *)o;
}

static void Query_dealloc(QueryObject *self) {
    ember_query_release(self->q);
    Py_XDECREF(self->db);
    PyObject_Free(self);
}

static PyObject *Db_query(DbObject *self, PyObject *args) {
    const char *path;
    int group = 0;
    if (!PyArg_ParseTuple(args, "s|p", &path, &group)) return NULL;
    if (db_check(self) < 0) return NULL;
    ember_error err;
    ember_query *q = group ? ember_query_new_collection_group(self->db, path, &err) : ember_query_new(self->db, path, &err);
    if (!q) return raise_err(&err);
    return query_wrap(self, q);
}

static PyObject *Query_copy(QueryObject *self, PyObject *u) { return query_wrap(self->db, ember_query_copy(self->q)); }

static PyObject *Query_where(QueryObject *self, PyObject *args) {
    const char *field;
    int op;
    PyObject *value;
    if (!PyArg_ParseTuple(args, "siO", &field, &op, &value)) return NULL;
    enc_t e;
    if (enc_plain(&e, value, "value") < 0) return NULL;
    ember_error err;
    bool ok = ember_query_where(self->q, field, op, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, &err);
    enc_free(&e);
    if (!ok) return raise_err(&err);
    Py_RETURN_NONE;
}

static PyObject *Query_where_filter(QueryObject *self, PyObject *f) {
    if (!PyObject_TypeCheck(f, &FilterType)) { PyErr_SetString(PyExc_TypeError, "expected a Filter"); return NULL; }
    ember_error err;
    if (!ember_query_where_filter(self->q, ((FilterObject *)f)->f, &err)) return raise_err(&err);
    Py_RETURN_NONE;
}

static PyObject *Query_order_by(QueryObject *self, PyObject *args) {
    const char *field;
    int desc = 0;
    if (!PyArg_ParseTuple(args, "s|p", &field, &desc)) return NULL;
    ember_error err;
    if (!ember_query_order_by(self->q, field, desc, &err)) return raise_err(&err);
    Py_RETURN_NONE;
}

static PyObject *Query_limit(QueryObject *self, PyObject *args) {
    long long n;
    int last = 0;
    if (!PyArg_ParseTuple(args, "L|p", &n, &last)) return NULL;
    ember_error err;
    if (!(last ? ember_query_limit_to_last(self->q, n, &err) : ember_query_limit(self->q, n, &err))) return raise_err(&err);
    Py_RETURN_NONE;
}

/* cursor(kind, values: list | Document) */
static PyObject *Query_cursor(QueryObject *self, PyObject *args) {
    int kind;
    PyObject *v;
    if (!PyArg_ParseTuple(args, "iO", &kind, &v)) return NULL;
    ember_error err;
    bool ok;
    if (PyObject_TypeCheck(v, &DocType)) {
        if (doc_check((DocObject *)v) < 0) return NULL;
        ok = ember_query_cursor_document(self->q, kind, ((DocObject *)v)->doc, &err);
    } else {
        enc_t e;
        if (enc_plain(&e, v, "cursor values") < 0) return NULL;
        ok = ember_query_cursor(self->q, kind, EMBER_FORMAT_MSGPACK, e.data.p, e.data.len, &err);
        enc_free(&e);
    }
    if (!ok) return raise_err(&err);
    Py_RETURN_NONE;
}

static PyObject *Query_get(QueryObject *self, PyObject *args) {
    int source = 0;
    if (!PyArg_ParseTuple(args, "|i", &source)) return NULL;
    ember_error err;
    ember_snapshot *s;
    Py_BEGIN_ALLOW_THREADS
    s = ember_query_get(self->q, source, &err);
    Py_END_ALLOW_THREADS
    if (!s) return raise_err(&err);
    return snap_wrap(self->db, s);
}

static PyObject *Query_count(QueryObject *self, PyObject *u) {
    ember_error err;
    int64_t n = 0;
    bool ok;
    Py_BEGIN_ALLOW_THREADS
    ok = ember_query_count(self->q, &n, &err);
    Py_END_ALLOW_THREADS
    if (!ok) return raise_err(&err);
    return PyLong_FromLongLong(n);
}

static PyObject *Query_listen(QueryObject *self, PyObject *args) {
    unsigned int flags;
    PyObject *cb;
    if (!PyArg_ParseTuple(args, "IO", &flags, &cb)) return NULL;
    lctx *c = lctx_new(self->db, cb);
    if (!c) return NULL;
    ember_error err;
    ember_listener_token t;
    Py_BEGIN_ALLOW_THREADS
    t = ember_query_listen(self->q, flags, query_listener_cb, c, lctx_free, &err);
    Py_END_ALLOW_THREADS
    if (!t) { lctx_drop(c); return raise_err(&err); }
    return listener_new(t);
}

static PyMethodDef Query_methods[] = {
    {"copy", (PyCFunction)Query_copy, METH_NOARGS, NULL},
    {"where", (PyCFunction)Query_where, METH_VARARGS, NULL},
    {"where_filter", (PyCFunction)Query_where_filter, METH_O, NULL},
    {"order_by", (PyCFunction)Query_order_by, METH_VARARGS, NULL},
    {"limit", (PyCFunction)Query_limit, METH_VARARGS, NULL},
    {"cursor", (PyCFunction)Query_cursor, METH_VARARGS, NULL},
    {"get", (PyCFunction)Query_get, METH_VARARGS, NULL},
    {"count", (PyCFunction)Query_count, METH_NOARGS, NULL},
    {"listen", (PyCFunction)Query_listen, METH_VARARGS, NULL},
    {NULL}};

static PyTypeObject QueryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ember.Query",
    .tp_basicsize = sizeof(QueryObject),
    .tp_dealloc = (destructor)Query_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = Query_methods,
};

/* ------------------------------------------------------------------ Batch */

typedef struct {
    PyObject_HEAD
    ember_batch *b;
} BatchObject;

static PyTypeObject BatchType;

static void Batch_dealloc(BatchObject *self) { ember_batch_release(self->b); PyObject_Free(self); }

static PyObject *Db_batch(DbObject *self, PyObject *u) {
    if (db_check(self) < 0) return NULL;
    ember_error err;
    ember_batch *b = ember_batch_new(self->db, &err);
    if (!b) return raise_err(&err);
    BatchObject *o = PyObject_New(BatchObject, &BatchType);
    if (!o) { ember_batch_release(b); return NULL; }
    o->b = b;
    return (PyObject *)o;
}

static PyObject *Batch_set(BatchObject *self, PyObject *a, PyObject *k) { return write_entry(T_BATCH, self->b, W_SET, a, k); }
static PyObject *Batch_update(BatchObject *self, PyObject *a, PyObject *k) { return write_entry(T_BATCH, self->b, W_UPDATE, a, k); }
static PyObject *Batch_delete(BatchObject *self, PyObject *a, PyObject *k) { return write_entry(T_BATCH, self->b, W_DELETE, a, k); }
static PyObject *Batch_create(BatchObject *self, PyObject *a, PyObject *k) { return write_entry(T_BATCH, self->b, W_CREATE, a, k); }
/* verify(path, update_time_micros): the batch commits only if the document is as read */
static PyObject *Batch_verify(BatchObject *self, PyObject *args) {
    PyObject *path_o;
    long long t;
    if (!PyArg_ParseTuple(args, "OL", &path_o, &t)) return NULL;
    const char *path = str_arg(path_o, "path");
    if (!path) return NULL;
    ember_error err;
    if (!ember_batch_verify(self->b, path, t, &err)) return raise_err(&err);
    Py_RETURN_NONE;
}

static PyObject *Batch_commit(BatchObject *self, PyObject *u) {
    wstate *w = wstate_new();
    if (!w) return NULL;
    ember_error err;
    bool ok;
    Py_BEGIN_ALLOW_THREADS
    ok = ember_batch_commit(self->b, write_done, w, &err);
    Py_END_ALLOW_THREADS
    if (!ok) { wstate_unref(w); wstate_unref(w); return raise_err(&err); }
    return pending_new(w);
}

static PyMethodDef Batch_methods[] = {
    {"set", (PyCFunction)Batch_set, METH_VARARGS | METH_KEYWORDS, NULL},
    {"update", (PyCFunction)Batch_update, METH_VARARGS | METH_KEYWORDS, NULL},
    {"delete", (PyCFunction)Batch_delete, METH_VARARGS | METH_KEYWORDS, NULL},
    {"create", (PyCFunction)Batch_create, METH_VARARGS | METH_KEYWORDS, NULL},
    {"verify", (PyCFunction)Batch_verify, METH_VARARGS, NULL},
    {"commit", (PyCFunction)Batch_commit, METH_NOARGS, NULL},
    {NULL}};

static PyTypeObject BatchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ember.Batch",
    .tp_basicsize = sizeof(BatchObject),
    .tp_dealloc = (destructor)Batch_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = Batch_methods,
};

/* ------------------------------------------------------------------ Transaction */

typedef struct {
    PyObject_HEAD
    ember_transaction *tx; /* valid only during one attempt */
    DbObject *db;
} TxObject;

static PyTypeObject TxType;

static void Tx_dealloc(TxObject *self) { Py_XDECREF(self->db); PyObject_Free(self); }

static int tx_check(TxObject *self) {
    if (!self->tx) { raise_code(EMBER_ERR_FAILED_PRECONDITION, "the transaction attempt is over"); return -1; }
    return 0;
}

static PyObject *Tx_get(TxObject *self, PyObject *path_o) {
    if (tx_check(self) < 0) return NULL;
    const char *path = str_arg(path_o, "path");
    if (!path) return NULL;
    ember_error err;
    ember_document *d;
    Py_BEGIN_ALLOW_THREADS
    d = ember_transaction_get(self->tx, path, &err);
    Py_END_ALLOW_THREADS
    if (!d) return raise_err(&err);
    return doc_wrap(self->db, d);
}
static PyObject *Tx_set(TxObject *self, PyObject *a, PyObject *k) { if (tx_check(self) < 0) return NULL; return write_entry(T_TX, self->tx, W_SET, a, k); }
static PyObject *Tx_update(TxObject *self, PyObject *a, PyObject *k) { if (tx_check(self) < 0) return NULL; return write_entry(T_TX, self->tx, W_UPDATE, a, k); }
static PyObject *Tx_delete(TxObject *self, PyObject *a, PyObject *k) { if (tx_check(self) < 0) return NULL; return write_entry(T_TX, self->tx, W_DELETE, a, k); }

static PyMethodDef Tx_methods[] = {
    {"get", (PyCFunction)Tx_get, METH_O, NULL},
    {"set", (PyCFunction)Tx_set, METH_VARARGS | METH_KEYWORDS, NULL},
    {"update", (PyCFunction)Tx_update, METH_VARARGS | METH_KEYWORDS, NULL},
    {"delete", (PyCFunction)Tx_delete, METH_VARARGS | METH_KEYWORDS, NULL},
    {NULL}};

static PyTypeObject TxType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ember.Transaction",
    .tp_basicsize = sizeof(TxObject),
    .tp_dealloc = (destructor)Tx_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_methods = Tx_methods,
};

typedef struct {
    PyObject *fn;
    DbObject *db;
    PyObject *result;
    PyObject *exc_type, *exc, *exc_tb; /* the Python exception that ended the last attempt */
} txctx;

/* Runs on the thread that called run_transaction (which released the GIL). */
static bool tx_body(ember_transaction *tx, void *ctx, ember_error *err) {
    txctx *c = ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    bool ok = false;
    Py_CLEAR(c->exc_type);
    Py_CLEAR(c->exc);
    Py_CLEAR(c->exc_tb);
    TxObject *t = PyObject_New(TxObject, &TxType);
    if (t) {
        t->tx = tx;
        t->db = (DbObject *)Py_NewRef((PyObject *)c->db);
        PyObject *r = PyObject_CallOneArg(c->fn, (PyObject *)t);
        t->tx = NULL;
        Py_DECREF(t);
        if (r) {
            Py_XSETREF(c->result, r);
            ok = true;
        }
    }
    if (!ok) {
        PyErr_Fetch(&c->exc_type, &c->exc, &c->exc_tb);
        PyErr_NormalizeException(&c->exc_type, &c->exc, &c->exc_tb);
        PyObject *code = c->exc && ERROR_BASE && PyObject_IsInstance(c->exc, ERROR_BASE) == 1 ? PyObject_GetAttrString(c->exc, "code") : NULL;
        PyErr_Clear();
        err->code = code && PyLong_Check(code) ? (int32_t)PyLong_AsLong(code) : EMBER_ERR_ABORTED;
        if (err->code == 0) err->code = EMBER_ERR_ABORTED;
        Py_XDECREF(code);
        snprintf(err->message, sizeof err->message, "the transaction function raised an exception");
    }
    PyGILState_Release(g);
    return ok;
}

/* run_transaction(fn(tx), max_attempts=0) -> fn's result of the committed attempt */
static PyObject *Db_run_transaction(DbObject *self, PyObject *args) {
    PyObject *fn;
    int attempts = 0;
    if (!PyArg_ParseTuple(args, "O|i", &fn, &attempts)) return NULL;
    if (db_check(self) < 0) return NULL;
    txctx c = {fn, self, NULL, NULL, NULL, NULL};
    ember_error err;
    bool ok;
    Py_BEGIN_ALLOW_THREADS
    ok = ember_db_run_transaction(self->db, attempts, tx_body, &c, &err);
    Py_END_ALLOW_THREADS
    if (!ok) {
        Py_XDECREF(c.result);
        if (c.exc_type) { PyErr_Restore(c.exc_type, c.exc, c.exc_tb); return NULL; }
        return raise_err(&err);
    }
    Py_XDECREF(c.exc_type);
    Py_XDECREF(c.exc);
    Py_XDECREF(c.exc_tb);
    if (!c.result) Py_RETURN_NONE;
    return c.result;
}

/* ------------------------------------------------------------------ Database type */

static PyMethodDef Db_methods[] = {
    {"close", (PyCFunction)Db_close, METH_NOARGS, NULL},
    {"set_network", (PyCFunction)Db_network, METH_O, NULL},
    {"set", (PyCFunction)Db_set, METH_VARARGS | METH_KEYWORDS, NULL},
    {"update", (PyCFunction)Db_update, METH_VARARGS | METH_KEYWORDS, NULL},
    {"delete", (PyCFunction)Db_delete, METH_VARARGS | METH_KEYWORDS, NULL},
    {"create", (PyCFunction)Db_create, METH_VARARGS | METH_KEYWORDS, NULL},
    {"list_collection_ids", (PyCFunction)Db_list_collection_ids, METH_O, NULL},
    {"get", (PyCFunction)Db_get, METH_VARARGS, NULL},
    {"wait_for_pending_writes", (PyCFunction)Db_wait_for_pending_writes, METH_NOARGS, NULL},
    {"listen_document", (PyCFunction)Db_listen_document, METH_VARARGS, NULL},
    {"query", (PyCFunction)Db_query, METH_VARARGS, NULL},
    {"batch", (PyCFunction)Db_batch, METH_NOARGS, NULL},
    {"run_transaction", (PyCFunction)Db_run_transaction, METH_VARARGS, NULL},
    {NULL}};

static PyObject *Db_get_closed(DbObject *self, void *u) {
    return PyBool_FromLong(!self->db || self->closed);
}

static PyObject *Db_get_factory(DbObject *self, void *u) { return Py_NewRef(self->ref_factory ? self->ref_factory : Py_None); }
static int Db_set_factory(DbObject *self, PyObject *v, void *u) { Py_XSETREF(self->ref_factory, v == Py_None ? NULL : Py_XNewRef(v)); return 0; }

static PyGetSetDef Db_getset[] = {
    {"closed", (getter)Db_get_closed, NULL, NULL, NULL},
    {"ref_factory", (getter)Db_get_factory, (setter)Db_set_factory, NULL, NULL},
    {NULL}};

static PyTypeObject DbType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ember._ember.Database",
    .tp_basicsize = sizeof(DbObject),
    .tp_dealloc = (destructor)Db_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)Db_traverse,
    .tp_clear = (inquiry)Db_clear,
    .tp_weaklistoffset = offsetof(DbObject, weakrefs),
    .tp_methods = Db_methods,
    .tp_getset = Db_getset,
    .tp_init = (initproc)Db_init,
    .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------ module functions */

static PyObject *mod_configure(PyObject *m, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"errors", "error_base", "document_type", "snapshot_type", "geopoint", "docref",
                             "server_timestamp", "delete_field", "increment", "array_union", "array_remove", NULL};
    PyObject *errors, *base, *dt, *st, *gp, *dr, *sts, *df, *inc, *au, *ar;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOOOOOOO", kwlist, &errors, &base, &dt, &st, &gp, &dr, &sts, &df, &inc, &au, &ar))
        return NULL;
    if (!PyDict_Check(errors)) { PyErr_SetString(PyExc_TypeError, "errors must be a dict"); return NULL; }
    if (!PyType_Check(dt) || !PyType_IsSubtype((PyTypeObject *)dt, &DocType)) { PyErr_SetString(PyExc_TypeError, "document_type must subclass Document"); return NULL; }
    if (!PyType_Check(st) || !PyType_IsSubtype((PyTypeObject *)st, &SnapType)) { PyErr_SetString(PyExc_TypeError, "snapshot_type must subclass Snapshot"); return NULL; }
    Py_XSETREF(ERROR_CLASSES, Py_NewRef(errors));
    Py_XSETREF(ERROR_BASE, Py_NewRef(base));
    Py_XSETREF(DOCUMENT_TYPE, (PyTypeObject *)Py_NewRef(dt));
    Py_XSETREF(SNAPSHOT_TYPE, (PyTypeObject *)Py_NewRef(st));
    Py_XSETREF(CFG.geopoint_type, Py_NewRef(gp));
    Py_XSETREF(CFG.docref_type, Py_NewRef(dr));
    Py_XSETREF(CFG.server_timestamp, Py_NewRef(sts));
    Py_XSETREF(CFG.delete_field, Py_NewRef(df));
    Py_XSETREF(CFG.increment_type, Py_NewRef(inc));
    Py_XSETREF(CFG.array_union_type, Py_NewRef(au));
    Py_XSETREF(CFG.array_remove_type, Py_NewRef(ar));
    Py_RETURN_NONE;
}

static PyObject *mod_auto_id(PyObject *m, PyObject *u) {
    char out[21];
    ember_auto_id(out);
    return PyUnicode_FromStringAndSize(out, 20);
}

static PyObject *mod_path_kind(PyObject *m, PyObject *arg) {
    const char *p = str_arg(arg, "path");
    if (!p) return NULL;
    ember_error err;
    int32_t k = ember_path_kind(p, &err);
    if (k == EMBER_PATH_INVALID) return raise_err(&err);
    return PyLong_FromLong(k);
}

/* encode(value) -> bytes (MessagePack, plain value) */
static PyObject *mod_encode(PyObject *m, PyObject *v) {
    enc_t e;
    if (enc_plain(&e, v, "value") < 0) return NULL;
    PyObject *r = PyBytes_FromStringAndSize(e.data.p, (Py_ssize_t)e.data.len);
    enc_free(&e);
    return r;
}

/* encode_document(data, update=False) -> (data bytes, transforms bytes) */
static PyObject *mod_encode_document(PyObject *m, PyObject *args) {
    PyObject *d;
    int upd = 0;
    if (!PyArg_ParseTuple(args, "O|p", &d, &upd)) return NULL;
    enc_t e;
    buf_t tr;
    buf_init(&tr);
    enc_init(&e, upd ? ENC_UPDATE : ENC_SET, "document_data");
    PyObject *r = NULL;
    if (enc_document(&e, d, &tr) == 0) r = Py_BuildValue("(y#y#)", e.data.p, (Py_ssize_t)e.data.len, tr.p, (Py_ssize_t)tr.len);
    enc_free(&e);
    buf_free(&tr);
    return r;
}

/* decode(bytes, ref_factory=None) -> value */
static PyObject *mod_decode(PyObject *m, PyObject *args) {
    Py_buffer b;
    PyObject *f = NULL;
    if (!PyArg_ParseTuple(args, "y*|O", &b, &f)) return NULL;
    PyObject *r = decode_buffer(b.buf, (size_t)b.len, f == Py_None ? NULL : f);
    PyBuffer_Release(&b);
    return r;
}

/* convert(data, from_format, to_format) -> bytes: ember_value_convert (tests, JSON helpers) */
static PyObject *mod_convert(PyObject *m, PyObject *args) {
    Py_buffer b;
    int from, to;
    if (!PyArg_ParseTuple(args, "y*ii", &b, &from, &to)) return NULL;
    ember_error err;
    size_t n;
    char *out = ember_value_convert(b.buf, (size_t)b.len, from, to, &n, &err);
    PyBuffer_Release(&b);
    if (!out) return raise_err(&err);
    PyObject *r = PyBytes_FromStringAndSize(out, (Py_ssize_t)n);
    ember_free(out);
    return r;
}

static PyObject *mod_error_code_name(PyObject *m, PyObject *arg) {
    long c = PyLong_AsLong(arg);
    if (c == -1 && PyErr_Occurred()) return NULL;
    return PyUnicode_FromString(ember_error_code_name((int32_t)c));
}

static PyObject *mod_instance_count(PyObject *m, PyObject *u) { return PyLong_FromLongLong(ember_instance_count()); }

static PyObject *mod_is_finalizing(PyObject *m, PyObject *u) { return PyBool_FromLong(EMBER_IS_FINALIZING()); }

#include "_tree.h" /* the tree types and the durable-storage functions */

static PyObject *mod_on_event_thread(PyObject *m, PyObject *u) { return PyBool_FromLong(on_event_thread); }

static PyMethodDef mod_methods[] = {
    {"on_event_thread", mod_on_event_thread, METH_NOARGS, "True on an Ember event thread (inside a callback)"},
    TREE_MODULE_METHODS
    {"configure", (PyCFunction)(void (*)(void))mod_configure, METH_VARARGS | METH_KEYWORDS, NULL},
    {"auto_id", mod_auto_id, METH_NOARGS, "a new random 20-character document id"},
    {"path_kind", mod_path_kind, METH_O, "1 collection, 2 document; raises InvalidArgumentError"},
    {"encode", mod_encode, METH_O, NULL},
    {"encode_document", mod_encode_document, METH_VARARGS, NULL},
    {"decode", mod_decode, METH_VARARGS, NULL},
    {"convert", mod_convert, METH_VARARGS, NULL},
    {"error_code_name", mod_error_code_name, METH_O, NULL},
    {"instance_count", mod_instance_count, METH_NOARGS, NULL},
    {"is_finalizing", mod_is_finalizing, METH_NOARGS, NULL},
    {"filter_field", mod_filter_field, METH_VARARGS, NULL},
    {"filter_and", mod_filter_and, METH_VARARGS, NULL},
    {"filter_or", mod_filter_or, METH_VARARGS, NULL},
    {NULL}};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "ember._ember", "Ember's C ABI for Python (low level).", -1, mod_methods};

PyMODINIT_FUNC PyInit__ember(void) {
    PyDateTime_IMPORT;
    if (!PyDateTimeAPI) return NULL;
    PyTypeObject *types[] = {&DbType, &PendingType, &DocType, &SnapType, &ListenerType, &FilterType, &QueryType, &BatchType, &TxType};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (PyType_Ready(types[i]) < 0) return NULL;
    PyObject *m = PyModule_Create(&moddef);
    if (!m) return NULL;
    CFG.utc = Py_NewRef(PyDateTime_TimeZone_UTC);
    CFG.str_path = PyUnicode_InternFromString("_path");
    CFG.str_value = PyUnicode_InternFromString("value");
    CFG.str_values = PyUnicode_InternFromString("values");
    CFG.str_latitude = PyUnicode_InternFromString("latitude");
    CFG.str_longitude = PyUnicode_InternFromString("longitude");
    const char *names[] = {"Database", "Pending", "Document", "Snapshot", "Listener", "Filter", "Query", "Batch", "Transaction"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (PyModule_AddObjectRef(m, names[i], (PyObject *)types[i]) < 0) return NULL;
    PyModule_AddIntConstant(m, "VERSION_NUMBER", ember_libversion_number());
    PyModule_AddStringConstant(m, "VERSION", ember_libversion());
    PyModule_AddIntConstant(m, "HEADER_VERSION_NUMBER", EMBER_VERSION_NUMBER);
    PyModule_AddIntConstant(m, "LISTEN_INCLUDE_METADATA_CHANGES", EMBER_LISTEN_INCLUDE_METADATA_CHANGES);
    PyModule_AddIntConstant(m, "LISTEN_SOURCE_CACHE", EMBER_LISTEN_SOURCE_CACHE);
    if (tree_module_init(m) < 0) return NULL;
    return m;
}
