// fp64 reference implementations: straightforward, no shortcuts, independent of src/.
#include "reference/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace hgca::ref {
namespace {

double bits_to_double(uint16_t bits, DType dtype) {
  if (dtype == DType::kBFloat16) {
    uint32_t u = uint32_t{bits} << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  // fp16, decoded from its definition.
  const int sign = bits >> 15 ? -1 : 1;
  const int exp = (bits >> 10) & 0x1F;
  const int man = bits & 0x3FF;
  if (exp == 0x1F) return man ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
  if (exp == 0) return sign * std::ldexp(man, -24);
  return sign * std::ldexp(1024 + man, exp - 25);
}

// Round to nearest even by searching the representable neighbours: slow and obviously right.
uint16_t double_to_bits(double x, DType dtype) {
  float f = static_cast<float>(x);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint16_t best = 0;
  double best_err = HUGE_VAL;
  auto consider = [&](uint16_t c) {
    const double val = bits_to_double(c, dtype);
    if (std::isnan(val)) return;
    const double err = std::abs(val - x);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best = c;
      best_err = err;
    }
  };
  if (dtype == DType::kBFloat16) {
    const uint16_t hi = static_cast<uint16_t>(u >> 16);
    consider(hi);
    consider(static_cast<uint16_t>(hi + 1));
    consider(static_cast<uint16_t>(hi - 1));
  } else {
    // Binary search over the fp16 magnitudes, then compare the neighbours.
    const uint16_t sign = x < 0 ? 0x8000 : 0;
    const double a = std::abs(x);
    if (a >= 65520.0) return static_cast<uint16_t>(sign | 0x7C00);  // IEEE: overflows to infinity
    uint16_t lo = 0, hi = 0x7C00;
    while (hi - lo > 1) {
      const auto mid = static_cast<uint16_t>((lo + hi) / 2);
      (bits_to_double(mid, dtype) <= a ? lo : hi) = mid;
    }
    consider(static_cast<uint16_t>(sign | lo));
    consider(static_cast<uint16_t>(sign | hi));
  }
  return best;
}

}  // namespace

void attention(const std::vector<double>& q, int64_t n, const std::vector<double>& k_hist,
               const std::vector<double>& v_hist, int64_t len, int32_t hq, int32_t hkv, int32_t d,
               double sm_scale, std::vector<double>& out, std::vector<double>& lse) {
  const int32_t g = hq / hkv;
  out.assign(static_cast<std::size_t>(n) * hq * d, 0.0);
  lse.assign(static_cast<std::size_t>(n) * hq, 0.0);
  std::vector<double> s(static_cast<std::size_t>(len));
  for (int64_t r = 0; r < n; ++r) {
    const int64_t visible = len - n + r + 1;
    for (int32_t h = 0; h < hq; ++h) {
      const int32_t kh = h / g;
      double m = -HUGE_VAL;
      for (int64_t j = 0; j < visible; ++j) {
        double dot = 0;
        for (int32_t i = 0; i < d; ++i) dot += q[(r * hq + h) * d + i] * k_hist[(j * hkv + kh) * d + i];
        s[j] = dot * sm_scale;
        m = std::max(m, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < visible; ++j) sum += std::exp(s[j] - m);
      for (int64_t j = 0; j < visible; ++j) {
        const double p = std::exp(s[j] - m) / sum;
        for (int32_t i = 0; i < d; ++i) out[(r * hq + h) * d + i] += p * v_hist[(j * hkv + kh) * d + i];
      }
      lse[r * hq + h] = m + std::log(sum);
    }
  }
}

void attention_over_set(const std::vector<double>& q, int64_t n_rows, int32_t group,
                        const std::vector<double>& k, const std::vector<double>& v, int64_t n,
                        int32_t d, double sm_scale, std::vector<double>& out, std::vector<double>& lse) {
  const int64_t rows = n_rows * group;
  out.assign(static_cast<size_t>(rows * d), 0.0);
  lse.assign(static_cast<size_t>(rows), -std::numeric_limits<double>::infinity());
  if (n == 0) return;
  std::vector<double> s(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j) {
      double dot = 0.0;
      for (int32_t i = 0; i < d; ++i) dot += q[r * d + i] * k[j * d + i];
      s[j] = dot * sm_scale;
      m = std::max(m, s[j]);
    }
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j) sum += std::exp(s[j] - m);
    for (int64_t j = 0; j < n; ++j) {
      const double w = std::exp(s[j] - m) / sum;
      for (int32_t i = 0; i < d; ++i) out[r * d + i] += w * v[j * d + i];
    }
    lse[r] = m + std::log(sum);
  }
}

std::vector<double> maw_observation(const std::vector<double>& q, int64_t n, int32_t group,
                                    const std::vector<double>& k, int64_t n_keys, int32_t d,
                                    double sm_scale, int64_t causal_offset) {
  std::vector<double> a(static_cast<std::size_t>(n_keys), 0.0);
  for (int32_t g = 0; g < group; ++g) {
    std::vector<double> mean(static_cast<std::size_t>(n_keys), 0.0);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t visible = causal_offset < 0 ? n_keys : std::min(n_keys, causal_offset + r + 1);
      std::vector<double> s(static_cast<std::size_t>(visible));
      double m = -HUGE_VAL;
      for (int64_t j = 0; j < visible; ++j) {
        double dot = 0;
        for (int32_t i = 0; i < d; ++i) dot += q[(r * group + g) * d + i] * k[j * d + i];
        s[j] = dot * sm_scale;
        m = std::max(m, s[j]);
      }
      double sum = 0;
      for (double x : s) sum += std::exp(x - m);
      for (int64_t j = 0; j < visible; ++j) mean[j] += std::exp(s[j] - m) / sum / static_cast<double>(n);
    }
    for (int64_t j = 0; j < n_keys; ++j) a[j] = std::max(a[j], mean[j]);
  }
  return a;
}

void merge(const std::vector<double>& o_a, double lse_a, const std::vector<double>& o_b,
           double lse_b, std::vector<double>& out, double& lse) {
  out.assign(o_a.size(), 0.0);
  const double m = std::max(lse_a, lse_b);
  if (m == -HUGE_VAL) {
    lse = -HUGE_VAL;
    return;
  }
  const double wa = std::exp(lse_a - m), wb = std::exp(lse_b - m);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = (wa * o_a[i] + wb * o_b[i]) / (wa + wb);
  lse = m + std::log(wa + wb);
}

double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return HUGE_VAL;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  if (den == 0) return num == 0 ? 0 : HUGE_VAL;
  return std::sqrt(num / den);
}

double worst_row_error(const std::vector<double>& a, const std::vector<double>& b, std::size_t row) {
  if (a.size() != b.size() || row == 0 || b.size() % row != 0) return HUGE_VAL;
  const std::size_t rows = b.size() / row;
  if (rows == 0) return 0;
  std::vector<double> num(rows, 0.0), den(rows, 0.0);
  double all = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    num[i / row] += (a[i] - b[i]) * (a[i] - b[i]);
    den[i / row] += b[i] * b[i];
    all += b[i] * b[i];
  }
  const double rms = all / static_cast<double>(rows);
  double worst = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const double d = std::max(den[r], rms);
    if (d == 0) {
      if (num[r] != 0) return HUGE_VAL;
      continue;
    }
    worst = std::max(worst, std::sqrt(num[r] / d));
  }
  return worst;
}

std::vector<std::byte> encode(const std::vector<double>& values, DType dtype) {
  std::vector<std::byte> out(values.size() * dtype_size(dtype));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kFloat32) {
      const auto f = static_cast<float>(values[i]);
      std::memcpy(out.data() + 4 * i, &f, 4);
    } else {
      const uint16_t b = double_to_bits(values[i], dtype);
      std::memcpy(out.data() + 2 * i, &b, 2);
    }
  }
  return out;
}

std::vector<double> decode(const std::vector<std::byte>& bytes, DType dtype) {
  const std::size_t n = bytes.size() / dtype_size(dtype);
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (dtype == DType::kFloat32) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      out[i] = f;
    } else {
      uint16_t b;
      std::memcpy(&b, bytes.data() + 2 * i, 2);
      out[i] = bits_to_double(b, dtype);
    }
  }
  return out;
}

std::vector<double> round_to(const std::vector<double>& values, DType dtype) {
  return decode(encode(values, dtype), dtype);
}

std::vector<double> normal(std::mt19937_64& rng, std::size_t n, double scale) {
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<double> out(n);
  for (auto& x : out) x = dist(rng);
  return out;
}

}  // namespace hgca::ref
