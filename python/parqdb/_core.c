/*
 * parqdb._core: the per-call path of the Python package, in C.
 *
 * A single-vector search from Python costs the Go Search plus what the
 * call itself adds; through ctypes that was 3-4 us a call (argument
 * conversion, two buffer addresses, a numpy allocation, a Python
 * Results and its __del__). This module holds what runs once per call:
 *
 *   ResultsCore  the storage of parqdb.Results (the index, the library's
 *                result handle, the distance buffer — one query's in the
 *                object itself, a numpy array made when first read — the
 *                hit counts, the selected columns, the decoded rows); collecting the
 *                answer to one query hands its handle to a batch released
 *                by one library call, collecting a batch's releases it.
 *   IndexCore    the base of parqdb.Index holding its search method: the
 *                common case (one float32 vector, options parsed before)
 *                runs here — the options' handle looked up (or taken from
 *                the memo of the last search's arguments), parqdb_search1
 *                called with the GIL released (kept while the interpreter
 *                runs a single thread), a Results made — and every
 *                other goes to Index._search; search_vector is the same
 *                search from an options handle.
 *
 * bind() receives the addresses of the library's parqdb_search1 and
 * parqdb_release_many (from the ctypes-loaded libparqdb), the Results
 * class and the function that raises an error handle's exception. The
 * library is not linked: this module and libparqdb are loaded apart.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <stdint.h>

typedef int64_t (*search1_fn)(int64_t ix, float *q, int64_t dim, int64_t opt, float *dist, int64_t dist_len);
typedef void (*release_many_fn)(int64_t *hs, int64_t n);

static search1_fn search1_p;
static release_many_fn release_many_p;
static PyTypeObject *results_type; /* parqdb.Results, a subclass of ResultsCore */
static PyObject *raise_error_handle; /* _lib.raise_error_handle */

/* The handles of collected results, released together (the GIL guards them). */
#define PENDING 32
static int64_t pending[PENDING];
static Py_ssize_t npending;

static void flush_pending(void) {
    if (npending > 0 && release_many_p != NULL) {
        Py_ssize_t n = npending;
        npending = 0;
        release_many_p(pending, n);
    }
}

static void release_later(int64_t h) {
    if (npending == PENDING)
        flush_pending();
    pending[npending++] = h;
}

/* INLINE is the floats a Results holds in itself: one query's k
 * distances and its hit count, for k < INLINE (no numpy array is made
 * unless _buf is read). */
#define INLINE 32

typedef struct {
    PyObject_HEAD
    PyObject *ix;      /* the Index */
    long long h;       /* the library's result handle; 0 once released */
    PyObject *buf;     /* one query: k distances then the hit count; a batch: (queries, k); NULL: in inl */
    PyObject *counts;  /* None for one query; the hits per query of a batch */
    PyObject *columns; /* None or the tuple of selected columns */
    PyObject *rows;    /* None or the rows decoded from the library */
    int ninl;          /* the floats of buf in inl when buf is NULL */
    float inl[INLINE];
} ResultsCore;

static int core_init(ResultsCore *self, PyObject *args, PyObject *kw) {
    PyObject *ix, *buf, *counts, *columns;
    long long h;
    static char *names[] = {"ix", "handle", "buf", "counts", "columns", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OLOOO:Results", names, &ix, &h, &buf, &counts, &columns))
        return -1;
    if (columns != Py_None) {
        columns = PySequence_Tuple(columns);
        if (columns == NULL)
            return -1;
    } else {
        Py_INCREF(columns);
    }
    Py_INCREF(ix);
    Py_INCREF(buf);
    Py_INCREF(counts);
    Py_INCREF(Py_None);
    Py_XSETREF(self->ix, ix);
    Py_XSETREF(self->buf, buf);
    Py_XSETREF(self->counts, counts);
    Py_XSETREF(self->columns, columns);
    Py_XSETREF(self->rows, Py_None);
    self->h = h;
    return 0;
}

static int core_traverse(ResultsCore *self, visitproc visit, void *arg) {
    Py_VISIT(self->ix);
    Py_VISIT(self->buf);
    Py_VISIT(self->counts);
    Py_VISIT(self->columns);
    Py_VISIT(self->rows);
    return 0;
}

static int core_clear(ResultsCore *self) {
    Py_CLEAR(self->ix);
    Py_CLEAR(self->buf);
    Py_CLEAR(self->counts);
    Py_CLEAR(self->columns);
    Py_CLEAR(self->rows);
    return 0;
}

static void core_dealloc(ResultsCore *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (self->h > 0) {
        int64_t h = self->h;
        self->h = 0;
        if (self->counts == NULL || self->counts == Py_None)
            release_later(h);
        else if (release_many_p != NULL)
            release_many_p(&h, 1); /* a batch's rows: freed now, not after 255 more */
    }
    core_clear(self);
    /* a Python subclass's dealloc (subtype_dealloc) drops its reference to the type */
    tp->tp_free((PyObject *)self);
}

/* _buf: the numpy array of the distances (made from inl on first use). */
static PyObject *core_get_buf(ResultsCore *self, void *unused) {
    if (self->buf == NULL) {
        npy_intp dims[1] = {self->ninl};
        PyObject *a = PyArray_SimpleNew(1, dims, NPY_FLOAT32);
        if (a == NULL)
            return NULL;
        memcpy(PyArray_DATA((PyArrayObject *)a), self->inl, sizeof(float) * self->ninl);
        self->buf = a;
    }
    Py_INCREF(self->buf);
    return self->buf;
}

static int core_set_buf(ResultsCore *self, PyObject *v, void *unused) {
    if (v == NULL) {
        PyErr_SetString(PyExc_AttributeError, "_buf cannot be deleted");
        return -1;
    }
    Py_INCREF(v);
    Py_XSETREF(self->buf, v);
    return 0;
}

static PyGetSetDef core_getset[] = {
    {"_buf", (getter)core_get_buf, (setter)core_set_buf, NULL, NULL},
    {NULL},
};

static PyMemberDef core_members[] = {
    {"_ix", T_OBJECT, offsetof(ResultsCore, ix), READONLY, NULL},
    {"_h", T_LONGLONG, offsetof(ResultsCore, h), 0, NULL},
    {"_counts", T_OBJECT, offsetof(ResultsCore, counts), 0, NULL},
    {"_columns", T_OBJECT, offsetof(ResultsCore, columns), READONLY, NULL},
    {"_rows", T_OBJECT, offsetof(ResultsCore, rows), 0, NULL},
    {NULL},
};

static PyTypeObject ResultsCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "parqdb._core.ResultsCore",
    .tp_doc = PyDoc_STR("The storage of parqdb.Results."),
    .tp_basicsize = sizeof(ResultsCore),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)core_init,
    .tp_dealloc = (destructor)core_dealloc,
    .tp_traverse = (traverseproc)core_traverse,
    .tp_clear = (inquiry)core_clear,
    .tp_members = core_members,
    .tp_getset = core_getset,
};

static PyObject *bind(PyObject *mod, PyObject *args) {
    PyObject *search1, *release_many, *rtype, *raiser;
    if (!PyArg_ParseTuple(args, "OOOO:bind", &search1, &release_many, &rtype, &raiser))
        return NULL;
    if (!PyType_Check(rtype) || !PyType_IsSubtype((PyTypeObject *)rtype, &ResultsCoreType)) {
        PyErr_SetString(PyExc_TypeError, "bind: the results class must subclass ResultsCore");
        return NULL;
    }
    void *s = PyLong_AsVoidPtr(search1), *r = PyLong_AsVoidPtr(release_many);
    if (PyErr_Occurred())
        return NULL;
    if (s == NULL || r == NULL) {
        PyErr_SetString(PyExc_ValueError, "bind: a library function address is 0");
        return NULL;
    }
    search1_p = (search1_fn)s;
    release_many_p = (release_many_fn)r;
    Py_INCREF(rtype);
    Py_XSETREF(results_type, (PyTypeObject *)rtype);
    Py_INCREF(raiser);
    Py_XSETREF(raise_error_handle, raiser);
    Py_RETURN_NONE;
}

/* one_thread reports whether this interpreter runs a single Python
 * thread: then no other thread can want the GIL while a search runs, and
 * the search keeps it (releasing and taking it back costs about a tenth
 * of a small search). Read under the GIL. */
static int one_thread(void) {
    PyThreadState *ts = PyThreadState_Get();
    PyThreadState *head = PyInterpreterState_ThreadHead(ts->interp);
    return head == ts && PyThreadState_Next(head) == NULL;
}

/* vector_search searches the library for q (a 1-D C-contiguous float32
 * array) under the options of handle opt, whose k must be k (the library
 * refuses another: the distances buffer holds k+1), and returns a
 * Results of ix holding the selected columns (None or a tuple: the
 * Results keeps it). The GIL is released during the search unless the
 * interpreter has one thread (one_thread). */
static PyObject *vector_search(PyObject *ix, int64_t ixh, PyArrayObject *q, int64_t opt, long k, PyObject *columns) {
    if (search1_p == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "parqdb._core is not bound to the library");
        return NULL;
    }
    if (k < 1 || k > (1L << 30)) {
        PyErr_SetString(PyExc_ValueError, "k out of range");
        return NULL;
    }
    ResultsCore *r = (ResultsCore *)results_type->tp_alloc(results_type, 0);
    if (r == NULL)
        return NULL;
    /* owned before the GIL may be released (another thread may replace
     * the memo that lends columns) */
    Py_INCREF(ix);
    Py_INCREF(columns);
    Py_INCREF(Py_None);
    Py_INCREF(Py_None);
    r->ix = ix;
    r->counts = Py_None;
    r->columns = columns;
    r->rows = Py_None;
    float *dist;
    if (k + 1 <= INLINE) {
        r->ninl = (int)k + 1;
        dist = r->inl;
    } else {
        npy_intp dims[1] = {k + 1};
        r->buf = PyArray_SimpleNew(1, dims, NPY_FLOAT32);
        if (r->buf == NULL) {
            Py_DECREF(r);
            return NULL;
        }
        dist = (float *)PyArray_DATA((PyArrayObject *)r->buf);
    }
    float *qp = (float *)PyArray_DATA(q);
    int64_t dim = PyArray_DIM(q, 0);
    int64_t h;
    if (one_thread()) {
        h = search1_p(ixh, qp, dim, opt, dist, (int64_t)k + 1);
    } else {
        Py_BEGIN_ALLOW_THREADS
        h = search1_p(ixh, qp, dim, opt, dist, (int64_t)k + 1);
        Py_END_ALLOW_THREADS
    }
    if (h < 0) {
        Py_DECREF(r);
        PyObject *hv = PyLong_FromLongLong(h);
        if (hv != NULL) {
            PyObject *e = PyObject_CallOneArg(raise_error_handle, hv);
            Py_DECREF(hv);
            Py_XDECREF(e);
        }
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "parqdb: a failed search raised nothing");
        return NULL;
    }
    r->h = h;
    return (PyObject *)r;
}

static int is_query(PyObject *q) {
    return PyArray_Check(q) && PyArray_NDIM((PyArrayObject *)q) == 1 &&
           PyArray_TYPE((PyArrayObject *)q) == NPY_FLOAT32 && PyArray_IS_C_CONTIGUOUS((PyArrayObject *)q);
}

/* search_vector(ix, ix_handle, q, opt, k, columns) -> Results: q a 1-D
 * C-contiguous float32 array, opt the handle of parsed options whose k is k. */
static PyObject *search_vector(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "search_vector takes 6 arguments");
        return NULL;
    }
    int64_t ixh = PyLong_AsLongLong(args[1]);
    int64_t opt = PyLong_AsLongLong(args[3]);
    long k = PyLong_AsLong(args[4]);
    if (PyErr_Occurred())
        return NULL;
    if (!is_query(args[2])) {
        PyErr_SetString(PyExc_TypeError, "search_vector: the query must be a 1-D C-contiguous float32 array");
        return NULL;
    }
    PyObject *cols = args[5];
    if (cols != Py_None) {
        if ((cols = PySequence_Tuple(cols)) == NULL)
            return NULL;
    } else {
        Py_INCREF(cols);
    }
    PyObject *r = vector_search(args[0], ixh, (PyArrayObject *)args[2], opt, k, cols);
    Py_DECREF(cols);
    return r;
}

static PyObject *str_optids, *str_h, *str_search;

/* options_key returns the key under which Index._opts keeps the handle
 * of the options a = (k, nprobe, refine, where, recall, columns, workers)
 * and exact: the same tuple with columns as a tuple (None stays None). */
static PyObject *options_key(PyObject *const *a, PyObject *exact) {
    PyObject *cols = a[5];
    if (cols != Py_None) {
        cols = PySequence_Tuple(cols);
        if (cols == NULL)
            return NULL;
    } else {
        Py_INCREF(cols);
    }
    PyObject *key = PyTuple_New(8);
    if (key == NULL) {
        Py_DECREF(cols);
        return NULL;
    }
    for (int i = 0; i < 7; i++) {
        PyObject *x = i == 5 ? cols : a[i];
        if (i != 5)
            Py_INCREF(x);
        PyTuple_SET_ITEM(key, i, x);
    }
    Py_INCREF(exact);
    PyTuple_SET_ITEM(key, 7, exact);
    return key;
}

/* options_key(k, nprobe, refine, where, recall, columns, workers, exact):
 * the key of Index._optids (one definition for Python and C). */
static PyObject *py_options_key(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "options_key takes 8 arguments");
        return NULL;
    }
    int exact = PyObject_IsTrue(args[7]);
    if (exact < 0)
        return NULL;
    return options_key(args, exact ? Py_True : Py_False);
}

/* IndexCore: the base of parqdb.Index. It remembers the options of its
 * last fast search: the arguments (k, nprobe, refine, where, recall,
 * columns as a tuple, workers), their options handle and the index
 * handle, so that a loop that searches with the same arguments skips
 * building the options key and looking it up. Index._opts calls _forget
 * before it releases option handles. The GIL guards the memo. */
#define NOPTARGS 7
typedef struct {
    PyObject_HEAD
    PyObject *memo[NOPTARGS]; /* NULL: no memo */
    int64_t memo_opt, memo_ixh;
} IndexCore;

static void memo_clear(IndexCore *c) {
    for (int i = 0; i < NOPTARGS; i++)
        Py_CLEAR(c->memo[i]);
    c->memo_opt = c->memo_ixh = 0;
}

/* memo_hit reports whether a = (k, nprobe, refine, where, recall, columns,
 * workers) are the memo's arguments: the same objects, columns a list or
 * tuple holding the same string objects in order, or None as before. */
static int memo_hit(IndexCore *c, PyObject *const *a) {
    if (c->memo_opt == 0)
        return 0;
    for (int i = 0; i < NOPTARGS; i++) {
        if (i == 5)
            continue;
        if (a[i] != c->memo[i])
            return 0;
    }
    PyObject *cols = a[5], *mc = c->memo[5];
    if (cols == Py_None || mc == Py_None)
        return cols == mc;
    Py_ssize_t n = PyTuple_GET_SIZE(mc);
    PyObject **items;
    if (PyList_CheckExact(cols)) {
        if (PyList_GET_SIZE(cols) != n)
            return 0;
        items = ((PyListObject *)cols)->ob_item;
    } else {
        if (PyTuple_GET_SIZE(cols) != n)
            return 0;
        items = ((PyTupleObject *)cols)->ob_item;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (items[i] != PyTuple_GET_ITEM(mc, i) || !PyUnicode_CheckExact(items[i]))
            return 0;
    return 1;
}

/* memo_set remembers key (options_key's tuple: its first 7 items are the
 * arguments, columns as a tuple) with its options and index handles. */
static void memo_set(IndexCore *c, PyObject *key, int64_t opt, int64_t ixh) {
    memo_clear(c);
    for (int i = 0; i < NOPTARGS; i++) {
        c->memo[i] = PyTuple_GET_ITEM(key, i);
        Py_INCREF(c->memo[i]);
    }
    c->memo_opt = opt;
    c->memo_ixh = ixh;
}

/* fast_search(v): the common case of Index.search in C for its arguments
 * v = (self, q, k, nprobe, refine, where, recall, columns, workers) — q a
 * 1-D C-contiguous float32 array, k an int, options already parsed (in
 * self._optids under the key Index._opts uses) — or None (a new
 * reference) when the call is not that case. */
static PyObject *fast_search(PyObject *const *v) {
    PyObject *ix = v[0], *q = v[1], *k = v[2], *columns = v[7];
    if (!is_query(q) || !PyLong_CheckExact(k))
        Py_RETURN_NONE;
    /* (a list or tuple: another sequence, e.g. a generator, takes the
     * Python path, which reads it once) */
    if (columns != Py_None && !PyList_CheckExact(columns) && !PyTuple_CheckExact(columns))
        Py_RETURN_NONE;
    IndexCore *c = (IndexCore *)ix;
    if (memo_hit(c, v + 2)) /* k is the object of a call that passed: it fits */
        return vector_search(ix, c->memo_ixh, (PyArrayObject *)q, c->memo_opt, PyLong_AsLong(k), c->memo[5]);
    PyObject *key = options_key(v + 2, Py_False);
    if (key == NULL)
        return NULL;
    PyObject *optids = PyObject_GetAttr(ix, str_optids);
    if (optids == NULL) {
        Py_DECREF(key);
        return NULL;
    }
    PyObject *opt = PyDict_Check(optids) ? PyDict_GetItemWithError(optids, key) : NULL; /* borrowed */
    if (opt == NULL) {
        Py_DECREF(key);
        Py_DECREF(optids);
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE; /* not parsed yet */
    }
    int64_t opth = PyLong_AsLongLong(opt);
    Py_DECREF(optids);
    PyObject *hobj = PyObject_GetAttr(ix, str_h);
    if (hobj == NULL) {
        Py_DECREF(key);
        return NULL;
    }
    int64_t ixh = PyLong_AsLongLong(hobj);
    Py_DECREF(hobj);
    long kv = PyLong_AsLong(k);
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    memo_set(c, key, opth, ixh);
    Py_DECREF(key);
    return vector_search(ix, ixh, (PyArrayObject *)q, opth, kv, c->memo[5]);
}

/* The parameters of Index.search, in order, and their defaults (set in
 * PyInit__core; NULL: required). */
#define NPARAMS 8
static const char *param_names[NPARAMS] = {"q", "k", "nprobe", "refine", "where", "recall", "columns", "workers"};
static PyObject *params[NPARAMS];
static PyObject *defaults[NPARAMS];

/* IndexCore.search(self, q, k=10, ...): fast_search, else self._search
 * with every argument, positionally. */
static PyObject *index_search(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *v[1 + NPARAMS] = {self};
    if (nargs > NPARAMS) {
        PyErr_Format(PyExc_TypeError, "search() takes at most %d arguments (%zd given)", NPARAMS, nargs);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        v[1 + i] = args[i];
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, j);
        int p = -1;
        for (int i = 0; i < NPARAMS && p < 0; i++)
            if (name == params[i])
                p = i;
        for (int i = 0; i < NPARAMS && p < 0; i++) {
            int eq = PyObject_RichCompareBool(name, params[i], Py_EQ);
            if (eq < 0)
                return NULL;
            if (eq)
                p = i;
        }
        if (p < 0) {
            PyErr_Format(PyExc_TypeError, "search() got an unexpected keyword argument '%U'", name);
            return NULL;
        }
        if (v[1 + p] != NULL) {
            PyErr_Format(PyExc_TypeError, "search() got multiple values for argument '%U'", name);
            return NULL;
        }
        v[1 + p] = args[nargs + j];
    }
    for (int i = 0; i < NPARAMS; i++) {
        if (v[1 + i] != NULL)
            continue;
        if (defaults[i] == NULL) {
            PyErr_Format(PyExc_TypeError, "search() missing required argument '%s'", param_names[i]);
            return NULL;
        }
        v[1 + i] = defaults[i];
    }
    PyObject *r = fast_search(v);
    if (r != Py_None)
        return r; /* a Results, or NULL and an exception */
    Py_DECREF(r);
    return PyObject_VectorcallMethod(str_search, v, 1 + NPARAMS, NULL);
}

static PyObject *index_forget(PyObject *self, PyObject *unused) {
    memo_clear((IndexCore *)self);
    Py_RETURN_NONE;
}

static int index_traverse(IndexCore *self, visitproc visit, void *arg) {
    for (int i = 0; i < NOPTARGS; i++)
        Py_VISIT(self->memo[i]);
    return 0;
}

static int index_clear(IndexCore *self) {
    memo_clear(self);
    return 0;
}

static void index_dealloc(IndexCore *self) {
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    memo_clear(self);
    tp->tp_free((PyObject *)self);
}

static PyMethodDef index_methods[] = {
    {"_forget", index_forget, METH_NOARGS,
     PyDoc_STR("_forget($self, /)\n--\n\nDrops the options remembered from the last search (before their handles are released).")},
    {"search", (PyCFunction)(void (*)(void))index_search, METH_FASTCALL | METH_KEYWORDS,
     PyDoc_STR("search($self, /, q, k=10, nprobe=None, refine=0, where=None, recall=None, columns=None, workers=None)\n--\n\n"
               "Finds the ``k`` nearest source rows to ``q``: a 1-D vector, or a\n"
               "2-D batch with one query per row (float32 or float64; a float32\n"
               "C-contiguous array is read in place, without a copy); returns a\n"
               "Results.\n\n"
               "``nprobe`` lists are scanned (None: 8); ``refine`` re-scores the best\n"
               "refine*k candidates with exact vectors; ``recall`` (0, 1] picks\n"
               "nprobe and refine from the index's calibration instead; ``where`` is\n"
               "an SQL-like predicate on source columns (docs/search.md);\n"
               "``columns`` selects the source columns returned (None: all);\n"
               "``workers`` bounds the threads of a batch (None: all cores).")},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject IndexCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "parqdb._core.IndexCore",
    .tp_doc = PyDoc_STR("The per-call path of parqdb.Index: its search method."),
    .tp_basicsize = sizeof(IndexCore),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)index_dealloc,
    .tp_traverse = (traverseproc)index_traverse,
    .tp_clear = (inquiry)index_clear,
    .tp_methods = index_methods,
};

static PyObject *flush(PyObject *mod, PyObject *unused) {
    flush_pending();
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS,
     PyDoc_STR("bind(search1_addr, release_many_addr, results_class, raise_error_handle)")},
    {"options_key", (PyCFunction)(void (*)(void))py_options_key, METH_FASTCALL,
     PyDoc_STR("options_key(k, nprobe, refine, where, recall, columns, workers, exact) -> tuple")},
    {"search_vector", (PyCFunction)(void (*)(void))search_vector, METH_FASTCALL,
     PyDoc_STR("search_vector(ix, ix_handle, q, opt, k, columns) -> Results")},
    {"flush", flush, METH_NOARGS, PyDoc_STR("Releases the handles of collected results now.")},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "parqdb._core", PyDoc_STR("The per-call path of parqdb, in C."), -1, methods,
};

PyMODINIT_FUNC PyInit__core(void) {
    import_array();
    str_optids = PyUnicode_InternFromString("_optids");
    str_h = PyUnicode_InternFromString("_h");
    str_search = PyUnicode_InternFromString("_search");
    if (str_optids == NULL || str_h == NULL || str_search == NULL)
        return NULL;
    for (int i = 0; i < NPARAMS; i++)
        if ((params[i] = PyUnicode_InternFromString(param_names[i])) == NULL)
            return NULL;
    defaults[1] = PyLong_FromLong(10); /* k */
    defaults[3] = PyLong_FromLong(0);  /* refine */
    if (defaults[1] == NULL || defaults[3] == NULL)
        return NULL;
    defaults[2] = defaults[4] = defaults[5] = defaults[6] = defaults[7] = Py_None;
    if (PyType_Ready(&ResultsCoreType) < 0 || PyType_Ready(&IndexCoreType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&ResultsCoreType);
    if (PyModule_AddObject(m, "ResultsCore", (PyObject *)&ResultsCoreType) < 0) {
        Py_DECREF(&ResultsCoreType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&IndexCoreType);
    if (PyModule_AddObject(m, "IndexCore", (PyObject *)&IndexCoreType) < 0) {
        Py_DECREF(&IndexCoreType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
