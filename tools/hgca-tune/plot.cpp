// A small SVG line plot (see plot.hpp).
#include "plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace hgca::tune {
namespace {

/// A "nice" tick step (1, 2 or 5 × 10^k) giving about `ticks` ticks up to `max`.
double tick_step(double max, int ticks) {
  const double raw = max / ticks;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * p) return m * p;
  }
  return 10.0 * p;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string svg_line_plot(const std::string& title, const std::string& x_label, const std::string& y_label,
                          const std::vector<Series>& series) {
  constexpr double kW = 640, kH = 400, kLeft = 70, kRight = 20, kTop = 40, kBottom = 60;
  double x_max = 1, y_max = 1;
  for (const Series& s : series) {
    for (auto [x, y] : s.points) {
      x_max = std::max(x_max, x);
      y_max = std::max(y_max, y);
    }
  }
  // Threads are whole: no tick between them.
  const double x_step = std::max(1.0, tick_step(x_max, 8)), y_step = tick_step(y_max * 1.1, 6);
  x_max = std::ceil(x_max / x_step) * x_step;
  y_max = std::ceil(y_max * 1.1 / y_step) * y_step;
  const auto px = [&](double x) { return kLeft + x / x_max * (kW - kLeft - kRight); };
  const auto py = [&](double y) { return kH - kBottom - y / y_max * (kH - kTop - kBottom); };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">{3}</text>\n",
      kW, kH, kW / 2, escape(title));
  for (double x = 0; x <= x_max + 1e-9; x += x_step) {
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4:g}</text>\n",
                       px(x), py(0), py(y_max), py(0) + 16, x);
  }
  for (double y = 0; y <= y_max + 1e-9; y += y_step) {
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
                       px(0), py(y), px(x_max), px(0) - 6, py(y) + 4, y);
  }
  svg += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"black\"/>"
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{3:.1f}\" stroke=\"black\"/>\n"
      "<text x=\"{4:.1f}\" y=\"{5:.1f}\" text-anchor=\"middle\">{6}</text>\n"
      "<text x=\"18\" y=\"{7:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {7:.1f})\">{8}</text>\n",
      px(0), py(0), px(x_max), py(y_max), (px(0) + px(x_max)) / 2, kH - 20, escape(x_label),
      (py(0) + py(y_max)) / 2, escape(y_label));
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    std::string points;
    for (auto [x, y] : s.points) points += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", s.color, points);
    for (auto [x, y] : s.points) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}: {:g}, {:.1f}</title></circle>\n",
                         px(x), py(y), s.color, escape(s.name), x, y);
    }
    const double ly = kTop + 8 + 18.0 * static_cast<double>(i);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"2\"/>"
                       "<text x=\"{4:.1f}\" y=\"{5:.1f}\">{6}</text>\n",
                       px(0) + 12, ly, px(0) + 36, s.color, px(0) + 42, ly + 4, escape(s.name));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace hgca::tune
