// A small progress bar on stderr: redrawn in place on a terminal, a plain line per quarter otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace hgca::tools {

class ProgressBar {
 public:
  /// `total` units of work; nothing is printed when `enabled` is false.
  ProgressBar(std::string label, int64_t total, bool enabled);
  ~ProgressBar() { finish(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(int64_t done);
  /// Ends the bar (idempotent); a plain log gets a last line when the work ended short of total.
  void finish();
  /// Ends the bar with the work complete at what was done: it ended before total by its own rule
  /// (the model ended the story), which is no stop.
  void complete();

 private:
  void draw(int64_t done);
  double elapsed_s() const;

  std::string label_;
  int64_t total_;
  bool enabled_;
  bool tty_;
  bool finished_ = false;
  int last_quarter_ = 0;
  int64_t done_ = 0;
  int64_t drawn_ = -1;  // what the terminal shows
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace hgca::tools
