/* cmd_label.c — `tracelens label TRACE KEY=VALUE ...`: sets, changes and
 * removes the labels of stored traces after ingest. Only the catalog record
 * changes (tl_store_edit_catalog: one write transaction per trace); the
 * columns are not touched and nothing is parsed again. TRACE is an id or
 * unique prefix, or a `query --trace` selector (label:K=V, config:X, ...)
 * naming any number of traces. Without edits it prints the labels. */
#include "tools/cli.h"
#include "ingest/json.h"
#include "query/adhoc/adhoc.h"

#include <stdlib.h>
#include <string.h>

static const char *HELP =
    "Usage: tracelens label [--db DIR] TRACE [KEY=VALUE | KEY= | --rm KEY]...\n"
    "\n"
    "Sets, changes or removes labels of stored traces (the labels `ingest --label`\n"
    "sets; `query --trace label:KEY=VALUE`, `query --by label.KEY`, `sql ...\n"
    "label_KEY` and `ls --labels` read them). Only the catalog record changes, in\n"
    "one write transaction per trace: the trace is not parsed or stored again.\n"
    "\n"
    "TRACE: a trace id or a unique prefix of at least 4 hex digits (an ambiguous\n"
    "prefix lists the candidates), or a selector of `tracelens query --trace`\n"
    "(label:KEY=VALUE, config:GLOB, run:GLOB, rank:N, format:NAME, path:SUBSTR,\n"
    "since:WHEN, last:N, ...) naming every trace it matches.\n"
    "\n"
    "Edits, applied in order:\n"
    "  KEY=VALUE        set KEY (replacing its value when present)\n"
    "  KEY=             remove KEY\n"
    "  --rm KEY         remove KEY (repeatable)\n"
    "Without edits, prints each trace's id and labels (KEY=VALUE,KEY=VALUE).\n"
    "After edits, prints each changed trace's id and its labels now.\n"
    "\n"
    "Options:\n"
    "  --db DIR         the store (see tracelens --help)\n"
    "  -h, --help       this text\n"
    "\n"
    "Examples:\n"
    "  tracelens label 0c8a bs=32 set=nightly\n"
    "  tracelens label 0c8a bs=                 (removes bs)\n"
    "  tracelens label label:set=nightly --rm set promoted=yes\n"
    "\n"
    "Exit status: 0 ok; 2 bad command line (an edit without '=', an empty key);\n"
    "3 store error (cannot open or write it, a store list); 4 no such trace, an\n"
    "ambiguous prefix, or a selector that matches no trace.\n";

typedef struct label_kv { char *key, *val; } label_kv;
typedef TL_VEC(label_kv) label_list;
typedef struct label_edit { const char *key, *val; } label_edit; /* val NULL: remove */
typedef TL_VEC(label_edit) edit_list;
typedef TL_VEC(uint64_t) id_list;
typedef struct edit_ctx {
    const label_edit *edits;
    size_t nedits;
    tl_buf shown; /* the labels after the edit, KEY=VALUE,... */
    const char *want; /* with it, wanted gets this key's value ("" if absent) */
    tl_buf wanted;
} edit_ctx;

static void labels_free(label_list *l)
{
    for (size_t i = 0; i < l->n; i++) { free(l->v[i].key); free(l->v[i].val); }
    tl_vec_free(l);
}

static char *unescaped(tl_json *j, const char *s, size_t n)
{
    tl_buf b = {0};
    if (tl_json_unescape(j, s, n, &b)) { tl_buf_free(&b); return NULL; }
    if (!b.p) tl_buf_putc(&b, 0);
    return b.p;
}

/* Reads the labels object starting at j's position into out: string values
 * decoded, other values as their JSON text (written back as text). */
static int read_labels(tl_json *j, label_list *out)
{
    if (tl_json_expect(j, '{', "labels object")) return -1;
    int first = 1;
    const char *k, *v;
    size_t kn, vn;
    while (tl_json_obj_next(j, &first, &k, &kn) == 0 && k) {
        label_kv kv = {unescaped(j, k, kn), NULL};
        if (tl_json_peek(j) == '"') {
            if (tl_json_string(j, &v, &vn, NULL)) { free(kv.key); return -1; }
            kv.val = unescaped(j, v, vn);
        } else {
            if (tl_json_skip(j, &v, &vn)) { free(kv.key); return -1; }
            kv.val = tl_xmalloc(vn + 1);
            memcpy(kv.val, v, vn);
            kv.val[vn] = 0;
        }
        if (!kv.key || !kv.val) { free(kv.key); free(kv.val); return -1; }
        tl_vec_push(out, kv);
    }
    return j->err->code ? -1 : 0;
}

static void apply_edits(label_list *l, const label_edit *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t at = l->n;
        for (size_t k = 0; k < l->n; k++)
            if (!strcmp(l->v[k].key, e[i].key)) at = k;
        if (!e[i].val) {
            if (at == l->n) continue;
            free(l->v[at].key);
            free(l->v[at].val);
            memmove(&l->v[at], &l->v[at + 1], (l->n - at - 1) * sizeof *l->v);
            l->n--;
        } else if (at < l->n) {
            free(l->v[at].val);
            l->v[at].val = tl_xstrdup(e[i].val);
        } else {
            label_kv kv = {tl_xstrdup(e[i].key), tl_xstrdup(e[i].val)};
            tl_vec_push(l, kv);
        }
    }
}

static void labels_json(tl_buf *b, const label_list *l)
{
    tl_buf_putc(b, '{');
    for (size_t i = 0; i < l->n; i++) {
        if (i) tl_buf_putc(b, ',');
        tl_buf_json_str(b, l->v[i].key, strlen(l->v[i].key));
        tl_buf_putc(b, ':');
        tl_buf_json_str(b, l->v[i].val, strlen(l->v[i].val));
    }
    tl_buf_putc(b, '}');
}

static void labels_text(tl_buf *b, const label_list *l)
{
    b->n = 0;
    for (size_t i = 0; i < l->n; i++) tl_buf_printf(b, "%s%s=%s", i ? "," : "", l->v[i].key, l->v[i].val);
    tl_buf_putc(b, 0);
    b->n--;
}

/* The catalog record with its labels object replaced (added as the first
 * member when the record has none: the catalog loader of queries reads the
 * members before "metadata" only). NULL with err set when the record does
 * not parse. */
static char *edit_record(void *ctx, const char *json, tl_err *err)
{
    edit_ctx *e = ctx;
    tl_json j;
    tl_json_init_buf(&j, json, strlen(json), "catalog record", err);
    label_list l = {0};
    size_t lab0 = 0, lab1 = 0;
    int first = 1, found = 0;
    const char *k, *v;
    size_t kn, vn;
    if (tl_json_expect(&j, '{', "catalog object")) return NULL;
    size_t open = j.pos;
    for (;;) {
        if (tl_json_obj_next(&j, &first, &k, &kn)) { labels_free(&l); return NULL; }
        if (!k) break;
        if (kn == 6 && !memcmp(k, "labels", 6) && !found) {
            found = 1;
            if (tl_json_peek(&j) < 0) { labels_free(&l); return NULL; }
            lab0 = j.pos;
            if (read_labels(&j, &l)) { labels_free(&l); return NULL; }
            lab1 = j.pos;
        } else if (tl_json_skip(&j, &v, &vn)) {
            labels_free(&l);
            return NULL;
        }
    }
    apply_edits(&l, e->edits, e->nedits);
    tl_buf out = {0};
    if (found) {
        tl_buf_append(&out, json, lab0);
        labels_json(&out, &l);
        tl_buf_puts(&out, json + lab1);
    } else {
        tl_buf_append(&out, json, open);
        tl_buf_puts(&out, "\"labels\":");
        labels_json(&out, &l);
        if (!first) tl_buf_putc(&out, ',');
        tl_buf_puts(&out, json + open);
    }
    tl_buf_putc(&out, 0);
    labels_text(&e->shown, &l);
    if (e->want) {
        e->wanted.n = 0;
        for (size_t i = 0; i < l.n; i++)
            if (!strcmp(l.v[i].key, e->want)) tl_buf_puts(&e->wanted, l.v[i].val);
        tl_buf_putc(&e->wanted, 0);
    }
    labels_free(&l);
    return out.p;
}

int tl_cli_catalog_labels(const char *json, const char *key, tl_buf *out)
{
    tl_err err = {0};
    edit_ctx e = {0};
    e.want = key;
    char *again = edit_record(&e, json, &err);
    out->n = 0;
    if (again) tl_buf_puts(out, key ? e.wanted.p : e.shown.p);
    tl_buf_putc(out, 0);
    out->n--;
    free(again);
    tl_buf_free(&e.shown);
    tl_buf_free(&e.wanted);
    return again ? 0 : -1;
}

/* The ids TRACE names: one id (prefix resolved) or every trace a
 * selector matches. Returns an exit code. */
static int target_ids(tl_store *s, const char *target, id_list *ids)
{
    tl_err err = {0};
    if (!strchr(target, ':')) {
        tl_reader *r;
        if (tl_reader_open(s, &r, &err)) { fprintf(stderr, "tracelens label: %s\n", err.msg); return TL_EXIT_STORE; }
        uint64_t id;
        int rc = tl_reader_resolve(r, target, &id, &err);
        tl_reader_close(r);
        if (rc) { fprintf(stderr, "tracelens label: %s\n", err.msg); return rc == TL_ENOTFOUND ? TL_EXIT_NOTFOUND : TL_EXIT_STORE; }
        tl_vec_push(ids, id);
        return TL_EXIT_OK;
    }
    tl_adhoc_query q;
    memset(&q, 0, sizeof q);
    q.table = "traces";
    q.traces = &target;
    q.ntraces = 1;
    q.select = "trace_id";
    q.limit = -1;
    tl_table *t = NULL;
    int rc = tl_adhoc_run(s, &q, &t, &err);
    if (rc) {
        fprintf(stderr, "tracelens label: %s\n", err.msg);
        return rc == TL_EUSAGE ? TL_EXIT_USAGE : rc == TL_ENOTFOUND ? TL_EXIT_NOTFOUND : TL_EXIT_STORE;
    }
    for (size_t r = 0; r < t->nrows; r++) {
        uint64_t id;
        if (!tl_id_parse(t->cols[0].v.s[r], &id)) tl_vec_push(ids, id);
    }
    tl_table_free(t);
    if (!ids->n) { fprintf(stderr, "tracelens label: no stored trace matches %s\n", target); return TL_EXIT_NOTFOUND; }
    return TL_EXIT_OK;
}

/* Prints each trace's labels, read from its catalog record. */
static int show_labels(tl_store *s, const uint64_t *ids, size_t n)
{
    edit_ctx e = {0};
    tl_reader *r;
    tl_err err = {0};
    if (tl_reader_open(s, &r, &err)) { fprintf(stderr, "tracelens label: %s\n", err.msg); return TL_EXIT_STORE; }
    int code = TL_EXIT_OK;
    for (size_t i = 0; i < n && !code; i++) {
        const char *json;
        char hex[17], *again = NULL;
        tl_id_format(ids[i], hex);
        if (tl_reader_catalog(r, ids[i], &json, &err) || !(again = edit_record(&e, json, &err))) {
            fprintf(stderr, "tracelens label: %s\n", err.msg);
            code = TL_EXIT_STORE;
        } else {
            printf("%s\t%s\n", hex, e.shown.p);
        }
        free(again);
    }
    tl_reader_close(r);
    tl_buf_free(&e.shown);
    return code;
}

enum { L_HELP, L_DB, L_RM };
static const tl_cli_opt OPTS[] = {
    [L_HELP] = {"-h|--help", TL_CLI_FLAG},
    [L_DB] = {"--db", TL_CLI_VALUE},
    [L_RM] = {"--rm|--remove", TL_CLI_VALUE},
};

/* Parses the command line into db, the target and the edits; -1 when
 * --help was printed, else 0 or an exit code. */
static int parse_label(int argc, char **argv, const char **db, const char **target, edit_list *edits)
{
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, OPTS, sizeof OPTS / sizeof *OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        if (k == L_HELP) { fputs(HELP, stdout); return -1; }
        if (k == L_DB) *db = p.val;
        else if (k == L_RM) {
            if (!*p.val) { fprintf(stderr, "tracelens label: --rm wants a label key\n"); return TL_EXIT_USAGE; }
            label_edit e = {tl_xstrdup(p.val), NULL};
            tl_vec_push(edits, e);
        } else if (k == TL_CLI_POSITIONAL && !*target) *target = p.arg;
        else if (k == TL_CLI_POSITIONAL) {
            const char *eq = strchr(p.arg, '=');
            if (!eq || eq == p.arg) {
                fprintf(stderr, "tracelens label: '%s' is not KEY=VALUE (KEY= removes KEY)\n", p.arg);
                return TL_EXIT_USAGE;
            }
            label_edit e = {tl_xstrndup(p.arg, (size_t)(eq - p.arg)), eq[1] ? eq + 1 : NULL};
            tl_vec_push(edits, e);
        } else if (k == TL_CLI_BAD) { fprintf(stderr, "tracelens label: %s\n", p.msg); return TL_EXIT_USAGE; }
        else {
            fprintf(stderr, "tracelens label: unknown option '%s'%s (see tracelens label --help)\n", p.arg, tl_cli_hint(&p));
            return TL_EXIT_USAGE;
        }
    }
    if (!*target) { fprintf(stderr, "tracelens label: which trace? (an id from `tracelens ls`, or a selector)\n"); return TL_EXIT_USAGE; }
    return 0;
}

static void edits_free(edit_list *edits)
{
    for (size_t i = 0; i < edits->n; i++) free((char *)edits->v[i].key); /* values point into argv */
    tl_vec_free(edits);
}

int tl_cmd_label(int argc, char **argv)
{
    const char *db = NULL, *target = NULL;
    edit_list edits = {0};
    int rc = parse_label(argc, argv, &db, &target, &edits);
    if (rc) { edits_free(&edits); return rc < 0 ? TL_EXIT_OK : rc; }
    tl_store *s = tl_cli_store_read(db);
    if (!s) { edits_free(&edits); return TL_EXIT_STORE; }
    id_list ids = {0};
    int code = target_ids(s, target, &ids);
    if (!code && !edits.n) code = show_labels(s, ids.v, ids.n);
    edit_ctx e = {edits.v, edits.n, {0}};
    for (size_t i = 0; !code && edits.n && i < ids.n; i++) {
        tl_err err = {0};
        char hex[17];
        tl_id_format(ids.v[i], hex);
        int w = tl_store_edit_catalog(s, ids.v[i], edit_record, &e, &err);
        if (w) {
            fprintf(stderr, "tracelens label: %s\n", err.msg);
            code = w == TL_ENOTFOUND ? TL_EXIT_NOTFOUND : TL_EXIT_STORE;
        } else {
            printf("%s\t%s\n", hex, e.shown.p ? e.shown.p : "");
        }
    }
    tl_buf_free(&e.shown);
    tl_vec_free(&ids);
    tl_store_close(s);
    edits_free(&edits);
    return code;
}
