// A small SVG line plot (bandwidth against threads), written with fmt.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hgca::tune {

struct Series {
  std::string name;
  std::string color;  ///< an SVG color, e.g. "#1f77b4"
  std::vector<std::pair<double, double>> points;  ///< (x, y)
};

/// The SVG text of a line plot of `series` with axes from 0 to a little above the largest value.
std::string svg_line_plot(const std::string& title, const std::string& x_label, const std::string& y_label,
                          const std::vector<Series>& series);

}  // namespace hgca::tune
