/* cli_env.c — the environment, read once before any command runs (see
 * tl_cli_env in cli.h); what the library needs process-wide is handed to
 * it here, the rest goes into each command's options. */
#include "tools/cli.h"
#include "query/core/trace.h"
#include "base/profile.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

tl_cli_env tl_env;

/* The variable's value when set and not empty, else NULL. */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* Set in a process re-executed for huge pages (cli_hugepages.c), which
 * read this environment and warned about it before. */
static int reexecuted;

/* A limit variable (tl_cli_parse_size: a number, maybe with a k/M/G/T
 * suffix, or off); 0 when unset. A bad value is reported and ignored. */
static uint64_t env_limit(const char *name)
{
    const char *v = env(name);
    uint64_t n = 0;
    if (v && tl_cli_parse_size(v, &n)) {
        if (!reexecuted) fprintf(stderr, "tracelens: warning: %s=%s is not a number or off (ignored)\n", name, v);
        n = 0;
    }
    return n;
}

/* The data folder installed beside this code: the tracelens program in
 * PREFIX/bin reads PREFIX/share/tracelens, the shared library inside the
 * Python package reads the package's data/ folder. Found through the path
 * of the file holding this function (the program or the library), links
 * resolved; NULL when neither folder holds op_categories.tsv (a build tree,
 * which uses its source tree's data/). */
static const char *installed_datadir(void)
{
    static char found[PATH_MAX];
    Dl_info info;
    char self[PATH_MAX];
    if (!dladdr((void *)installed_datadir, &info) || !info.dli_fname || !realpath(info.dli_fname, self))
        return NULL;
    char *slash = strrchr(self, '/');
    if (!slash) return NULL;
    *slash = 0;
    static const char *const rel[] = {"/../share/tracelens", "/data"};
    for (size_t k = 0; k < sizeof rel / sizeof *rel; k++) {
        char probe[PATH_MAX + 64];
        snprintf(probe, sizeof probe, "%s%s/op_categories.tsv", self, rel[k]);
        if (access(probe, R_OK) == 0) {
            snprintf(found, sizeof found, "%s%s", self, rel[k]);
            return found;
        }
    }
    return NULL;
}

void tl_cli_env_read(void)
{
    const char *v;
    reexecuted = getenv(TL_CLI_REEXEC_VAR) != NULL;
    unsetenv(TL_CLI_REEXEC_VAR); /* not inherited by what this process starts */
    tl_env.db = env("TRACELENS_DB");
    tl_env.xdg_data_home = env("XDG_DATA_HOME");
    tl_env.home = env("HOME");
    tl_env.xdg_state_home = env("XDG_STATE_HOME");
    tl_env.datadir = env("TRACELENS_DATADIR");
    if (!tl_env.datadir) tl_env.datadir = installed_datadir();
    tl_env.timing = getenv("TRACELENS_TIMING") != NULL;
    const char *prof = getenv("TL_PROFILE");
    if (prof && *prof && strcmp(prof, "0")) tl_prof_enable(1); /* the stage profile (base/profile.h) */
    if ((v = env("TRACELENS_PARSE_THREADS"))) tl_env.parse_threads = atoi(v);
    if ((v = env("TRACELENS_SPLIT_MIN")) && atoll(v) > 0) tl_env.split_min = (size_t)atoll(v);
    tl_env.report_serial = (v = getenv("TRACELENS_REPORT_THREADS")) && !strcmp(v, "0");
    if ((v = env("TRACELENS_THREADS"))) {
        long c = strtol(v, NULL, 10);
        tl_env.query_cores = c < 1 ? 1 : c > 16 ? 16 : (int)c;
    }
    tl_env.args_full_pass = (v = getenv("TRACELENS_ARGS_PASS")) && !strcmp(v, "full");
    v = getenv("TRACELENS_DEBUG");
    tl_env.debug = v && !strcmp(v, "1");
    tl_env.no_hugepages = getenv("TRACELENS_NO_HUGEPAGES") != NULL;
    tl_env.glibc_tunables = getenv("GLIBC_TUNABLES");
    tl_env.path = getenv("PATH");
    tl_env.max_input_bytes = env_limit("TRACELENS_MAX_INPUT_BYTES");
    tl_env.max_ratio = env_limit("TRACELENS_MAX_RATIO");
    tl_env.mem_budget = env_limit("TRACELENS_MEM_BUDGET");
    if (!tl_env.mem_budget) tl_env.mem_budget = TL_CLI_MEM_BUDGET;

    tl_mem_marks(getenv("TRACELENS_MEM") != NULL);
    if ((v = env("TRACELENS_MAPSIZE"))) tl_store_set_initial_mapsize((size_t)strtoull(v, NULL, 10));
    tl_args_sel_use(!tl_env.args_full_pass);
}

void tl_cli_ingest_env(tl_ingest_opts *o)
{
    o->parse_parts = tl_env.parse_threads;
    o->split_min = tl_env.split_min;
    o->timing = tl_env.timing;
    uint64_t bytes = tl_cli_flags.max_input_bytes ? tl_cli_flags.max_input_bytes : tl_env.max_input_bytes;
    o->max_input_bytes = bytes;
    /* A byte limit the user chose bounds what a gzip file may inflate to:
     * the ratio guard, the protection of the unlimited default, steps
     * aside unless TRACELENS_MAX_RATIO is set as well. */
    o->max_inflate_ratio = tl_env.max_ratio ? tl_env.max_ratio : bytes ? UINT64_MAX : 0;
}

/* Bytes of report memory an event takes (the loaded columns, the context,
 * the sheets' rows: ~110 at 10 GB of tracegen, docs/MEMORY.md). */
#define REPORT_BYTES_PER_EVENT 100

int tl_cli_mem_budget(tl_reader *r, uint64_t id)
{
    if (tl_env.mem_budget == UINT64_MAX) return 0;
    const char *catalog;
    int64_t events = 0;
    if (tl_reader_catalog(r, id, &catalog, NULL) != 0) return 0; /* the load reports it */
    tl_args_get_i64(catalog, strlen(catalog), "events", &events);
    if (events <= 0 || (uint64_t)events <= tl_env.mem_budget / REPORT_BYTES_PER_EVENT) return 0;
    tl_big_budget(tl_env.mem_budget);
    if (tl_env.own_process) tl_big_favour_trimmer();
    return 1;
}
