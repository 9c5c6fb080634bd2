/* tl_dumpcounts.c — test helper: prints, as JSON, the stored event counts
 * of one trace per category, per process and per (process, thread), plus
 * flow and metadata counts, so tests can compare them with counts computed
 * independently from the source JSON. Usage: tl_dumpcounts DB ID */
#include "query/core/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kv { char *k; long n; } kv;
static kv *tab[3];
static size_t ntab[3], cap[3];

static void bump(int t, const char *k)
{
    for (size_t i = 0; i < ntab[t]; i++)
        if (!strcmp(tab[t][i].k, k)) { tab[t][i].n++; return; }
    if (ntab[t] == cap[t]) { cap[t] = cap[t] ? cap[t] * 2 : 64; tab[t] = realloc(tab[t], cap[t] * sizeof(kv)); }
    tab[t][ntab[t]].k = strdup(k);
    tab[t][ntab[t]++].n = 1;
}

static void id_key(const tl_trace *t, int64_t v, int is_str, tl_buf *b)
{
    if (is_str) { tl_buf_putc(b, 's'); tl_buf_puts(b, tl_trace_str(t, (uint32_t)v)); }
    else tl_buf_printf(b, "i%lld", (long long)v);
}

int main(int argc, char **argv)
{
    if (argc != 3) { fprintf(stderr, "usage: tl_dumpcounts DB ID\n"); return 2; }
    tl_store *s;
    tl_err err = {0};
    if (tl_store_open(argv[1], &s, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    tl_reader *r;
    uint64_t id;
    tl_trace *t;
    if (tl_reader_open(s, &r, &err) || tl_reader_resolve(r, argv[2], &id, &err) || tl_trace_load(r, id, &t, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    for (size_t i = 0; i < t->n; i++) {
        tl_buf p = {0}, pt = {0};
        bump(0, t->cat[i] ? tl_trace_str(t, t->cat[i]) : "<none>");
        id_key(t, t->pid[i], t->idflags[i] & 1, &p);
        bump(1, p.p);
        tl_buf_append(&pt, p.p, p.n);
        tl_buf_putc(&pt, '|');
        id_key(t, t->tid[i], t->idflags[i] & 2, &pt);
        bump(2, pt.p);
        tl_buf_free(&p);
        tl_buf_free(&pt);
    }
    const char *names[3] = {"by_cat", "by_pid", "by_pid_tid"};
    printf("{\"events\":%zu,\"flows\":%zu,\"meta\":%zu", t->n, t->nflows, t->nmeta);
    for (int k = 0; k < 3; k++) {
        printf(",\"%s\":{", names[k]);
        for (size_t i = 0; i < ntab[k]; i++) {
            tl_buf b = {0};
            tl_buf_json_str(&b, tab[k][i].k, strlen(tab[k][i].k));
            printf("%s%s:%ld", i ? "," : "", b.p, tab[k][i].n);
            tl_buf_free(&b);
        }
        printf("}");
    }
    printf("}\n");
    tl_trace_free(t);
    tl_reader_close(r);
    tl_store_close(s);
    return 0;
}
