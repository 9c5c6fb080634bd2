/* arch.c — GPU arch tables for the roofline (perf-models.md §6.5): the
 * reference's JSON format (name, mem_bw_gbps, max_achievable_tflops keyed by
 * Compute Spec), loading by path or shipped platform name (data/arch/), and
 * the mapping from a trace's deviceProperties GPU name to a shipped table. */
#include "query/perfmodel/pm_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tl_pm_arch_free(tl_pm_arch *arch)
{
    if (!arch) return;
    tl_arena_free(&arch->arena);
    free(arch);
}

static int num_of(const tl_pv *v, double *out)
{
    if (!v || v->kind == TL_PV_BOOL) return -1;
    return tl_pv_num(v, out);
}

int tl_pm_arch_parse(const char *json, size_t n, tl_pm_arch **out, tl_err *err)
{
    *out = NULL;
    tl_pm_arch *a = tl_xcalloc(1, sizeof *a);
    tl_arena_init(&a->arena, 4096);
    tl_pv *root;
    int rc = tl_pv_parse(&a->arena, json, n, &root, err);
    if (rc) {
        tl_err_prefix(err, "arch JSON");
        tl_pm_arch_free(a);
        return rc;
    }
    if (!root || root->kind != TL_PV_DICT) {
        tl_pm_arch_free(a);
        return tl_errf(err, TL_EFORMAT, "arch JSON: expected an object");
    }
    const tl_pv *name = tl_pv_get(root, "name");
    a->name = tl_arena_strdup(&a->arena, name && name->kind == TL_PV_STR ? name->u.s.p : "");
    double v;
    if (num_of(tl_pv_get(root, "mem_bw_gbps"), &v) == 0) {
        a->has_mem_bw = 1;
        a->mem_bw_gbps = v;
    }
    a->memory_gb = num_of(tl_pv_get(root, "memory_gb"), &v) == 0 ? v : NAN;
    const tl_pv *peaks = tl_pv_get(root, "max_achievable_tflops");
    if (peaks && peaks->kind != TL_PV_DICT) {
        tl_pm_arch_free(a);
        return tl_errf(err, TL_EFORMAT, "arch JSON: max_achievable_tflops must be an object");
    }
    size_t np = tl_pv_len(peaks);
    a->peak_spec = tl_arena_zalloc(&a->arena, (np ? np : 1) * sizeof *a->peak_spec);
    a->peak_tflops = tl_arena_zalloc(&a->arena, (np ? np : 1) * sizeof *a->peak_tflops);
    for (size_t i = 0; i < np; i++) {
        const tl_pv *k = peaks->u.seq.k[i];
        if (!k || k->kind != TL_PV_STR || num_of(peaks->u.seq.v[i], &v) != 0) {
            tl_pm_arch_free(a);
            return tl_errf(err, TL_EFORMAT, "arch JSON: max_achievable_tflops entry %zu is not key: number", i);
        }
        a->peak_spec[a->npeaks] = tl_arena_strdup(&a->arena, k->u.s.p);
        a->peak_tflops[a->npeaks++] = v;
    }
    *out = a;
    return 0;
}

int tl_pm_arch_load_file(const char *path, tl_pm_arch **out, tl_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return tl_errf(err, TL_EIO, "%s: cannot open arch file", path);
    tl_buf b = {0};
    char chunk[8192];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) tl_buf_append(&b, chunk, k);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        tl_buf_free(&b);
        return tl_errf(err, TL_EIO, "%s: read error", path);
    }
    int rc = tl_pm_arch_parse(b.p ? b.p : "", b.n, out, err);
    tl_buf_free(&b);
    if (rc) tl_err_prefix(err, "%s", path);
    return rc;
}

int tl_pm_arch_load_platform(const char *datadir, const char *platform, tl_pm_arch **out, tl_err *err)
{
    *out = NULL;
    if (!platform || !*platform || strchr(platform, '/') || strchr(platform, '\\') || platform[0] == '.')
        return tl_errf(err, TL_EUSAGE, "bad GPU platform name '%s'", platform ? platform : "");
    char up[128];
    size_t n = strlen(platform);
    if (n >= sizeof up) return tl_errf(err, TL_EUSAGE, "GPU platform name too long");
    for (size_t i = 0; i <= n; i++) up[i] = (char)toupper((unsigned char)platform[i]);
    const char *dir = datadir && *datadir ? datadir : ".";
    for (int pass = 0; pass < 2; pass++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/arch/%s.json", dir, pass ? up : platform);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        fclose(f);
        return tl_pm_arch_load_file(path, out, err);
    }
    return tl_errf(err, TL_ENOTFOUND, "no arch table for GPU platform '%s' in %s/arch", platform, dir);
}

/* deviceProperties names seen in traces -> shipped tables. PCIe / NVL parts
 * run at other clocks and power limits, so they get no table. */
const char *tl_pm_arch_platform_for_gpu(const char *dev)
{
    if (!dev) return NULL;
    if (strstr(dev, "MI300X")) return "MI300X";
    if (strstr(dev, "MI325X")) return "MI325X";
    if (strstr(dev, "MI355X")) return "MI355X";
    if (strstr(dev, "PCIe") || strstr(dev, "NVL")) return NULL;
    if (strstr(dev, "H100") && (strstr(dev, "HBM3") || strstr(dev, "SXM"))) return "H100_SXM";
    if (strstr(dev, "H200")) return "H200";
    if (strstr(dev, "B200") && !strstr(dev, "GB200")) return "B200";
    return NULL;
}

int tl_pm_arch_peak(const tl_pm_arch *a, const char *spec, double *tflops)
{
    if (!a || !spec) return -1;
    for (size_t i = a->npeaks; i-- > 0;) /* last duplicate wins, as in a JSON dict */
        if (strcmp(a->peak_spec[i], spec) == 0) {
            *tflops = a->peak_tflops[i];
            return 0;
        }
    return -1;
}
