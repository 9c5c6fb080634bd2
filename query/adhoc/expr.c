/* expr.c — the small languages of the query verb: --where boolean
 * expressions (comparisons, IN, IS NULL, LIKE, substring and regex), the
 * --by / --select column lists, --agg aggregate lists and --sort keys.
 * Every parse error names the offending token and draws a caret under it.
 * Evaluation is vectorised: a predicate on a string column is decided once
 * per distinct dictionary id of a trace, not once per row, and AND / OR
 * evaluate their right side only on the rows still undecided. */
#include "query/adhoc/adhoc_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors --------------------------------------------------------------- */
int aq_errtok(tl_err *err, const char *what, const char *text, int pos, int len, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!text) return tl_errf(err, TL_EUSAGE, "%s: %s", what, msg);
    /* caret line: one column per UTF-8 character before the token */
    char caret[300];
    size_t k = 0;
    for (int i = 0; i < pos && text[i] && k + 1 < sizeof caret; i++)
        if (((unsigned char)text[i] & 0xC0) != 0x80) caret[k++] = text[i] == '\t' ? '\t' : ' ';
    int w = 0;
    for (int i = pos; i < pos + len && text[i]; i++)
        if (((unsigned char)text[i] & 0xC0) != 0x80) w++;
    if (w < 1) w = 1;
    for (int i = 0; i < w && k + 1 < sizeof caret; i++) caret[k++] = '^';
    caret[k] = 0;
    return tl_errf(err, TL_EUSAGE, "%s: %s\n  %.400s\n  %s", what, msg, text, caret);
}

/* ---- lexer ------------------------------------------------------------------ */
typedef enum { T_EOF = 0, T_IDENT, T_QIDENT, T_STR, T_NUM, T_OP, T_LP, T_RP, T_COMMA } ttype;

typedef struct tok {
    ttype t;
    int pos, len;
    char *s;      /* identifier / string text (decoded), operator text */
    aq_lit num;
} tok;

typedef struct lexer {
    aq_parse_ctx *pc;
    const char *p;
    int pos;
    tok cur;
    ttype prev;
    tl_err *err;
    int failed;
} lexer;

static int lex_fail(lexer *L, int pos, int len, const char *fmt, const char *arg)
{
    char m[1200];
    snprintf(m, sizeof m, fmt, arg);
    aq_errtok(L->err, L->pc->what, L->pc->text, pos, len, "%s", m);
    L->failed = 1;
    return -1;
}

/* Time units turn numbers into nanoseconds: 10us, 1.5ms, 2s. */
static int unit_mult(const char *u, size_t n, double *mult)
{
    static const struct { const char *u; double m; } U[] = {
        {"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"min", 60e9}, {"h", 3600e9},
    };
    for (size_t i = 0; i < sizeof U / sizeof *U; i++)
        if (strlen(U[i].u) == n && !memcmp(U[i].u, u, n)) { *mult = U[i].m; return 0; }
    return -1;
}

static int is_ident_char(unsigned char c) { return isalnum(c) || c == '_' || c == '.' || c >= 0x80; }

static int lex_next(lexer *L)
{
    tl_arena *a = L->pc->arena;
    const char *p = L->p;
    while (*p && isspace((unsigned char)*p)) p++;
    tok t;
    memset(&t, 0, sizeof t);
    t.pos = (int)(p - L->pc->text);
    ttype prev = L->cur.t;
    if (!*p) {
        t.t = T_EOF;
    } else if (*p == '\'' || *p == '"') {
        char q = *p++;
        tl_buf b = {0};
        for (;;) {
            if (!*p) {
                tl_buf_free(&b);
                return lex_fail(L, t.pos, (int)(p - L->pc->text) - t.pos, "unterminated string%s", "");
            }
            if (*p == '\\' && p[1]) { tl_buf_putc(&b, p[1]); p += 2; continue; }
            if (*p == q) {
                if (p[1] == q) { tl_buf_putc(&b, q); p += 2; continue; }
                p++;
                break;
            }
            tl_buf_putc(&b, *p++);
        }
        t.t = T_STR;
        t.s = tl_arena_strndup(a, b.p ? b.p : "", b.n);
        tl_buf_free(&b);
    } else if (*p == '`' || *p == '[') {
        char q = *p == '`' ? '`' : ']';
        const char *e = strchr(p + 1, q);
        if (!e) return lex_fail(L, t.pos, (int)strlen(p), "unterminated quoted name%s", "");
        t.t = T_QIDENT;
        t.s = tl_arena_strndup(a, p + 1, (size_t)(e - p - 1));
        p = e + 1;
    } else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1])) ||
               (*p == '-' && (isdigit((unsigned char)p[1]) || p[1] == '.') &&
                (prev == T_EOF || prev == T_OP || prev == T_LP || prev == T_COMMA))) {
        const char *s = p;
        if (*p == '-') p++;
        while (isdigit((unsigned char)*p)) p++;
        int isint = 1;
        if (*p == '.' && isdigit((unsigned char)p[1])) { isint = 0; p++; while (isdigit((unsigned char)*p)) p++; }
        if ((*p == 'e' || *p == 'E') && (isdigit((unsigned char)p[1]) || ((p[1] == '-' || p[1] == '+') && isdigit((unsigned char)p[2])))) {
            isint = 0;
            p += 2;
            while (isdigit((unsigned char)*p)) p++;
        }
        double v = strtod(s, NULL);
        const char *u = p;
        while (*p && (isalpha((unsigned char)*p) || (unsigned char)*p >= 0x80)) p++;
        if (p > u) {
            double mult;
            if (unit_mult(u, (size_t)(p - u), &mult)) {
                char m[300];
                snprintf(m, sizeof m, "'%.*s' is not a number (time units: ns, us, ms, s, min, h)", (int)(p - s), s);
                return lex_fail(L, t.pos, (int)(p - s), "%s", m);
            }
            v *= mult;
            isint = 1;
            t.num.i = (int64_t)llround(v);
        } else {
            t.num.i = isint ? strtoll(s, NULL, 10) : (int64_t)v;
        }
        t.t = T_NUM;
        t.num.isnum = 1;
        t.num.isint = isint;
        t.num.f = isint ? (double)t.num.i : v;
        t.s = tl_arena_strndup(a, s, (size_t)(p - s));
        t.num.s = t.s;
    } else if (is_ident_char((unsigned char)*p)) {
        const char *s = p;
        while (is_ident_char((unsigned char)*p)) p++;
        t.t = T_IDENT;
        t.s = tl_arena_strndup(a, s, (size_t)(p - s));
    } else if (*p == '(') { t.t = T_LP; p++; t.s = "("; }
    else if (*p == ')') { t.t = T_RP; p++; t.s = ")"; }
    else if (*p == ',') { t.t = T_COMMA; p++; t.s = ","; }
    else {
        static const char *OPS[] = {"!~*", "==", "!=", "<>", "<=", ">=", "!~", "~*", "&&", "||", "=", "<", ">", "~", "!", "*", "-", "+"};
        size_t k;
        for (k = 0; k < sizeof OPS / sizeof *OPS; k++)
            if (!strncmp(p, OPS[k], strlen(OPS[k]))) break;
        if (k == sizeof OPS / sizeof *OPS) {
            int cl = 1;
            while (((unsigned char)p[cl] & 0xC0) == 0x80) cl++;
            char one[8];
            snprintf(one, sizeof one, "%.*s", cl, p);
            return lex_fail(L, t.pos, cl, "unexpected character '%s'", one);
        }
        t.t = T_OP;
        t.s = (char *)OPS[k];
        p += strlen(OPS[k]);
    }
    t.len = (int)(p - L->pc->text) - t.pos;
    if (t.t == T_EOF) t.len = 1;
    L->p = p;
    L->prev = prev;
    L->cur = t;
    return 0;
}

static int kw(const tok *t, const char *w) { return t->t == T_IDENT && !strcasecmp(t->s, w); }

static int lex_init(lexer *L, aq_parse_ctx *pc, tl_err *err)
{
    memset(L, 0, sizeof *L);
    L->pc = pc;
    L->p = pc->text;
    L->err = err;
    L->cur.t = T_EOF;
    return lex_next(L);
}

static int tok_err(lexer *L, const tok *t, const char *fmt, const char *arg)
{
    if (L->failed) return -1;
    return lex_fail(L, t->pos, t->len, fmt, arg);
}

static const char *tok_desc(const tok *t, char *buf, size_t n)
{
    if (t->t == T_EOF) return "the end";
    if (t->t == T_STR) snprintf(buf, n, "'%s'", t->s);
    else snprintf(buf, n, "'%s'", t->s ? t->s : "?");
    return buf;
}

/* ---- column reference from the current token ---------------------------- */
static int parse_colref(lexer *L, aq_colref *out)
{
    tok t = L->cur;
    char d[300];
    if (t.t != T_IDENT && t.t != T_QIDENT)
        return tok_err(L, &t, "expected a column name, got %s", tok_desc(&t, d, sizeof d));
    char hint[600];
    if (aq_resolve_col(L->pc->tab, t.s, out, L->pc->arena, hint, sizeof hint)) {
        char m[1000];
        snprintf(m, sizeof m, "unknown column '%s' in table %s%s", t.s, L->pc->tab->name, hint);
        return tok_err(L, &t, "%s", m);
    }
    if (out->def->src == AQ_S_ARGKEY && L->pc->tab->kind != AQ_TAB_ROWS)
        return tok_err(L, &t, "'%s': args.KEY columns exist only in events, ops and kernels", t.s);
    return lex_next(L);
}


/* Checks literal vs column type; tl is the literal's token. */
static int check_lit(lexer *L, const aq_colref *c, const tok *tl)
{
    aq_type ct = c->def->type;
    if (ct == AQ_DYN) return 0;
    int col_num = ct == AQ_INT || ct == AQ_FLOAT;
    if (col_num && tl->t == T_STR) {
        char m[600];
        snprintf(m, sizeof m, "type mismatch: %s is a number but '%s' is text", c->display, tl->s);
        return tok_err(L, tl, "%s", m);
    }
    if (!col_num && tl->t == T_NUM) {
        char m[600];
        snprintf(m, sizeof m, "type mismatch: %s is text but %s is a number (quote it: '%s')", c->display, tl->s, tl->s);
        return tok_err(L, tl, "%s", m);
    }
    return 0;
}

static aq_expr *new_expr(tl_arena *a, aq_etype t)
{
    aq_expr *e = tl_arena_zalloc(a, sizeof *e);
    e->t = t;
    return e;
}

static int parse_or(lexer *L, aq_expr **out);

static int lit_from_tok(const tok *t, aq_lit *l)
{
    memset(l, 0, sizeof *l);
    if (t->t == T_NUM) { *l = t->num; return 0; }
    if (t->t == T_STR) { l->s = t->s; return 0; }
    return -1;
}

static int parse_pred(lexer *L, aq_expr **out)
{
    tl_arena *a = L->pc->arena;
    aq_colref col;
    tok ctok = L->cur;
    if (parse_colref(L, &col)) return -1;
    int col_num = col.def->type == AQ_INT || col.def->type == AQ_FLOAT;
    tok op = L->cur;
    char d[300];
    int negate = 0;
    if (kw(&op, "is")) {
        if (lex_next(L)) return -1;
        if (kw(&L->cur, "not")) { negate = 1; if (lex_next(L)) return -1; }
        if (!kw(&L->cur, "null")) return tok_err(L, &L->cur, "expected NULL after IS, got %s", tok_desc(&L->cur, d, sizeof d));
        aq_expr *e = new_expr(a, AQ_E_NULL);
        e->col = col;
        e->negate = negate;
        *out = e;
        return lex_next(L);
    }
    if (kw(&op, "not")) {
        negate = 1;
        if (lex_next(L)) return -1;
        op = L->cur;
        if (!kw(&op, "in") && !kw(&op, "like") && !kw(&op, "contains") && !kw(&op, "icontains") && !kw(&op, "ilike"))
            return tok_err(L, &op, "expected IN, LIKE or CONTAINS after NOT, got %s", tok_desc(&op, d, sizeof d));
    }
    if (kw(&op, "in")) {
        if (lex_next(L)) return -1;
        if (L->cur.t != T_LP) return tok_err(L, &L->cur, "expected '(' after IN, got %s", tok_desc(&L->cur, d, sizeof d));
        if (lex_next(L)) return -1;
        TL_VEC(aq_lit) lits = {0};
        for (;;) {
            tok lt = L->cur;
            aq_lit l;
            if (lit_from_tok(&lt, &l)) { tl_vec_free(&lits); return tok_err(L, &lt, "expected a value in the IN list, got %s", tok_desc(&lt, d, sizeof d)); }
            if (check_lit(L, &col, &lt)) { tl_vec_free(&lits); return -1; }
            tl_vec_push(&lits, l);
            if (lex_next(L)) { tl_vec_free(&lits); return -1; }
            if (L->cur.t == T_COMMA) { if (lex_next(L)) { tl_vec_free(&lits); return -1; } continue; }
            if (L->cur.t == T_RP) break;
            tl_vec_free(&lits);
            return tok_err(L, &L->cur, "expected ',' or ')' in the IN list, got %s", tok_desc(&L->cur, d, sizeof d));
        }
        aq_expr *e = new_expr(a, AQ_E_IN);
        e->col = col;
        e->negate = negate;
        e->nlist = lits.n;
        e->list = tl_arena_alloc(a, (lits.n ? lits.n : 1) * sizeof(aq_lit));
        if (lits.n) memcpy(e->list, lits.v, lits.n * sizeof(aq_lit));
        tl_vec_free(&lits);
        *out = e;
        return lex_next(L);
    }
    aq_op o = 0;
    int icase = 0;
    if (op.t == T_OP) {
        const char *s = op.s;
        if (!strcmp(s, "=") || !strcmp(s, "==")) o = AQ_OP_EQ;
        else if (!strcmp(s, "!=") || !strcmp(s, "<>")) o = AQ_OP_NE;
        else if (!strcmp(s, "<")) o = AQ_OP_LT;
        else if (!strcmp(s, "<=")) o = AQ_OP_LE;
        else if (!strcmp(s, ">")) o = AQ_OP_GT;
        else if (!strcmp(s, ">=")) o = AQ_OP_GE;
        else if (!strcmp(s, "~")) o = AQ_OP_RE;
        else if (!strcmp(s, "~*")) { o = AQ_OP_RE; icase = 1; }
        else if (!strcmp(s, "!~")) o = AQ_OP_NRE;
        else if (!strcmp(s, "!~*")) { o = AQ_OP_NRE; icase = 1; }
    } else if (kw(&op, "like") || kw(&op, "ilike")) o = AQ_OP_LIKE;
    else if (kw(&op, "contains")) o = AQ_OP_CONTAINS;
    else if (kw(&op, "icontains")) { o = AQ_OP_CONTAINS; icase = 1; }
    else if (kw(&op, "regexp") || kw(&op, "matches")) o = AQ_OP_RE;
    if (!o) {
        if (op.t == T_EOF)
            return tok_err(L, &ctok, "a column alone is not a condition; compare it (=, !=, <, >, ~, contains, in, is null)%s", "");
        return tok_err(L, &op, "expected a comparison (=, !=, <, <=, >, >=, ~, !~, like, contains, in, is null), got %s",
                       tok_desc(&op, d, sizeof d));
    }
    int textop = o == AQ_OP_RE || o == AQ_OP_NRE || o == AQ_OP_LIKE || o == AQ_OP_CONTAINS;
    if (textop && col_num) {
        char m[300];
        snprintf(m, sizeof m, "type mismatch: '%s' needs a text column, but %s is a number", op.s, col.display);
        return tok_err(L, &op, "%s", m);
    }
    if (lex_next(L)) return -1;
    tok lt = L->cur;
    aq_expr *e = new_expr(a, AQ_E_CMP);
    e->col = col;
    e->op = o;
    e->icase = icase;
    e->negate = negate;
    if (lt.t == T_IDENT || lt.t == T_QIDENT) {
        aq_colref dummy;
        char hint[8];
        if (aq_resolve_col(L->pc->tab, lt.s, &dummy, a, hint, sizeof hint) == 0)
            return tok_err(L, &lt, "comparing two columns is not supported here ('%s'); use tracelens sql", lt.s);
        return tok_err(L, &lt, "expected a value, got %s (quote text: 'like this')", tok_desc(&lt, d, sizeof d));
    }
    if (lit_from_tok(&lt, &e->lit)) return tok_err(L, &lt, "expected a value, got %s", tok_desc(&lt, d, sizeof d));
    if (textop && lt.t != T_STR) {
        char m[300];
        snprintf(m, sizeof m, "type mismatch: '%s' needs a quoted text pattern, got %s", op.s, lt.s ? lt.s : "?");
        return tok_err(L, &lt, "%s", m);
    }
    if (!textop && check_lit(L, &col, &lt)) return -1;
    if (o == AQ_OP_RE || o == AQ_OP_NRE) {
        int rc = regcomp(&e->re, lt.s, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
        if (rc) {
            char rb[200], m[600];
            regerror(rc, &e->re, rb, sizeof rb);
            snprintf(m, sizeof m, "bad regex '%s': %s", lt.s, rb);
            return tok_err(L, &lt, "%s", m);
        }
        e->has_re = 1;
    }
    *out = e;
    return lex_next(L);
}

static int parse_not(lexer *L, aq_expr **out)
{
    if (kw(&L->cur, "not") || (L->cur.t == T_OP && !strcmp(L->cur.s, "!"))) {
        if (lex_next(L)) return -1;
        aq_expr *e = new_expr(L->pc->arena, AQ_E_NOT);
        if (parse_not(L, &e->a)) return -1;
        *out = e;
        return 0;
    }
    if (L->cur.t == T_LP) {
        tok lp = L->cur;
        if (lex_next(L)) return -1;
        if (parse_or(L, out)) return -1;
        if (L->cur.t != T_RP) {
            char d[300];
            if (L->cur.t == T_EOF) return tok_err(L, &lp, "this '(' is never closed%s", "");
            return tok_err(L, &L->cur, "expected ')', got %s", tok_desc(&L->cur, d, sizeof d));
        }
        return lex_next(L);
    }
    return parse_pred(L, out);
}

static int parse_and(lexer *L, aq_expr **out)
{
    if (parse_not(L, out)) return -1;
    while (kw(&L->cur, "and") || (L->cur.t == T_OP && !strcmp(L->cur.s, "&&"))) {
        if (lex_next(L)) return -1;
        aq_expr *e = new_expr(L->pc->arena, AQ_E_AND);
        e->a = *out;
        if (parse_not(L, &e->b)) return -1;
        *out = e;
    }
    return 0;
}

static int parse_or(lexer *L, aq_expr **out)
{
    if (parse_and(L, out)) return -1;
    while (kw(&L->cur, "or") || (L->cur.t == T_OP && !strcmp(L->cur.s, "||"))) {
        if (lex_next(L)) return -1;
        aq_expr *e = new_expr(L->pc->arena, AQ_E_OR);
        e->a = *out;
        if (parse_and(L, &e->b)) return -1;
        *out = e;
    }
    return 0;
}

static int mark_trace_level(aq_expr *e)
{
    switch (e->t) {
    case AQ_E_AND: case AQ_E_OR: {
        int a = mark_trace_level(e->a), b = mark_trace_level(e->b);
        e->trace_level = a && b;
        break;
    }
    case AQ_E_NOT: e->trace_level = mark_trace_level(e->a); break;
    default: e->trace_level = aq_is_trace_level(&e->col); break;
    }
    return e->trace_level;
}

void aq_expr_free(aq_expr *e)
{
    if (!e) return;
    aq_expr_free(e->a);
    aq_expr_free(e->b);
    if (e->has_re) regfree(&e->re);
    e->has_re = 0;
}

int aq_parse_where(aq_parse_ctx *pc, aq_expr **out, tl_err *err)
{
    lexer L;
    *out = NULL;
    if (lex_init(&L, pc, err)) return TL_EUSAGE;
    if (L.cur.t == T_EOF) return aq_errtok(err, pc->what, pc->text, 0, 1, "empty condition");
    aq_expr *e = NULL;
    if (parse_or(&L, &e)) { aq_expr_free(e); return TL_EUSAGE; }
    if (L.cur.t != T_EOF) {
        char d[300];
        aq_expr_free(e);
        if (L.cur.t == T_RP) return aq_errtok(err, pc->what, pc->text, L.cur.pos, L.cur.len, "unbalanced ')'");
        return aq_errtok(err, pc->what, pc->text, L.cur.pos, L.cur.len,
                         "expected AND, OR or the end, got %s", tok_desc(&L.cur, d, sizeof d));
    }
    mark_trace_level(e);
    *out = e;
    return TL_OK;
}

/* ---- lists ------------------------------------------------------------------ */

/* After a list item: a ',' (consumed) or the end continue the list (0);
 * anything else is reported as "expected ',' between <items>" (TL_EUSAGE). */
static int list_sep(lexer *L, const char *items)
{
    if (L->cur.t == T_COMMA) return lex_next(L) ? TL_EUSAGE : 0;
    if (L->cur.t == T_EOF) return 0;
    char d[300], fmt[96];
    snprintf(fmt, sizeof fmt, "expected ',' between %s, got %%s", items);
    return aq_errtok(L->err, L->pc->what, L->pc->text, L->cur.pos, L->cur.len, fmt, tok_desc(&L->cur, d, sizeof d));
}

int aq_parse_cols(aq_parse_ctx *pc, aq_colref **out, size_t *n, tl_err *err)
{
    lexer L;
    if (lex_init(&L, pc, err)) return TL_EUSAGE;
    TL_VEC(aq_colref) v = {0};
    while (L.cur.t != T_EOF) {
        aq_colref c;
        if (parse_colref(&L, &c)) { tl_vec_free(&v); return TL_EUSAGE; }
        tl_vec_push(&v, c);
        if (list_sep(&L, "columns")) { tl_vec_free(&v); return TL_EUSAGE; }
    }
    if (!v.n) return aq_errtok(err, pc->what, pc->text, 0, 1, "no columns given");
    *out = tl_arena_alloc(pc->arena, v.n * sizeof(aq_colref));
    memcpy(*out, v.v, v.n * sizeof(aq_colref));
    *n = v.n;
    tl_vec_free(&v);
    return TL_OK;
}

int aq_parse_aggs(aq_parse_ctx *pc, aq_aggdef **out, size_t *n, tl_err *err)
{
    lexer L;
    if (lex_init(&L, pc, err)) return TL_EUSAGE;
    TL_VEC(aq_aggdef) v = {0};
    char d[300];
    while (L.cur.t != T_EOF) {
        tok ft = L.cur;
        if (ft.t != T_IDENT) { tl_vec_free(&v); return aq_errtok(err, pc->what, pc->text, ft.pos, ft.len, "expected an aggregate such as sum(dur), got %s", tok_desc(&ft, d, sizeof d)); }
        aq_aggdef g;
        memset(&g, 0, sizeof g);
        const char *f = ft.s;
        if (!strcasecmp(f, "count")) g.fn = AQ_A_COUNT;
        else if (!strcasecmp(f, "sum") || !strcasecmp(f, "total")) g.fn = AQ_A_SUM;
        else if (!strcasecmp(f, "mean") || !strcasecmp(f, "avg")) g.fn = AQ_A_MEAN;
        else if (!strcasecmp(f, "min")) g.fn = AQ_A_MIN;
        else if (!strcasecmp(f, "max")) g.fn = AQ_A_MAX;
        else if (!strcasecmp(f, "median")) { g.fn = AQ_A_MEDIAN; g.q = 0.5; }
        else if (!strcasecmp(f, "std") || !strcasecmp(f, "stddev")) g.fn = AQ_A_STD;
        else if (!strcasecmp(f, "nunique") || !strcasecmp(f, "count_distinct")) g.fn = AQ_A_NUNIQUE;
        else if ((f[0] == 'p' || f[0] == 'P') && (isdigit((unsigned char)f[1]))) {
            char *e;
            double q = strtod(f + 1, &e);
            if (*e || q < 0 || q > 100) { tl_vec_free(&v); return aq_errtok(err, pc->what, pc->text, ft.pos, ft.len, "percentile '%s' must be p0 .. p100", f); }
            g.fn = AQ_A_PCT;
            g.q = q / 100.0;
        } else {
            tl_vec_free(&v);
            return aq_errtok(err, pc->what, pc->text, ft.pos, ft.len,
                             "unknown aggregate '%s' (count, sum, mean, min, max, median, p90, p99, pNN, std, nunique)", f);
        }
        if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; }
        char argname[300] = "";
        if (L.cur.t == T_LP) {
            if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; }
            if (L.cur.t == T_OP && !strcmp(L.cur.s, "*")) {
                if (g.fn != AQ_A_COUNT) { tl_vec_free(&v); return aq_errtok(err, pc->what, pc->text, L.cur.pos, L.cur.len, "only count takes *"); }
                g.star = 1;
                if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; }
            } else {
                tok ct = L.cur;
                if (parse_colref(&L, &g.col)) { tl_vec_free(&v); return TL_EUSAGE; }
                snprintf(argname, sizeof argname, "%s", g.col.display);
                aq_type ty = g.col.def->type;
                int num_fn = g.fn != AQ_A_COUNT && g.fn != AQ_A_NUNIQUE;
                if (num_fn && ty == AQ_STR) {
                    tl_vec_free(&v);
                    return aq_errtok(err, pc->what, pc->text, ct.pos, ct.len,
                                     "type mismatch: %s() needs a number, but %s is text (count or nunique work on text)", f, g.col.display);
                }
            }
            if (L.cur.t != T_RP) { tl_vec_free(&v); return aq_errtok(err, pc->what, pc->text, L.cur.pos, L.cur.len, "expected ')', got %s", tok_desc(&L.cur, d, sizeof d)); }
            if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; }
        } else if (g.fn == AQ_A_COUNT) {
            g.star = 1;
        } else {
            tl_vec_free(&v);
            return aq_errtok(err, pc->what, pc->text, ft.pos, ft.len, "%s needs a column: %s(dur)", f, f);
        }
        char lf[32];
        snprintf(lf, sizeof lf, "%s", f);
        for (char *q = lf; *q; q++) *q = (char)tolower((unsigned char)*q);
        if (!strcmp(lf, "avg")) strcpy(lf, "mean");
        if (!strcmp(lf, "stddev")) strcpy(lf, "std");
        if (!strcmp(lf, "total")) strcpy(lf, "sum");
        if (!strcmp(lf, "count_distinct")) strcpy(lf, "nunique");
        g.name = g.star ? tl_arena_strdup(pc->arena, "count") : tl_arena_printf(pc->arena, "%s(%s)", lf, argname);
        if (kw(&L.cur, "as")) {
            if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; }
            if (L.cur.t != T_IDENT && L.cur.t != T_QIDENT && L.cur.t != T_STR) { tl_vec_free(&v); return aq_errtok(err, pc->what, pc->text, L.cur.pos, L.cur.len, "expected a name after AS"); }
            g.name = L.cur.s;
            if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; }
        }
        tl_vec_push(&v, g);
        if (list_sep(&L, "aggregates")) { tl_vec_free(&v); return TL_EUSAGE; }
    }
    if (!v.n) return aq_errtok(err, pc->what, pc->text, 0, 1, "no aggregates given");
    *out = tl_arena_alloc(pc->arena, v.n * sizeof(aq_aggdef));
    memcpy(*out, v.v, v.n * sizeof(aq_aggdef));
    *n = v.n;
    tl_vec_free(&v);
    return TL_OK;
}

int aq_parse_sort(aq_parse_ctx *pc, aq_sortkey **out, size_t *n, tl_err *err)
{
    lexer L;
    if (lex_init(&L, pc, err)) return TL_EUSAGE;
    TL_VEC(aq_sortkey) v = {0};
    char d[300];
    while (L.cur.t != T_EOF) {
        aq_sortkey k;
        memset(&k, 0, sizeof k);
        if (L.cur.t == T_OP && (!strcmp(L.cur.s, "-") || !strcmp(L.cur.s, "+"))) {
            k.desc = L.cur.s[0] == '-';
            if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; }
        } else if (L.cur.t == T_NUM && L.cur.s[0] == '-') {
            tl_vec_free(&v);
            return aq_errtok(err, pc->what, pc->text, L.cur.pos, L.cur.len, "expected a column name");
        }
        tok t = L.cur;
        if (t.t != T_IDENT && t.t != T_QIDENT && t.t != T_STR) { tl_vec_free(&v); return aq_errtok(err, pc->what, pc->text, t.pos, t.len, "expected a column name, got %s", tok_desc(&t, d, sizeof d)); }
        k.pos = t.pos;
        char name[400];
        snprintf(name, sizeof name, "%s", t.s);
        if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; }
        if (L.cur.t == T_LP && t.t == T_IDENT) {
            /* an aggregate name such as sum(dur) or count(*) */
            if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; }
            const char *arg = L.cur.t == T_OP && !strcmp(L.cur.s, "*") ? "*" : L.cur.s;
            if (L.cur.t == T_EOF || L.cur.t == T_RP) { tl_vec_free(&v); return aq_errtok(err, pc->what, pc->text, L.cur.pos, L.cur.len, "expected a column inside ()"); }
            size_t nl = strlen(name);
            snprintf(name + nl, sizeof name - nl, "(%s)", arg);
            if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; }
            if (L.cur.t != T_RP) { tl_vec_free(&v); return aq_errtok(err, pc->what, pc->text, L.cur.pos, L.cur.len, "expected ')'"); }
            if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; }
        }
        k.len = (int)(L.cur.t == T_EOF ? (int)strlen(pc->text) : L.cur.pos) - k.pos;
        while (k.len > 1 && isspace((unsigned char)pc->text[k.pos + k.len - 1])) k.len--;
        if (kw(&L.cur, "desc")) { k.desc = 1; if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; } }
        else if (kw(&L.cur, "asc")) { k.desc = 0; if (lex_next(&L)) { tl_vec_free(&v); return TL_EUSAGE; } }
        k.name = tl_arena_strdup(pc->arena, name);
        tl_vec_push(&v, k);
        if (list_sep(&L, "sort keys")) { tl_vec_free(&v); return TL_EUSAGE; }
    }
    *out = tl_arena_alloc(pc->arena, (v.n ? v.n : 1) * sizeof(aq_sortkey));
    if (v.n) memcpy(*out, v.v, v.n * sizeof(aq_sortkey));
    *n = v.n;
    tl_vec_free(&v);
    return TL_OK;
}

/* ---- LIKE ----------------------------------------------------------------- */
int aq_like(const char *p, const char *s)
{
    /* iterative with backtracking on the last '%' */
    const char *star = NULL, *ss = NULL;
    while (*s) {
        if (*p == '%') { star = p++; ss = s; continue; }
        if (*p && (*p == '_' || tolower((unsigned char)*p) == tolower((unsigned char)*s))) {
            if (*p == '_') { /* one UTF-8 character */
                s++;
                while (((unsigned char)*s & 0xC0) == 0x80) s++;
                p++;
            } else { p++; s++; }
            continue;
        }
        if (star) { p = star + 1; s = ++ss; while (((unsigned char)*s & 0xC0) == 0x80) s = ++ss; continue; }
        return 0;
    }
    while (*p == '%') p++;
    return *p == 0;
}

/* ---- evaluation -------------------------------------------------------------- */
static int parse_num(const char *s, double *v)
{
    if (!s || !*s) return -1;
    char *e;
    *v = strtod(s, &e);
    while (*e == ' ') e++;
    return *e ? -1 : 0;
}

static int cmp_num(aq_op op, double a, double b)
{
    switch (op) {
    case AQ_OP_EQ: return a == b;
    case AQ_OP_NE: return a != b;
    case AQ_OP_LT: return a < b;
    case AQ_OP_LE: return a <= b;
    case AQ_OP_GT: return a > b;
    case AQ_OP_GE: return a >= b;
    default: return 0;
    }
}

static int cmp_i64(aq_op op, int64_t a, const aq_lit *l)
{
    if (!l->isint) return cmp_num(op, (double)a, l->f);
    int64_t b = l->i;
    switch (op) {
    case AQ_OP_EQ: return a == b;
    case AQ_OP_NE: return a != b;
    case AQ_OP_LT: return a < b;
    case AQ_OP_LE: return a <= b;
    case AQ_OP_GT: return a > b;
    case AQ_OP_GE: return a >= b;
    default: return 0;
    }
}

/* A comparison/IN leaf against one non-null text value. */
static int match_text(const aq_expr *e, const char *s)
{
    if (e->t == AQ_E_IN) {
        int hit = 0;
        for (size_t k = 0; k < e->nlist && !hit; k++) {
            const aq_lit *l = &e->list[k];
            if (l->isnum) {
                double v;
                hit = parse_num(s, &v) == 0 && v == l->f;
            } else {
                hit = !strcmp(s, l->s);
            }
        }
        return hit != e->negate;
    }
    int r;
    switch (e->op) {
    case AQ_OP_RE: r = regexec(&e->re, s, 0, NULL, 0) == 0; break;
    case AQ_OP_NRE: r = regexec(&e->re, s, 0, NULL, 0) != 0; break;
    case AQ_OP_CONTAINS: r = (e->icase ? strcasestr(s, e->lit.s) : strstr(s, e->lit.s)) != NULL; break;
    case AQ_OP_LIKE: r = aq_like(e->lit.s, s); break;
    default:
        if (e->lit.isnum) {
            double v;
            r = parse_num(s, &v) == 0 && cmp_num(e->op, v, e->lit.f);
        } else {
            int c = strcmp(s, e->lit.s);
            r = e->op == AQ_OP_EQ ? c == 0 : e->op == AQ_OP_NE ? c != 0 : e->op == AQ_OP_LT ? c < 0
              : e->op == AQ_OP_LE ? c <= 0 : e->op == AQ_OP_GT ? c > 0 : c >= 0;
        }
        break;
    }
    return r != e->negate;
}

static int match_i64(const aq_expr *e, int64_t v)
{
    if (e->t == AQ_E_IN) {
        int hit = 0;
        for (size_t k = 0; k < e->nlist && !hit; k++) hit = e->list[k].isnum && cmp_i64(AQ_OP_EQ, v, &e->list[k]);
        return hit != e->negate;
    }
    return cmp_i64(e->op, v, &e->lit);
}

static int match_f64(const aq_expr *e, double v)
{
    if (e->t == AQ_E_IN) {
        int hit = 0;
        for (size_t k = 0; k < e->nlist && !hit; k++) hit = e->list[k].isnum && v == e->list[k].f;
        return hit != e->negate;
    }
    return cmp_num(e->op, v, e->lit.f);
}

static void leaf_eval(const aq_expr *e, const aq_vec *v, size_t m, uint8_t *mask, tl_arena *a)
{
    size_t n = v->konst ? 1 : m;
    if (e->t == AQ_E_NULL) {
        for (size_t i = 0; i < n; i++) {
            int isnull;
            switch (v->vt) {
            case AQ_V_I64: isnull = v->i[i] == INT64_MIN; break;
            case AQ_V_F64: isnull = isnan(v->f[i]); break;
            case AQ_V_SID: isnull = v->s[i] == 0; break;
            default: isnull = v->t[i] == NULL; break;
            }
            mask[i] = (uint8_t)(isnull != e->negate);
        }
    } else if (v->vt == AQ_V_I64) {
        for (size_t i = 0; i < n; i++) mask[i] = v->i[i] != INT64_MIN && match_i64(e, v->i[i]);
    } else if (v->vt == AQ_V_F64) {
        for (size_t i = 0; i < n; i++) mask[i] = !isnan(v->f[i]) && match_f64(e, v->f[i]);
    } else if (v->vt == AQ_V_SID) {
        /* decided once per distinct string of this trace */
        uint8_t *memo = tl_arena_alloc(a, v->dict->n ? v->dict->n : 1);
        memset(memo, 2, v->dict->n ? v->dict->n : 1);
        for (size_t i = 0; i < n; i++) {
            uint32_t s = v->s[i];
            if (!s) { mask[i] = 0; continue; }
            if (memo[s] == 2) memo[s] = (uint8_t)match_text(e, tl_dict_get(v->dict, s, NULL));
            mask[i] = memo[s];
        }
    } else {
        for (size_t i = 0; i < n; i++) mask[i] = v->t[i] && match_text(e, v->t[i]);
    }
    if (v->konst) memset(mask, mask[0], m);
}

int aq_expr_eval_trace(const aq_trace *t, const aq_expr *e, tl_arena *a)
{
    switch (e->t) {
    case AQ_E_AND: return aq_expr_eval_trace(t, e->a, a) && aq_expr_eval_trace(t, e->b, a);
    case AQ_E_OR: return aq_expr_eval_trace(t, e->a, a) || aq_expr_eval_trace(t, e->b, a);
    case AQ_E_NOT: return !aq_expr_eval_trace(t, e->a, a);
    default: {
        aq_vec v;
        if (aq_trace_value(t, &e->col, a, &v)) return 0;
        uint8_t m;
        leaf_eval(e, &v, 1, &m, a);
        return m;
    }
    }
}

int aq_expr_eval(aq_tctx *x, const aq_expr *e, const uint32_t *rows, size_t m, uint8_t *mask, tl_err *err)
{
    if (!m) return TL_OK;
    if (e->trace_level) {
        memset(mask, aq_expr_eval_trace(x->t, e, &x->arena), m);
        return TL_OK;
    }
    switch (e->t) {
    case AQ_E_AND: case AQ_E_OR: {
        int rc = aq_expr_eval(x, e->a, rows, m, mask, err);
        if (rc) return rc;
        uint8_t want = e->t == AQ_E_AND; /* rows whose outcome is still open */
        size_t k = 0;
        for (size_t i = 0; i < m; i++) k += mask[i] == want;
        if (!k) return TL_OK;
        if (k == m) return aq_expr_eval(x, e->b, rows, m, mask, err);
        uint32_t *sub = tl_arena_alloc(&x->arena, k * sizeof *sub);
        uint8_t *m2 = tl_arena_alloc(&x->arena, k);
        for (size_t i = 0, j = 0; i < m; i++)
            if (mask[i] == want) sub[j++] = rows[i];
        if ((rc = aq_expr_eval(x, e->b, sub, k, m2, err))) return rc;
        for (size_t i = 0, j = 0; i < m; i++)
            if (mask[i] == want) mask[i] = m2[j++];
        return TL_OK;
    }
    case AQ_E_NOT: {
        int rc = aq_expr_eval(x, e->a, rows, m, mask, err);
        if (rc) return rc;
        for (size_t i = 0; i < m; i++) mask[i] = !mask[i];
        return TL_OK;
    }
    default: {
        aq_vec v;
        int rc = aq_vec_get(x, &e->col, rows, m, &v, err);
        if (rc) return rc;
        leaf_eval(e, &v, m, mask, &x->arena);
        return TL_OK;
    }
    }
}
