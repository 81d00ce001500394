/* test_lint.c -- the lint rules that are functions of one field: a check command parses as a
 * shell command (dx_lint_shell, compared case by case with what dash -n says), and a link is a
 * documentation page (dx_lint_doc_site). The rules over whole folders have one fixture each in
 * tests/data/lint (tests/lint_rules.sh). */
#include "lint.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

/* commands a shell accepts as written (dash -n agrees on every one) */
static const char *const shell_ok[] = {
    "nvidia-smi topo -m",
    "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET torchrun ... 2>&1 | grep -E 'Bootstrap : Using'",
    "python -c \"import torch; print(torch.__version__, torch.version.cuda)\"",
    "ls $(python -c \"import os; print(os.getcwd())\")/lib",
    "for h in $(awk '{print $1}' hostfile); do ssh -o BatchMode=yes $h hostname; done",
    "if true; then echo a; elif false; then echo b; else echo c; fi | tail -1",
    "while read -r l; do echo \"$l\"; done < file",
    "for x in a b\ndo echo $x\ndone",
    "{ date; uptime; } > report.txt",
    "(cd build && make) && echo done",
    "df -h /dev/shm  # (inside the container)",
    "echo ${HOME:-/root} $((1 + 2)) `date`",
    "echo \"`date` $(echo \"(nested)\")\"",
    "a &",
    "a |\n b",
    "! grep -q x f",
    "> out.txt echo x",
    "docker inspect --format '{{.HostConfig.ShmSize}}' CONTAINER",
    "grep -n \"$(hostname)\" /etc/hosts ; getent hosts $(hostname)",
    "while read -r l; do echo $l; done < f",
    "sort < in > out",
    "echo compare the start times",
};

/* commands a shell refuses, and a word of the reason lint gives */
static const struct {
    const char *cmd, *why;
} shell_bad[] = {
    {"print({p.device for p in model.parameters()})", "starts with 'print'"},
    {"torch.autograd.set_detect_anomaly(True)", "'(' after a word"},
    {"model.print_trainable_parameters()", "'(' after a word"},
    {"py-spy dump --pid PID   (on every rank)", "'(' after a word"},
    {"nvidia-smi -q -d ECC -i <gpu>", "'<gpu>' is a placeholder"},
    {"grep x log >", "'>' has no file after it"},
    {"df -h <nvme_path>; df -i <nvme_path>", "'<nvme_path>' is a placeholder"},
    {"cat < ; ls", "'<' has no file after it"},
    {"nc -zv <ip> <port>", "'<ip>' is a placeholder"},
    {"cat < > f", "a redirection right after the redirection '<'"},
    {"echo 'unterminated", "unterminated single quote"},
    {"echo \"unterminated", "unterminated double quote"},
    {"echo $(date", "unterminated $("},
    {"echo `date", "unterminated backquote"},
    {"echo ${HOME", "unterminated ${"},
    {"grep x f |", "ends with '|'"},
    {"make &&", "ends with '&&'"},
    {"| grep x", "'|' with no command before it"},
    {"a ; ; b", "';' with no command before it"},
    {"a ;; b", "';;' outside a case"},
    {"echo a )", "unmatched ')'"},
    {"if a; then b", "is not closed"},
    {"if a; then fi", "'fi' where the shell does not expect it"},
    {"then x", "'then' where the shell does not expect it"},
    {"for x in a b; do", "ends with 'do'"},
    {"done", "'done' where"},
    {"case x in a) b;; esac", "'case'"},
    {"grep x task-<N>.log | head", "'<N>' is a placeholder"},
    {"ls -l <nvme_path>/zero_stage_3", "'<nvme_path>' is a placeholder"},
    {"compare the start times of the launcher lines", "starts with 'compare'"},
    {"print the input shapes", "starts with 'print'"},
    {"read the logs of the tasks", "reads as a sentence ('read the ...')"},
    {"from torch.distributed.elastic.multiprocessing.errors import record", "starts with 'from'"},
};

static void shell_accepts(void **state)
{
    (void)state;
    char why[200];
    for (size_t i = 0; i < sizeof shell_ok / sizeof *shell_ok; i++) {
        int rc = dx_lint_shell(shell_ok[i], why, sizeof why);
        if (rc)
            fail_msg("refused '%s': %s", shell_ok[i], why);
        assert_string_equal(why, "");
    }
}

static void shell_refuses(void **state)
{
    (void)state;
    char why[200];
    for (size_t i = 0; i < sizeof shell_bad / sizeof *shell_bad; i++) {
        if (!dx_lint_shell(shell_bad[i].cmd, why, sizeof why))
            fail_msg("accepted '%s'", shell_bad[i].cmd);
        if (!strstr(why, shell_bad[i].why))
            fail_msg("'%s': reason '%s' lacks '%s'", shell_bad[i].cmd, why, shell_bad[i].why);
    }
}

static void doc_sites(void **state)
{
    (void)state;
    char buf[128];
    static const struct {
        const char *url, *site; /* site NULL: no documentation */
    } cases[] = {
        {"https://docs.jax.dev/en/latest/fault_tolerance.html", "docs.jax.dev"},
        {"https://deepspeed.readthedocs.io/en/latest/zero3.html", "deepspeed.readthedocs.io"},
        {"https://pytorch.org/docs/stable/distributed.html", "pytorch.org/docs"},
        {"http://pytorch.org/tutorials/intermediate/ddp_tutorial.html", "pytorch.org/tutorials"},
        {"https://huggingface.co/docs/accelerate/usage_guides/fsdp", "huggingface.co/docs"},
        {"https://nvidia.github.io/NeMo/", "nvidia.github.io"},
        {"https://github.com/NVIDIA/Megatron-LM/blob/main/docs/source/user-guide.md",
         "a docs/ folder on github.com"},
        {"https://github.com/pytorch/pytorch/issues/87995", NULL},
        {"https://github.com/microsoft/LMOps/pull/331", NULL},
        {"https://discuss.pytorch.org/t/nccl-timeout/12345", NULL},
        {"https://pytorch.org/blog/some-post", NULL},
        {"https://github.com/org/repo/blob/main/logs/train.log", NULL},
        {"https://huggingface.co/meta-llama/discussions/3", NULL},
        {"https://mydocs.example.org/page", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *site = dx_lint_doc_site(cases[i].url, buf, sizeof buf);
        if (!cases[i].site && site)
            fail_msg("'%s' read as documentation (%s)", cases[i].url, site);
        if (cases[i].site && (!site || strcmp(site, cases[i].site)))
            fail_msg("'%s' gave %s, not %s", cases[i].url, site ? site : "NULL", cases[i].site);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shell_accepts),
        cmocka_unit_test(shell_refuses),
        cmocka_unit_test(doc_sites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
