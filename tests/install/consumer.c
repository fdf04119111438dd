/* hgca's C ABI from an installed hgca: the library is the one the header describes, and a prefill
 * matches the fp64 reference. */
#include <hgca/hgca.h>

#include "reference.h"

#define FAIL_IF(condition, ...)                                           \
  do {                                                                    \
    if (condition) {                                                      \
      fprintf(stderr, "consumer_c: " __VA_ARGS__);                        \
      fprintf(stderr, " (hgca_last_error: %s)\n", hgca_last_error());    \
      return 1;                                                           \
    }                                                                     \
  } while (0)

int main(void) {
  FAIL_IF(hgca_version() != HGCA_VERSION, "library version %d, header %d", hgca_version(), HGCA_VERSION);
  hgca_options o;
  hgca_options_default(&o);
  o.n_layers = 1;
  o.n_q_heads = kHq;
  o.n_kv_heads = kHkv;
  o.head_dim = kD;
  o.dtype = HGCA_FLOAT32;
  o.backend = HGCA_BACKEND_HOST;
  o.threads = 1;
  hgca_runtime* rt = NULL;
  FAIL_IF(hgca_create(&o, &rt) != HGCA_OK, "hgca_create failed");
  const uint64_t id = 7;
  const int32_t n_new = kTokens;
  static float q[kTokens * kHq * kD], k[kTokens * kHkv * kD], v[kTokens * kHkv * kD], out[kTokens * kHq * kD];
  fill_inputs(q, k, v);
  FAIL_IF(hgca_add_sequence(rt, id) != HGCA_OK, "hgca_add_sequence failed");
  FAIL_IF(hgca_begin_step(rt, &id, &n_new, 1) != HGCA_OK, "hgca_begin_step failed");
  FAIL_IF(hgca_attention(rt, 0, kTokens, q, k, v, out, NULL, NULL) != HGCA_OK, "hgca_attention failed");
  FAIL_IF(hgca_end_step(rt) != HGCA_OK, "hgca_end_step failed");
  hgca_destroy(rt);
  if (check_outputs(q, k, v, out) != 0) return 1;
  printf("consumer_c: hgca %d.%d.%d, outputs match the fp64 reference\n", HGCA_VERSION_MAJOR, HGCA_VERSION_MINOR,
         HGCA_VERSION_PATCH);
  return 0;
}
