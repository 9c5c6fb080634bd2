/* comm_kernel.c — §5.1's test of a communication kernel by its name. The
 * builder uses it to keep those kernels' args (args_sel), the tree to give
 * them no launcher, and the reports to class kernels; it sits below the
 * builder and the tree so that neither calls the other for it. */
#include "ingest/schema.h"

#include <strings.h>

/* Contains nccl, rccl or cross_device_reduce, in any case. */
int tl_is_comm_kernel_name(const char *s, size_t n)
{
    for (size_t i = 0; i + 4 <= n; i++) {
        if (strncasecmp(s + i, "nccl", 4) == 0 || strncasecmp(s + i, "rccl", 4) == 0) return 1;
        if (i + 19 <= n && strncasecmp(s + i, "cross_device_reduce", 19) == 0) return 1;
    }
    return 0;
}
