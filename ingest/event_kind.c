/* event_kind.c — the event kind of a category string (schema.h), shared by
 * the readers of traceEvents JSON (kineto.c) and of Perfetto traces
 * (pftrace.c), so that a .pftrace and its JSON form store the same kinds. */
#include "ingest/schema.h"

#include <string.h>

int tl_kind_from_cat(const char *c, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(c, lit, n) == 0)
    if (IS("cpu_op")) return TL_K_CPU_OP;
    if (IS("python_function")) return TL_K_PYTHON;
    if (IS("cuda_runtime")) return TL_K_RUNTIME;
    if (IS("cuda_driver")) return TL_K_DRIVER;
    if (IS("kernel")) return TL_K_KERNEL;
    if (IS("gpu_memcpy")) return TL_K_MEMCPY;
    if (IS("gpu_memset")) return TL_K_MEMSET;
    if (IS("user_annotation")) return TL_K_USER_ANNOTATION;
    if (IS("gpu_user_annotation")) return TL_K_GPU_ANNOTATION;
    /* rocprofv3 --output-format pftrace (and its traceconv JSON) */
    if (IS("kernel_dispatch")) return TL_K_KERNEL;
    if (IS("memory_copy")) return TL_K_MEMCPY;
    if (IS("hip_api")) return TL_K_RUNTIME;
    if (IS("hsa_api")) return TL_K_DRIVER;
#undef IS
    return TL_K_OTHER;
}
