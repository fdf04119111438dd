// The one high-precision (fp64) reference for attention, merge and MAW observations, shared by all
// tests, plus deterministic random inputs and a harness that keeps each sequence's true history.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "hgca/hgca.hpp"

namespace hgca::ref {

/// Exact causal attention in fp64 of a sequence's n newest tokens over its whole history.
/// k_hist, v_hist: [len, Hkv, D], the last n rows being the new tokens; q: [n, Hq, D].
/// Writes out [n, Hq, D] and lse [n, Hq] (natural log of Σ exp(scaled score)).
void attention(const std::vector<double>& q, int64_t n, const std::vector<double>& k_hist,
               const std::vector<double>& v_hist, int64_t len, int32_t hq, int32_t hkv, int32_t d,
               double sm_scale, std::vector<double>& out, std::vector<double>& lse);

/// Exact attention in fp64 of n_rows × group query rows over a set of n keys of one KV head, every
/// row seeing every key (the CPU's sparse side over a context set). q: [n_rows, group, D];
/// k, v: [n, D]. Writes out [n_rows, group, D] and lse [n_rows, group] (natural log); an empty set
/// gives out = 0, lse = -inf.
void attention_over_set(const std::vector<double>& q, int64_t n_rows, int32_t group,
                        const std::vector<double>& k, const std::vector<double>& v, int64_t n,
                        int32_t d, double sm_scale, std::vector<double>& out, std::vector<double>& lse);

/// MAW observation `a` (HGCA Algorithm 1, line 8) of n query rows × G heads over `n_keys` keys of
/// one KV head with causal offset c (row r sees keys [0, c + r + 1); c < 0: all):
/// a[j] = max over the group of the mean over rows of softmax weight j. q: [n, G, D], k: [n_keys, D].
std::vector<double> maw_observation(const std::vector<double>& q, int64_t n, int32_t group,
                                    const std::vector<double>& k, int64_t n_keys, int32_t d,
                                    double sm_scale, int64_t causal_offset);

/// fp64 merge of two states (lse natural; -inf = empty side).
void merge(const std::vector<double>& o_a, double lse_a, const std::vector<double>& o_b,
           double lse_b, std::vector<double>& out, double& lse);

/// ||a − b||₂ / ||b||₂ (0 when both are 0; HUGE_VAL when the sizes differ).
double relative_error(const std::vector<double>& a, const std::vector<double>& b);

/// The largest relative error of one row of `row` values (a (token, head) output), over that row's
/// norm or the rows' RMS norm, whichever is larger: an error confined to a few rows is not diluted
/// by the others as in relative_error over a whole layer. HUGE_VAL when the sizes differ or do not
/// divide into rows.
double worst_row_error(const std::vector<double>& a, const std::vector<double>& b, std::size_t row);

/// Element conversions through hgca's dtypes (round to nearest even), for building inputs.
std::vector<std::byte> encode(const std::vector<double>& values, DType dtype);
std::vector<double> decode(const std::vector<std::byte>& bytes, DType dtype);
/// Rounds values to what `dtype` can hold, so the reference sees exactly what the runtime sees.
std::vector<double> round_to(const std::vector<double>& values, DType dtype);

/// Normal(0, 1) values from a fixed-seed generator.
std::vector<double> normal(std::mt19937_64& rng, std::size_t n, double scale = 1.0);

}  // namespace hgca::ref
