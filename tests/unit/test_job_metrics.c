/* test_job_metrics.c -- the metrics reader (src/job/metrics.c) on real lines trainers printed.
 *
 * Each row of real[] is a line as a public log shows it (the thread it comes from beside it) and
 * every metric the reader must find on it, in order: the quantity, its value in normalised units
 * (seconds, bytes, per second) and, for a step, the length of its loop. Nothing else may be
 * found. Every row is read again in generated variants (a launcher prefix, trailing blanks and a
 * carriage return, tabs for blanks, NaN spelled in other cases) that must give the same metrics;
 * and names, separators, containers and units are combined into generated lines that must read
 * as the same quantity and value. Run with --dump to print what the reader finds on each line of
 * standard input. */
#include "job/metrics.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

typedef struct expect {
    int q;
    double v, total;
} expect;

typedef struct row {
    const char *source;
    const char *line;
    expect w[12];
} row;

/* clang-format off */
static const row real[] = {
    {"https://github.com/AnswerDotAI/ModernBERT/issues/233",
     "{'loss': 0.2051, 'grad_norm': nan, 'learning_rate': 9.774074342405685e-06, 'epoch': 0.53}",
     {{DX_Q_LOSS, 0.2051, -1}, {DX_Q_GRAD_NORM, NAN, -1}, {DX_Q_LR, 9.77407e-06, -1}, {DX_Q_EPOCH, 0.53, -1}}},
    {"https://github.com/bigscience-workshop/Megatron-DeepSpeed/issues/396",
     " iteration     5426/  250000 | consumed samples:        43408 | consumed tokens:     88899584 | elapsed time per iteration (ms): 4247.9 | learning rate: 2.999E-04 | global batch size:     8 | loss scale: 1.0 | grad norm: nan | actual seqlen:  2048 | number of skipped iterations:   0 | number of nan iterations:   0 | samples per second: 1.883 | TFLOPs: 78.36 |",
     {{DX_Q_STEP, 5426, 250000}, {DX_Q_STEP_TIME, 4.2479, -1}, {DX_Q_LR, 0.0002999, -1}, {DX_Q_GRAD_NORM, NAN, -1}, {DX_Q_THROUGHPUT, 1.883, -1}}},
    {"https://github.com/deepspeedai/DeepSpeed/issues/3742",
     " samples/sec: 7.799 | iteration       34/   10000 | elapsed time per iteration (ms): 4103.1 | learning rate: 2.111E-06 | approx flops per GPU: 112.9TFLOPS | lm_loss: 1.118665E+01 | number of skipped iterations:   0 | number of nan iterations:   0 |",
     {{DX_Q_THROUGHPUT, 7.799, -1}, {DX_Q_STEP, 34, 10000}, {DX_Q_STEP_TIME, 4.1031, -1}, {DX_Q_LR, 2.111e-06, -1}, {DX_Q_LOSS, 11.1867, -1}}},
    {"https://github.com/huggingface/nanotron/issues/390",
     "10/17/2025 16:31:56 [INFO|DP=0|PP=0|TP=0]: iteration: 327281 / 378950 | consumed_tokens: 85.8G | elapsed_time_per_iteration_ms: 11.5K | tokens_per_sec: 22.8K | tokens_per_sec_per_gpu: 11.4K | global_batch_size: 64 | lm_loss: 2.38 | lr: 1e-05 | model_tflops_per_gpu: 38.3 | hardware_tflops_per_gpu: 38.3 | grad_norm: 1.25",
     {{DX_Q_STEP, 327281, 378950}, {DX_Q_STEP_TIME, 11.5, -1}, {DX_Q_THROUGHPUT, 22800, -1}, {DX_Q_THROUGHPUT, 11400, -1}, {DX_Q_LOSS, 2.38, -1}, {DX_Q_LR, 1e-05, -1}, {DX_Q_GRAD_NORM, 1.25, -1}}},
    {"https://github.com/deepspeedai/DeepSpeed/issues/3742",
     "[2023-07-25 21:03:17,269] [INFO] [timer.py:215:stop] epoch=0/micro_step=34/global_step=34, RunningAvgSamplesPerSec=7.864669709950182, CurrSamplesPerSec=8.00912418308922, MemAllocated=59.65GB, MaxMemAllocated=63.31GB",
     {{DX_Q_EPOCH, 0, -1}, {DX_Q_STEP, 34, -1}, {DX_Q_STEP, 34, -1}, {DX_Q_THROUGHPUT, 7.86467, -1}, {DX_Q_THROUGHPUT, 8.00912, -1}, {DX_Q_MEMORY, 5.965e+10, -1}, {DX_Q_MEMORY, 6.331e+10, -1}}},
    {"https://github.com/deepspeedai/DeepSpeed/issues/3742",
     "[2023-07-25 21:03:17,269] [INFO] [logging.py:96:log_dist] [Rank 0] rank=0 time (ms) | forward: 652.41 | backward: 2164.52 | backward_inner: 2001.89 | backward_allreduce: 162.60 | step: 1172.13",
     {{DX_Q_RANK, 0, -1}, {DX_Q_RANK, 0, -1}}},
    {"https://github.com/deepspeedai/DeepSpeed/issues/1825",
     "[2022-03-11 02:06:58,985] [INFO] [timer.py:189:stop] 0/40, SamplesPerSec=83.48609168106144, MemAllocated=0.26GB, MaxMemAllocated=9.02GB",
     {{DX_Q_THROUGHPUT, 83.4861, -1}, {DX_Q_MEMORY, 2.6e+08, -1}, {DX_Q_MEMORY, 9.02e+09, -1}}},
    {"https://github.com/JiaquanYe/TableMASTER-mmocr/issues/32",
     "Epoch [1][100/62598]\tlr: 1.000e-03, eta: 6 days, 15:22:46, time: 0.539, data_time: 0.051, memory: 7239, loss_ce: 1.2757, horizon_bbox_loss: 0.2828, vertical_bbox_loss: 0.3507, loss: 1.9091, grad_norm: nan",
     {{DX_Q_EPOCH, 1, -1}, {DX_Q_STEP, 100, 62598}, {DX_Q_LR, 0.001, -1}, {DX_Q_STEP_TIME, 0.539, -1}, {DX_Q_DATA_TIME, 0.051, -1}, {DX_Q_MEMORY, 7239, -1}, {DX_Q_LOSS, 0.2828, -1}, {DX_Q_LOSS, 0.3507, -1}, {DX_Q_LOSS, 1.9091, -1}, {DX_Q_GRAD_NORM, NAN, -1}}},
    {"https://github.com/InternLM/xtuner/issues/187",
     "10/30 22:19:57 - mmengine - INFO - Epoch(train) [1][240/735]  lr: 1.9813e-04  eta: 2:44:49  time: 2.8874  data_time: 0.0042  memory: 10762  loss: 2.5128  grad_norm: nan",
     {{DX_Q_STEP, 240, 735}, {DX_Q_LR, 0.00019813, -1}, {DX_Q_STEP_TIME, 2.8874, -1}, {DX_Q_DATA_TIME, 0.0042, -1}, {DX_Q_MEMORY, 10762, -1}, {DX_Q_LOSS, 2.5128, -1}, {DX_Q_GRAD_NORM, NAN, -1}}},
    {"https://github.com/facebookresearch/detectron2/issues/195",
     "[11/01 11:27:04 d2.utils.events]: eta: 8:05:12  iter: 1259  total_loss: 1.012  loss_cls: 0.714  loss_box_reg: 0.291  time: 0.3322  data_time: 0.0334  lr: 0.010000  max_mem: 3961M",
     {{DX_Q_STEP, 1259, -1}, {DX_Q_LOSS, 1.012, -1}, {DX_Q_STEP_TIME, 0.3322, -1}, {DX_Q_DATA_TIME, 0.0334, -1}, {DX_Q_LR, 0.01, -1}, {DX_Q_MEMORY, 4.15341e+09, -1}}},
    {"https://github.com/facebookresearch/Detectron/issues/610",
     "json_stats: {\"accuracy_cls\": 1.000000, \"eta\": \"0:21:51\", \"iter\": 55080, \"loss\": 0.024404, \"loss_bbox\": 0.000645, \"loss_cls\": 0.001896, \"lr\": 0.000025, \"mb_qsize\": 64, \"mem\": 3084, \"time\": 0.266505}",
     {{DX_Q_STEP, 55080, -1}, {DX_Q_LOSS, 0.024404, -1}, {DX_Q_LR, 2.5e-05, -1}, {DX_Q_MEMORY, 3084, -1}, {DX_Q_STEP_TIME, 0.266505, -1}}},
    {"https://github.com/facebookresearch/fairseq/issues/940",
     "| epoch 001:    450 / 1891 loss=11.521, nll_loss=10.881, ppl=1886.05, wps=52922, ups=0.5, wpb=104928, bsz=5325, num_updates=445, lr=8.90889e-05, gnorm=1.543, clip=0%, oom=0, loss_scale=2.000, wall=882, train_wall=756",
     {{DX_Q_EPOCH, 1, -1}, {DX_Q_STEP, 450, 1891}, {DX_Q_LOSS, 11.521, -1}, {DX_Q_LOSS, 10.881, -1}, {DX_Q_THROUGHPUT, 52922, -1}, {DX_Q_STEP_RATE, 0.5, -1}, {DX_Q_STEP, 445, -1}, {DX_Q_LR, 8.90889e-05, -1}, {DX_Q_GRAD_NORM, 1.543, -1}}},
    {"https://github.com/facebookresearch/fairseq/issues/233",
     "{\"epoch\": 10, \"loss\": \"3.180\", \"nll_loss\": \"1.417\", \"ppl\": \"2.67\", \"wps\": 1671182, \"ups\": \"2.7\", \"wpb\": 617154, \"bsz\": 16625, \"num_updates\": 21497, \"lr\": 0.00030195283218121974, \"gnorm\": \"0.291\", \"clip\": \"100%\", \"oom\": 0.02712006326464158, \"loss_scale\": \"8.000\", \"wall\": 8285}",
     {{DX_Q_EPOCH, 10, -1}, {DX_Q_LOSS, 3.18, -1}, {DX_Q_LOSS, 1.417, -1}, {DX_Q_THROUGHPUT, 1.67118e+06, -1}, {DX_Q_STEP_RATE, 2.7, -1}, {DX_Q_STEP, 21497, -1}, {DX_Q_LR, 0.000301953, -1}, {DX_Q_GRAD_NORM, 0.291, -1}}},
    {"https://github.com/facebookresearch/fairseq/issues/430",
     "| epoch 017:  40%|▍| 14/35 [00:16<00:24,  1.17s/it, loss=11.806, ppl=3581.81, wps=2330, ups=0.2, wpb=2792, bsz=190, num_updates=574, lr=0.00025, gnorm=0.402, cl",
     {{DX_Q_EPOCH, 17, -1}, {DX_Q_STEP, 14, 35}, {DX_Q_STEP_TIME, 1.17, -1}, {DX_Q_LOSS, 11.806, -1}, {DX_Q_THROUGHPUT, 2330, -1}, {DX_Q_STEP_RATE, 0.2, -1}, {DX_Q_STEP, 574, -1}, {DX_Q_LR, 0.00025, -1}, {DX_Q_GRAD_NORM, 0.402, -1}}},
    {"https://github.com/Lightning-AI/pytorch-lightning/issues/4225",
     "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]",
     {{DX_Q_EPOCH, 0, -1}, {DX_Q_STEP, 4, 18}, {DX_Q_STEP_TIME, 4.47, -1}, {DX_Q_LOSS, 10.072, -1}}},
    {"https://github.com/karpathy/nanoGPT/issues/215",
     "2023-03-22 09:32:52 iter 3010: loss nan, time 1019.95ms, mfu 14.12%",
     {{DX_Q_STEP, 3010, -1}, {DX_Q_LOSS, NAN, -1}, {DX_Q_STEP_TIME, 1.01995, -1}}},
    {"https://github.com/pytorch/torchtitan/pull/3393",
     "[rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  grad_norm:  0.8319  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%",
     {{DX_Q_STEP, 14, -1}, {DX_Q_LOSS, 3.24405, -1}, {DX_Q_GRAD_NORM, 0.8319, -1}, {DX_Q_MEMORY, 1.01576e+10, -1}, {DX_Q_THROUGHPUT, 7282, -1}}},
    {"https://github.com/maudzung/RTM3D/issues/4",
     "Train - Epoch: [127/300][ 35/464]\tTime  0.738 ( 0.738)\tData  0.000 ( 0.014)\tLoss 2.1274e+00 (1.5406e+00)",
     {{DX_Q_EPOCH, 127, 300}, {DX_Q_STEP, 35, 464}, {DX_Q_STEP_TIME, 0.738, -1}, {DX_Q_DATA_TIME, 0, -1}, {DX_Q_LOSS, 2.1274, -1}}},
    {"https://github.com/open-mmlab/OpenPCDet/pull/1229",
     "2023-01-05 16:34:49,377   INFO  Train:    1/3 ( 33%) [  49/323 ( 15%)]  Loss: 36.77 (81.7)  LR: 1.351e-04  Time cost: 00:15/01:25 [00:15/04:48]  Acc_iter 50          Data time: 0.00(0.02)  Forward time: 0.31(0.29)  Batch time: 0.31(0.31)",
     {{DX_Q_STEP, 49, 323}, {DX_Q_LOSS, 36.77, -1}, {DX_Q_LR, 0.0001351, -1}, {DX_Q_STEP, 50, -1}, {DX_Q_DATA_TIME, 0, -1}, {DX_Q_STEP_TIME, 0.31, -1}}},
    {"https://github.com/wy1iu/sphereface/issues/103",
     "I0718 01:37:31.993999 23375 solver.cpp:218] Iteration 9800 (0.986216 iter/s, 101.398s/100 iters), loss = 9.61773",
     {{DX_Q_STEP, 9800, -1}, {DX_Q_STEP_RATE, 0.986216, -1}, {DX_Q_LOSS, 9.61773, -1}}},
    {"https://github.com/vpetren/gradnorm_tf/issues/17",
     "epoch: 3451 loss: nan",
     {{DX_Q_EPOCH, 3451, -1}, {DX_Q_LOSS, NAN, -1}}},
    {"https://github.com/PrimeIntellect-ai/prime-rl/pull/20",
     "03:22:14 [INFO] [TRAIN] [Rank 0] step: 289, loss: 0.4310, tokens_per_second: 76477.73, mfu: 337.59",
     {{DX_Q_RANK, 0, -1}, {DX_Q_STEP, 289, -1}, {DX_Q_LOSS, 0.431, -1}, {DX_Q_THROUGHPUT, 76477.7, -1}}},
    {"https://github.com/kwuking/TimeMixer/issues/88",
     "\titers: 500, epoch: 36 | loss: 0.1142284",
     {{DX_Q_STEP, 500, -1}, {DX_Q_EPOCH, 36, -1}, {DX_Q_LOSS, 0.114228, -1}}},
    {"https://github.com/kwuking/TimeMixer/issues/88",
     "\tspeed: 1.1351s/iter; left time: 59497.2293s",
     {{DX_Q_STEP_TIME, 1.1351, -1}}},
    {"https://github.com/christianpayer/MedicalDataAugmentationTool-VerSe/issues/31",
     "02:31:56: train iter: 100 loss_net: nan loss_scale: 785.4200 norm: nan norm_average: 0.8729 seconds: 122.871",
     {{DX_Q_STEP, 100, -1}}},
    {"https://github.com/noahzn/Lite-Mono/issues/98",
     "epoch   0 | lr 0.000100 |lr_p 0.000100 | batch    250 | examples/s:  22.1 | loss: 0.13400 | time elapsed: 00h03m34s | time left: 23h42m04s",
     {{DX_Q_EPOCH, 0, -1}, {DX_Q_LR, 0.0001, -1}, {DX_Q_THROUGHPUT, 22.1, -1}, {DX_Q_LOSS, 0.134, -1}}},
    {"https://github.com/nv-tlabs/LION/issues/9",
     "2023-01-25 01:03:05.674 | INFO     | trainers.base_trainer:train_epochs:256 - [R0] | E104 iter[ 14/ 15] | [Loss] nan | [exp] ./exp/0125/car/3dbf3ah_hvae_lion_B40 | [step]  1574 | [url] none | [time] 0.4m (~4h) |[best] 0 -100.000x1e-2 ",
     {{DX_Q_STEP, 14, 15}, {DX_Q_LOSS, NAN, -1}, {DX_Q_STEP, 1574, -1}, {DX_Q_STEP_TIME, 24, -1}}},
};
/* clang-format on */

static size_t nwant(const row *r)
{
    size_t n = 0;
    while (n < DX_ARRAY_LEN(r->w) && r->w[n].q != DX_Q_NONE)
        n++;
    return n;
}

static int same_value(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b))
        return a == b;
    return fabs(a - b) <= 1e-5 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* The metrics of line must be exactly those of r; what differs is printed with why. */
static int check_line(const row *r, const char *line, const char *why)
{
    dx_metric m[32];
    size_t n = dx_metrics_parse(line, strlen(line), m, DX_ARRAY_LEN(m)), nw = nwant(r);
    int ok = n == nw;
    for (size_t i = 0; ok && i < n; i++)
        ok = m[i].q == r->w[i].q && same_value(m[i].v, r->w[i].v) &&
             same_value(m[i].total, r->w[i].total);
    if (!ok) {
        printf("%s (%s): %s\n  found", r->source, why, line);
        for (size_t i = 0; i < n; i++)
            printf(" %s=%g/%g", dx_qty_name(m[i].q), m[i].v, m[i].total);
        printf("\n  wanted");
        for (size_t i = 0; i < nw; i++)
            printf(" %s=%g/%g", dx_qty_name(r->w[i].q), r->w[i].v, r->w[i].total);
        printf("\n");
    }
    return ok;
}

static void test_real_lines(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < DX_ARRAY_LEN(real); i++)
        bad += !check_line(&real[i], real[i].line, "as posted");
    assert_int_equal(bad, 0);
}

/* s with every "from" replaced by "to", into buf (cap bytes). */
static void replace_all(const char *s, const char *from, const char *to, char *buf, size_t cap)
{
    size_t n = 0, lf = strlen(from), lt = strlen(to);
    while (*s && n + 1 < cap) {
        if (!strncmp(s, from, lf) && n + lt + 1 < cap) {
            memcpy(buf + n, to, lt);
            n += lt;
            s += lf;
        } else
            buf[n++] = *s++;
    }
    buf[n] = '\0';
}

/* Variants that change nothing a metric is made of. */
static void test_generated_variants(void **state)
{
    (void)state;
    char v[8192], w[8192];
    int bad = 0;
    for (size_t i = 0; i < DX_ARRAY_LEN(real); i++) {
        const row *r = &real[i];
        snprintf(v, sizeof v, "[default3]:%s", r->line); /* torchrun's prefix */
        bad += !check_line(r, v, "a launcher prefix");
        snprintf(v, sizeof v, "%s   \r", r->line); /* a bar's trailing blanks */
        bad += !check_line(r, v, "trailing blanks");
        replace_all(r->line, "  ", "\t", v, sizeof v); /* aligned columns as tabs */
        bad += !check_line(r, v, "tabs");
        replace_all(r->line, "nan", "NaN", v, sizeof v); /* NaN as json and numpy write it */
        replace_all(v, "NAN", "NaN", w, sizeof w);
        bad += !check_line(r, w, "NaN");
    }
    assert_int_equal(bad, 0);
}

/* Every spelling of a name, with every separator and container, gives its quantity. */
static void test_spellings(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int q;
    } names[] = {
        {"loss", DX_Q_LOSS},
        {"lm loss", DX_Q_LOSS},
        {"train_loss", DX_Q_LOSS},
        {"train/loss", DX_Q_LOSS},
        {"total_loss", DX_Q_LOSS},
        {"val_loss", DX_Q_EVAL_LOSS},
        {"eval_loss", DX_Q_EVAL_LOSS},
        {"grad_norm", DX_Q_GRAD_NORM},
        {"grad norm", DX_Q_GRAD_NORM},
        {"gnorm", DX_Q_GRAD_NORM},
        {"learning_rate", DX_Q_LR},
        {"lr", DX_Q_LR},
        {"step_time", DX_Q_STEP_TIME},
        {"iter_time", DX_Q_STEP_TIME},
        {"data_time", DX_Q_DATA_TIME},
        {"data time", DX_Q_DATA_TIME},
        {"throughput", DX_Q_THROUGHPUT},
        {"tokens_per_sec", DX_Q_THROUGHPUT},
        {"max_memory_allocated", DX_Q_MEMORY},
        {"total_steps", DX_Q_TOTAL},
        {"num_batches", DX_Q_TOTAL},
        {"global_step", DX_Q_STEP},
    };
    /* what goes before the name, between it and the value, and after the value */
    static const char *const forms[][3] = {
        {"", "=", ""},          {"", ": ", ""},
        {"", " ", ""},          {"{'", "': ", ", 'epoch': 0.5}"},
        {"{\"", "\": ", "}"},   {"| ", ": ", " |"},
        {"step 3/8 ", " ", ""}, {"[rank 1] ", "=", ", other=2"},
        {"", "=", "   \r"},
    };
    static const char *const values[] = {"12", "0.25", "1.5e-03", "3E+01"};
    char line[256];
    int bad = 0, n = 0;
    for (size_t a = 0; a < DX_ARRAY_LEN(names); a++)
        for (size_t f = 0; f < DX_ARRAY_LEN(forms); f++)
            for (size_t v = 0; v < DX_ARRAY_LEN(values); v++) {
                /* a name of two words is no name in "k v" form, which reads one word */
                if (strchr(names[a].name, ' ') && !strcmp(forms[f][1], " ") && !*forms[f][0])
                    continue;
                if ((names[a].q == DX_Q_TOTAL || names[a].q == DX_Q_STEP) && strchr(values[v], '.'))
                    continue; /* a count is a whole number */
                snprintf(line, sizeof line, "%s%s%s%s%s", forms[f][0], names[a].name, forms[f][1],
                         values[v], forms[f][2]);
                dx_metric m[16];
                size_t k = dx_metrics_parse(line, strlen(line), m, 16);
                double value = strtod(values[v], NULL);
                int found = 0;
                for (size_t i = 0; i < k; i++)
                    found |= m[i].q == names[a].q && same_value(m[i].v, value);
                if (!found) {
                    printf("not read as %s = %g: %s\n", dx_qty_name(names[a].q), value, line);
                    bad++;
                }
                n++;
            }
    assert_true(n > 500);
    assert_int_equal(bad, 0);
}

/* Units in the value or in the name normalise to seconds, bytes, per second. */
static void test_units(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        int q;
        double v;
    } cases[] = {
        {"step 3/8 data_time 0.25s", DX_Q_DATA_TIME, 0.25},
        {"step 3/8 data_time=250ms", DX_Q_DATA_TIME, 0.25},
        {"step 3/8 data 250 ms", DX_Q_DATA_TIME, 0.25},
        {"{\"step\": 3, \"data_time_ms\": 250.0}", DX_Q_DATA_TIME, 0.25},
        {"it 3/8 | 12.5 ms/it", DX_Q_STEP_TIME, 0.0125},
        {"| 3/8 [00:01<00:02, 4.00it/s]", DX_Q_STEP_RATE, 4},
        {"| 3/8 [00:01<00:02, 2.50s/it]", DX_Q_STEP_TIME, 2.5},
        {"elapsed time per iteration (ms): 1500.0", DX_Q_STEP_TIME, 1.5},
        {"step 3 took 1.5 sec", DX_Q_STEP_TIME, 1.5},
        {"memory: 2.5GiB", DX_Q_MEMORY, 2.5 * 1073741824.0},
        {"max_mem: 3961M", DX_Q_MEMORY, 3961 * 1048576.0},
        {"mem_gb: 2", DX_Q_MEMORY, 2e9},
        {"tokens_per_sec: 22.8K", DX_Q_THROUGHPUT, 22800},
        {"tps: 7,282", DX_Q_THROUGHPUT, 7282},
        {"step 2 [time] 0.5m", DX_Q_STEP_TIME, 30},
    };
    int bad = 0;
    for (size_t i = 0; i < DX_ARRAY_LEN(cases); i++) {
        dx_metric m[16];
        size_t k = dx_metrics_parse(cases[i].line, strlen(cases[i].line), m, 16);
        int found = 0;
        for (size_t j = 0; j < k; j++)
            found |= m[j].q == cases[i].q && same_value(m[j].v, cases[i].v);
        if (!found) {
            printf("not read as %s = %g: %s\n", dx_qty_name(cases[i].q), cases[i].v, cases[i].line);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

/* Lines full of numbers that are no metrics give none (a rank alone is no metric either, but is
 * reported: the reading ignores a line that has nothing else). */
static void test_no_metrics(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; "
        "23.69 GiB total capacity; 22.36 GiB already allocated; 12.00 MiB free; 22.90 GiB "
        "reserved in total by PyTorch)",
        "node1:1234:1260 [0] NCCL INFO Channel 00/02 :    0   1   2   3",
        "[E ProcessGroupNCCL.cpp:828] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=57, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800393 "
        "milliseconds before timing out.",
        "  exitcode  : -9 (pid: 22208)",
        "  time      : 2026-12-07_12:51:01",
        "Python 3.10.12, torch 2.1.0+cu121, deepspeed 0.12.3, transformers 4.35.2",
        "    for step, (x, y) in enumerate(data, 1):",
        "Total train batch size (w. parallel, distributed & accumulation) = 64",
        "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer "
        "[127.0.0.1]:29581",
        "[rank 0] time (ms) | forward: 652.41 | backward: 2164.52 | step: 1172.13",
        "lr=0x7f3a loss=12:30:01 step=3.5",
    };
    for (size_t i = 0; i < DX_ARRAY_LEN(lines); i++) {
        dx_metric m[16];
        size_t k = dx_metrics_parse(lines[i], strlen(lines[i]), m, 16);
        for (size_t j = 0; j < k; j++)
            if (m[j].q != DX_Q_RANK)
                fail_msg("%s: read %s = %g", lines[i], dx_qty_name(m[j].q), m[j].v);
    }
}

/* The reader never reads past the end it is given, and survives any bytes. */
static void test_bounds(void **state)
{
    (void)state;
    const char *s = "loss=1.5 lr=3e-4 step 3/8 grad_norm: nan";
    size_t n = strlen(s);
    for (size_t cut = 0; cut <= n; cut++) {
        char *copy = malloc(cut ? cut : 1);
        assert_non_null(copy);
        memcpy(copy, s, cut);
        dx_metric m[16];
        size_t k = dx_metrics_parse(copy, cut, m, 16);
        assert_true(k <= 16);
        free(copy);
    }
    unsigned char junk[4096];
    unsigned x = 12345;
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (unsigned char)((x = x * 1103515245u + 12345u) >> 16);
        dx_metric m[32];
        assert_true(dx_metrics_parse((const char *)junk, sizeof junk, m, 32) <= 32);
    }
    dx_metric one[1];
    assert_int_equal(dx_metrics_parse(s, n, one, 1), 1);
    assert_int_equal(dx_metrics_parse(NULL, 5, one, 1), 0);
}

/* The name and unit tables are sorted (for whoever adds a row) and hold no digit (the memo of line
 * shapes relies on it: two lines that differ in their digits alone look the same words up). */
static void test_tables_sorted(void **state)
{
    (void)state;
    assert_int_equal(dx_metrics_tables_sorted(), 1);
}

/* Whether a and b found exactly the same metrics (the same bits of every value). */
static int same_metrics(const dx_metric *a, size_t na, const dx_metric *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].q != b[i].q || memcmp(&a[i].v, &b[i].v, sizeof a[i].v) ||
            memcmp(&a[i].total, &b[i].total, sizeof a[i].total) || a[i].key != b[i].key ||
            a[i].nkey != b[i].nkey)
            return 0;
    return 1;
}

/* line with its digits rewritten by way: 0 each digit + 1, 1 all 0, 2 all 9, 3 each digit from x */
static void redigit(const char *line, int way, unsigned *x, char *buf, size_t cap)
{
    size_t n = 0;
    for (; line[n] && n + 1 < cap; n++) {
        char c = line[n];
        if (c >= '0' && c <= '9') {
            *x = *x * 1103515245u + 12345u;
            c = way == 0   ? (char)('0' + (c - '0' + 1) % 10)
                : way == 1 ? '0'
                : way == 2 ? '9'
                           : (char)('0' + (*x >> 16) % 10);
        }
        buf[n] = c;
    }
    buf[n] = '\0';
}

/* Through a memo of line shapes, every line reads exactly as it does afresh: lines of one shape
 * with other digits (where a value decides: a step that must be whole, a total that must not be
 * negative, an exponent past a double, a hexadecimal prefix), read again and again. */
static void test_memo(void **state)
{
    (void)state;
    static const char *const tricky[] = {
        "step 3/8 loss 1.5",      "step 3.0 loss 1.5", "step 3.5 loss 1.5",  "it 3/-5 loss 2",
        "it 3/-0 loss 2",         "lr 1e400 step 2/9", "loss=0x1f step=3/9", "loss=5x step=3/9",
        "epoch 1,234 step 7,282", "tokens/s: 22.8K",   "-0 loss 1 step 0/1", "loss nan step 40/90",
    };
    dx_metrics_memo *memo = dx_metrics_memo_new();
    assert_non_null(memo);
    char v[8192];
    unsigned x = 7;
    int bad = 0;
    for (size_t i = 0; i < DX_ARRAY_LEN(real) + DX_ARRAY_LEN(tricky); i++) {
        const char *line = i < DX_ARRAY_LEN(real) ? real[i].line : tricky[i - DX_ARRAY_LEN(real)];
        for (int round = 0; round < 3; round++)
            for (int way = -1; way < 4; way++) {
                if (way < 0)
                    snprintf(v, sizeof v, "%s", line);
                else
                    redigit(line, way, &x, v, sizeof v);
                dx_metric a[32], b[32];
                size_t na = dx_metrics_parse(v, strlen(v), a, DX_ARRAY_LEN(a));
                size_t nb = dx_metrics_parse_memo(memo, v, strlen(v), b, DX_ARRAY_LEN(b));
                if (!same_metrics(a, na, b, nb)) {
                    printf("read otherwise through the memo (round %d): %s\n", round, v);
                    bad++;
                }
            }
    }
    dx_metrics_memo_free(memo);
    assert_int_equal(bad, 0);
}

/* A number's value is the double the reading has always computed digit by digit (the whole part
 * as m * 10 + digit, each fraction digit times a place value divided by ten once more, an
 * exponent through pow): written here the plain way and compared bit for bit with what the
 * reader gives, on numbers of every length (past 2^53 and past the place-value table), signs,
 * thousands groups and exponents. */
static double plain_value(const char *s)
{
    double m = 0, scale = 1;
    int neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    while (*s >= '0' && *s <= '9')
        m = m * 10 + (*s++ - '0');
    if (*s == ',') { /* one thousands group (on the signed value), then perhaps a fraction */
        double v = neg ? -m : m, g = (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
        v = v * 1000 + (v < 0 ? -g : g);
        s += 4;
        if (*s == '.') {
            double f = 0, sc = 1;
            for (s++; *s >= '0' && *s <= '9'; s++)
                f += (*s - '0') * (sc /= 10);
            v += v < 0 ? -f : f;
        }
        return v;
    }
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++) {
            scale /= 10;
            m += (*s - '0') * scale;
        }
    if (*s == 'e') {
        int eneg = s[1] == '-', e = 0;
        for (s += 2; *s >= '0' && *s <= '9'; s++)
            e = e * 10 + (*s - '0');
        m *= pow(10, eneg ? -e : e);
    }
    return neg ? -m : m;
}

static void test_number_values(void **state)
{
    (void)state;
    unsigned x = 11;
    int bad = 0;
    for (int round = 0; round < 20000; round++) {
        char num[96], line[128];
        size_t n = 0;
        x = x * 1103515245u + 12345u;
        if (x >> 31)
            num[n++] = '-';
        unsigned whole = 1 + (x >> 8) % 22, frac = (x >> 13) % 32;
        int group = round % 7 == 0, expo = round % 5 == 1;
        if (group)
            whole = 1 + whole % 3;
        for (unsigned k = 0; k < whole; k++) {
            x = x * 1103515245u + 12345u;
            num[n++] = (char)('0' + (x >> 16) % 10);
        }
        if (group) {
            for (unsigned k = 0; k < 4; k++) {
                x = x * 1103515245u + 12345u;
                num[n++] = k ? (char)('0' + (x >> 16) % 10) : ',';
            }
            frac %= 8;
        }
        if (frac) {
            num[n++] = '.';
            for (unsigned k = 0; k < frac; k++) {
                x = x * 1103515245u + 12345u;
                num[n++] = (char)('0' + (x >> 16) % 10);
            }
        }
        if (expo && !group)
            n += (size_t)snprintf(num + n, sizeof num - n, "e%c%02u", (x >> 20) & 1 ? '-' : '+',
                                  (x >> 21) % 40);
        num[n] = '\0';
        snprintf(line, sizeof line, "loss %s step 3/9", num);
        dx_metric m[32];
        size_t k = dx_metrics_parse(line, strlen(line), m, DX_ARRAY_LEN(m));
        double want = plain_value(num);
        const dx_metric *loss = NULL;
        for (size_t i = 0; i < k; i++)
            if (m[i].q == DX_Q_LOSS)
                loss = &m[i];
        if (!loss || memcmp(&loss->v, &want, sizeof want)) {
            printf("%s: read as %.17g, not %.17g\n", line, loss ? loss->v : NAN, want);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

static void dump(void)
{
    char line[8192];
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        dx_metric m[32];
        size_t k = dx_metrics_parse(line, n, m, 32);
        printf("%s\n", line);
        for (size_t i = 0; i < k; i++)
            printf("    %-12s %-12g total %-8g key '%.*s'\n", dx_qty_name(m[i].q), m[i].v,
                   m[i].total, (int)m[i].nkey, line + m[i].key);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--dump")) {
        dump();
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_lines),    cmocka_unit_test(test_generated_variants),
        cmocka_unit_test(test_spellings),     cmocka_unit_test(test_units),
        cmocka_unit_test(test_no_metrics),    cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_tables_sorted), cmocka_unit_test(test_memo),
        cmocka_unit_test(test_number_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
