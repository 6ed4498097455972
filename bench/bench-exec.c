/* SPDX-License-Identifier: MIT */
/*
 * Whole-process timing: runs a command N times (stdout to /dev/null) and prints the median,
 * minimum and 90th percentile wall time. Used by bench/run.sh to compare amdsmi with peers on
 * the same tree in the same run.
 *
 *   bench-exec [-n RUNS] [-l LABEL] -- CMD [ARGS...]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

int main(int argc, char **argv) {
        const char *label = NULL;
        long runs = 100;
        int opt, failures = 0, max_ok = 0; /* -x N: exit statuses 0..N succeed (amdsmi doctor's
                                              1 and 2 are findings, not failures) */
        double *t, median;

        while ((opt = getopt(argc, argv, "+n:l:x:")) != -1) {
                switch (opt) {
                case 'n':
                        runs = strtol(optarg, NULL, 10);
                        break;
                case 'l':
                        label = optarg;
                        break;
                case 'x':
                        max_ok = (int) strtol(optarg, NULL, 10);
                        break;
                default:
                        return 2;
                }
        }
        if (optind >= argc || runs < 1) {
                fprintf(stderr,
                        "usage: bench-exec [-n RUNS] [-l LABEL] [-x MAX_OK_STATUS] -- CMD [ARGS...]\n");
                return 2;
        }
        t = calloc((size_t) runs, sizeof(double));
        if (!t)
                return 1;
        for (long i = 0; i < runs; i++) {
                double start = bench_now_us(CLOCK_MONOTONIC);
                int status;
                pid_t pid = fork();

                if (pid < 0)
                        return 1;
                if (pid == 0) {
                        int fd = open("/dev/null", O_WRONLY);
                        dup2(fd, 1);
                        dup2(fd, 2);
                        execvp(argv[optind], argv + optind);
                        _exit(127);
                }
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
                t[i] = bench_now_us(CLOCK_MONOTONIC) - start;
                if (!WIFEXITED(status) || WEXITSTATUS(status) > max_ok)
                        failures++;
        }
        median = bench_median(t, (size_t) runs); /* sorts: t[0] is the minimum */
        printf("%s: median %.0f us, min %.0f us, p90 %.0f us (%ld runs%s)\n",
               label ? label : argv[optind], median, t[0], bench_percentile(t, (size_t) runs, 90),
               runs, failures ? ", SOME RUNS FAILED" : "");
        free(t);
        return failures ? 1 : 0;
}
