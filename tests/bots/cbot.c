/* A minimal protocol bot in C: ready to hello, dudo to every turn. Before
 * answering a turn it starts and joins a thread and forks and reaps a child,
 * so glibc's clone3-then-clone path runs under the system-call filter. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *nothing(void *arg) { return arg; }

int main(void) {
    char line[1 << 16];
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"hello\"")) {
            puts("{\"type\":\"ready\",\"name\":\"cbot\"}");
        } else if (strstr(line, "\"turn\"")) {
            pthread_t t;
            pid_t pid;
            int status = -1;
            if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
                return 3;
            pid = fork();
            if (pid == 0)
                _exit(7);
            if (pid < 0 || waitpid(pid, &status, 0) != pid || WEXITSTATUS(status) != 7)
                return 4;
            puts("{\"action\":\"dudo\"}");
        }
    }
    return 0;
}
