/* The Python data of a document rapidyaml parsed, made straight from its tree (`data`), and
   where its scalars lie in the text (`address`).

   `fast_yaml.load_fast` used to ask rapidyaml to write its tree out as JSON, read that with
   `json`, then look up in the tree every string that may have been a plain scalar (which the
   JSON cannot tell): three passes over a big spec's ~100,000 nodes, ~60 % of its reading.
   Here one walk over the tree's node array makes the dicts, lists and strings, and gives each
   plain scalar its YAML 1.2 meaning with `yaml12.resolve_plain` (called only for scalars made
   of characters a non-string can hold: `yaml12.NOT_STR_CHARS`).

   The node array is read as rapidyaml 0.15.2 lays it out (c4/yml/tree.hpp: `Tree` starts
   with `NodeData *m_buf; id_type m_cap; id_type m_size;`, `id_type` is `size_t`).
   `fast_yaml` uses this module only with that version, and checks the size read here
   against rapidyaml's own `Tree.size()` on every call.

   What this reader does not take raises `Refused` (the caller then reads the text with
   PyYAML): aliases, anchors, tags, keys that are not plain or quoted scalars, duplicate keys
   (also keys equal once resolved, `1` and `01`), text that is not UTF-8, and nesting past
   Python's recursion limit. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *str;
    size_t len;
} Span; /* c4::csubstr */

typedef struct {
    Span tag, scalar, anchor;
} NodeScalar;

typedef struct {
    uint32_t type; /* NodeType_e */
    NodeScalar key, val;
    size_t parent, first_child, last_child, next_sibling, prev_sibling;
} NodeData;

typedef struct {
    NodeData *buf;
    size_t cap;
    size_t size;
} TreeHead;

/* rapidyaml 0.15.2's NodeType_e bits (fast_yaml checks them against ryml's when it loads it) */
enum {
    KEY = 1u << 0,
    VAL = 1u << 1,
    MAP = 1u << 2,
    SEQ = 1u << 3,
    KEYREF = 1u << 6,
    VALREF = 1u << 7,
    KEYANCH = 1u << 8,
    VALANCH = 1u << 9,
    KEYTAG = 1u << 10,
    VALTAG = 1u << 11,
    KEY_SQUO = 1u << 25,
    VAL_SQUO = 1u << 26,
    KEY_DQUO = 1u << 27,
    VAL_DQUO = 1u << 28,
    KEY_PLAIN = 1u << 29,
    VAL_PLAIN = 1u << 30,
};
#define NONE ((size_t)-1)
#define REFUSED_BITS (KEYREF | VALREF | KEYANCH | VALANCH | KEYTAG | VALTAG)

static PyObject *Refused;

typedef struct {
    const NodeData *nodes;
    size_t size;
    PyObject *resolve;           /* yaml12.resolve_plain */
    const unsigned char *chars; /* 256 flags: a byte a plain non-string scalar can hold */
    PyObject *keys;              /* each key text made once (as `json` does) */
    PyObject *meanings;          /* `resolve`'s answers: the same few texts recur thousands of
                                    times (`true`, `5000`, `title`) */
} Walk;

static PyObject *refuse(const char *why) {
    PyErr_SetString(Refused, why);
    return NULL;
}

/* whether every byte of a plain scalar is one a non-string can hold: only those go to
   `resolve` (in Stripe's spec, ~3,000 of ~60,000) */
static int may_not_be_str(const Walk *w, const char *at, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (!w->chars[(unsigned char)at[i]])
            return 0;
    return 1;
}

static PyObject *scalar(Walk *w, const Span *span, int plain, int key) {
    const char *at = span->str ? span->str : "";
    size_t len = span->str ? span->len : 0;
    PyObject *text = PyUnicode_DecodeUTF8(at, (Py_ssize_t)len, NULL);
    if (text == NULL) {
        PyErr_Clear();
        return refuse("a scalar that is not UTF-8");
    }
    if (plain && may_not_be_str(w, at, len)) {
        PyObject *meant = PyDict_GetItemWithError(w->meanings, text); /* borrowed */
        if (meant != NULL) {
            Py_DECREF(text);
            return Py_NewRef(meant);
        }
        meant = PyErr_Occurred() ? NULL : PyObject_CallOneArg(w->resolve, text);
        if (meant != NULL && PyDict_SetItem(w->meanings, text, meant) < 0)
            Py_CLEAR(meant);
        Py_DECREF(text);
        return meant;
    }
    if (key) {
        PyObject *made = PyDict_SetDefault(w->keys, text, text); /* borrowed */
        Py_XINCREF(made);
        Py_DECREF(text);
        return made;
    }
    return text;
}

static PyObject *node(Walk *w, size_t id);

static PyObject *mapping(Walk *w, const NodeData *n) {
    PyObject *dict = PyDict_New();
    if (dict == NULL)
        return NULL;
    Py_ssize_t count = 0;
    for (size_t c = n->first_child; c != NONE; c = w->nodes[c].next_sibling, count++) {
        if (c >= w->size) {
            Py_DECREF(dict);
            return refuse("a node outside the tree");
        }
        const NodeData *child = &w->nodes[c];
        uint32_t style = child->type & (KEY_PLAIN | KEY_SQUO | KEY_DQUO);
        if (!(child->type & KEY) || !style) {
            Py_DECREF(dict);
            return refuse("a key that is not a plain or quoted scalar");
        }
        PyObject *key = scalar(w, &child->key.scalar, style & KEY_PLAIN, 1);
        PyObject *value = key ? node(w, c) : NULL;
        int failed = value == NULL || PyDict_SetItem(dict, key, value) < 0;
        Py_XDECREF(key);
        Py_XDECREF(value);
        if (failed) {
            Py_DECREF(dict);
            return NULL;
        }
    }
    if (PyDict_GET_SIZE(dict) != count) {
        Py_DECREF(dict);
        return refuse("duplicate keys");
    }
    return dict;
}

static PyObject *sequence(Walk *w, const NodeData *n) {
    PyObject *list = PyList_New(0);
    if (list == NULL)
        return NULL;
    for (size_t c = n->first_child; c != NONE; c = w->nodes[c].next_sibling) {
        if (c >= w->size) {
            Py_DECREF(list);
            return refuse("a node outside the tree");
        }
        PyObject *item = node(w, c);
        int failed = item == NULL || PyList_Append(list, item) < 0;
        Py_XDECREF(item);
        if (failed) {
            Py_DECREF(list);
            return NULL;
        }
    }
    return list;
}

static PyObject *node(Walk *w, size_t id) {
    const NodeData *n = &w->nodes[id];
    uint32_t type = n->type;
    if (type & REFUSED_BITS)
        return refuse("an alias, anchor or tag");
    if (type & VAL)
        return scalar(w, &n->val.scalar, type & VAL_PLAIN, 0);
    if (!(type & (MAP | SEQ)))
        return refuse("a node that is neither a scalar nor a collection");
    if (Py_EnterRecursiveCall(" while reading a YAML document"))
        return NULL;
    PyObject *made = type & MAP ? mapping(w, n) : sequence(w, n);
    Py_LeaveRecursiveCall();
    return made;
}

PyDoc_STRVAR(data_doc,
             "data(tree, size, root, resolve, chars, /)\n--\n\n"
             "The Python data of node `root` of the rapidyaml tree at address `tree` (the "
             "SWIG object's `int(tree.this)`), which has `size` nodes. `resolve(text)`: what "
             "a plain scalar means, asked only of those whose every byte is nonzero in `chars` "
             "(256 bytes). Raises Refused for what PyYAML must read.");

static PyObject *data(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5)
        return PyErr_Format(PyExc_TypeError, "data() takes 5 arguments (%zd given)", nargs);
    void *address = PyLong_AsVoidPtr(args[0]);
    size_t size = PyLong_AsSize_t(args[1]);
    size_t root = PyLong_AsSize_t(args[2]);
    if (PyErr_Occurred())
        return NULL;
    if (!PyBytes_Check(args[4]) || PyBytes_GET_SIZE(args[4]) != 256)
        return PyErr_Format(PyExc_TypeError, "chars must be 256 bytes");
    const TreeHead *tree = address;
    if (tree == NULL || tree->size != size || tree->cap < size || root >= size)
        return refuse("not the tree layout this module reads");
    Walk w = {tree->buf, size, args[3], (const unsigned char *)PyBytes_AS_STRING(args[4]),
              PyDict_New(), PyDict_New()};
    PyObject *made = w.keys && w.meanings ? node(&w, root) : NULL;
    Py_XDECREF(w.keys);
    Py_XDECREF(w.meanings);
    return made;
}

PyDoc_STRVAR(address_doc, "address(buffer, /)\n--\n\n"
                          "The address of the first byte of a buffer (a memoryview of the text "
                          "rapidyaml gave for a scalar), for its offset in the text.");

static PyObject *address(PyObject *Py_UNUSED(module), PyObject *buffer) {
    Py_buffer view;
    if (PyObject_GetBuffer(buffer, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *at = PyLong_FromVoidPtr(view.buf);
    PyBuffer_Release(&view);
    return at;
}

static PyMethodDef methods[] = {
    {"data", (PyCFunction)(void (*)(void))data, METH_FASTCALL, data_doc},
    {"address", address, METH_O, address_doc},
    {NULL, NULL, 0, NULL},
};

static int exec_module(PyObject *module) {
    Refused = PyErr_NewException("generator.spec._ryml_data.Refused", PyExc_ValueError, NULL);
    if (Refused == NULL || PyModule_AddObjectRef(module, "Refused", Refused) < 0)
        return -1;
    static const struct {
        const char *name;
        unsigned long bits;
    } bits[] = {
        {"KEY", KEY},           {"VAL", VAL},           {"MAP", MAP},
        {"SEQ", SEQ},           {"KEYREF", KEYREF},     {"VALREF", VALREF},
        {"KEYANCH", KEYANCH},   {"VALANCH", VALANCH},   {"KEYTAG", KEYTAG},
        {"VALTAG", VALTAG},     {"KEY_SQUO", KEY_SQUO}, {"KEY_DQUO", KEY_DQUO},
        {"VAL_SQUO", VAL_SQUO}, {"VAL_DQUO", VAL_DQUO},
        {"KEY_PLAIN", KEY_PLAIN}, {"VAL_PLAIN", VAL_PLAIN},
    };
    PyObject *table = PyDict_New();
    if (table == NULL)
        return -1;
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        PyObject *value = PyLong_FromUnsignedLong(bits[i].bits);
        if (value == NULL || PyDict_SetItemString(table, bits[i].name, value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(table);
            return -1;
        }
        Py_DECREF(value);
    }
    int failed = PyModule_AddObjectRef(module, "BITS", table) < 0;
    Py_DECREF(table);
    if (failed)
        return -1;
    PyObject *none = PyLong_FromSize_t(NONE);
    failed = none == NULL || PyModule_AddObjectRef(module, "NONE", none) < 0;
    Py_XDECREF(none);
    if (failed)
        return -1;
    return PyModule_AddStringConstant(module, "RAPIDYAML", "0.15.2");
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "generator.spec._ryml_data",
    .m_doc = "A rapidyaml tree's data as Python objects (see _ryml_data.c).",
    .m_methods = methods,
    .m_slots = slots,
};

PyMODINIT_FUNC PyInit__ryml_data(void) { return PyModuleDef_Init(&module_def); }
