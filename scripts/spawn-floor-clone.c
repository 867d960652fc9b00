/* spawn-floor.c with the child spur starts since its fifth verify pass: its own
 * clone(CLONE_VM | CLONE_VFORK) on a lent stack, which resets SIGPIPE only, instead of
 * posix_spawn, whose child asks about and resets every signal (~120 sigaction calls) and
 * whose stack is mapped and unmapped per spawn. No process group, no timeout, no evidence.
 * Used by scripts/verify-vs-sh-paired. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;
struct args { int out, err; sigset_t *mask; char **argv; };
static int child(void *p) {
    struct args *a = p;
    if (dup2(a->out, 1) < 0 || dup2(a->err, 2) < 0) _exit(127);
    struct sigaction sa = {0}; sa.sa_handler = SIG_DFL; sigaction(SIGPIPE, &sa, NULL);
    sigprocmask(SIG_SETMASK, a->mask, NULL);
    execve("/bin/sh", a->argv, environ);
    _exit(127);
}
int main(void) {
    char *args[] = {"sh", "-c", "true", NULL};
    signal(SIGPIPE, SIG_IGN);
    static char stack[64 * 1024] __attribute__((aligned(16)));
    for (int i = 0; i < 200; i++) {
        int out[2], err[2];
        if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return 1;
        sigset_t all, old; sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, &old);
        struct args a = {out[1], err[1], &old, args};
        pid_t pid = clone(child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (pid < 0) return 1;
        close(out[1]); close(err[1]);
        char buf[4096];
        while (read(out[0], buf, sizeof buf) > 0) {}
        while (read(err[0], buf, sizeof buf) > 0) {}
        close(out[0]); close(err[0]);
        int status;
        if (waitpid(pid, &status, 0) != pid || status != 0) return 1;
    }
    return 0;
}
