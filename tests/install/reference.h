/* The consumers' check: a prefill of kTokens tokens over one layer (fp32, host backend, every key in
 * the GPU-side window, so exact), against causal attention in double precision. */
#ifndef HGCA_CONSUMER_REFERENCE_H_
#define HGCA_CONSUMER_REFERENCE_H_

#include <math.h>
#include <stdio.h>

enum { kTokens = 5, kHq = 4, kHkv = 2, kD = 16 };

static inline float input_value(int tensor, int t, int h, int i) {
  return (float)((tensor * 29 + t * 13 + h * 7 + i * 5) % 17 - 8) * 0.125f;
}

static inline void fill_inputs(float* q, float* k, float* v) {
  for (int t = 0; t < kTokens; ++t) {
    for (int h = 0; h < kHq; ++h)
      for (int i = 0; i < kD; ++i) q[(t * kHq + h) * kD + i] = input_value(0, t, h, i);
    for (int h = 0; h < kHkv; ++h) {
      for (int i = 0; i < kD; ++i) {
        k[(t * kHkv + h) * kD + i] = input_value(1, t, h, i);
        v[(t * kHkv + h) * kD + i] = input_value(2, t, h, i);
      }
    }
  }
}

/* 0 when out matches the fp64 reference within 1e-5, else 1 (and says where). */
static inline int check_outputs(const float* q, const float* k, const float* v, const float* out) {
  const double scale = 1.0 / sqrt((double)kD);
  for (int t = 0; t < kTokens; ++t) {
    for (int h = 0; h < kHq; ++h) {
      const int kh = h / (kHq / kHkv);
      double s[kTokens], m = -INFINITY, l = 0.0;
      for (int j = 0; j <= t; ++j) {
        s[j] = 0.0;
        for (int i = 0; i < kD; ++i) s[j] += (double)q[(t * kHq + h) * kD + i] * k[(j * kHkv + kh) * kD + i];
        s[j] *= scale;
        m = s[j] > m ? s[j] : m;
      }
      for (int j = 0; j <= t; ++j) l += exp(s[j] - m);
      for (int i = 0; i < kD; ++i) {
        double o = 0.0;
        for (int j = 0; j <= t; ++j) o += exp(s[j] - m) / l * v[(j * kHkv + kh) * kD + i];
        const double got = out[(t * kHq + h) * kD + i];
        if (fabs(got - o) > 1e-5) {
          fprintf(stderr, "token %d, head %d, element %d: %.8f, expected %.8f\n", t, h, i, got, o);
          return 1;
        }
      }
    }
  }
  return 0;
}

#endif
