// A small progress bar on stderr (Debian packages no C++ progress-bar library).
#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "output.hpp"

namespace hgca::tools {

ProgressBar::ProgressBar(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)),
      total_(std::max<int64_t>(total, 1)),
      enabled_(enabled),
      tty_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(int64_t done) {
  if (!enabled_ || finished_) return;
  done = std::clamp<int64_t>(done, 0, total_);
  done_ = done;
  if (tty_) {
    // A redraw per call would flood a slow terminal; ~20 Hz looks as smooth.
    const auto now = std::chrono::steady_clock::now();
    if (done < total_ && now - last_draw_ < std::chrono::milliseconds(50)) return;
    last_draw_ = now;
    draw(done);
  } else {
    // Logs get a line at each quarter rather than a stream of carriage returns.
    const auto quarter = static_cast<int>(done * 4 / total_);
    if (quarter > last_quarter_) {
      last_quarter_ = quarter;
      eprint("{}: {}/{} ({}%), {:.1f} s\n", label_, done, total_, done * 100 / total_, elapsed_s());
    }
  }
}

void ProgressBar::draw(int64_t done) {
  constexpr int kWidth = 30;
  drawn_ = done;
  const auto filled = static_cast<int>(done * kWidth / total_);
  eprint("\r{} [{:=<{}}{:<{}}] {}/{} {:.1f} s", label_, "", filled, done < total_ ? ">" : "", kWidth - filled, done,
         total_, elapsed_s());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (tty_) {
    if (drawn_ != done_) draw(done_);  // the throttle may have skipped the last update
    eprint("\n");
  } else if (done_ < total_) {
    eprint("{}: stopped at {}/{}, {:.1f} s\n", label_, done_, total_, elapsed_s());
  }
}

void ProgressBar::complete() {
  if (!enabled_ || finished_) return;
  total_ = std::max<int64_t>(done_, 1);
  update(done_);  // its 100 % line or bar
  finish();
}

double ProgressBar::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace hgca::tools
