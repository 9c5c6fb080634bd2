/* eval.c — the model entry points: tl_pm_eval parses the raw arg texts once,
 * runs the op's model under a setjmp guard (models "raise" like the
 * reference's Python does), and turns FLOPs/bytes into the static metrics of
 * perf-models.md §6.1; tl_pm_metrics_eval adds the kernel-time rates (§6.3)
 * and the roofline (§6.5) for one instance. */
#include "query/perfmodel/pm_internal.h"

#include <math.h>
#include <string.h>

static pm_fn family_fn(int id)
{
    if (id <= PM_SGL_BATCHED_A8W8) return pm_gemm;
    if (id <= PM_EVOFORMER) return pm_attention;
    if (id <= PM_CONVBIAS_BWD) return pm_conv;
    if (id <= PM_LIGER_SILU_MUL) return pm_elementwise;
    if (id <= PM_LN_MODULATE_BWD) return pm_norm;
    if (id == PM_REDUCE) return pm_reduce;
    if (id == PM_TRITON) return pm_triton;
    if (id >= PM_SILU_AND_MUL) return pm_extension;
    return pm_other;
}

/* Kept apart so that nothing of the caller's frame lives across longjmp. */
static int run_guarded(pm_fn fn, pm_in *in, pm_out *out)
{
    jmp_buf jb;
    in->jb = &jb;
    if (setjmp(jb)) return -1;
    return fn(in, out);
}

static int parse_arg(tl_arena *a, const char *what, const char *text, const tl_pv **out, tl_err *err)
{
    *out = NULL;
    if (!text) return 0;
    tl_pv *v;
    int rc = tl_pv_parse(a, text, strlen(text), &v, err);
    if (rc) return tl_err_prefix(err, "%s", what);
    *out = v;
    return 0;
}

int tl_pm_eval(const tl_pm_op *op, const tl_pm_args *args, tl_pm_mode mode, tl_pm_ctx *ctx, tl_arena *a,
               tl_pm_result *res, tl_err *err)
{
    memset(res, 0, sizeof *res);
    if (op && (op->flags & TL_PM_PENDING))
        return tl_errf(err, TL_EFORMAT, "%s (%s): the model's formulas are not built", op->name, op->model);
    if (!op || !args || op->model_id < 0 || op->model_id >= PM__COUNT)
        return tl_errf(err, TL_EUSAGE, "perf model: no op");
    pm_in in;
    memset(&in, 0, sizeof in);
    in.op = op;
    in.id = op->model_id;
    in.mode = mode;
    in.args = args;
    in.ctx = ctx;
    in.a = a;
    int rc;
    if ((rc = parse_arg(a, "Input Dims", args->input_dims, &in.dims, err)) ||
        (rc = parse_arg(a, "Input type", args->input_type, &in.types, err)) ||
        (rc = parse_arg(a, "Input Strides", args->input_strides, &in.strides, err)) ||
        (rc = parse_arg(a, "Concrete Inputs", args->concrete_inputs, &in.ci, err)) ||
        (rc = parse_arg(a, "Output type", args->output_type, &in.otypes, err)))
        return rc;

    pm_out o;
    memset(&o, 0, sizeof o);
    int r = run_guarded(family_fn(in.id), &in, &o);
    if (r < 0) return tl_errf(err, TL_EFORMAT, "%s (%s): %s", op->name, op->model, in.why ? in.why : "error");
    if (r == PM_NOTIMPL)
        return tl_errf(err, TL_EUNSUPPORTED, "%s (%s): no %s formulas", op->name, op->model,
                       mode == TL_PM_BWD ? "backward" : "forward");
    if (o.flops.bad || (o.has_bytes && o.bytes.bad))
        return tl_errf(err, TL_EFORMAT, "%s (%s): arithmetic error", op->name, op->model);

    res->flops = pn_d(o.flops);
    res->gflops = res->flops / 1e9;
    res->has_bytes = o.has_bytes;
    res->bytes = o.has_bytes ? pn_d(o.bytes) : NAN;
    res->data_moved_mb = o.has_bytes ? res->bytes / 1048576.0 : NAN;
    res->flops_per_byte = (o.has_bytes && res->bytes != 0) ? (res->gflops * 1e9) / res->bytes : NAN;
    const char *prec = o.cs_prec ? o.cs_prec : pm_prec(o.cs_dtype);
    res->compute_spec = (o.maf && prec) ? tl_arena_printf(a, "%s_%s", o.maf, prec) : "";
    res->nparams = o.np;
    res->params = tl_arena_alloc(a, (o.np ? o.np : 1) * sizeof *res->params);
    memcpy(res->params, o.params, o.np * sizeof *res->params);
    return 0;
}

void tl_pm_params_repr(tl_buf *b, const tl_pm_result *r)
{
    tl_buf_putc(b, '{');
    for (size_t i = 0; i < r->nparams; i++) {
        if (i) tl_buf_puts(b, ", ");
        tl_buf_pystr(b, r->params[i].key, strlen(r->params[i].key));
        tl_buf_puts(b, ": ");
        tl_pv_write_repr(b, r->params[i].val, 0);
    }
    tl_buf_putc(b, '}');
}

void tl_pm_roofline_eval(const tl_pm_arch *arch, double gflops, int has_bytes, double bytes,
                         const char *compute_spec, double t, tl_pm_roofline *out)
{
    memset(out, 0, sizeof *out);
    double peak;
    if (!arch || !compute_spec || tl_pm_arch_peak(arch, compute_spec, &peak) != 0 || !arch->has_mem_bw ||
        !has_bytes || !(gflops > 0))
        return;
    out->valid = 1;
    out->compute_us = (gflops * 1e9 / (peak * 1e12)) * 1e6;
    out->memory_us = (bytes / (arch->mem_bw_gbps * 1e9)) * 1e6;
    out->time_us = out->compute_us > out->memory_us ? out->compute_us : out->memory_us;
    out->bound = out->compute_us >= out->memory_us ? "COMPUTE_BOUND" : "MEMORY_BOUND";
    out->pct = t == 0 ? NAN : out->time_us / t * 100;
}

void tl_pm_kernel_names(const tl_pm_source *src, const tl_pm_instance *in, const char **names)
{
    for (size_t i = 0; i < in->nfwd; i++) {
        tl_pm_kernel k;
        src->kernel(src->src, in->k[i], &k);
        names[i] = k.name;
    }
}

void tl_pm_args_of(const tl_pm_fields *f, const tl_pm_instance *in, tl_pm_args *out)
{
    const tl_pm_extra *x = in->extra;
    *out = (tl_pm_args){
        .name = f->name,
        .input_dims = f->input_dims,
        .input_type = f->input_type,
        .input_strides = f->input_strides,
        .concrete_inputs = f->concrete_inputs,
        .output_type = x ? x->output_type : NULL,
        .annotation = x ? x->annotation : NULL,
        .pseudo_args = x ? x->pseudo_args : NULL,
        .has_seq = f->has_seq,
        .seq = f->seq,
    };
}

int tl_pm_metrics_eval(const tl_pm_op *op, const tl_pm_source *src, const tl_pm_instance *inst, tl_pm_mode mode,
                       const tl_pm_arch *arch, tl_pm_ctx *ctx, tl_arena *a, tl_pm_metrics *m, tl_err *err)
{
    memset(m, 0, sizeof *m);
    tl_pm_fields f;
    src->fields(src->src, inst, &f);
    if (mode == TL_PM_BWD && !inst->has_bwd_events)
        return tl_errf(err, TL_ENOTFOUND, "%s: no linked backward events", f.name ? f.name : "?");
    tl_pm_kset ks = tl_pm_kset_of(inst, mode);
    tl_pm_args args;
    tl_pm_args_of(&f, inst, &args);
    args.name = NULL; /* the op's */
    /* transpose detection reads the op's own kernels (forward subtree) */
    const char **names = tl_arena_alloc(a, (inst->nfwd ? inst->nfwd : 1) * sizeof *names);
    tl_pm_kernel_names(src, inst, names);
    args.kernel_names = names;
    args.nkernels = inst->nfwd;
    int rc = tl_pm_eval(op, &args, mode, ctx, a, &m->r, err);
    if (rc) return rc;
    m->kernel_time_is_int = ks.n == 0;
    m->num_kernels = ks.n;
    tl_pm_metrics_rates(arch, ks.n ? ks.time_us : 0.0, m);
    return 0;
}

void tl_pm_metrics_rates(const tl_pm_arch *arch, double t, tl_pm_metrics *m)
{
    m->kernel_time_us = t;
    m->tflops_s = t != 0 ? (m->r.gflops / 1e3) / (t / 1e6) : NAN;
    m->tb_s = (t != 0 && m->r.has_bytes) ? (m->r.bytes / 1e12) / (t / 1e6) : NAN;
    tl_pm_roofline_eval(arch, m->r.gflops, m->r.has_bytes, m->r.bytes, m->r.compute_spec, t, &m->roof);
}
