/* sglang_names.c — SGLang's profiler op names without their volatile
 * suffix, as the reference's --enable_pseudo_ops does first
 * (Trace2Tree/extensions/pseudo_ops_utils.normalize_sglang_profiler_op_names):
 * a cpu op named "sglang_profiler::<name>_<digits>" is renamed
 * "sglang_profiler::<name>" (only the last "_<digits>" goes), so the calls
 * of one op group together and meet their category and perf model. The
 * renamed trace is a derived trace (inference.h), stored by the command. */
#include "query/inference/inference.h"
#include "query/inference/inference_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char PREFIX[] = "sglang_profiler::";

/* Length of the name without its trailing "_<digits>", or 0 when it keeps
 * its name (re.match(r"^(sglang_profiler::.+?)_\d+$")). */
static size_t stripped_len(const char *s)
{
    size_t n = strlen(s), p = sizeof PREFIX - 1;
    if (n <= p || strncmp(s, PREFIX, p)) return 0;
    size_t k = n;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
    if (k == n || k == 0 || s[k - 1] != '_') return 0;
    return k - 1 > p ? k - 1 : 0; /* at least one character of <name> */
}

size_t tl_sglang_names(const tl_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->kind[i] == TL_K_CPU_OP && stripped_len(tl_trace_str(t, t->name[i]))) n++;
    return n;
}

uint64_t tl_sglang_names_id(const tl_trace *t)
{
    return tl_hash64(&t->id, sizeof t->id, tl_hash64("sglang-names-1", 14, 0));
}

int tl_sglang_names_build(const tl_trace *t, tl_derived *out, tl_err *err)
{
    memset(out, 0, sizeof *out);
    tl_build *b = tl_build_new();
    tl_build_set_format(b, "kineto");
    for (size_t i = 0; i < t->n; i++) {
        tl_ev_in e;
        tl_event_in(b, t, i, &e);
        const char *nm = tl_trace_str(t, t->name[i]);
        size_t k = t->kind[i] == TL_K_CPU_OP ? stripped_len(nm) : 0;
        if (k) e.name = tl_build_str(b, nm, k);
        tl_build_event(b, &e);
    }
    inf_pin_source_tree(t, b);
    return inf_derived_finish(t, b, inf_uid_end(t), tl_sglang_names_id(t), "sglang-names", "{\"sglang_names\":\"normalized\"", out,
                              err);
}
