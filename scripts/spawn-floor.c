/* The floor for a runner that captures output: 200 `sh -c true`, each started with
 * posix_spawn (stdout and stderr on pipes), both pipes read to the end, then waitpid.
 * No process group, no timeout, no evidence, and `sh` is /bin/sh, not looked up. Used by
 * scripts/verify-vs-sh-paired. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(void) {
    char *args[] = {"sh", "-c", "true", NULL};
    signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < 200; i++) {
        int out[2], err[2];
        if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return 1;
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], 1);
        posix_spawn_file_actions_adddup2(&actions, err[1], 2);
        pid_t pid;
        if (posix_spawn(&pid, "/bin/sh", &actions, NULL, args, environ) != 0) return 1;
        posix_spawn_file_actions_destroy(&actions);
        close(out[1]);
        close(err[1]);
        char buf[4096];
        while (read(out[0], buf, sizeof buf) > 0) {}
        while (read(err[0], buf, sizeof buf) > 0) {}
        close(out[0]);
        close(err[0]);
        int status;
        if (waitpid(pid, &status, 0) != pid || status != 0) return 1;
    }
    return 0;
}
