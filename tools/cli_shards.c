/* cli_shards.c — the store list a command names: several --db, or
 * --db @FILE naming a file that lists shard folders, one per line (blank
 * lines and lines starting with # skipped; relative paths are relative to
 * the file's folder). The store layer reads the list as one store
 * (tl_store_open_list). */
#include "tools/cli.h"

#include <stdlib.h>
#include <string.h>

void tl_cli_shards_free(tl_cli_shards *sh)
{
    for (size_t i = 0; i < sh->n; i++) free(sh->dirs[i]);
    free(sh->dirs);
    memset(sh, 0, sizeof *sh);
}

static void add_dir(tl_cli_shards *sh, const char *dir, size_t len)
{
    if (sh->n == sh->cap) {
        sh->cap = sh->cap ? 2 * sh->cap : 8;
        sh->dirs = tl_xrealloc(sh->dirs, sh->cap * sizeof *sh->dirs);
    }
    char *d = tl_xmalloc(len + 1);
    memcpy(d, dir, len);
    d[len] = 0;
    sh->dirs[sh->n++] = d;
}

/* The folders listed in path (after the '@'); 0, or -1 with a message. */
static int add_listed(tl_cli_shards *sh, const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        fprintf(stderr, "tracelens: --db @%s: cannot read the store list\n", path);
        return -1;
    }
    const char *slash = strrchr(path, '/');
    size_t base = slash ? (size_t)(slash - path) + 1 : 0;
    char line[4096];
    size_t before = sh->n;
    unsigned long lineno = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        size_t len = strcspn(line, "\r\n");
        if (len == sizeof line - 1) {
            fprintf(stderr, "tracelens: --db @%s: line %lu is longer than %zu bytes\n", path, lineno,
                    sizeof line - 2);
            fclose(fp);
            return -1;
        }
        while (len && (line[len - 1] == ' ' || line[len - 1] == '\t')) len--;
        size_t start = strspn(line, " \t");
        if (start >= len || line[start] == '#') continue;
        char full[8192];
        if (line[start] == '/' || !base)
            snprintf(full, sizeof full, "%.*s", (int)(len - start), line + start);
        else
            snprintf(full, sizeof full, "%.*s%.*s", (int)base, path, (int)(len - start), line + start);
        add_dir(sh, full, strlen(full));
    }
    fclose(fp);
    if (sh->n == before) {
        fprintf(stderr, "tracelens: --db @%s lists no store\n", path);
        return -1;
    }
    return 0;
}

int tl_cli_shards_of(const char *const *names, size_t n, tl_cli_shards *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        if (names[i][0] == '@') {
            if (add_listed(out, names[i] + 1)) {
                tl_cli_shards_free(out);
                return -1;
            }
        } else {
            add_dir(out, names[i], strlen(names[i]));
        }
    }
    return 0;
}
