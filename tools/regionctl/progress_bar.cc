#include "progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "common.h"

namespace regionstore::regionctl {

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

ProgressBar::~ProgressBar() {
  if (shown_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

void ProgressBar::Update(uint64_t done, uint64_t total) {
  if (!enabled_ || total == 0) return;
  const int percent = static_cast<int>(std::min(done, total) * 100 / total);
  if (percent == last_percent_) return;
  last_percent_ = percent;
  constexpr int kWidth = 30;
  std::string bar(static_cast<size_t>(percent * kWidth / 100), '#');
  bar.resize(kWidth, ' ');
  const std::string suffix = percent == 100 && !when_done_.empty() ? ", " + when_done_ : "";
  std::fprintf(stderr, "\r%s: [%s] %3d%% (%s of %s)%s", label_.c_str(), bar.c_str(), percent,
               ApproximateUnits(done).c_str(), ApproximateUnits(total).c_str(), suffix.c_str());
  std::fflush(stderr);
  shown_ = true;
}

}  // namespace regionstore::regionctl
