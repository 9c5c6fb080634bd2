/* bigmem.c — per-event arrays of a large trace in scratch files, with a
 * resident-set budget.
 *
 * Off by default: tl_big_alloc is tl_xmalloc. Once tl_big_budget(B) has
 * set a budget, each block of at least BIG_MIN bytes is a shared mapping
 * of its own unlinked file in $TMPDIR (or /tmp), reserved up front
 * (posix_fallocate), so that a full disk falls back to the heap instead
 * of raising SIGBUS on a later write. A trimming thread reads the
 * process's resident set every TRIM_EVERY_MS and, when it nears the
 * budget, drops the pages of every shared mapping from it (MADV_DONTNEED:
 * for a shared file mapping the data stays in the page cache, dirty or
 * not, and a later access faults it back in). So the blocks' resident
 * part is what was touched since the last trim, and the kernel may write
 * the rest to the file and evict it: a trace whose arrays exceed the
 * machine's memory is still reported. The blocks are read one page a
 * fault (MADV_RANDOM, no fault-around): pages come back slower than the
 * trimmer could otherwise drop them, which is what bounds the peak. */
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BIG_MIN ((size_t)1 << 20)
#define TRIM_EVERY_MS 1
#define TRIM_MARGIN ((uint64_t)192 << 20) /* room for what comes back in while a trim runs */
#define WORKER_NICE 5
#define TRIM_FILE_MIN ((uint64_t)16 << 20) /* below this much file-backed memory, nothing to trim */

typedef struct big_block {
    void *p;
    size_t n;
} big_block;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static big_block *blocks;
static size_t nblocks, capblocks;
static uint64_t budget;        /* bytes; 0: off */
static int trimmer_running, trimmer_stop;
static pthread_t trimmer;
static unsigned long trims;
static pid_t trimmer_tid; /* 0 until the trimmer runs */

/* Every shared mapping of the process: the blocks and the store's map,
 * read by the report beside them. For a shared mapping this only unmaps
 * page-cache pages; nothing is lost. The blocks alone when the process's
 * map list cannot be read. */
static void drop_shared(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) {
        for (size_t i = 0; i < nblocks; i++) madvise(blocks[i].p, blocks[i].n, MADV_DONTNEED);
        return;
    }
    char line[4352];
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && perms[3] == 's')
            madvise((void *)lo, hi - lo, MADV_DONTNEED);
    }
    fclose(f);
}

/* The trimming thread: idle while there is no block, else a look at the
 * resident set every TRIM_EVERY_MS. It trims over the budget less a
 * margin, and whenever a quarter of the budget is in mapped file pages:
 * a smaller trim is quicker, so less comes back in while it runs. All of
 * it under mu, so that tl_big_free cannot unmap a block being trimmed. */
static void *trim_loop(void *arg)
{
    (void)arg;
    int statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    pthread_mutex_lock(&mu);
    trimmer_tid = (pid_t)syscall(SYS_gettid);
    pthread_cond_broadcast(&wake);
    while (!trimmer_stop) {
        if (!nblocks) {
            pthread_cond_wait(&wake, &mu);
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += TRIM_EVERY_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&wake, &mu, &ts);
        if (trimmer_stop || !nblocks) continue;
        uint64_t rss, file;
        uint64_t at = budget > 2 * TRIM_MARGIN ? budget - TRIM_MARGIN : budget / 2;
        if (!tl_resident(statm, &rss, &file) || file < TRIM_FILE_MIN || (rss <= at && file <= budget / 4)) continue;
        drop_shared();
        trims++;
    }
    pthread_mutex_unlock(&mu);
    if (statm >= 0) close(statm);
    return NULL;
}

void tl_big_favour_trimmer(void)
{
    static int done;
    pthread_mutex_lock(&mu);
    int go = trimmer_running && !done;
    pid_t keep = trimmer_tid;
    done |= go;
    pthread_mutex_unlock(&mu);
    if (!go) return;
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || tid == keep) continue;
        errno = 0;
        int now = getpriority(PRIO_PROCESS, (id_t)tid);
        if (errno == 0) setpriority(PRIO_PROCESS, (id_t)tid, now + WORKER_NICE);
    }
    closedir(d);
}

void tl_big_budget(uint64_t bytes)
{
    pthread_mutex_lock(&mu);
    budget = bytes;
    int start = bytes && !trimmer_running;
    int stop = !bytes && trimmer_running;
    if (start) {
        trimmer_stop = 0;
        trimmer_running = pthread_create(&trimmer, NULL, trim_loop, NULL) == 0;
        while (trimmer_running && !trimmer_tid) pthread_cond_wait(&wake, &mu);
    }
    if (stop) {
        trimmer_stop = 1;
        pthread_cond_signal(&wake);
    }
    pthread_mutex_unlock(&mu);
    if (stop) {
        pthread_join(trimmer, NULL);
        trimmer_running = 0;
    }
}

unsigned long tl_big_trims(void)
{
    pthread_mutex_lock(&mu);
    unsigned long n = trims;
    pthread_mutex_unlock(&mu);
    return n;
}

/* A mapping of a new unlinked file of n reserved bytes; NULL when none can be made. */
static void *scratch_map(size_t n)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tracelens-big.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) return NULL;
    unlink(path);
    void *p = NULL;
    int e;
    do e = posix_fallocate(fd, 0, (off_t)n); while (e == EINTR);
    if (!e) {
        p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) p = NULL;
        else madvise(p, n, MADV_RANDOM);
    }
    close(fd); /* the mapping keeps the file */
    return p;
}

static void *big_alloc(size_t n, int zero)
{
    pthread_mutex_lock(&mu);
    int on = budget != 0;
    pthread_mutex_unlock(&mu);
    void *p = on && n >= BIG_MIN ? scratch_map(n) : NULL; /* a new file reads as zeros */
    if (!p) return zero ? tl_xcalloc(n ? n : 1, 1) : tl_xmalloc(n ? n : 1);
    pthread_mutex_lock(&mu);
    if (nblocks == capblocks) {
        capblocks = capblocks ? 2 * capblocks : 64;
        blocks = tl_xrealloc(blocks, capblocks * sizeof *blocks);
    }
    blocks[nblocks++] = (big_block){p, n};
    if (nblocks == 1) pthread_cond_signal(&wake); /* the trimmer leaves its idle wait */
    pthread_mutex_unlock(&mu);
    return p;
}

void *tl_big_alloc(size_t n) { return big_alloc(n, 0); }

void *tl_big_calloc(size_t n, size_t sz)
{
    if (sz && n > SIZE_MAX / sz) return tl_xcalloc(n, sz); /* its overflow check aborts */
    return big_alloc(n * sz, 1);
}

void tl_big_free(void *p)
{
    if (!p) return;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nblocks; i++) {
        if (blocks[i].p != p) continue;
        munmap(p, blocks[i].n);
        blocks[i] = blocks[--nblocks];
        pthread_mutex_unlock(&mu);
        return;
    }
    pthread_mutex_unlock(&mu);
    free(p);
}
