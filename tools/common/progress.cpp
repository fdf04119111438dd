// A small progress bar on stderr (Debian packages no C++ progress-bar library).
#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>

#include <fmt/format.h>

#include "output.hpp"

namespace hgca::tools {
namespace {

std::atomic<bool> bar_on_line{false};  // a terminal's cursor stands at the end of a drawn bar

/// What SIGINT and SIGTERM did before ours (their default action, or a library's handler).
struct sigaction previous[2];
int slot_of(int sig) { return sig == SIGINT ? 0 : 1; }

/// Ctrl-C (or SIGTERM) during a bar: ends its line, then does what the signal did before (the
/// default action ends the process), so that the shell's prompt does not land on the bar. Not
/// where the signal was ignored.
void end_line_then_previous(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;  // the interrupted code's, if the previous handler returns
  if (bar_on_line.load()) (void)!::write(STDERR_FILENO, "\n", 1);
  const struct sigaction& prev = previous[slot_of(sig)];
  if (prev.sa_handler == SIG_DFL) {  // (not SIG_IGN: no handler of ours then)
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  } else {
    // As the kernel would have run it: a one-shot handler finds the default action restored.
    if (prev.sa_flags & SA_RESETHAND) std::signal(sig, SIG_DFL);
    if (prev.sa_flags & SA_SIGINFO) {
      prev.sa_sigaction(sig, info, context);
    } else {
      prev.sa_handler(sig);
    }
  }
  errno = saved_errno;
}

void install_end_line_handlers() {
  static const bool installed = [] {
    for (int sig : {SIGINT, SIGTERM}) {
      struct sigaction& prev = previous[slot_of(sig)];
      if (::sigaction(sig, nullptr, &prev) != 0) continue;
      if (prev.sa_handler == SIG_IGN) continue;  // (sa_handler and sa_sigaction share their storage)
      struct sigaction on{};
      on.sa_sigaction = end_line_then_previous;
      on.sa_flags = SA_SIGINFO;
      sigemptyset(&on.sa_mask);
      ::sigaction(sig, &on, nullptr);
    }
    return true;
  }();
  (void)installed;
}

}  // namespace

ProgressBar::ProgressBar(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)),
      total_(std::max<int64_t>(total, 1)),
      enabled_(enabled),
      tty_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()) {
  if (enabled_ && tty_) install_end_line_handlers();
}

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
  bar_on_line = true;  // before the bar's bytes leave: a signal may come as soon as they do
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
    bar_on_line = false;
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
