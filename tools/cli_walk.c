/* cli_walk.c — the one folder walk of the CLI (see cli.h): `ingest DIR`,
 * the collective analysis' recursive globs and the corpus report's folder
 * scan all find their files through it. Links to files are followed; a
 * folder, linked or not, is entered once per (device, inode), so link
 * loops end and a folder linked twice is read once. Names are visited in
 * byte order within each folder, paths are built on the heap (any length:
 * a folder the system cannot open by its path is reported by name). */
#include "tools/cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* (device, inode) of a folder: the key of the visited set (no padding). */
typedef struct dir_key {
    uint64_t dev, ino;
} dir_key;

typedef struct walker {
    const tl_cli_walk_fns *fns;
    tl_bmap visited;
} walker;

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* dir + "/" + name, without doubling a '/' that dir ends with. */
static char *join(const char *dir, const char *name)
{
    size_t dl = strlen(dir), nl = strlen(name);
    int slash = !(dl && dir[dl - 1] == '/');
    char *p = tl_xmalloc(dl + (size_t)slash + nl + 1);
    memcpy(p, dir, dl);
    if (slash) p[dl] = '/';
    memcpy(p + dl + slash, name, nl + 1);
    return p;
}

/* Marks the folder visited; 0 when it was already. */
static int first_visit(walker *w, const struct stat *st)
{
    dir_key k = {(uint64_t)st->st_dev, (uint64_t)st->st_ino};
    int isnew = 0;
    tl_bmap_put(&w->visited, &k, &isnew);
    return isnew;
}

/* A path the walk cannot read: the caller's handler, else a warning. */
static void unreadable(walker *w, const char *path, int errnum)
{
    if (w->fns->unreadable) w->fns->unreadable(w->fns->ctx, path, errnum);
    else fprintf(stderr, "tracelens: warning: %s: cannot read: %s (skipped)\n", path, strerror(errnum));
}

/* The folder's non-hidden names, sorted; NULL (and the error reported)
 * when it cannot be read. */
static char **read_names(walker *w, const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d) {
        unreadable(w, dir, errno);
        return NULL;
    }
    TL_VEC(char *) names = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') tl_vec_push(&names, tl_xstrdup(e->d_name));
    closedir(d);
    if (names.n) qsort(names.v, names.n, sizeof *names.v, cmp_name);
    *n = names.n;
    return names.v ? names.v : tl_xcalloc(1, sizeof(char *));
}

static void walk_dir(walker *w, const char *dir)
{
    size_t n = 0;
    char **names = read_names(w, dir, &n);
    if (!names) return;
    for (size_t i = 0; i < n; i++) {
        char *path = join(dir, names[i]);
        struct stat st;
        /* stat follows links: a dangling or self-referring one is skipped;
         * any other failure (a path too long) is reported */
        if (stat(path, &st) != 0) {
            if (errno != ENOENT && errno != ELOOP) unreadable(w, path, errno);
        } else if (S_ISDIR(st.st_mode)) {
            if (first_visit(w, &st)) walk_dir(w, path);
        } else if (S_ISREG(st.st_mode)) {
            w->fns->file(w->fns->ctx, path, names[i]);
        }
        free(path);
        free(names[i]);
    }
    free(names);
}

void tl_cli_walk(const char *dir, const tl_cli_walk_fns *fns)
{
    walker w = {.fns = fns};
    tl_bmap_init(&w.visited, sizeof(dir_key), 64);
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) first_visit(&w, &st);
    walk_dir(&w, dir);
    tl_bmap_free(&w.visited);
}
