/* test_norm.c -- text as it arrives: carriage returns, escaped logs, hard wraps and cluster
 * suffixes become the logical lines the program printed, each citing its physical line. */
#include "norm.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

/* The i-th logical line of n as a string (in a static buffer). */
static const char *lline(const dx_norm *n, size_t i)
{
    static char buf[512];
    const char *p = n->out.p;
    for (size_t k = 0; k < i; k++)
        p = strchr(p, '\n') + 1;
    size_t len = (size_t)(strchr(p, '\n') - p);
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

static void test_plain_chunk_untouched(void **state)
{
    (void)state;
    dx_norm n = {0};
    const char t[] = "step 1 loss 0.5\nstep 2 loss 0.4\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 1), 0);
    dx_norm_fini(&n);
}

static void test_carriage_returns(void **state)
{
    (void)state;
    dx_norm n = {0};
    /* a bar redrawn twice, then the error printed over it, on physical line 7 */
    const char t[] = "first\n"
                     " 10%|#   | 1/10 [00:01<00:09,  1.0it/s]\r 20%|##  | 2/10 [00:02<00:08,  "
                     "1.0it/s]\r[rank1]: RuntimeError: boom\n"
                     "last\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 6), 1);
    assert_int_equal(n.nlines, 4);
    assert_string_equal(lline(&n, 0), "first");
    assert_string_equal(lline(&n, 1), " 20%|##  | 2/10 [00:02<00:08,  1.0it/s]");
    assert_string_equal(lline(&n, 2), "[rank1]: RuntimeError: boom");
    assert_string_equal(lline(&n, 3), "last");
    assert_int_equal(n.first[1], 7);
    assert_int_equal(n.first[2], 7); /* both segments cite the physical line */
    assert_int_equal(n.first[3], 8);
    /* a line of blanks redrawn: one empty logical line keeps the count */
    const char b[] = "   \r   \n";
    assert_int_equal(dx_norm_chunk(&n, b, sizeof b - 1, 1), 1);
    assert_int_equal(n.nlines, 1);
    assert_string_equal(lline(&n, 0), "");
    dx_norm_fini(&n);
}

static void test_escaped_log(void **state)
{
    (void)state;
    dx_norm n = {0};
    const char t[] =
        "{\"log\": \"Traceback (most recent call last):\\n  File \\\"t.py\\\", line 3\\n"
        "RuntimeError: it\\'s \\u001b[31mred\\u001b[0m \\u00e9\\n\"}\n"
        "path C:\\new\\dir stays\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 1), 1);
    assert_int_equal(n.nlines, 5);
    assert_string_equal(lline(&n, 0), "{\"log\": \"Traceback (most recent call last):");
    assert_string_equal(lline(&n, 1), "  File \"t.py\", line 3");
    assert_string_equal(lline(&n, 2), "RuntimeError: it's red \xc3\xa9");
    assert_string_equal(lline(&n, 3), "\"}");
    /* no failure word: a literal \n is left alone */
    assert_string_equal(lline(&n, 4), "path C:\\new\\dir stays");
    assert_int_equal(n.first[2], 1);
    assert_int_equal(n.first[4], 2);
    dx_norm_fini(&n);
}

static void test_windows_frame(void **state)
{
    (void)state;
    dx_norm n = {0};
    /* "\nn" and "\Users" in a Windows frame are separators, not a newline or an escape */
    const char t[] =
        "  File \"C:\\Users\\u\\envs\\lib\\torch\\nn\\modules\\batchnorm.py\", line 682, "
        "in forward\n"
        "    raise ValueError(\"SyncBatchN\n"
        "path C:\\new\\dir stays\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 1), 1);
    assert_int_equal(n.nlines, 3);
    assert_string_equal(
        lline(&n, 0),
        "  File \"C:/Users/u/envs/lib/torch/nn/modules/batchnorm.py\", line 682, in forward");
    assert_string_equal(lline(&n, 1), "    raise ValueError(\"SyncBatchN");
    assert_string_equal(lline(&n, 2), "path C:\\new\\dir stays");
    assert_int_equal(n.first[0], 1);
    assert_int_equal(n.first[2], 3);
    dx_norm_fini(&n);
}

static void test_hard_wrap(void **state)
{
    (void)state;
    dx_norm n = {0};
    /* a terminal 80 columns wide cut two messages mid-word */
    const char t[] = "[rank0]: RuntimeError: Expected to have finished reduction in the prior "
                     "iteratio\n"
                     "n before starting a new one. This error indicates that your module has "
                     "parameter\n"
                     "s that were not used in producing loss.\n"
                     "2024-05-01 12:00:00,000 INFO done\n"
                     "[rank1]: ValueError: a second long message that the same terminal cut at "
                     "its wid\n"
                     "th as well\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 10), 1);
    assert_int_equal(n.nlines, 3);
    assert_string_equal(
        lline(&n, 0), "[rank0]: RuntimeError: Expected to have finished reduction in the prior "
                      "iteration before starting a new one. This error indicates that your module "
                      "has parameters that were not used in producing loss.");
    assert_int_equal(n.first[0], 10);
    assert_int_equal(n.span[0], 3);
    assert_string_equal(lline(&n, 1), "2024-05-01 12:00:00,000 INFO done");
    assert_string_equal(lline(&n, 2), "[rank1]: ValueError: a second long message that the same "
                                      "terminal cut at its width as well");
    assert_int_equal(n.first[1], 13);
    assert_int_equal(n.first[2], 14);
    assert_int_equal(n.span[2], 2);
    dx_norm_fini(&n);
}

static void test_separator_cut(void **state)
{
    (void)state;
    dx_norm n = {0};
    /* NCCL's warning pasted with a break after its " :" separator (as posted in an issue), then
       NCCL's own two-line "Last error:" form, a separator before a prefixed line and one before
       an indented line, none of which is a cut */
    const char t[] = "node1:4021:4090 [0] transport/net_socket.cc:424 NCCL WARN NET/Socket : peer "
                     "10.0.0.2<59210> message truncated :\n"
                     "receiving 1048576 bytes instead of 65536\n"
                     "Last error:\n"
                     "Cuda failure 999 'unknown error'\n"
                     "node1:4021:4090 [0] NCCL INFO Channel 00 :\n"
                     "node1:4021:4090 [0] NCCL INFO Ring 00 : 0 1\n"
                     "Options :\n"
                     "  verbose\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 3), 1);
    assert_int_equal(n.nlines, 7);
    assert_string_equal(lline(&n, 0),
                        "node1:4021:4090 [0] transport/net_socket.cc:424 NCCL WARN NET/Socket : "
                        "peer 10.0.0.2<59210> message truncated : receiving 1048576 bytes "
                        "instead of 65536");
    assert_int_equal(n.first[0], 3);
    assert_int_equal(n.span[0], 2);
    assert_string_equal(lline(&n, 1), "Last error:");
    assert_string_equal(lline(&n, 2), "Cuda failure 999 'unknown error'");
    assert_int_equal(n.first[2], 6);
    assert_string_equal(lline(&n, 3), "node1:4021:4090 [0] NCCL INFO Channel 00 :");
    assert_string_equal(lline(&n, 5), "Options :");
    assert_int_equal(n.first[6], 10);
    /* a chunk whose only separator ends its last line needs nothing */
    const char u[] = "step 1\nNET/Socket : message truncated :\n";
    assert_int_equal(dx_norm_chunk(&n, u, sizeof u - 1, 1), 0);
    dx_norm_fini(&n);
}

static void test_docker_records(void **state)
{
    (void)state;
    dx_norm n = {0};
    /* Docker's json-file driver, one record a line (the form of
       /var/lib/docker/containers/ID/ID-json.log): the line, escaped, with its newline, then the
       stream and the time; a line that is no record stays as it is */
    const char t[] =
        "{\"log\":\"Traceback (most recent call last):\\n\",\"stream\":\"stderr\",\"time\":"
        "\"2024-05-01T12:00:01.123456789Z\"}\n"
        "{\"log\":\"    store = TCPStore(result.hostname, \\\"x\\\")\\n\",\"stream\":\"stderr\","
        "\"time\":\"2024-05-01T12:00:01.2Z\"}\n"
        "plain line\n"
        "{\"log\":\"\\u003e no time\\n\"}\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 1), 1);
    assert_int_equal(n.nlines, 4);
    assert_string_equal(lline(&n, 0), "2024-05-01T12:00:01.123456789Z Traceback (most recent call "
                                      "last):");
    assert_string_equal(lline(&n, 1),
                        "2024-05-01T12:00:01.2Z     store = TCPStore(result.hostname, \"x\")");
    assert_string_equal(lline(&n, 2), "plain line");
    assert_string_equal(lline(&n, 3), "> no time");
    assert_int_equal(n.first[1], 2);
    assert_int_equal(n.first[3], 4);
    dx_norm_fini(&n);
}

static void test_tables_are_not_wraps(void **state)
{
    (void)state;
    dx_norm n = {0};
    /* lines of one width that are records or table rows, not a wrapped message */
    const char t[] = "torch.Size([4, 2262, 6144]) Layer.33 cuda:2 tensor([790315515, 1374], "
                     "device='cuda:2')\n"
                     "torch.Size([4, 2262, 6144]) Layer.34 cuda:4 tensor([790315515, 1374], "
                     "device='cuda:4')\n"
                     "+-------------------------------+----------------------+-----------------"
                     "-----+\n"
                     "|   7  NVIDIA A100-SXM...  On   | 00000000:00:0B.0 Off |                  "
                     "  0 |\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 1), 0);
    dx_norm_fini(&n);
}

static void test_markdown_quote(void **state)
{
    (void)state;
    dx_norm n = {0};
    const char t[] = "> Traceback (most recent call last):\n"
                     ">   File \"rendezvous.py\", line 126, in _tcp_rendezvous_handler\n"
                     "> ValueError: host not found: Name or service not known\n"
                     "\n"
                     "that is all\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 1), 1);
    assert_int_equal(n.nlines, 5);
    assert_string_equal(lline(&n, 0), "Traceback (most recent call last):");
    assert_string_equal(lline(&n, 1),
                        "  File \"rendezvous.py\", line 126, in _tcp_rendezvous_handler");
    assert_string_equal(lline(&n, 2), "ValueError: host not found: Name or service not known");
    assert_string_equal(lline(&n, 4), "that is all");
    /* one quoted line among ordinary ones is an ordinary line; a lone quoted line is a quote */
    const char u[] = "a\nb\n> c\nd\n";
    assert_int_equal(dx_norm_chunk(&n, u, sizeof u - 1, 1), 0);
    const char one[] = "> RuntimeError: the distributed NCCL backend is not available\n";
    assert_int_equal(dx_norm_chunk(&n, one, sizeof one - 1, 1), 1);
    assert_string_equal(lline(&n, 0),
                        "RuntimeError: the distributed NCCL backend is not available");
    dx_norm_fini(&n);
}

static void test_syslog_colours(void **state)
{
    (void)state;
    dx_norm n = {0};
    const char t[] = "#033[2m#033[33m(raylet)#033[0m node_manager.cc:3007: 2 Workers killed\n"
                     "plain #033 stays\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 4), 1);
    assert_int_equal(n.nlines, 2);
    assert_string_equal(lline(&n, 0), "(raylet) node_manager.cc:3007: 2 Workers killed");
    assert_string_equal(lline(&n, 1), "plain #033 stays");
    assert_int_equal(n.first[0], 4);
    dx_norm_fini(&n);
}

static void test_body_end(void **state)
{
    (void)state;
    const char *l = "(pid=3) RuntimeError: x [repeated 12x across cluster]  ";
    assert_int_equal(dx_norm_body_end(l, 8, strlen(l)), strlen("(pid=3) RuntimeError: x"));
    const char *m = "text ending in a bracket [not ours]";
    assert_int_equal(dx_norm_body_end(m, 0, strlen(m)), strlen(m));
    assert_int_equal(dx_norm_body_end("   ", 0, 3), 0);
}

static void test_no_memory(void **state)
{
    (void)state;
    const char t[] = "a\rb Error\\n c\n";
    for (long k = 1; k < 8; k++) {
        dx_norm n = {0};
        dx_alloc_fail_after(k);
        int rc = dx_norm_chunk(&n, t, sizeof t - 1, 1);
        dx_alloc_fail_after(0);
        assert_true(rc == 1 || rc == DDX_ENOMEM);
        dx_norm_fini(&n);
    }
}

static void test_glued_tee_lines(void **state)
{
    (void)state;
    dx_norm n = {0};
    /* torchrun's tee copied rank 1's unfinished line, then rank 0's whole one after it; a bar
       redrawn without a newline, then another rank's line */
    const char t[] = "[default1]:{'loss': 0.67[default0]:{'loss': nan, 'epoch': 0.5}\n"
                     "[default1]:17, 'grad_norm': nan}\n"
                     "[default0]:\r 38%|###  | 3/8 [00:00<00:00]\r 50%|#### | 4/8 [00:00<00:00]"
                     "[default1]:{'loss': nan}[default0]:x\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 3), 1);
    assert_int_equal(n.nlines, 7);
    assert_string_equal(lline(&n, 0), "[default1]:{'loss': 0.67");
    assert_string_equal(lline(&n, 1), "[default0]:{'loss': nan, 'epoch': 0.5}");
    assert_int_equal(n.first[1], 3); /* both pieces cite the physical line */
    assert_string_equal(lline(&n, 2), "[default1]:17, 'grad_norm': nan}");
    assert_string_equal(lline(&n, 3), "[default0]:"); /* the header the bar was drawn after */
    assert_string_equal(lline(&n, 4), " 50%|#### | 4/8 [00:00<00:00]");
    assert_string_equal(lline(&n, 5), "[default1]:{'loss': nan}");
    assert_string_equal(lline(&n, 6), "[default0]:x");
    /* another shape of bracket mid-line, a header mid-line of a line that has none, a role
       written differently: left whole */
    const char u[] = "[default0]:see [rank1]: and [default]: and [default12a]: here\n"
                     "text then [default1]:x\n"
                     "[trainer0]:a [default1]:b\n";
    assert_int_equal(dx_norm_chunk(&n, u, sizeof u - 1, 1), 0);
    /* another role's headers are split the same way */
    const char w[] = "[trainer2]:a[trainer13]:b\n";
    assert_int_equal(dx_norm_chunk(&n, w, sizeof w - 1, 1), 1);
    assert_int_equal(n.nlines, 2);
    assert_string_equal(lline(&n, 1), "[trainer13]:b");
    dx_norm_fini(&n);
}

static void test_quoted_in_prose(void **state)
{
    (void)state;
    dx_norm n = {0};
    /* a message in backticks, in bold, in quotes inside a sentence: the line, then the span,
       both on the physical line */
    const char t[] =
        "I see `RuntimeError: CUDA error: an illegal memory access was encountered` on rank 1\n"
        "The error is **torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 MiB**.\n"
        "I don't know why it's \"ValueError: Default process group has not been initialized.\" "
        "here\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 4), 1);
    assert_int_equal(n.nlines, 6);
    assert_string_equal(lline(&n, 1),
                        "RuntimeError: CUDA error: an illegal memory access was encountered");
    assert_int_equal(n.first[0], 4);
    assert_int_equal(n.first[1], 4);
    assert_string_equal(lline(&n, 3),
                        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 MiB");
    assert_int_equal(n.first[3], 5);
    /* an apostrophe opens no quote; the final period goes with the sentence */
    assert_string_equal(lline(&n, 5), "ValueError: Default process group has not been initialized");
    assert_int_equal(n.first[5], 6);
    /* counter-cases, left whole: quotes around words that are no message (a dict's keys, a
       path), a failure word outside the quotes, a span too short, apostrophes */
    const char u[] = "{'loss': 1.07, 'grad_norm': 0.5, 'epoch': 0.1}\n"
                     "  File \"/usr/lib/python3/site-packages/torch/errors.py\", line 3, in f\n"
                     "RuntimeError: expected 'float' but got `Half` here\n"
                     "it's an Error we don't 'know'\n"
                     "Unhandled exception <class 'RuntimeError'> in thread\n"
                     "[rank6]:     raise ValueError(\"NCCL error: the source line of a raise\")\n";
    assert_int_equal(dx_norm_chunk(&n, u, sizeof u - 1, 1), 0);
    /* a span keeps the line's prefixes: its rank */
    const char w[] = "[rank3]: failed with \"RuntimeError: NCCL error in: x\" here\n";
    assert_int_equal(dx_norm_chunk(&n, w, sizeof w - 1, 1), 1);
    assert_int_equal(n.nlines, 2);
    assert_string_equal(lline(&n, 1), "[rank3]: RuntimeError: NCCL error in: x");
    dx_norm_fini(&n);
}

static void test_exception_repr(void **state)
{
    (void)state;
    dx_norm n = {0};
    /* a caught exception's repr, as a logger prints it: read as Python raised it */
    const char t[] = "step failed: RuntimeError('NCCL communicator was aborted on rank 3.')\n"
                     "got MyError(\"bad thing happened here\") then\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 1), 1);
    assert_int_equal(n.nlines, 4);
    assert_string_equal(lline(&n, 1), "RuntimeError: NCCL communicator was aborted on rank 3");
    assert_string_equal(lline(&n, 3), "MyError: bad thing happened here");
    /* a call that is no exception's, and a repr whose text is too short: whole */
    const char u[] = "print('nothing wrong here') and TypeError('x')\n";
    assert_int_equal(dx_norm_chunk(&n, u, sizeof u - 1, 1), 0);
    dx_norm_fini(&n);
}

static void test_list_markup(void **state)
{
    (void)state;
    dx_norm n = {0};
    /* list items and headings before an exception are read without the markup */
    const char t[] = "- ValueError: Expected all tensors to be on the same device\n"
                     "### Traceback (most recent call last):\n"
                     "2. torch.distributed.DistBackendError: NCCL error in: x\n"
                     "* **RuntimeError: CUDA error: out of memory**\n";
    assert_int_equal(dx_norm_chunk(&n, t, sizeof t - 1, 1), 1);
    assert_int_equal(n.nlines, 5);
    assert_string_equal(lline(&n, 0), "ValueError: Expected all tensors to be on the same device");
    assert_string_equal(lline(&n, 1), "Traceback (most recent call last):");
    assert_string_equal(lline(&n, 2), "torch.distributed.DistBackendError: NCCL error in: x");
    assert_string_equal(lline(&n, 3), "**RuntimeError: CUDA error: out of memory**");
    assert_string_equal(lline(&n, 4), "RuntimeError: CUDA error: out of memory");
    assert_int_equal(n.first[4], 4);
    /* markup before no failure, or no markup at all: whole */
    const char u[] = "- loss: 0.5\n"
                     "1. Install torch, then run the Error-free script\n"
                     "- see the log below, the Error comes after a long time of training: x\n"
                     "--- a/train.py\n"
                     "#1 0x7f in Error::raise() at x.cpp\n"
                     "2024-01-01 RuntimeError: x\n";
    assert_int_equal(dx_norm_chunk(&n, u, sizeof u - 1, 1), 0);
    dx_norm_fini(&n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_chunk_untouched),
        cmocka_unit_test(test_carriage_returns),
        cmocka_unit_test(test_escaped_log),
        cmocka_unit_test(test_windows_frame),
        cmocka_unit_test(test_hard_wrap),
        cmocka_unit_test(test_separator_cut),
        cmocka_unit_test(test_docker_records),
        cmocka_unit_test(test_tables_are_not_wraps),
        cmocka_unit_test(test_markdown_quote),
        cmocka_unit_test(test_syslog_colours),
        cmocka_unit_test(test_body_end),
        cmocka_unit_test(test_no_memory),
        cmocka_unit_test(test_glued_tee_lines),
        cmocka_unit_test(test_quoted_in_prose),
        cmocka_unit_test(test_exception_repr),
        cmocka_unit_test(test_list_markup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
