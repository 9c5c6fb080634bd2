/* test_source_guard.c — a mapped input that shrinks or changes while it
 * is read: reading past its new end sees zeros instead of SIGBUS, and
 * tl_source_unchanged names the file and where its data ended; a SIGBUS
 * outside any input still ends the process. */
#include "tests/unit/tl_test.h"
#include "ingest/source.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FILE_BYTES (1u << 20)

static char path[64];

static void write_file(char fill)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *b = malloc(FILE_BYTES);
    memset(b, fill, FILE_BYTES);
    CHECK_EQ_I(write(fd, b, FILE_BYTES), FILE_BYTES);
    free(b);
    close(fd);
}

/* The test file, written full of `fill`, opened as a source: its whole
 * window at *buf. */
static tl_source *open_whole(char fill, const char **buf)
{
    write_file(fill);
    size_t n;
    tl_source *s = NULL;
    tl_err err = {0};
    CHECK_EQ_I(tl_source_open(path, &s, NULL, &err), 0);
    uint64_t base;
    int eof;
    CHECK_EQ_I(tl_source_window(s, 0, buf, &n, &base, &eof, &err), 0);
    CHECK_EQ_I(n, FILE_BYTES);
    return s;
}

static void test_unchanged(void)
{
    const char *buf;
    tl_source *s = open_whole('x', &buf);
    CHECK_EQ_I(buf[FILE_BYTES - 1], 'x');
    tl_err err = {0};
    CHECK_EQ_I(tl_source_unchanged(s, &err), 0);
    tl_source_close(s);
}

static void test_shrank(void)
{
    const char *buf;
    tl_source *s = open_whole('x', &buf);
    CHECK_EQ_I(truncate(path, 4096), 0);
    volatile const char *v = buf;
    CHECK_EQ_I(v[100], 'x');
    CHECK_EQ_I(v[FILE_BYTES / 2], 0); /* past the new end: a zero page, no SIGBUS */
    CHECK_EQ_I(v[FILE_BYTES - 1], 0);
    CHECK_EQ_I(v[4095], 'x');
    tl_err err = {0};
    CHECK_EQ_I(tl_source_unchanged(s, &err), TL_EIO);
    CHECK(strstr(err.msg, path) != NULL);
    CHECK(strstr(err.msg, "shrank while it was read") != NULL);
    CHECK(strstr(err.msg, "no data at byte 4096") != NULL);
    tl_source_close(s);
}

static void test_rewritten(void)
{
    const char *buf;
    tl_source *s = open_whole('x', &buf);
    struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
    CHECK_EQ_I(utimensat(AT_FDCWD, path, ts, 0), 0);
    tl_err err = {0};
    CHECK_EQ_I(tl_source_unchanged(s, &err), TL_EIO);
    CHECK(strstr(err.msg, "changed while it was read") != NULL);
    tl_source_close(s);
}

/* A truncated mapping that is no input: the guard passes the SIGBUS on
 * and the process dies of it, as without the guard. */
static void test_other_sigbus_dies(void)
{
    const char *buf;
    tl_source *s = open_whole('y', &buf); /* the guard is installed */
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2); /* a sanitizer's report of the fault is expected */
        int fd = open(path, O_RDONLY);
        volatile char *m = mmap(NULL, FILE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
        if (ftruncate(open(path, O_WRONLY), 0) != 0) _exit(2);
        (void)m[FILE_BYTES - 1];
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
#ifdef __SANITIZE_ADDRESS__
    CHECK(WIFEXITED(st) ? WEXITSTATUS(st) != 0 : WTERMSIG(st) == SIGBUS); /* ASan's report */
#else
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS);
#endif
    tl_source_close(s);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/tl-guard-%d.bin", (int)getpid());
    test_unchanged();
    test_shrank();
    test_rewritten();
    test_other_sigbus_dies();
    unlink(path);
    return tl_test_done("test_source_guard");
}
