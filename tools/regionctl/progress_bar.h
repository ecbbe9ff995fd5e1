// The progress bar of long regionctl commands (create's zero-fill, verify's
// reads), drawn on stderr only when it is a terminal.
#ifndef REGIONSTORE_TOOLS_REGIONCTL_PROGRESS_BAR_H_
#define REGIONSTORE_TOOLS_REGIONCTL_PROGRESS_BAR_H_

#include <cstdint>
#include <string>
#include <utility>

namespace regionstore::regionctl {

// True when stderr is a terminal: a bar there helps a person waiting, and in
// a pipe or a log file it would only be noise.
bool StderrIsTerminal();

// "\r<label>: [#########           ]  45% (900.0 MiB of 2.0 GiB)" on stderr,
// redrawn when the percentage changes, and erased ("\r\033[K") by the
// destructor if it was ever drawn, so the command's report starts on a
// clean line. A disabled bar draws nothing. Not thread-safe.
class ProgressBar {
 public:
  // `when_done`, if not empty, is appended once the bar reaches 100%, for
  // work that follows the last byte ("fsync").
  ProgressBar(std::string label, bool enabled, std::string when_done = {})
      : label_(std::move(label)), when_done_(std::move(when_done)), enabled_(enabled) {}
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Shows `done` of `total` bytes; total 0 draws nothing.
  void Update(uint64_t done, uint64_t total);

 private:
  std::string label_;
  std::string when_done_;
  bool enabled_;
  bool shown_ = false;
  int last_percent_ = -1;
};

}  // namespace regionstore::regionctl

#endif  // REGIONSTORE_TOOLS_REGIONCTL_PROGRESS_BAR_H_
