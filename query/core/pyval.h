/* pyval.h — a tiny value tree for operator arguments and Python-literal text.
 *
 * Kineto stores an op's shape arguments ("Input Dims", "Input type",
 * "Input Strides", "Concrete Inputs") as JSON lists; the reference tool's
 * reports print them, and every value derived from them (perf-model
 * parameters, grouping keys, kernel-detail dicts), as Python literals
 * (spec pytorch-report.md §11.2). This module parses either syntax into one
 * arena-allocated tree and writes it back as Python repr()/str() text, so
 * the perf models, the report sheets and the conformance tests share one
 * definition of "how Python would print this".
 *
 * The parser accepts JSON (true/false/null, "strings", NaN, Infinity) and
 * the Python literal subset the reference writes (True/False/None, 'single'
 * or "double" quoted strings with Python escapes, tuples, dicts, trailing
 * commas, nan/inf, and NumPy scalar wrappers such as np.float64(1.5), which
 * keep a flag so they print back the same way). A NULL tl_pv pointer means
 * Python None wherever a value is read or written. */
#ifndef TL_PYVAL_H
#define TL_PYVAL_H

#include <stddef.h>
#include <stdint.h>
#include "base/base.h"

typedef enum tl_pv_kind {
    TL_PV_NONE = 0,
    TL_PV_BOOL,
    TL_PV_INT,
    TL_PV_FLOAT,
    TL_PV_STR,
    TL_PV_LIST,
    TL_PV_TUPLE,
    TL_PV_DICT,
} tl_pv_kind;

typedef struct tl_pv tl_pv;
struct tl_pv {
    uint8_t kind; /* tl_pv_kind */
    uint8_t np;   /* NumPy scalar: repr is np.float64(x) / np.int64(x) / np.True_ */
    union {
        int b;
        struct {
            int64_t v;
            const char *big; /* decimal digits when the value does not fit int64
                                (v is then 0; arithmetic on it is refused) */
        } i;
        double f;
        struct {
            const char *p; /* UTF-8, NUL-terminated */
            size_t n;
        } s;
        struct {
            tl_pv **v; /* items (list/tuple) or values (dict); NULL item = None */
            tl_pv **k; /* dict keys, else NULL */
            size_t n;
        } seq;
    } u;
};

/* Nesting deeper than this is rejected (keeps recursion bounded on hostile text). */
#define TL_PV_MAX_DEPTH 200

/* Parses text[0..n) (JSON or Python literal; surrounding white space
 * allowed) into a tree allocated in a. Returns 0, or TL_EFORMAT with the
 * byte offset in err. */
int tl_pv_parse(tl_arena *a, const char *text, size_t n, tl_pv **out, tl_err *err);

/* ---- writers ---------------------------------------------------------- */
enum {
    TL_PV_TUPLES = 1u, /* print every list as a tuple: the reference's
                          "list -> tuple" conversion of raw args (§11.2) */
};
/* Python repr(): None, True, 12, 0.1, 'it''s' quoting rules, (1,), [1, 2],
 * {'k': v}. Appends to b. */
void tl_pv_write_repr(tl_buf *b, const tl_pv *v, unsigned flags);
/* Python str(): like repr except that a top-level string is written bare. */
void tl_pv_write_str(tl_buf *b, const tl_pv *v, unsigned flags);
/* repr() into the arena (NUL-terminated). */
char *tl_pv_repr(tl_arena *a, const tl_pv *v, unsigned flags);
/* Parses text and writes its repr in one go (e.g. raw JSON args -> the
 * tuple text used as a grouping key). */
int tl_pv_reformat(tl_arena *a, const char *text, size_t n, unsigned flags, char **out,
                   tl_err *err);

/* ---- builders (all arena-allocated) ----------------------------------- */
tl_pv *tl_pv_new_none(tl_arena *a);
tl_pv *tl_pv_new_bool(tl_arena *a, int b);
tl_pv *tl_pv_new_int(tl_arena *a, int64_t v);
tl_pv *tl_pv_new_float(tl_arena *a, double f);
tl_pv *tl_pv_new_str(tl_arena *a, const char *s); /* copies; NULL s -> None */
tl_pv *tl_pv_new_strn(tl_arena *a, const char *s, size_t n);
/* A list, tuple or dict of n slots, all None (dict keys too); fill u.seq.v[i]. */
tl_pv *tl_pv_new_seq(tl_arena *a, tl_pv_kind kind, size_t n);
/* Deep copy with every list turned into a tuple (Python's tuple(...) of a
 * shape, recursively). Strings and numbers are shared, not copied. */
tl_pv *tl_pv_to_tuple(tl_arena *a, const tl_pv *v);

/* ---- access ------------------------------------------------------------ */
static inline int tl_pv_is_none(const tl_pv *v) { return !v || v->kind == TL_PV_NONE; }
static inline int tl_pv_is_seq(const tl_pv *v)
{
    return v && (v->kind == TL_PV_LIST || v->kind == TL_PV_TUPLE);
}
/* Number of items of a list/tuple/dict; 0 for anything else. */
size_t tl_pv_len(const tl_pv *v);
/* Item i of a list/tuple (negative i counts from the end, as in Python);
 * NULL when out of range or not a sequence (indistinguishable from None:
 * use tl_pv_len first when it matters). */
const tl_pv *tl_pv_at(const tl_pv *v, long i);
/* Dict value for a string key (last one wins), or NULL. */
const tl_pv *tl_pv_get(const tl_pv *dict, const char *key);
/* Python bool(v). */
int tl_pv_truthy(const tl_pv *v);
/* Python ==: numbers compare by value across int/float/bool, a list never
 * equals a tuple, dicts compare as ordered key/value lists, NaN != NaN,
 * None == None. */
int tl_pv_equal(const tl_pv *a, const tl_pv *b);
/* Numeric value of an int/float/bool into *out; 0 on success, -1 otherwise. */
int tl_pv_num(const tl_pv *v, double *out);

#endif
