// The command-line tools' shared parsing: validators that name what a flag expects, and one form
// and exit status for every usage error.
//
// CLI11 alone reports a value it cannot convert as "Could not convert: --threads = abc" (no word of
// what was expected), refuses "1.5" for an integer flag as "not in range", truncates or saturates
// some values, reads "010" as octal, and exits 104–109. Every numeric flag of ours takes one of these
// validators instead, which run on the text before CLI11 converts it and hand it on in plain
// decimal. Attach them with ->transform(): ->check() gives a validator a copy of the text.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "hgca/hgca.h"
#include "hgca/hgca.hpp"
#include "output.hpp"

namespace hgca::tools {

/// `in` whole as a decimal T (from_chars: no sign but '-', no base prefix, no spaces), or nullopt.
template <class T>
std::optional<T> read_decimal(const std::string& in) {
  T v{};
  const auto [end, ec] = std::from_chars(in.data(), in.data() + in.size(), v);
  if (ec != std::errc{} || end != in.data() + in.size()) return std::nullopt;
  return v;
}

/// An integer of T from lo to hi, written in decimal: "expected an integer from lo to hi, got …".
/// `description` is what --help shows after the type.
template <class T>
CLI::Validator integer_in(T lo, T hi, std::string description) {
  static_assert(std::is_integral_v<T>);
  return CLI::Validator(
      [lo, hi](std::string& in) -> std::string {
        if (const std::optional<T> v = read_decimal<T>(in); v && *v >= lo && *v <= hi) {
          in = fmt::format("{}", *v);  // as read: CLI11 would take a leading 0 as octal ("010" as 8)
          return {};
        }
        // Bounds that are only T's limits say little about what is no integer at all ("1.5").
        const std::size_t first_digit = in.starts_with('-') ? 1 : 0;
        const bool integral = in.size() > first_digit && in.find_first_not_of("0123456789", first_digit) == std::string::npos;
        const bool type_bounds = lo == std::numeric_limits<T>::min() && hi == std::numeric_limits<T>::max();
        if (type_bounds && !integral) return fmt::format("expected an integer, got {}", in);
        return fmt::format("expected an integer from {} to {}, got {}", lo, hi, in);
      },
      std::move(description));
}

template <class T>
CLI::Validator integer_in(T lo, T hi) {
  return integer_in(lo, hi, fmt::format("in [{}, {}]", lo, hi));
}

/// Any integer T holds (the runtime checks what the value means, and names it).
template <class T>
CLI::Validator integer() {
  return integer_in(std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), "");
}

/// A finite number from lo to hi (an infinite bound: none on that side) that T holds: a float flag
/// refuses what it would read as 0 or infinity ("--beta 1e-50" would have meant exact attention).
template <class T = double>
CLI::Validator number_in(double lo, double hi) {
  static_assert(std::is_floating_point_v<T>);
  const std::string expected = std::isinf(lo) && std::isinf(hi) ? std::string("a finite number")
                               : std::isinf(hi)                 ? fmt::format("a number ≥ {}", lo)
                                                                : fmt::format("a number from {} to {}", lo, hi);
  const std::string type = std::is_same_v<T, float> ? " that a float holds (0, or magnitudes from 1.4e-45 to 3.4e+38)" : "";
  return CLI::Validator(
      [lo, hi, expected, type](std::string& in) -> std::string {
        double v = 0;
        const auto [end, ec] = std::from_chars(in.data(), in.data() + in.size(), v);
        // (Magnitude first: converting a double beyond T's range is undefined.)
        const bool fits = std::abs(v) <= std::numeric_limits<T>::max() && (v == 0 || static_cast<T>(v) != 0);
        if (ec == std::errc{} && end == in.data() + in.size() && std::isfinite(v) && v >= lo && v <= hi && fits) {
          in = fmt::format("{}", v);  // as read, shortest exact form (CLI11 would read "0x10" as hex)
          return {};
        }
        return fmt::format("expected {}{}, got {}", expected, type, in);
      },
      std::isinf(lo) && std::isinf(hi) ? std::string() : fmt::format("in [{}, {}]", lo, hi));
}

/// Any finite number T holds.
template <class T = double>
CLI::Validator number() {
  const double inf = std::numeric_limits<double>::infinity();
  return number_in<T>(-inf, inf);
}

/// A head dim the runtime takes: a multiple of 8 from 8 to 256.
inline CLI::Validator head_dim() {
  return CLI::Validator(
      [](std::string& in) -> std::string {
        if (const std::optional<int32_t> v = read_decimal<int32_t>(in); v && *v >= 8 && *v <= 256 && *v % 8 == 0) {
          in = fmt::format("{}", *v);
          return {};
        }
        return fmt::format("expected a multiple of 8 from 8 to 256, got {}", in);
      },
      "a multiple of 8 in [8, 256]");
}

/// A file's path: any but "" (which names no file: --out "" would write none, silently) and "-"
/// (which many tools read as stdin or stdout; ours would have made a file named "-").
inline CLI::Validator file_path() {
  return CLI::Validator(
      [](const std::string& in) {
        if (in.empty()) return std::string("expected a file path, got \"\"");
        if (in == "-") return std::string("expected a file path, got - (name /dev/stdout or /dev/stdin for those)");
        return std::string();
      },
      "PATH");
}

/// Any text but "" (which would leave the flag as if it were not given, silently).
inline CLI::Validator non_empty(const std::string& expected) {
  return CLI::Validator(
      [expected](const std::string& in) { return in.empty() ? fmt::format("expected {}, got \"\"", expected) : std::string(); },
      "TEXT");
}

/// The KV dtypes both tools take by name (check a flag with CLI::IsMember(kDtypeNames)).
inline const std::vector<std::string> kDtypeNames = {"bf16", "f16", "fp16", "f32", "fp32"};

/// The dtype one of kDtypeNames names.
inline hgca::DType dtype_named(const std::string& name) {
  if (name == "f32" || name == "fp32") return hgca::DType::kFloat32;
  if (name == "f16" || name == "fp16") return hgca::DType::kFloat16;
  return hgca::DType::kBFloat16;
}

/// Prints "<app name>: error (usage): <message>" and a pointer to --help; returns the status (2).
inline int usage_error(const CLI::App& app, const std::string& message) {
  eprint("{}: error (usage): {}\nRun with --help for more information.\n", app.get_name(), message);
  return 2;
}

/// --version: "<app name> <the hgca library's version>".
inline void add_version_flag(CLI::App& app) {
  const int32_t v = hgca_version();
  app.set_version_flag("--version", fmt::format("{} {}.{}.{}", app.get_name(), v / 10000, v / 100 % 100, v % 100),
                       "print the version and exit");
}

/// A value of a list option (one with a delimiter) in argv that has an empty element ("1,,2",
/// "4,"): CLI11 drops those before any validator sees the value, so a typo would pass unseen.
/// Returns "--flag: …" naming it, or "".
inline std::string empty_list_element(const CLI::App& app, int argc, char** argv) {
  for (const CLI::Option* opt : app.get_options()) {
    const char delimiter = opt->get_delimiter();
    if (delimiter == '\0') continue;
    const std::string pair{delimiter, delimiter};
    for (const std::string& name : opt->get_lnames()) {
      const std::string flag = "--" + name;
      for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        std::vector<std::string_view> values;  // --flag=a,b or --flag a,b c
        if (arg.starts_with(flag + "=")) values.push_back(arg.substr(flag.size() + 1));
        if (arg == flag) {
          for (int j = i + 1; j < argc && !std::string_view(argv[j]).starts_with("-"); ++j) values.push_back(argv[j]);
        }
        for (std::string_view v : values) {
          if (v.starts_with(delimiter) || v.ends_with(delimiter) || v.find(pair) != std::string_view::npos) {
            return fmt::format("{}: expected values separated by '{}', got {} (an empty element)", flag, delimiter, v);
          }
        }
      }
    }
  }
  return {};
}

/// Parses the command line. Returns nullopt to go on; otherwise the status to exit with: 0 after
/// --help, usage_error's after a usage error.
inline std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  if (const std::string e = empty_list_element(app, argc, argv); !e.empty()) return usage_error(app, e);
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::Success& e) {  // --help or --version, which must have arrived
    const int status = app.exit(e);
    return finish_stdout(app.get_name().c_str(), status);
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e.what());
  }
}

}  // namespace hgca::tools
