// max_rss_probe PROGRAM [ARG...]: runs PROGRAM with the probe's standard
// input, its output and errors sent to /dev/null, waits for it, and prints
// "exit <code> maxrss_kib <n>" (or "signal <n> maxrss_kib <n>").
//
// Why a program of its own: a child's ru_maxrss counts the memory of the
// process it was forked from until its exec (the kernel keeps the old
// address space's high-water mark at exec), so a child forked straight from
// a test process that holds hundreds of MiB (an ASan runtime's quarantine,
// say) would report those. The probe is small, and its child starts from it.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: max_rss_probe PROGRAM [ARG...]\n");
    return 2;
  }
  const pid_t child = ::fork();
  if (child < 0) return 3;
  if (child == 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(null_fd, STDERR_FILENO);
    ::execv(argv[1], argv + 1);
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  if (::wait4(child, &status, 0, &usage) != child) return 4;
  if (WIFEXITED(status)) {
    std::printf("exit %d maxrss_kib %ld\n", WEXITSTATUS(status), usage.ru_maxrss);
  } else {
    std::printf("signal %d maxrss_kib %ld\n", WTERMSIG(status), usage.ru_maxrss);
  }
  return 0;
}
