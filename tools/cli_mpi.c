/* cli_mpi.c — the MPI of `--mpi` (ingest, corpus-report, collective and
 * query under mpirun or srun): which share of the rank files or shards a
 * process takes, the exchange of bytes (gather to rank 0, all-gather),
 * and the reduce of the partials to rank 0, which writes the outputs:
 * gathered whole, or folded pairwise up a binary tree (query). Only bytes
 * the query layer packed travel (per-rank partial sheets, collective
 * records, partial answers; never events).
 *
 * Built with MPI's header when CMake finds it (TL_HAVE_MPI), but not
 * linked: linking libmpi cost every tracelens process 4-10 ms and 1 MB of
 * resident memory at start-up (its constructors and dependencies), so
 * --mpi dlopens it (the soname CMake read, TL_SONAME_MPI) with
 * RTLD_GLOBAL, which Open MPI's own plugins need to find its symbols.
 * Open MPI's predefined handles (MPI_COMM_WORLD, MPI_BYTE, ...) are the
 * addresses of its globals, taken with dlsym; other MPIs' are constants.
 * Without MPI these are the one-process answers and --mpi says how to
 * enable it. */
#include "tools/cli.h"

#include <stdlib.h>
#include <string.h>

#ifdef TL_HAVE_MPI
#include <dlfcn.h>
#include <mpi.h>

#define MPI_FUNCS(X) X(MPI_Init_thread) X(MPI_Comm_rank) X(MPI_Comm_size) X(MPI_Allreduce) X(MPI_Send) \
    X(MPI_Recv) X(MPI_Bcast) X(MPI_Finalize)
#define MPI_SLOT(f) __typeof__(f) *f;
#define MPI_NAME(f) #f,
static struct { MPI_FUNCS(MPI_SLOT) } M;
static const char *const M_NAMES[] = {MPI_FUNCS(MPI_NAME)};

/* The predefined handles this file uses. */
static MPI_Comm world_comm;
static MPI_Datatype dt_int, dt_u64, dt_byte;
static MPI_Op op_lor, op_max;

/* Loads libmpi and binds M and the handles; 0, or -1 after printing why. */
static int load_mpi(const char *cmd)
{
    void *h = dlopen(TL_SONAME_MPI, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "tracelens %s: --mpi: cannot load %s: %s\n", cmd, TL_SONAME_MPI, dlerror());
        return -1;
    }
    for (size_t i = 0; i < sizeof M_NAMES / sizeof *M_NAMES; i++) {
        void *sym = dlsym(h, M_NAMES[i]);
        if (!sym) {
            fprintf(stderr, "tracelens %s: --mpi: %s has no %s\n", cmd, TL_SONAME_MPI, M_NAMES[i]);
            return -1;
        }
        memcpy((char *)&M + i * sizeof sym, &sym, sizeof sym); /* slot i, as POSIX stores dlsym results */
    }
#ifdef OPEN_MPI
    static const char *const GLOBALS[] = {"ompi_mpi_comm_world", "ompi_mpi_int", "ompi_mpi_uint64_t",
                                          "ompi_mpi_byte", "ompi_mpi_op_lor", "ompi_mpi_op_max"};
    void *g[6];
    for (size_t i = 0; i < 6; i++)
        if (!(g[i] = dlsym(h, GLOBALS[i]))) {
            fprintf(stderr, "tracelens %s: --mpi: %s has no %s\n", cmd, TL_SONAME_MPI, GLOBALS[i]);
            return -1;
        }
    world_comm = (MPI_Comm)g[0], dt_int = (MPI_Datatype)g[1], dt_u64 = (MPI_Datatype)g[2];
    dt_byte = (MPI_Datatype)g[3], op_lor = (MPI_Op)g[4], op_max = (MPI_Op)g[5];
#else
    world_comm = MPI_COMM_WORLD, dt_int = MPI_INT, dt_u64 = MPI_UINT64_T, dt_byte = MPI_BYTE;
    op_lor = MPI_LOR, op_max = MPI_MAX;
#endif
    return 0;
}

static int mpi_on; /* MPI_Init done */
#endif
static int mpi_rank, mpi_size = 1;

const char *tl_cli_mpi_library(void)
{
#ifdef TL_HAVE_MPI
    return TL_SONAME_MPI;
#else
    return NULL;
#endif
}

int tl_cli_mpi_start(const char *cmd, int root_prints)
{
#ifdef TL_HAVE_MPI
    if (mpi_on) return TL_EXIT_OK;
    int provided;
    if (load_mpi(cmd)) return TL_EXIT_FAIL;
    if (M.MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "tracelens %s: --mpi: MPI_Init failed\n", cmd);
        return TL_EXIT_FAIL;
    }
    M.MPI_Comm_rank(world_comm, &mpi_rank);
    M.MPI_Comm_size(world_comm, &mpi_size);
    mpi_on = 1;
    if (root_prints && mpi_rank && !freopen("/dev/null", "w", stdout)) {
        fprintf(stderr, "tracelens %s: --mpi: cannot open /dev/null\n", cmd);
        return tl_cli_mpi_finish(TL_EXIT_FAIL);
    }
    return TL_EXIT_OK;
#else
    (void)root_prints;
    fprintf(stderr,
            "tracelens %s: --mpi: this tracelens was built without MPI. Install Open MPI\n"
            "(Debian: apt-get install libopenmpi-dev openmpi-bin, or TL_SETUP_MPI=1 tools/setup.sh),\n"
            "configure again (cmake -S . -B build finds it) and rebuild; then run\n"
            "  mpirun -n N tracelens %s --mpi --db /local/tl-%%r ...\n",
            cmd, cmd);
    return TL_EXIT_USAGE;
#endif
}

int tl_cli_mpi_rank(void) { return mpi_rank; }
int tl_cli_mpi_size(void) { return mpi_size; }

int tl_cli_mpi_mine(size_t i, size_t n)
{
    size_t p = (size_t)mpi_rank, P = (size_t)mpi_size;
    return i >= p * n / P && i < (p + 1) * n / P;
}

int tl_cli_mpi_any(int flag)
{
#ifdef TL_HAVE_MPI
    if (mpi_on) {
        int in = flag != 0, out = 0;
        M.MPI_Allreduce(&in, &out, 1, dt_int, op_lor, world_comm);
        return out;
    }
#endif
    return flag != 0;
}

#ifdef TL_HAVE_MPI
enum { TAG_SIZE = 1, TAG_DATA = 2 };
#define CHUNK ((size_t)1 << 30) /* MPI counts are int */

/* n bytes to process dst: their length, then the bytes in pieces. */
static void send_bytes(int dst, const void *p, size_t n)
{
    uint64_t len = n;
    M.MPI_Send(&len, 1, dt_u64, dst, TAG_SIZE, world_comm);
    for (size_t off = 0; off < n; off += CHUNK) {
        size_t k = n - off < CHUNK ? n - off : CHUNK;
        M.MPI_Send((const char *)p + off, (int)k, dt_byte, dst, TAG_DATA, world_comm);
    }
}

/* What send_bytes sent from src, appended to *b. */
static void recv_bytes(int src, tl_buf *b)
{
    uint64_t len;
    M.MPI_Recv(&len, 1, dt_u64, src, TAG_SIZE, world_comm, MPI_STATUS_IGNORE);
    size_t at = b->n;
    tl_buf_reserve(b, (size_t)len);
    for (size_t off = 0; off < len; off += CHUNK) {
        size_t k = len - off < CHUNK ? (size_t)len - off : CHUNK;
        M.MPI_Recv(b->p + at + off, (int)k, dt_byte, src, TAG_DATA, world_comm, MPI_STATUS_IGNORE);
    }
    b->n = at + (size_t)len;
}
#endif

int tl_cli_mpi_gather(const void *p, size_t n, tl_buf *all)
{
#ifdef TL_HAVE_MPI
    if (mpi_on && mpi_rank) {
        send_bytes(0, p, n);
        tl_buf_free(all);
        return TL_EXIT_OK;
    }
#endif
    if (n) tl_buf_append(all, p, n); /* rank 0's own bytes first */
#ifdef TL_HAVE_MPI
    if (!mpi_on) return TL_EXIT_OK;
    for (int src = 1; src < mpi_size; src++) recv_bytes(src, all);
#endif
    return TL_EXIT_OK;
}

int tl_cli_mpi_allgather(const void *p, size_t n, tl_buf *all)
{
    tl_cli_mpi_gather(p, n, all);
#ifdef TL_HAVE_MPI
    if (!mpi_on) return TL_EXIT_OK;
    uint64_t len = all->n;
    M.MPI_Bcast(&len, 1, dt_u64, 0, world_comm);
    if (mpi_rank) tl_buf_reserve(all, (size_t)len);
    for (size_t off = 0; off < len; off += CHUNK) {
        size_t k = len - off < CHUNK ? (size_t)len - off : CHUNK;
        M.MPI_Bcast(all->p + off, (int)k, dt_byte, 0, world_comm);
    }
    all->n = (size_t)len;
#endif
    return TL_EXIT_OK;
}

int tl_cli_mpi_reduce(tl_buf *mine, int (*merge)(void *ctx, tl_buf *acc, const void *in, size_t n), void *ctx)
{
    int rc = 0;
#ifdef TL_HAVE_MPI
    if (!mpi_on) return 0;
    /* round k: a process whose rank has bit k set (and no lower bit) sends
     * to rank - 2^k and is done; the receivers merge */
    tl_buf in = {0};
    for (int step = 1; step < mpi_size; step *= 2) {
        if (mpi_rank % (2 * step) == step) {
            send_bytes(mpi_rank - step, mine->p, mine->n);
            break;
        }
        if (mpi_rank % (2 * step) == 0 && mpi_rank + step < mpi_size) {
            in.n = 0;
            recv_bytes(mpi_rank + step, &in);
            int m = merge(ctx, mine, in.p, in.n);
            if (m && !rc) rc = m;
        }
    }
    tl_buf_free(&in);
#else
    (void)mine, (void)merge, (void)ctx;
#endif
    return rc;
}

int tl_cli_mpi_finish(int rc)
{
#ifdef TL_HAVE_MPI
    if (mpi_on) {
        int worst = rc;
        M.MPI_Allreduce(&rc, &worst, 1, dt_int, op_max, world_comm);
        M.MPI_Finalize();
        mpi_on = 0;
        return worst;
    }
#endif
    return rc;
}
