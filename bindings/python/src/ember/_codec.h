/*
 * _codec.h: Python values <-> Ember's MessagePack value format (see include/ember.h).
 *
 * Responsible for: encoding Python dicts/lists/scalars into MessagePack exactly as libember
 * expects (int64, double, str, bytes, timestamp ext -1, reference ext 1, geopoint ext 2), pulling
 * field transforms (SERVER_TIMESTAMP, DELETE_FIELD, Increment, ArrayUnion, ArrayRemove) out of a
 * document into the separate TRANSFORMS map, and decoding MessagePack back into Python objects.
 * Included once, by _ember.c.
 */
#ifndef EMBER_PY_CODEC_H
#define EMBER_PY_CODEC_H

#include <Python.h>
#include <datetime.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ configured Python types */

typedef struct {
    PyObject *geopoint_type;      /* ember.GeoPoint */
    PyObject *docref_type;        /* ember.DocumentReference (encoded through ._path) */
    PyObject *server_timestamp;   /* ember.SERVER_TIMESTAMP */
    PyObject *delete_field;       /* ember.DELETE_FIELD */
    PyObject *increment_type;     /* ember.Increment (.value) */
    PyObject *array_union_type;   /* ember.ArrayUnion (.values) */
    PyObject *array_remove_type;  /* ember.ArrayRemove (.values) */
    PyObject *utc;                /* datetime.timezone.utc */
    PyObject *str_path, *str_value, *str_values, *str_latitude, *str_longitude;
} codec_config;

static codec_config CFG;

/* ------------------------------------------------------------------ growable buffer */

typedef struct {
    char *p;
    size_t len, cap;
    char local[256];
} buf_t;

static void buf_init(buf_t *b) { b->p = b->local; b->len = 0; b->cap = sizeof b->local; }
static void buf_free(buf_t *b) { if (b->p != b->local) PyMem_Free(b->p); b->p = b->local; b->len = 0; b->cap = sizeof b->local; }

static int buf_grow(buf_t *b, size_t need) {
    size_t cap = b->cap * 2;
    while (cap < b->len + need) cap *= 2;
    char *n;
    if (b->p == b->local) {
        n = PyMem_Malloc(cap);
        if (n) memcpy(n, b->p, b->len);
    } else {
        n = PyMem_Realloc(b->p, cap);
    }
    if (!n) { PyErr_NoMemory(); return -1; }
    b->p = n;
    b->cap = cap;
    return 0;
}

static inline int buf_put(buf_t *b, const void *d, size_t n) {
    if (b->len + n > b->cap && buf_grow(b, n) < 0) return -1;
    memcpy(b->p + b->len, d, n);
    b->len += n;
    return 0;
}

static inline int buf_byte(buf_t *b, uint8_t c) {
    if (b->len + 1 > b->cap && buf_grow(b, 1) < 0) return -1;
    b->p[b->len++] = (char)c;
    return 0;
}

static inline void be_store(uint8_t *o, uint64_t v, int n) {
    for (int i = n - 1; i >= 0; i--) { o[i] = (uint8_t)(v & 0xFF); v >>= 8; }
}

static inline int buf_tag_be(buf_t *b, uint8_t tag, uint64_t v, int n) {
    uint8_t tmp[9];
    tmp[0] = tag;
    be_store(tmp + 1, v, n);
    return buf_put(b, tmp, (size_t)n + 1);
}

/* ------------------------------------------------------------------ MessagePack writers */

static int mp_header(buf_t *b, size_t n, int fix, size_t fixmax, int d8, uint8_t d16, uint8_t d32) {
    if (fix >= 0 && n <= fixmax) return buf_byte(b, (uint8_t)(fix | (int)n));
    if (d8 >= 0 && n <= 0xFF) return buf_tag_be(b, (uint8_t)d8, n, 1);
    if (n <= 0xFFFF) return buf_tag_be(b, d16, n, 2);
    if (n > 0xFFFFFFFFu) { PyErr_SetString(PyExc_OverflowError, "value too large"); return -1; }
    return buf_tag_be(b, d32, n, 4);
}

static int mp_int(buf_t *b, int64_t v) {
    if (v >= 0) {
        if (v < 128) return buf_byte(b, (uint8_t)v);
        if (v <= 0xFF) return buf_tag_be(b, 0xCC, (uint64_t)v, 1);
        if (v <= 0xFFFF) return buf_tag_be(b, 0xCD, (uint64_t)v, 2);
        if (v <= 0xFFFFFFFFLL) return buf_tag_be(b, 0xCE, (uint64_t)v, 4);
        return buf_tag_be(b, 0xD3, (uint64_t)v, 8);
    }
    if (v >= -32) return buf_byte(b, (uint8_t)(int8_t)v);
    if (v >= INT8_MIN) return buf_tag_be(b, 0xD0, (uint64_t)v, 1);
    if (v >= INT16_MIN) return buf_tag_be(b, 0xD1, (uint64_t)v, 2);
    if (v >= INT32_MIN) return buf_tag_be(b, 0xD2, (uint64_t)v, 4);
    return buf_tag_be(b, 0xD3, (uint64_t)v, 8);
}

static int mp_double(buf_t *b, double d) {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    return buf_tag_be(b, 0xCB, bits, 8);
}

static int mp_str(buf_t *b, const char *s, Py_ssize_t n) {
    if (mp_header(b, (size_t)n, 0xA0, 31, 0xD9, 0xDA, 0xDB) < 0) return -1;
    return buf_put(b, s, (size_t)n);
}

static int mp_pystr(buf_t *b, PyObject *s) {
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (!u) return -1;
    return mp_str(b, u, n);
}

static int mp_ext(buf_t *b, int8_t type, const void *payload, size_t n) {
    int rc;
    switch (n) {
    case 1: rc = buf_byte(b, 0xD4); break;
    case 2: rc = buf_byte(b, 0xD5); break;
    case 4: rc = buf_byte(b, 0xD6); break;
    case 8: rc = buf_byte(b, 0xD7); break;
    case 16: rc = buf_byte(b, 0xD8); break;
    default: rc = mp_header(b, n, -1, 0, 0xC7, 0xC8, 0xC9);
    }
    if (rc < 0 || buf_byte(b, (uint8_t)type) < 0) return -1;
    return buf_put(b, payload, n);
}

/* ------------------------------------------------------------------ civil dates */

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int *y, int *m, int *d) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t yy = (int64_t)yoe + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned dd = doy - (153 * mp + 2) / 5 + 1;
    const unsigned mm = mp + (mp < 10 ? 3 : -9);
    *y = (int)(yy + (mm <= 2));
    *m = (int)mm;
    *d = (int)dd;
}

/* Python datetime (naive = UTC) -> seconds and microseconds since the epoch. */
static int datetime_to_epoch(PyObject *dt, int64_t *secs, int32_t *micros) {
    int64_t days = days_from_civil(PyDateTime_GET_YEAR(dt), PyDateTime_GET_MONTH(dt), PyDateTime_GET_DAY(dt));
    int64_t s = days * 86400 + PyDateTime_DATE_GET_HOUR(dt) * 3600 + PyDateTime_DATE_GET_MINUTE(dt) * 60 +
                PyDateTime_DATE_GET_SECOND(dt);
    int32_t us = PyDateTime_DATE_GET_MICROSECOND(dt);
    if (((PyDateTime_DateTime *)dt)->hastzinfo) {
        PyObject *off = PyObject_CallMethod(dt, "utcoffset", NULL);
        if (!off) return -1;
        if (off != Py_None) {
            if (!PyDelta_Check(off)) { Py_DECREF(off); PyErr_SetString(PyExc_TypeError, "utcoffset() must return a timedelta"); return -1; }
            int64_t osecs = (int64_t)PyDateTime_DELTA_GET_DAYS(off) * 86400 + PyDateTime_DELTA_GET_SECONDS(off);
            int32_t ous = PyDateTime_DELTA_GET_MICROSECONDS(off);
            s -= osecs;
            us -= ous;
            if (us < 0) { us += 1000000; s -= 1; }
        }
        Py_DECREF(off);
    }
    *secs = s;
    *micros = us;
    return 0;
}

static PyObject *epoch_to_datetime(int64_t secs, int64_t nanos) {
    int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int64_t rem = secs - days * 86400;
    int y, m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < 1 || y > 9999) {
        PyErr_Format(PyExc_OverflowError, "timestamp %lld is outside datetime's range", (long long)secs);
        return NULL;
    }
    return PyDateTimeAPI->DateTime_FromDateAndTime(y, m, d, (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60),
                                                   (int)(nanos / 1000), CFG.utc, PyDateTimeAPI->DateTimeType);
}

/* ------------------------------------------------------------------ encoder */

enum { ENC_VALUE = 0, ENC_SET = 1, ENC_UPDATE = 2 };
#define ENC_MAX_DEPTH 64
/* Maps and arrays inside one another (Firestore allows 20 below the document, which libember
 * checks with its own message): beyond this the encoder stops, so a self-referencing or very
 * deep list or dict raises instead of exhausting the C stack. */
#define ENC_MAX_NEST 64

typedef struct {
    buf_t data;
    buf_t tr;          /* transform entries (no header yet) */
    buf_t *cur;        /* where values go: &data, or &tr for a transform's operand */
    uint32_t tr_count;
    int mode;
    int depth;
    int nest;          /* maps and arrays being encoded, inside one another */
    int in_array;
    PyObject *keys[ENC_MAX_DEPTH + 1];
    const char *what;  /* the argument name for messages, e.g. "document_data" */
} enc_t;

static void enc_init(enc_t *e, int mode, const char *what) {
    buf_init(&e->data);
    buf_init(&e->tr);
    e->cur = &e->data;
    e->tr_count = 0;
    e->mode = mode;
    e->depth = 0;
    e->nest = 0;
    e->in_array = 0;
    e->what = what;
}

static void enc_free(enc_t *e) { buf_free(&e->data); buf_free(&e->tr); }

static int simple_segment(const char *s, Py_ssize_t n) {
    if (n == 0) return 0;
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) return 0;
    for (Py_ssize_t i = 1; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return 0;
    }
    return 1;
}

/* The field path of the current key stack (quoted where needed; update's first key is a path). */
static int enc_field_path(enc_t *e, buf_t *out) {
    for (int i = 0; i < e->depth; i++) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(e->keys[i], &n);
        if (!s) { PyErr_Clear(); return -1; }   /* a key UTF-8 cannot encode: the message goes without the path */
        if (i > 0 && buf_byte(out, '.') < 0) return -1;
        if ((i == 0 && e->mode == ENC_UPDATE) || simple_segment(s, n)) {
            if (buf_put(out, s, (size_t)n) < 0) return -1;
        } else {
            if (buf_byte(out, '`') < 0) return -1;
            for (Py_ssize_t k = 0; k < n; k++) {
                if ((s[k] == '`' || s[k] == '\\') && buf_byte(out, '\\') < 0) return -1;
                if (buf_byte(out, (uint8_t)s[k]) < 0) return -1;
            }
            if (buf_byte(out, '`') < 0) return -1;
        }
    }
    return 0;
}

/* Raises InvalidArgument-like errors through the hook set by _ember.c. */
static PyObject *raise_invalid(const char *msg);

static int enc_fail(enc_t *e, const char *fmt, PyObject *obj) {
    buf_t p;
    buf_init(&p);
    PyObject *m;
    if (e->depth > 0 && enc_field_path(e, &p) == 0 && buf_byte(&p, 0) == 0) {
        PyObject *detail = obj ? PyUnicode_FromFormat(fmt, Py_TYPE(obj)->tp_name) : PyUnicode_FromString(fmt);
        m = detail ? PyUnicode_FromFormat("%s: field '%s': %U", e->what, p.p, detail) : NULL;
        Py_XDECREF(detail);
    } else {
        PyObject *detail = obj ? PyUnicode_FromFormat(fmt, Py_TYPE(obj)->tp_name) : PyUnicode_FromString(fmt);
        m = detail ? PyUnicode_FromFormat("%s: %U", e->what, detail) : NULL;
        Py_XDECREF(detail);
    }
    buf_free(&p);
    if (m) {
        const char *u = PyUnicode_AsUTF8(m);
        if (u) raise_invalid(u);
        Py_DECREF(m);
    }
    return -1;
}

/* A str into the current buffer; a str UTF-8 cannot encode (a lone surrogate) fails as bad input. */
static int enc_str(enc_t *e, PyObject *s) {
    if (mp_pystr(e->cur, s) == 0) return 0;
    if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return -1;
    PyErr_Clear();
    return enc_fail(e, "text holds a lone surrogate, which UTF-8 cannot encode", NULL);
}

static int enc_value(enc_t *e, PyObject *v);

static int enc_plain_array(enc_t *e, PyObject *seq) {
    /* values of ArrayUnion/ArrayRemove/Increment go to the transforms buffer */
    buf_t *saved = e->cur;
    e->cur = &e->tr;
    int saved_mode = e->mode;
    e->mode = ENC_VALUE;
    int rc = enc_value(e, seq);
    e->mode = saved_mode;
    e->cur = saved;
    return rc;
}

static int is_sentinel(PyObject *v) {
    if (v == CFG.server_timestamp || v == CFG.delete_field) return 1;
    PyObject *t = (PyObject *)Py_TYPE(v);
    return t == CFG.increment_type || t == CFG.array_union_type || t == CFG.array_remove_type ||
           (CFG.increment_type && PyObject_TypeCheck(v, (PyTypeObject *)CFG.increment_type)) ||
           (CFG.array_union_type && PyObject_TypeCheck(v, (PyTypeObject *)CFG.array_union_type)) ||
           (CFG.array_remove_type && PyObject_TypeCheck(v, (PyTypeObject *)CFG.array_remove_type));
}

static int enc_transform(enc_t *e, PyObject *v) {
    if (e->mode == ENC_VALUE) return enc_fail(e, "field transforms (SERVER_TIMESTAMP, DELETE_FIELD, Increment, ArrayUnion, ArrayRemove) are only allowed in set(), update() and their batch/transaction forms", NULL);
    if (e->in_array) return enc_fail(e, "field transforms cannot be used inside an array", NULL);
    /* key: the field path */
    buf_t path;
    buf_init(&path);
    if (enc_field_path(e, &path) < 0) { buf_free(&path); return -1; }
    int rc = mp_str(&e->tr, path.p, (Py_ssize_t)path.len);
    buf_free(&path);
    if (rc < 0) return -1;
    e->tr_count++;
    if (v == CFG.server_timestamp) return mp_str(&e->tr, "serverTimestamp", 15);
    if (v == CFG.delete_field) return mp_str(&e->tr, "delete", 6);
    if (PyObject_TypeCheck(v, (PyTypeObject *)CFG.increment_type)) {
        PyObject *n = PyObject_GetAttr(v, CFG.str_value);
        if (!n) return -1;
        if (PyBool_Check(n) || !(PyLong_Check(n) || PyFloat_Check(n))) {
            rc = enc_fail(e, "Increment() takes an int or a float, not %s", n);
            Py_DECREF(n);
            return rc;
        }
        if (buf_byte(&e->tr, 0x81) < 0 || mp_str(&e->tr, "increment", 9) < 0) { Py_DECREF(n); return -1; }
        rc = enc_plain_array(e, n);
        Py_DECREF(n);
        return rc;
    }
    const char *name = PyObject_TypeCheck(v, (PyTypeObject *)CFG.array_union_type) ? "arrayUnion" : "arrayRemove";
    PyObject *vals = PyObject_GetAttr(v, CFG.str_values);
    if (!vals) return -1;
    if (!PyList_Check(vals) && !PyTuple_Check(vals)) {
        rc = enc_fail(e, "ArrayUnion()/ArrayRemove() take a list, not %s", vals);
        Py_DECREF(vals);
        return rc;
    }
    if (buf_byte(&e->tr, 0x81) < 0 || mp_str(&e->tr, name, (Py_ssize_t)strlen(name)) < 0) { Py_DECREF(vals); return -1; }
    rc = enc_plain_array(e, vals);
    Py_DECREF(vals);
    return rc;
}

static Py_ssize_t enc_map(enc_t *e, PyObject *dict);

/* One entry of a map: 1 when written, 0 when it left nothing in the map (a sentinel, or a map of
 * sentinels), -1 on error. `k` and `v` are held by the caller for the call. */
static int enc_entry(enc_t *e, PyObject *k, PyObject *v) {
    if (!PyUnicode_Check(k)) {
        e->keys[e->depth] = NULL;
        return (int)enc_fail(e, "map keys must be str, not %s", k);
    }
    e->keys[e->depth++] = k;
    int rc = 1;
    if (e->mode != ENC_VALUE && !PyUnicode_CheckExact(v) && !PyLong_CheckExact(v) && !PyFloat_CheckExact(v) &&
        !PyDict_Check(v) && is_sentinel(v)) {
        rc = enc_transform(e, v) < 0 ? -1 : 0;
    } else {
        size_t mark = e->cur->len;
        uint32_t tr_before = e->tr_count;
        if (enc_str(e, k) < 0) rc = -1;
        else if (PyDict_Check(v)) {
            Py_ssize_t r = enc_map(e, v);
            if (r < 0) rc = -1;
            /* A map that held only sentinels: dropped for set/merge (the transforms fill it); an
             * update keeps it empty, because the update replaces the whole map at its key. */
            else if (r == 0 && e->tr_count > tr_before && e->mode != ENC_UPDATE) { e->cur->len = mark; rc = 0; }
        } else if (enc_value(e, v) < 0) rc = -1;
    }
    e->depth--;
    return rc;
}

/* Encodes a dict; returns the number of entries written, or -1. Sentinels go to transforms. Each
 * key and value is held while it is encoded, and the dict must keep its size: encoding can run
 * Python code (a tzinfo's utcoffset(), a __getattr__) that changes the dict. */
static Py_ssize_t enc_map(enc_t *e, PyObject *dict) {
    if (e->depth >= ENC_MAX_DEPTH) return enc_fail(e, "value nested too deeply", NULL);
    size_t hdr = e->cur->len;
    static const char pad[5] = {0};
    if (buf_put(e->cur, pad, 5) < 0) return -1;
    Py_ssize_t pos = 0, n = 0, size = PyDict_GET_SIZE(dict);
    PyObject *k, *v;
    while (PyDict_Next(dict, &pos, &k, &v)) {
        Py_INCREF(k);
        Py_INCREF(v);
        int r = enc_entry(e, k, v);
        Py_DECREF(k);
        Py_DECREF(v);
        if (r < 0) return -1;
        n += r;
        if (PyDict_GET_SIZE(dict) != size) return enc_fail(e, "a dict changed size while it was being encoded", NULL);
    }
    /* the real header, then close the gap */
    uint8_t h[5];
    size_t hs;
    if (n <= 15) { h[0] = (uint8_t)(0x80 | n); hs = 1; }
    else if (n <= 0xFFFF) { h[0] = 0xDE; be_store(h + 1, (uint64_t)n, 2); hs = 3; }
    else { h[0] = 0xDF; be_store(h + 1, (uint64_t)n, 4); hs = 5; }
    memcpy(e->cur->p + hdr, h, hs);
    if (hs < 5) {
        memmove(e->cur->p + hdr + hs, e->cur->p + hdr + 5, e->cur->len - hdr - 5);
        e->cur->len -= 5 - hs;
    }
    return n;
}

/* Encodes a list or tuple (from PySequence_Fast): each item held while it is encoded, and a list
 * must keep its length (its header is written first; encoding can run Python code). */
static int enc_seq(enc_t *e, PyObject *seq) {
    if (e->depth >= ENC_MAX_DEPTH) return enc_fail(e, "value nested too deeply", NULL);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (mp_header(e->cur, (size_t)n, 0x90, 15, -1, 0xDC, 0xDD) < 0) return -1;
    int saved = e->in_array;
    e->in_array = 1;
    int rc = 0;
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        if (PySequence_Fast_GET_SIZE(seq) != n) { rc = enc_fail(e, "a list changed size while it was being encoded", NULL); break; }
        PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
        Py_INCREF(it);
        rc = enc_value(e, it) < 0 ? -1 : 0;
        Py_DECREF(it);
    }
    e->in_array = saved;
    return rc;
}

static int enc_value(enc_t *e, PyObject *v) {
    if (PyUnicode_CheckExact(v)) return enc_str(e, v);
    if (v == Py_None) return buf_byte(e->cur, 0xC0);
    if (v == Py_True) return buf_byte(e->cur, 0xC3);
    if (v == Py_False) return buf_byte(e->cur, 0xC2);
    if (PyLong_Check(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow) return enc_fail(e, "integer out of the 64-bit range", NULL);
        if (x == -1 && PyErr_Occurred()) return -1;
        return mp_int(e->cur, x);
    }
    if (PyFloat_Check(v)) return mp_double(e->cur, PyFloat_AS_DOUBLE(v));
    if (PyUnicode_Check(v)) return enc_str(e, v);   /* a str subclass (an enum.StrEnum member) */
    if (PyDict_Check(v) || PyList_Check(v) || PyTuple_Check(v)) {
        if (e->nest >= ENC_MAX_NEST)
            return enc_fail(e, "value nested too deeply (more than 64 maps and arrays inside one another, or a list or dict that contains itself)", NULL);
        e->nest++;
        int rc;
        if (PyDict_Check(v)) {
            /* sentinels are not allowed in arrays: a map inside one is encoded in value mode */
            int saved = e->mode;
            if (e->in_array) e->mode = ENC_VALUE;
            rc = enc_map(e, v) < 0 ? -1 : 0;
            e->mode = saved;
        } else {
            PyObject *fast = PySequence_Fast(v, "");
            int saved = e->mode;
            rc = fast ? enc_seq(e, fast) : -1;
            e->mode = saved;
            Py_XDECREF(fast);
        }
        e->nest--;
        return rc;
    }
    if (PyBytes_Check(v)) {
        if (mp_header(e->cur, (size_t)PyBytes_GET_SIZE(v), -1, 0, 0xC4, 0xC5, 0xC6) < 0) return -1;
        return buf_put(e->cur, PyBytes_AS_STRING(v), (size_t)PyBytes_GET_SIZE(v));
    }
    if (PyByteArray_Check(v) || PyMemoryView_Check(v)) {
        Py_buffer view;
        if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) < 0) {
            if (!PyErr_ExceptionMatches(PyExc_BufferError)) return -1;
            PyErr_Clear();
            return enc_fail(e, "a memoryview must be C-contiguous to be stored as bytes", NULL);
        }
        int rc = mp_header(e->cur, (size_t)view.len, -1, 0, 0xC4, 0xC5, 0xC6);
        if (rc == 0) rc = buf_put(e->cur, view.buf, (size_t)view.len);
        PyBuffer_Release(&view);
        return rc;
    }
    if (PyDateTime_Check(v)) {
        int64_t secs;
        int32_t us;
        if (datetime_to_epoch(v, &secs, &us) < 0) return -1;
        uint8_t p[12];
        be_store(p, (uint64_t)us * 1000u, 4);
        be_store(p + 4, (uint64_t)secs, 8);
        return mp_ext(e->cur, -1, p, 12);
    }
    if (CFG.docref_type && PyObject_TypeCheck(v, (PyTypeObject *)CFG.docref_type)) {
        PyObject *path = PyObject_GetAttr(v, CFG.str_path);
        if (!path) return -1;
        Py_ssize_t n;
        const char *s = PyUnicode_Check(path) ? PyUnicode_AsUTF8AndSize(path, &n) : NULL;
        int rc = s ? mp_ext(e->cur, 1, s, (size_t)n) : -1;
        if (!s && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "DocumentReference._path must be str");
        Py_DECREF(path);
        return rc;
    }
    if (CFG.geopoint_type && (PyObject_TypeCheck(v, (PyTypeObject *)CFG.geopoint_type) ||
                              (PyObject_HasAttr(v, CFG.str_latitude) && PyObject_HasAttr(v, CFG.str_longitude)))) {
        PyObject *la = PyObject_GetAttr(v, CFG.str_latitude);
        PyObject *lo = la ? PyObject_GetAttr(v, CFG.str_longitude) : NULL;
        double dla = la ? PyFloat_AsDouble(la) : -1, dlo = lo ? PyFloat_AsDouble(lo) : -1;
        Py_XDECREF(la);
        Py_XDECREF(lo);
        if (PyErr_Occurred()) return -1;
        uint8_t p[16];
        uint64_t b1, b2;
        memcpy(&b1, &dla, 8);
        memcpy(&b2, &dlo, 8);
        be_store(p, b1, 8);
        be_store(p + 8, b2, 8);
        return mp_ext(e->cur, 2, p, 16);
    }
    if (is_sentinel(v)) {
        if (e->mode == ENC_VALUE || e->in_array) return enc_transform(e, v); /* raises the right error */
        return enc_fail(e, "field transforms must be values of a document's fields", NULL);
    }
    return enc_fail(e, "unsupported value type %s", v);
}

/* Encodes a whole document for set/merge/update: data in e->data, transforms into *tr (a full
 * map, or empty when there is none). */
static int enc_document(enc_t *e, PyObject *dict, buf_t *tr_out) {
    if (!PyDict_Check(dict)) {
        PyErr_Format(PyExc_TypeError, "%s must be a dict, not %s", e->what, Py_TYPE(dict)->tp_name);
        return -1;
    }
    if (enc_map(e, dict) < 0) return -1;
    buf_init(tr_out);
    if (e->tr_count > 0) {
        if (mp_header(tr_out, e->tr_count, 0x80, 15, -1, 0xDE, 0xDF) < 0) return -1;
        if (buf_put(tr_out, e->tr.p, e->tr.len) < 0) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ decoder */

typedef struct {
    const uint8_t *p, *end;
    PyObject *ref_factory; /* path -> DocumentReference, or NULL (then the path string) */
} dec_t;

static PyObject *dec_fail(const char *what) {
    PyErr_Format(PyExc_ValueError, "invalid MessagePack from libember: %s", what);
    return NULL;
}

static inline int dec_need(dec_t *d, size_t n) { return (size_t)(d->end - d->p) >= n; }

static inline uint64_t dec_be(dec_t *d, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | d->p[i];
    d->p += n;
    return v;
}

static PyObject *dec_value(dec_t *d, int depth);

static PyObject *dec_str(dec_t *d, size_t n) {
    if (!dec_need(d, n)) return dec_fail("truncated string");
    PyObject *s = PyUnicode_DecodeUTF8((const char *)d->p, (Py_ssize_t)n, "strict");
    d->p += n;
    return s;
}

static PyObject *dec_array(dec_t *d, size_t n, int depth) {
    PyObject *l = PyList_New((Py_ssize_t)n);
    if (!l) return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *x = dec_value(d, depth + 1);
        if (!x) { Py_DECREF(l); return NULL; }
        PyList_SET_ITEM(l, (Py_ssize_t)i, x);
    }
    return l;
}

/* Map keys repeat from one document to the next: short ASCII keys are kept in a small table
 * (replaced on collision), so a key is one lookup and a memcmp instead of a new string whose hash
 * the dict then computes (the cached string keeps its hash). Used with the GIL held only. */
#define KEY_CACHE_SIZE 512
#define KEY_CACHE_MAX_LEN 40
static PyObject *key_cache[KEY_CACHE_SIZE];

static PyObject *dec_key(dec_t *d, int depth) {
    if (!dec_need(d, 1)) return dec_fail("truncated");
    uint8_t b = *d->p;
    size_t n;
    const uint8_t *s;
    if ((b & 0xE0) == 0xA0) { n = b & 0x1F; s = d->p + 1; }
    else if (b == 0xD9 && dec_need(d, 2) && d->p[1] <= KEY_CACHE_MAX_LEN) { n = d->p[1]; s = d->p + 2; }
    else return dec_value(d, depth);
    if (n > KEY_CACHE_MAX_LEN || (size_t)(d->end - s) < n) return dec_value(d, depth);
    uint32_t h = 2166136261u ^ (uint32_t)n;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
    PyObject **slot = &key_cache[h & (KEY_CACHE_SIZE - 1)];
    PyObject *c = *slot;
    if (c && (size_t)PyUnicode_GET_LENGTH(c) == n && memcmp(PyUnicode_DATA(c), s, n) == 0) {
        d->p = s + n;
        return Py_NewRef(c);
    }
    for (size_t i = 0; i < n; i++)
        if (s[i] & 0x80) return dec_value(d, depth);   /* not ASCII: not cached */
    PyObject *k = PyUnicode_FromStringAndSize((const char *)s, (Py_ssize_t)n);
    if (!k) return NULL;
    d->p = s + n;
    if (PyObject_Hash(k) == -1) { Py_DECREF(k); return NULL; }
    Py_XSETREF(*slot, Py_NewRef(k));
    return k;
}

static PyObject *dec_map(dec_t *d, size_t n, int depth) {
    PyObject *m = PyDict_New();
    if (!m) return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *k = dec_key(d, depth + 1);
        if (!k) { Py_DECREF(m); return NULL; }
        PyObject *x = dec_value(d, depth + 1);
        if (!x || PyDict_SetItem(m, k, x) < 0) { Py_DECREF(k); Py_XDECREF(x); Py_DECREF(m); return NULL; }
        Py_DECREF(k);
        Py_DECREF(x);
    }
    return m;
}

static PyObject *dec_ext(dec_t *d, size_t n) {
    if (!dec_need(d, n + 1)) return dec_fail("truncated extension");
    int8_t type = (int8_t)*d->p++;
    const uint8_t *q = d->p;
    d->p += n;
    if (type == -1) {
        dec_t t = {q, q + n, NULL};
        if (n == 4) return epoch_to_datetime((int64_t)dec_be(&t, 4), 0);
        if (n == 8) {
            uint64_t v = dec_be(&t, 8);
            return epoch_to_datetime((int64_t)(v & 0x3FFFFFFFFULL), (int64_t)(v >> 34));
        }
        if (n == 12) {
            uint32_t ns = (uint32_t)dec_be(&t, 4);
            int64_t s = (int64_t)dec_be(&t, 8);
            return epoch_to_datetime(s, ns);
        }
        return dec_fail("timestamp size");
    }
    if (type == 1) {
        PyObject *path = PyUnicode_DecodeUTF8((const char *)q, (Py_ssize_t)n, "strict");
        if (!path || !d->ref_factory) return path;
        PyObject *r = PyObject_CallOneArg(d->ref_factory, path);
        Py_DECREF(path);
        return r;
    }
    if (type == 2 && n == 16) {
        dec_t t = {q, q + 16, NULL};
        uint64_t a = dec_be(&t, 8), b = dec_be(&t, 8);
        double la, lo;
        memcpy(&la, &a, 8);
        memcpy(&lo, &b, 8);
        return PyObject_CallFunction(CFG.geopoint_type, "dd", la, lo);
    }
    return dec_fail("unknown extension type");
}

static PyObject *dec_value(dec_t *d, int depth) {
    if (depth > 100) return dec_fail("nested too deeply");
    if (!dec_need(d, 1)) return dec_fail("truncated");
    uint8_t b = *d->p++;
    if (b <= 0x7F) return PyLong_FromLong(b);
    if (b >= 0xE0) return PyLong_FromLong((int8_t)b);
    if ((b & 0xF0) == 0x80) return dec_map(d, b & 0x0F, depth);
    if ((b & 0xF0) == 0x90) return dec_array(d, b & 0x0F, depth);
    if ((b & 0xE0) == 0xA0) return dec_str(d, b & 0x1F);
    static const int sizes[0x20] = {
        /* C0 */ 0, -1, 0, 0, 1, 2, 4, 1, 2, 4, 4, 8, 1, 2, 4, 8,
        /* D0 */ 1, 2, 4, 8, 0, 0, 0, 0, 0, 1, 2, 4, 2, 4, 2, 4};
    int n = sizes[b - 0xC0];
    if (n < 0) return dec_fail("unused type byte");
    if (!dec_need(d, (size_t)n)) return dec_fail("truncated");
    uint64_t x = n ? dec_be(d, n) : 0;
    switch (b) {
    case 0xC0: Py_RETURN_NONE;
    case 0xC2: Py_RETURN_FALSE;
    case 0xC3: Py_RETURN_TRUE;
    case 0xC4: case 0xC5: case 0xC6: {
        if (!dec_need(d, x)) return dec_fail("truncated bytes");
        PyObject *r = PyBytes_FromStringAndSize((const char *)d->p, (Py_ssize_t)x);
        d->p += x;
        return r;
    }
    case 0xC7: case 0xC8: case 0xC9: return dec_ext(d, x);
    case 0xCA: { uint32_t u = (uint32_t)x; float f; memcpy(&f, &u, 4); return PyFloat_FromDouble(f); }
    case 0xCB: { double f; memcpy(&f, &x, 8); return PyFloat_FromDouble(f); }
    case 0xCC: case 0xCD: case 0xCE: return PyLong_FromUnsignedLongLong(x);
    case 0xCF: return PyLong_FromUnsignedLongLong(x);
    case 0xD0: return PyLong_FromLong((int8_t)x);
    case 0xD1: return PyLong_FromLong((int16_t)x);
    case 0xD2: return PyLong_FromLong((int32_t)x);
    case 0xD3: return PyLong_FromLongLong((int64_t)x);
    case 0xD4: return dec_ext(d, 1);
    case 0xD5: return dec_ext(d, 2);
    case 0xD6: return dec_ext(d, 4);
    case 0xD7: return dec_ext(d, 8);
    case 0xD8: return dec_ext(d, 16);
    case 0xD9: case 0xDA: case 0xDB: return dec_str(d, x);
    case 0xDC: case 0xDD: return dec_array(d, x, depth);
    case 0xDE: case 0xDF: return dec_map(d, x, depth);
    }
    return dec_fail("unused type byte");
}

/* Skips one value; -1 (with a Python error) on malformed input. */
static int mp_skip(dec_t *d, int depth) {
    if (depth > 100) { dec_fail("nested too deeply"); return -1; }
    if (!dec_need(d, 1)) { dec_fail("truncated"); return -1; }
    uint8_t b = *d->p++;
    size_t count = 0, bytes = 0;
    if (b <= 0x7F || b >= 0xE0 || b == 0xC0 || b == 0xC2 || b == 0xC3) return 0;
    if ((b & 0xF0) == 0x80) count = 2 * (size_t)(b & 0x0F);
    else if ((b & 0xF0) == 0x90) count = b & 0x0F;
    else if ((b & 0xE0) == 0xA0) bytes = b & 0x1F;
    else {
        int n;
        switch (b) {
        case 0xC4: case 0xD9: n = 1; break;
        case 0xC5: case 0xDA: n = 2; break;
        case 0xC6: case 0xDB: n = 4; break;
        case 0xC7: n = 1; break;
        case 0xC8: n = 2; break;
        case 0xC9: n = 4; break;
        case 0xCA: bytes = 4; n = 0; break;
        case 0xCB: bytes = 8; n = 0; break;
        case 0xCC: case 0xD0: bytes = 1; n = 0; break;
        case 0xCD: case 0xD1: bytes = 2; n = 0; break;
        case 0xCE: case 0xD2: bytes = 4; n = 0; break;
        case 0xCF: case 0xD3: bytes = 8; n = 0; break;
        case 0xD4: bytes = 2; n = 0; break;
        case 0xD5: bytes = 3; n = 0; break;
        case 0xD6: bytes = 5; n = 0; break;
        case 0xD7: bytes = 9; n = 0; break;
        case 0xD8: bytes = 17; n = 0; break;
        case 0xDC: case 0xDE: n = -2; break;
        case 0xDD: case 0xDF: n = -4; break;
        default: dec_fail("unused type byte"); return -1;
        }
        if (n > 0) {
            if (!dec_need(d, (size_t)n)) { dec_fail("truncated"); return -1; }
            bytes = (size_t)dec_be(d, n);
            if (b >= 0xC7 && b <= 0xC9) bytes += 1; /* the extension's type byte */
        } else if (n < 0) {
            if (!dec_need(d, (size_t)-n)) { dec_fail("truncated"); return -1; }
            count = (size_t)dec_be(d, -n);
            if (b == 0xDE || b == 0xDF) count *= 2;
        }
    }
    if (bytes) {
        if (!dec_need(d, bytes)) { dec_fail("truncated"); return -1; }
        d->p += bytes;
    }
    for (size_t i = 0; i < count; i++) {
        if (mp_skip(d, depth + 1) < 0) return -1;
    }
    return 0;
}

/* Positions `d` on the value at a dotted path of simple names inside the map at `d` (the keys
 * are compared byte by byte, as libember's field lookup does). 1: found, 0: absent (or a
 * segment that is not a map), -1: malformed input (Python error set). */
static int mp_find_path(dec_t *d, const char *path, Py_ssize_t plen) {
    const char *seg = path, *end = path + plen;
    for (;;) {
        const char *dot = memchr(seg, '.', (size_t)(end - seg));
        size_t slen = (size_t)((dot ? dot : end) - seg);
        if (!dec_need(d, 1)) { dec_fail("truncated"); return -1; }
        uint8_t b = *d->p;
        size_t n;
        if ((b & 0xF0) == 0x80) { n = b & 0x0F; d->p++; }
        else if (b == 0xDE || b == 0xDF) {
            int w = b == 0xDE ? 2 : 4;
            d->p++;
            if (!dec_need(d, (size_t)w)) { dec_fail("truncated"); return -1; }
            n = (size_t)dec_be(d, w);
        } else return 0;
        int hit = 0;
        for (size_t i = 0; i < n; i++) {
            if (!dec_need(d, 1)) { dec_fail("truncated"); return -1; }
            uint8_t k = *d->p;
            size_t klen;
            if ((k & 0xE0) == 0xA0) { klen = k & 0x1F; d->p++; }
            else if (k >= 0xD9 && k <= 0xDB) {
                int w = k == 0xD9 ? 1 : k == 0xDA ? 2 : 4;
                d->p++;
                if (!dec_need(d, (size_t)w)) { dec_fail("truncated"); return -1; }
                klen = (size_t)dec_be(d, w);
            } else { dec_fail("map keys must be strings"); return -1; }
            if (!dec_need(d, klen)) { dec_fail("truncated string"); return -1; }
            int eq = klen == slen && memcmp(d->p, seg, slen) == 0;
            d->p += klen;
            if (eq) { hit = 1; break; }
            if (mp_skip(d, 1) < 0) return -1;
        }
        if (!hit) return 0;
        if (!dot) return 1;
        seg = dot + 1;
    }
}

static PyObject *decode_buffer(const char *p, size_t len, PyObject *ref_factory) {
    dec_t d = {(const uint8_t *)p, (const uint8_t *)p + len, ref_factory};
    return dec_value(&d, 0);
}

#endif
