/* collective_job.c — work of the collective analysis run beside the
 * calling thread (collective_internal.h: coll_job). */
#include "query/multirank/collective_internal.h"

void coll_job_start(coll_job *j, int allow, void *(*fn)(void *), void *arg)
{
    j->th = allow ? tl_thread_start(fn, arg) : NULL;
    if (!j->th) fn(arg);
}

void coll_job_join(coll_job *j)
{
    if (j->th) tl_thread_join(j->th);
    j->th = NULL;
}
