/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * tb_vendor_kit's kernel half (vendor_kit_kernels.h): dtype conversions against known bit
 * patterns and exhaustive sweeps, the strided iterator against a naive reference, the maps, the
 * argument accessors and the kernel-table macros.  A plain C11 program: it prints every failed
 * check and exits with 1 when there is one.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <torch_backend/vendor_kit_kernels.h>

static int checks, failures;
static const char *context = ""; /* what the current test is doing, for failure messages */

static bool check(bool ok, const char *what, int line) {
  checks++;
  if (!ok) {
    failures++;
    printf("FAIL line %d [%s]: %s\n", line, context, what);
  }
  return ok;
}

static void check_eq(double actual, double expected, const char *what, int line) {
  checks++;
  if (actual == expected || (isnan(actual) && isnan(expected))) return;
  failures++;
  printf("FAIL line %d [%s]: %s is %.17g, expected %.17g\n", line, context, what, actual, expected);
}

static void check_bits(uint64_t actual, uint64_t expected, const char *what, int line) {
  checks++;
  if (actual == expected) return;
  failures++;
  printf("FAIL line %d [%s]: %s is 0x%llx, expected 0x%llx\n", line, context, what,
         (unsigned long long)actual, (unsigned long long)expected);
}

static void check_str(const char *actual, const char *expected, int line) {
  checks++;
  if (strcmp(actual, expected) == 0) return;
  failures++;
  printf("FAIL line %d [%s]: message \"%s\", expected \"%s\"\n", line, context, actual, expected);
}

#define CHECK(cond) check((cond), #cond, __LINE__)
#define CHECK_EQ(actual, expected) check_eq((double)(actual), (double)(expected), #actual, __LINE__)
#define CHECK_BITS(actual, expected) check_bits((actual), (expected), #actual, __LINE__)
#define CHECK_STR(actual, expected) check_str((actual), (expected), __LINE__)
#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

static tb_tensor tensor(void *data, tb_dtype dtype, int32_t ndim, const int64_t *sizes,
                        const int64_t *strides) {
  tb_tensor t = {sizeof(tb_tensor), data, dtype, 0, ndim, sizes, strides};
  return t;
}

static float float_of(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* ---- dtypes ---- */

static void test_dtypes(void) {
  context = "dtype sizes";
  static const size_t sizes[TB_DTYPE_COUNT] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  for (int d = 0; d < TB_DTYPE_COUNT; d++) CHECK_EQ(tbk_dtype_size((tb_dtype)d), sizes[d]);
  CHECK_EQ(tbk_dtype_size((tb_dtype)TB_DTYPE_COUNT), 0);
  CHECK(tbk_dtype_is_floating(TB_DTYPE_BFLOAT16) && !tbk_dtype_is_floating(TB_DTYPE_INT64));
  CHECK_BITS(TBK_DTYPES_ALL, 0x3ff);

  context = "round trips";
  static const struct {
    tb_dtype dtype;
    double values[6];
  } cases[] = {
      {TB_DTYPE_BOOL, {0, 1, 0, 1, 0, 1}},
      {TB_DTYPE_UINT8, {0, 1, 127, 128, 255, 42}},
      {TB_DTYPE_INT8, {-128, -1, 0, 1, 127, 42}},
      {TB_DTYPE_INT16, {-32768, -1, 0, 300, 32767, 42}},
      {TB_DTYPE_INT32, {-2147483648.0, -1, 0, 70000, 2147483647.0, 42}},
      {TB_DTYPE_INT64, {-9223372036854775808.0, -1, 0, 0x1p53, 0x1p62, 42}},
      {TB_DTYPE_FLOAT16, {-0.0, 1, -2.5, 65504, 0x1p-24, 0.333251953125}},
      {TB_DTYPE_BFLOAT16, {-0.0, 1, -2.5, 0x1.fep127, 0x1p-133, INFINITY}},
      {TB_DTYPE_FLOAT32, {-0.0, (float)0.1, FLT_MAX, 0x1p-149, -INFINITY, 42}},
      {TB_DTYPE_FLOAT64, {-0.0, 0.1, DBL_MAX, 0x1p-1074, INFINITY, 42}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    for (int i = 0; i < 6; i++) {
      double v = cases[c].values[i], loaded;
      unsigned char element[8];
      tbk_store(cases[c].dtype, element, v);
      loaded = tbk_load(cases[c].dtype, element);
      CHECK_EQ(loaded, v);
      CHECK(signbit(loaded) == signbit(v));
    }
    unsigned char element[8];
    tbk_store(cases[c].dtype, element, NAN);
    if (tbk_dtype_is_floating(cases[c].dtype)) CHECK(isnan(tbk_load(cases[c].dtype, element)));
  }

  context = "conversions on store";
  static const struct {
    tb_dtype dtype;
    double in, out;
  } conversions[] = {
      {TB_DTYPE_BOOL, 2.5, 1},
      {TB_DTYPE_BOOL, -0.0, 0},
      {TB_DTYPE_BOOL, NAN, 1},
      {TB_DTYPE_BOOL, 1e-300, 1},
      {TB_DTYPE_UINT8, 2.9, 2},
      {TB_DTYPE_UINT8, -1, 255}, /* through int64, as PyTorch */
      {TB_DTYPE_UINT8, 256, 0},
      {TB_DTYPE_UINT8, -0.5, 0},
      {TB_DTYPE_UINT8, NAN, 0},
      {TB_DTYPE_UINT8, 4294967553.0, 1}, /* 2^32 + 257: int64 keeps it, int32 would not */
      {TB_DTYPE_INT8, -2.9, -2},
      {TB_DTYPE_INT8, 300, 44},
      {TB_DTYPE_INT8, -129, 127},
      {TB_DTYPE_INT8, 1e10, 0}, /* through int32: INT32_MIN's low byte */
      {TB_DTYPE_INT16, 40000, -25536},
      {TB_DTYPE_INT32, 2.9, 2},
      {TB_DTYPE_INT32, 3e9, -2147483648.0},
      {TB_DTYPE_INT32, -3e9, -2147483648.0},
      {TB_DTYPE_INT32, NAN, -2147483648.0},
      {TB_DTYPE_INT32, INFINITY, -2147483648.0},
      {TB_DTYPE_INT64, -2.9, -2},
      {TB_DTYPE_INT64, 9.2e18, 9.2e18},
      {TB_DTYPE_INT64, 1e19, -9223372036854775808.0},
      {TB_DTYPE_INT64, NAN, -9223372036854775808.0},
      {TB_DTYPE_FLOAT32, 1e300, INFINITY},
      {TB_DTYPE_FLOAT32, 0.1, (float)0.1},
      {TB_DTYPE_FLOAT16, 1e300, INFINITY},
      /* double -> float -> half: two roundings, as c10::Half(float(x)).  Directly, this value
       * lies above the tie and would round up to 1 + 2^-10. */
      {TB_DTYPE_FLOAT16, 1 + 0x1p-11 + 0x1p-40, 1},
      {TB_DTYPE_BFLOAT16, 1 + 0x1p-8 + 0x1p-40, 1},
  };
  for (size_t c = 0; c < sizeof conversions / sizeof conversions[0]; c++) {
    unsigned char element[8];
    tbk_store(conversions[c].dtype, element, conversions[c].in);
    CHECK_EQ(tbk_load(conversions[c].dtype, element), conversions[c].out);
  }
  uint8_t two = 2;
  CHECK_EQ(tbk_load(TB_DTYPE_BOOL, &two), 1);
  CHECK_EQ(tbk_load((tb_dtype)TB_DTYPE_COUNT, &two), 0);
}

/* Whether h = round(f) to nearest with ties to even, given the values of h and its neighbours
 * (`above` is the next value up, the format's overflow threshold for its largest finite). */
static bool nearest_even(double f, double below, double value, double above, unsigned bits) {
  double e = fabs(f - value), down = fabs(f - below), up = fabs(f - above);
  if (e > down || e > up) return false;
  return (e < down && e < up) || (bits & 1u) == 0;
}

static void test_half(void) {
  context = "float -> float16 bit patterns";
  static const struct {
    float in;
    uint16_t out;
  } cases[] = {
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {65504.0f, 0x7bff},
      {65519.99f, 0x7bff},
      {65520.0f, 0x7c00}, /* the tie above the largest half rounds to even: infinity */
      {1e6f, 0x7c00},
      {-1e6f, 0xfc00},
      {INFINITY, 0x7c00},
      {-INFINITY, 0xfc00},
      {1.0f + 0x1p-11f, 0x3c00}, /* tie: to even */
      {1.0f + 0x1p-10f + 0x1p-11f, 0x3c02},
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01},
      {1.0f + 0x1p-12f, 0x3c00},
      {0x1p-24f, 0x0001}, /* subnormals */
      {-0x1p-24f, 0x8001},
      {0x1p-25f, 0x0000}, /* tie between 0 and 2^-24: to even */
      {0x1.000002p-25f, 0x0001},
      {0x1.8p-25f, 0x0001},
      {0x1.8p-24f, 0x0002}, /* tie between 1 and 2 units: to even */
      {0x1p-26f, 0x0000},
      {0x1.ff8p-15f, 0x03ff},
      {0x1p-14f - 0x1p-25f, 0x0400}, /* tie with the smallest normal: to even, a carry */
      {0x1p-14f - 0x1.8p-24f, 0x03fe},
      {0x1p-14f, 0x0400},
      {NAN, 0x7e00},
      {-NAN, 0xfe00},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    CHECK_BITS(tbk_float_to_half(cases[c].in), cases[c].out);
  }
  CHECK_BITS(tbk_float_to_half(float_of(0x7f800001u)), 0x7e00); /* signalling: quieted */
  CHECK_BITS(tbk_float_to_half(float_of(0x7fd00000u)), 0x7e80); /* payload's upper bits */

  context = "float16 -> float";
  CHECK_EQ(tbk_half_to_float(0x0001), 0x1p-24);
  CHECK_EQ(tbk_half_to_float(0x03ff), 0x1.ff8p-15);
  CHECK_EQ(tbk_half_to_float(0x0400), 0x1p-14);
  CHECK_EQ(tbk_half_to_float(0x7bff), 65504);
  CHECK_EQ(tbk_half_to_float(0x3555), 0.333251953125);
  CHECK_EQ(tbk_half_to_float(0xc000), -2);
  CHECK_EQ(tbk_half_to_float(0x7c00), INFINITY);
  CHECK_EQ(tbk_half_to_float(0xfc00), -INFINITY);
  CHECK(signbit(tbk_half_to_float(0x8000)) && tbk_half_to_float(0x8000) == 0);
  CHECK(isnan(tbk_half_to_float(0x7c01)) && isnan(tbk_half_to_float(0x7e00)));
  CHECK(signbit(tbk_half_to_float(0xfe00)));

  context = "float16: every pattern round-trips";
  int bad = 0;
  for (uint32_t h = 0; h <= 0xffff; h++) {
    float f = tbk_half_to_float((uint16_t)h);
    uint16_t back = tbk_float_to_half(f);
    bool ok = isnan(f) ? (back & 0x7c00) == 0x7c00 && (back & 0x3ff) && (back >> 15) == (h >> 15)
                       : back == h;
    if (!ok && bad++ < 3) CHECK_BITS(back, h);
  }
  CHECK(bad == 0);

  context = "float16: rounds to nearest even (sweep of floats)";
  bad = 0;
  for (uint32_t x = 0; x < 0x7f800000u; x += 251) {
    float f = float_of(x);
    uint16_t h = tbk_float_to_half(f);
    bool ok;
    if (h == 0x7c00) {
      ok = f >= 65520.0f;
    } else {
      double below = h > 0 ? tbk_half_to_float((uint16_t)(h - 1)) : -INFINITY;
      double above = h < 0x7bff ? tbk_half_to_float((uint16_t)(h + 1)) : 65536.0;
      ok = h < 0x7c00 && nearest_even(f, below, tbk_half_to_float(h), above, h);
    }
    ok = ok && tbk_float_to_half(-f) == (h | 0x8000);
    if (!ok && bad++ < 3) printf("  float 0x%08x -> half 0x%04x\n", (unsigned)x, (unsigned)h);
  }
  CHECK(bad == 0);
}

static void test_bfloat16(void) {
  context = "float -> bfloat16 bit patterns";
  static const struct {
    uint32_t in;
    uint16_t out;
  } cases[] = {
      {0x3f800000u, 0x3f80}, /* 1 */
      {0xc0000000u, 0xc000}, /* -2 */
      {0x3f808000u, 0x3f80}, /* 1 + 2^-8: tie, to even */
      {0x3f818000u, 0x3f82}, /* 1 + 3 * 2^-8: tie, to even */
      {0x3f808001u, 0x3f81}, /* above the tie */
      {0x7f7f0000u, 0x7f7f}, /* the largest bfloat16 */
      {0x7f7f8000u, 0x7f80}, /* tie above it: to even, infinity */
      {0x7f7e8000u, 0x7f7e}, /* tie: to even, down */
      {0x7f7fffffu, 0x7f80}, /* FLT_MAX */
      {0x7f800000u, 0x7f80}, /* infinity */
      {0xff800000u, 0xff80}, /* -infinity */
      {0x00008000u, 0x0000}, /* subnormal tie: to even */
      {0x00018000u, 0x0002}, /* tie: to even, up */
      {0x00010001u, 0x0001}, /* above the tie */
      {0x80008001u, 0x8001}, /* negative */
      {0x7fc00000u, 0x7fc0}, /* NaN: c10::BFloat16's */
      {0xffc00000u, 0x7fc0}, /* the sign is dropped */
      {0x7f800001u, 0x7fc0}, /* signalling */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    CHECK_BITS(tbk_float_to_bfloat16(float_of(cases[c].in)), cases[c].out);
  }
  CHECK_EQ(tbk_bfloat16_to_float(0x3f80), 1);
  CHECK_EQ(tbk_bfloat16_to_float(0x0001), 0x1p-133);
  CHECK_EQ(tbk_bfloat16_to_float(0xff80), -INFINITY);

  context = "bfloat16: every pattern round-trips";
  int bad = 0;
  for (uint32_t b = 0; b <= 0xffff; b++) {
    float f = tbk_bfloat16_to_float((uint16_t)b);
    uint16_t back = tbk_float_to_bfloat16(f);
    if (!(isnan(f) ? back == 0x7fc0 : back == b) && bad++ < 3) CHECK_BITS(back, b);
  }
  CHECK(bad == 0);

  context = "bfloat16: rounds to nearest even (sweep of floats)";
  bad = 0;
  for (uint32_t x = 0; x < 0x7f800000u; x += 251) {
    float f = float_of(x);
    uint16_t b = tbk_float_to_bfloat16(f);
    bool ok;
    if (b == 0x7f80) {
      ok = x >= 0x7f7f8000u;
    } else {
      double below = b > 0 ? tbk_bfloat16_to_float((uint16_t)(b - 1)) : -INFINITY;
      double above = b < 0x7f7f ? tbk_bfloat16_to_float((uint16_t)(b + 1)) : 0x1p128;
      ok = b < 0x7f80 && nearest_even(f, below, tbk_bfloat16_to_float(b), above, b);
    }
    if (!ok && bad++ < 3) printf("  float 0x%08x -> bfloat16 0x%04x\n", (unsigned)x, (unsigned)b);
  }
  CHECK(bad == 0);
}

/* ---- the iterator ---- */

/* The address of the element of t (broadcast to an output of out_ndim dimensions) at the
 * output's index. */
static char *element(const tb_tensor *t, int32_t out_ndim, const int64_t *index) {
  int64_t offset = 0;
  for (int32_t d = 0; d < t->ndim; d++) {
    if (t->sizes[d] != 1) offset += index[out_ndim - t->ndim + d] * t->strides[d];
  }
  return (char *)t->data + offset * (int64_t)tbk_dtype_size(t->dtype);
}

/* Steps a row-major index; false after the last. */
static bool next_index(int64_t *index, const tb_tensor *t) {
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    if (++index[d] < t->sizes[d]) return true;
    index[d] = 0;
  }
  return false;
}

static double combine(double x, double y, const void *params) {
  return x * *(const double *)params + y;
}

/* Runs out = combine(a, b) through the iterator and compares every element of out with the
 * naive computation; returns the iterator (for layout checks). */
static tbk_iter check_map(const tb_tensor *out, const tb_tensor *a, const tb_tensor *b) {
  tbk_iter it;
  char msg[256];
  const tb_tensor *in[2] = {a, b};
  double ten = 10;
  memset(&it, 0, sizeof it);
  if (!CHECK(tbk_iter_init(&it, out, in, 2, msg, sizeof msg) == TB_OK)) {
    printf("  %s\n", msg);
    return it;
  }
  CHECK(tbk_map_binary(&it, combine, &ten) == TB_OK);
  int64_t index[TBK_ITER_MAX_DIMS] = {0}, numel = 1, wrong = 0;
  for (int32_t d = 0; d < out->ndim; d++) numel *= out->sizes[d];
  CHECK_EQ(it.numel, numel);
  if (numel == 0) return it;
  do {
    unsigned char expected[8];
    tbk_store(out->dtype, expected,
              combine(tbk_load(a->dtype, element(a, out->ndim, index)),
                      tbk_load(b->dtype, element(b, out->ndim, index)), &ten));
    double want = tbk_load(out->dtype, expected);
    double have = tbk_load(out->dtype, element(out, out->ndim, index));
    if (have != want && !(isnan(have) && isnan(want)) && wrong++ == 0) CHECK_EQ(have, want);
  } while (next_index(index, out));
  CHECK(wrong == 0);
  return it;
}

static void test_broadcasting(void) {
  double a[24], b[24], out[24];
  for (int i = 0; i < 24; i++) a[i] = i + 1, b[i] = 100 * (i + 1);
  const int64_t *sizes23 = DIMS(2, 3), *strides23 = DIMS(3, 1);
  tb_tensor o = tensor(out, TB_DTYPE_FLOAT64, 2, sizes23, strides23);
  tb_tensor x = tensor(a, TB_DTYPE_FLOAT64, 2, sizes23, strides23);
  tbk_iter it;

  context = "same shape";
  tb_tensor y = tensor(b, TB_DTYPE_FLOAT64, 2, sizes23, strides23);
  it = check_map(&o, &x, &y);
  CHECK(it.ndim == 1 && it.sizes[0] == 6 && it.strides[0][0] == 8 && it.strides[2][0] == 8);

  context = "0-dim input";
  y = tensor(b, TB_DTYPE_FLOAT64, 0, NULL, NULL);
  it = check_map(&o, &x, &y);
  CHECK(it.ndim == 1 && it.strides[2][0] == 0);

  context = "row";
  y = tensor(b, TB_DTYPE_FLOAT64, 1, DIMS(3), DIMS(1));
  it = check_map(&o, &x, &y);
  CHECK(it.ndim == 2);

  context = "column";
  y = tensor(b, TB_DTYPE_FLOAT64, 2, DIMS(2, 1), DIMS(1, 1));
  check_map(&o, &x, &y);

  context = "size-1 dimensions on both inputs";
  x = tensor(a, TB_DTYPE_FLOAT64, 2, DIMS(1, 3), DIMS(3, 1));
  y = tensor(b, TB_DTYPE_FLOAT64, 2, DIMS(2, 1), DIMS(1, 1));
  check_map(&o, &x, &y);

  context = "0-dim everything";
  tb_tensor o0 = tensor(out, TB_DTYPE_FLOAT64, 0, NULL, NULL);
  x = tensor(a, TB_DTYPE_FLOAT64, 0, NULL, NULL);
  y = tensor(b, TB_DTYPE_FLOAT64, 0, NULL, NULL);
  it = check_map(&o0, &x, &y);
  CHECK(it.ndim == 1 && it.sizes[0] == 1 && out[0] == 10 + 100);

  context = "3-d, broadcast middle and leading dimensions";
  tb_tensor o3 = tensor(out, TB_DTYPE_FLOAT64, 3, DIMS(2, 3, 4), DIMS(12, 4, 1));
  x = tensor(a, TB_DTYPE_FLOAT64, 3, DIMS(2, 1, 4), DIMS(4, 4, 1));
  y = tensor(b, TB_DTYPE_FLOAT64, 2, DIMS(3, 1), DIMS(1, 1));
  it = check_map(&o3, &x, &y);
  CHECK(it.ndim == 3);
}

static void test_strides(void) {
  float a[24], b[24], out[24];
  for (int i = 0; i < 24; i++) a[i] = (float)i * 0.5f, b[i] = (float)(1000 + i), out[i] = -1;
  tbk_iter it;

  context = "transposed input (float32 path)";
  tb_tensor o = tensor(out, TB_DTYPE_FLOAT32, 2, DIMS(2, 3), DIMS(3, 1));
  tb_tensor x = tensor(a, TB_DTYPE_FLOAT32, 2, DIMS(2, 3), DIMS(1, 2));
  tb_tensor y = tensor(b, TB_DTYPE_FLOAT32, 2, DIMS(2, 3), DIMS(3, 1));
  it = check_map(&o, &x, &y);
  CHECK(it.ndim == 2);
  CHECK_EQ(out[1], a[2] * 10 + b[1]);

  context = "sliced with step, into a sliced output";
  for (int i = 0; i < 24; i++) out[i] = -1;
  o = tensor(out, TB_DTYPE_FLOAT32, 2, DIMS(2, 3), DIMS(12, 2));
  x = tensor(a, TB_DTYPE_FLOAT32, 2, DIMS(2, 3), DIMS(12, 2));
  y = tensor(b + 1, TB_DTYPE_FLOAT32, 2, DIMS(2, 3), DIMS(1, 4)); /* transposed and sliced */
  check_map(&o, &x, &y);
  int written = 0;
  for (int i = 0; i < 24; i++) written += out[i] != -1;
  CHECK_EQ(written, 6);
  CHECK_EQ(out[14], a[14] * 10 + b[1 + 1 + 4]);

  context = "negative stride (reversed input)";
  o = tensor(out, TB_DTYPE_FLOAT32, 1, DIMS(4), DIMS(1));
  x = tensor(a + 3, TB_DTYPE_FLOAT32, 1, DIMS(4), DIMS(-1));
  y = tensor(b, TB_DTYPE_FLOAT32, 1, DIMS(4), DIMS(0));
  check_map(&o, &x, &y);
  CHECK_EQ(out[0], a[3] * 10 + b[0]);
}

static void test_coalescing(void) {
  tbk_iter it;
  char msg[256];

  context = "contiguous 3-d: one run";
  tb_tensor out = tensor(NULL, TB_DTYPE_FLOAT32, 3, DIMS(2, 3, 4), DIMS(12, 4, 1));
  const tb_tensor *in[2] = {&out, &out};
  CHECK(tbk_iter_init(&it, &out, in, 2, msg, sizeof msg) == TB_OK);
  CHECK(it.ndim == 1 && it.sizes[0] == 24 && it.strides[1][0] == 4 && it.numel == 24);

  context = "outer slice: two dimensions";
  tb_tensor sliced = tensor(NULL, TB_DTYPE_FLOAT64, 3, DIMS(2, 3, 4), DIMS(24, 4, 1));
  in[1] = &sliced;
  CHECK(tbk_iter_init(&it, &out, in, 2, msg, sizeof msg) == TB_OK);
  CHECK(it.ndim == 2 && it.sizes[0] == 12 && it.sizes[1] == 2);
  CHECK(it.strides[0][0] == 4 && it.strides[0][1] == 48);
  CHECK(it.strides[2][0] == 8 && it.strides[2][1] == 192 && it.dtypes[2] == TB_DTYPE_FLOAT64);

  context = "size-1 dimensions dropped";
  tb_tensor ones = tensor(NULL, TB_DTYPE_INT8, 3, DIMS(1, 5, 1), DIMS(99, 7, 99));
  CHECK(tbk_iter_init(&it, &ones, NULL, 0, msg, sizeof msg) == TB_OK);
  CHECK(it.ndim == 1 && it.sizes[0] == 5 && it.strides[0][0] == 7);

  context = "too many dimensions after merging";
  int64_t sizes[17], rows[17], cols[17];
  for (int d = 0; d < 17; d++) {
    sizes[d] = 2;
    rows[d] = (int64_t)1 << (16 - d); /* row-major */
    cols[d] = (int64_t)1 << d;        /* column-major: no neighbours merge */
  }
  tb_tensor big = tensor(NULL, TB_DTYPE_UINT8, 17, sizes, rows);
  tb_tensor transposed = tensor(NULL, TB_DTYPE_UINT8, 17, sizes, cols);
  in[0] = &transposed;
  CHECK(tbk_iter_init(&it, &big, in, 1, msg, sizeof msg) == TB_ERROR_NOT_SUPPORTED);
  CHECK_STR(msg, "the operands have more than 16 dimensions that do not merge");
  CHECK(tbk_iter_init(&it, &big, NULL, 0, msg, sizeof msg) == TB_OK && it.ndim == 1);
}

typedef struct counter {
  int64_t next, calls;
} counter;

/* Writes 0, 1, 2, ... into a float64 output, in the order the iterator visits. */
static void number_loop(char **data, const int64_t *strides, int64_t n, void *user) {
  counter *c = user;
  c->calls++;
  for (int64_t i = 0; i < n; i++) *(double *)(data[0] + i * strides[0]) = (double)c->next++;
}

static void test_ranges_and_empty(void) {
  tbk_iter it;
  char msg[256];
  double out[12];

  context = "row-major order and ranges, transposed output";
  tb_tensor o = tensor(out, TB_DTYPE_FLOAT64, 2, DIMS(3, 4), DIMS(1, 3));
  CHECK(tbk_iter_init(&it, &o, NULL, 0, msg, sizeof msg) == TB_OK);
  counter c = {0, 0};
  static const int64_t bounds[][2] = {{-5, 5}, {5, 5}, {5, 11}, {11, 100}};
  for (int r = 0; r < 4; r++) tbk_iter_run_range(&it, bounds[r][0], bounds[r][1], number_loop, &c);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 4; j++) CHECK_EQ(out[i + 3 * j], i * 4 + j);
  }
  CHECK_EQ(c.calls, 5); /* runs end at rows' and ranges' ends: [0, 5) 4+1, [5, 11) 3+3, 1 */

  context = "empty output: no loop";
  tb_tensor empty = tensor(NULL, TB_DTYPE_FLOAT32, 3, DIMS(2, 0, 3), DIMS(0, 3, 1));
  tb_tensor x = tensor(NULL, TB_DTYPE_FLOAT32, 2, DIMS(0, 3), DIMS(3, 1));
  tb_tensor y = tensor(out, TB_DTYPE_FLOAT64, 2, DIMS(1, 3), DIMS(3, 1));
  const tb_tensor *in[2] = {&x, &y};
  CHECK(tbk_iter_init(&it, &empty, in, 2, msg, sizeof msg) == TB_OK);
  CHECK(it.numel == 0 && it.ndim == 1 && it.sizes[0] == 0);
  c.calls = 0;
  tbk_iter_run(&it, number_loop, &c);
  double one = 1;
  CHECK(tbk_map_binary(&it, combine, &one) == TB_OK);
  CHECK_EQ(c.calls, 0);

  context = "empty output: inputs must still broadcast";
  tb_tensor wrong = tensor(NULL, TB_DTYPE_FLOAT32, 2, DIMS(5, 3), DIMS(3, 1));
  in[0] = &wrong;
  CHECK(tbk_iter_init(&it, &empty, in, 2, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "input 0 with sizes [5, 3] does not broadcast to the output's sizes [2, 0, 3]");
  tb_tensor single = tensor(NULL, TB_DTYPE_FLOAT32, 1, DIMS(1), DIMS(1));
  tb_tensor zero = tensor(NULL, TB_DTYPE_FLOAT32, 1, DIMS(0), DIMS(1));
  in[0] = &zero; /* size 0 does not broadcast to size 1 */
  CHECK(tbk_iter_init(&it, &single, in, 1, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
}

static void test_errors(void) {
  tbk_iter it;
  char msg[256];
  const int64_t *sizes43 = DIMS(4, 3), *strides43 = DIMS(3, 1);
  tb_tensor out = tensor(NULL, TB_DTYPE_FLOAT32, 2, sizes43, strides43);
  tb_tensor row = tensor(NULL, TB_DTYPE_FLOAT32, 1, DIMS(3), DIMS(1));
  tb_tensor bad = tensor(NULL, TB_DTYPE_FLOAT32, 2, DIMS(2, 3), DIMS(3, 1));
  const tb_tensor *in[8] = {&row, &bad, &row, &row, &row, &row, &row, &row};

  context = "broadcast error";
  CHECK(tbk_iter_init(&it, &out, in, 2, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "input 1 with sizes [2, 3] does not broadcast to the output's sizes [4, 3]");
  CHECK(tbk_iter_init(&it, &row, &in[1], 1, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "input 0 with sizes [2, 3] does not broadcast to the output's sizes [3]");
  char small[10];
  CHECK(tbk_iter_init(&it, &out, in, 2, small, sizeof small) == TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(small, "input 1 w");
  CHECK(tbk_iter_init(&it, &out, in, 2, NULL, 0) == TB_ERROR_INVALID_ARGUMENT);

  context = "invalid operands";
  CHECK(tbk_iter_init(&it, &out, in, 8, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "8 inputs (at most 7)");
  CHECK(tbk_iter_init(&it, &out, in, 7, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK(tbk_iter_init(&it, NULL, NULL, 0, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "the output is NULL");
  tb_tensor unknown = tensor(NULL, (tb_dtype)42, 1, DIMS(3), DIMS(1));
  in[0] = &unknown;
  CHECK(tbk_iter_init(&it, &out, in, 1, msg, sizeof msg) == TB_ERROR_NOT_SUPPORTED);
  CHECK_STR(msg, "input 0 has unknown dtype 42");
  tb_tensor negative = tensor(NULL, TB_DTYPE_FLOAT32, 1, DIMS(-3), DIMS(1));
  CHECK(tbk_iter_init(&it, &negative, NULL, 0, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "the output has size -3 in dimension 0");
  in[0] = NULL;
  CHECK(tbk_iter_init(&it, &out, in, 1, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "input 0 is NULL");
}

static double scale(double x, const void *params) { return x * *(const double *)params; }

static void test_maps(void) {
  tbk_iter it;
  char msg[256];

  context = "binary map, mixed dtypes";
  uint16_t half_out[6], bf16[6];
  int32_t ints[3] = {-2, 0, 7};
  for (int i = 0; i < 6; i++) bf16[i] = tbk_float_to_bfloat16((float)i * 0.37f - 1);
  tb_tensor o = tensor(half_out, TB_DTYPE_FLOAT16, 2, DIMS(2, 3), DIMS(3, 1));
  tb_tensor x = tensor(bf16, TB_DTYPE_BFLOAT16, 2, DIMS(2, 3), DIMS(1, 2)); /* transposed */
  tb_tensor y = tensor(ints, TB_DTYPE_INT32, 1, DIMS(3), DIMS(1));
  check_map(&o, &x, &y);
  CHECK_BITS(half_out[0], 0xca00); /* -1 * 10 + -2 = -12 */

  context = "unary map into int8 and uint8 (truncation, wrapping)";
  double in[3] = {1.5, -1.875, 3.0}, hundred = 100;
  int8_t i8[3];
  uint8_t u8[3];
  tb_tensor from = tensor(in, TB_DTYPE_FLOAT64, 1, DIMS(3), DIMS(1));
  const tb_tensor *inputs[2] = {&from, &from};
  o = tensor(i8, TB_DTYPE_INT8, 1, DIMS(3), DIMS(1));
  CHECK(tbk_iter_init(&it, &o, inputs, 1, msg, sizeof msg) == TB_OK);
  CHECK(tbk_map_unary(&it, scale, &hundred) == TB_OK);
  CHECK(i8[0] == -106 && i8[1] == 69 && i8[2] == 44);
  o = tensor(u8, TB_DTYPE_UINT8, 1, DIMS(3), DIMS(1));
  CHECK(tbk_iter_init(&it, &o, inputs, 1, msg, sizeof msg) == TB_OK);
  CHECK(tbk_map_unary(&it, scale, &hundred) == TB_OK);
  CHECK(u8[0] == 150 && u8[1] == 69 && u8[2] == 44);

  context = "maps check their operands";
  CHECK(tbk_map_binary(&it, combine, NULL) == TB_ERROR_INVALID_ARGUMENT);
  CHECK(tbk_map_unary(&it, NULL, NULL) == TB_ERROR_INVALID_ARGUMENT);
  CHECK(tbk_iter_init(&it, &o, inputs, 2, msg, sizeof msg) == TB_OK);
  CHECK(tbk_map_unary(&it, scale, &hundred) == TB_ERROR_INVALID_ARGUMENT);
}

static void copy_int64_loop(char **data, const int64_t *strides, int64_t n, void *user) {
  (void)user;
  for (int64_t i = 0; i < n; i++) {
    *(int64_t *)(data[0] + i * strides[0]) = *(const int64_t *)(data[1] + i * strides[1]);
  }
}

static void test_values(void) {
  tbk_iter it;
  char msg[256];

  context = "number operands";
  float a[4] = {1, 2, 3, 4}, out[4];
  tb_tensor o = tensor(out, TB_DTYPE_FLOAT32, 1, DIMS(4), DIMS(1));
  tb_tensor x = tensor(a, TB_DTYPE_FLOAT32, 1, DIMS(4), DIMS(1));
  tb_value tensor_value = {.kind = TB_VALUE_TENSOR, .as.tensor = &x};
  tb_value quarter = {.kind = TB_VALUE_DOUBLE, .as.f = 0.25};
  const tb_value *in[2] = {&tensor_value, &quarter};
  double ten = 10;
  CHECK(tbk_iter_init_values(&it, &o, in, 2, TB_DTYPE_FLOAT32, msg, sizeof msg) == TB_OK);
  CHECK(it.constant_mask == 4 && it.dtypes[2] == TB_DTYPE_FLOAT32 && it.strides[2][0] == 0);
  CHECK(tbk_map_binary(&it, combine, &ten) == TB_OK);
  CHECK(out[0] == 10.25f && out[3] == 40.25f);

  context = "an int64 number stays exact";
  int64_t big[2];
  tb_tensor o64 = tensor(big, TB_DTYPE_INT64, 1, DIMS(2), DIMS(1));
  tb_value huge = {.kind = TB_VALUE_INT, .as.i = ((int64_t)1 << 53) + 1};
  in[0] = &huge;
  CHECK(tbk_iter_init_values(&it, &o64, in, 1, TB_DTYPE_INT64, msg, sizeof msg) == TB_OK);
  tbk_iter_run(&it, copy_int64_loop, NULL);
  CHECK(big[0] == ((int64_t)1 << 53) + 1 && big[1] == big[0]);

  context = "a bool number as float16";
  tb_value yes = {.kind = TB_VALUE_BOOL, .as.b = 1};
  in[0] = &yes;
  CHECK(tbk_iter_init_values(&it, &o64, in, 1, TB_DTYPE_FLOAT16, msg, sizeof msg) == TB_OK);
  CHECK_BITS(it.constants[1].u16, 0x3c00);

  context = "values that are not operands";
  tb_value none = {.kind = TB_VALUE_NONE};
  in[0] = &tensor_value;
  in[1] = &none;
  CHECK(tbk_iter_init_values(&it, &o, in, 2, TB_DTYPE_FLOAT32, msg, sizeof msg) ==
        TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "input 1 is neither a tensor nor a number");
  in[1] = NULL;
  CHECK(tbk_iter_init_values(&it, &o, in, 2, TB_DTYPE_FLOAT32, msg, sizeof msg) ==
        TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "input 1 is NULL");

  context = "a copy runs after the descriptors are gone";
  tbk_iter *copy = malloc(sizeof *copy);
  float result[6] = {0}, data[3] = {1, 2, 3};
  {
    int64_t sizes[2] = {2, 3}, strides[2] = {3, 1}, row_sizes[1] = {3}, row_strides[1] = {1};
    tb_tensor dst = tensor(result, TB_DTYPE_FLOAT32, 2, sizes, strides);
    tb_tensor row = tensor(data, TB_DTYPE_FLOAT32, 1, row_sizes, row_strides);
    tb_value row_value = {.kind = TB_VALUE_TENSOR, .as.tensor = &row};
    const tb_value *operands[2] = {&quarter, &row_value};
    CHECK(tbk_iter_init_values(&it, &dst, operands, 2, TB_DTYPE_FLOAT64, msg, sizeof msg) == TB_OK);
    memcpy(copy, &it, sizeof it);
    memset(&it, 0xab, sizeof it);
    memset(sizes, 0xff, sizeof sizes);
    memset(strides, 0xff, sizeof strides);
    memset(row_sizes, 0xff, sizeof row_sizes);
    memset(row_strides, 0xff, sizeof row_strides);
    memset(&dst, 0xff, sizeof dst);
    memset(&row, 0xff, sizeof row);
  }
  CHECK(tbk_map_binary(copy, combine, &ten) == TB_OK);
  CHECK(result[0] == 3.5f && result[2] == 5.5f && result[3] == 3.5f && result[5] == 5.5f);
  free(copy);
}

/* ---- arguments ---- */

static void test_args(void) {
  context = "argument accessors";
  float storage = 0;
  tb_tensor t = tensor(&storage, TB_DTYPE_FLOAT32, 0, NULL, NULL);
  const int64_t dims[2] = {0, -1};
  const tb_tensor *list[2] = {&t, NULL};
  tb_value args[7] = {{.kind = TB_VALUE_TENSOR, .as.tensor = &t},
                      {.kind = TB_VALUE_INT, .as.i = 3},
                      {.kind = TB_VALUE_DOUBLE, .as.f = 2.5},
                      {.kind = TB_VALUE_BOOL, .as.b = 1},
                      {.kind = TB_VALUE_NONE},
                      {.kind = TB_VALUE_INT_LIST, .as.ints = {dims, 2}},
                      {.kind = TB_VALUE_TENSOR_LIST, .as.tensors = {list, 2}}};
  tb_kernel_call call = {.struct_size = sizeof call, .args = args, .num_args = 7};
  double number = -1;
  int64_t integer = -1;
  CHECK(tbk_arg(&call, 4) == &args[4] && tbk_arg(&call, 7) == NULL && tbk_arg(&call, -1) == NULL);
  CHECK(tbk_arg_tensor(&call, 0) == &t && tbk_arg_tensor(&call, 1) == NULL);
  CHECK(tbk_arg_tensor(&call, 4) == NULL && tbk_arg_tensor(&call, 9) == NULL);
  CHECK(tbk_arg_number(&call, 1, &number) && number == 3);
  CHECK(tbk_arg_number(&call, 2, &number) && number == 2.5);
  CHECK(tbk_arg_number(&call, 3, &number) && number == 1);
  CHECK(!tbk_arg_number(&call, 4, &number) && !tbk_arg_number(&call, 0, &number) && number == 1);
  CHECK(tbk_arg_int(&call, 1, &integer) && integer == 3);
  CHECK(!tbk_arg_int(&call, 2, &integer) && !tbk_arg_int(&call, 7, &integer) && integer == 3);
  CHECK(!tbk_value_number(NULL, &number));
  bool flag = false;
  CHECK(tbk_arg_bool(&call, 3, &flag) && flag);
  CHECK(!tbk_arg_bool(&call, 1, &flag) && !tbk_arg_bool(&call, 9, &flag) && flag);
  int64_t count = -1;
  CHECK(tbk_arg_ints(&call, 5, &count) == dims && count == 2);
  CHECK(tbk_arg_ints(&call, 4, &count) == NULL && tbk_arg_ints(&call, 6, &count) == NULL);
  CHECK(count == 2);
  count = -1;
  CHECK(tbk_arg_tensors(&call, 6, &count) == list && count == 2);
  CHECK(tbk_arg_tensors(&call, 5, &count) == NULL && tbk_arg_tensors(&call, 0, &count) == NULL);
  CHECK(count == 2);

  context = "argument accessors: the other kinds";
  const int bools[3] = {1, 0, 1};
  tb_value more[6] = {{.kind = TB_VALUE_DTYPE, .as.dtype = TB_DTYPE_BFLOAT16},
                      {.kind = TB_VALUE_STRING, .as.string = "tanh"},
                      {.kind = TB_VALUE_BOOL_LIST, .as.bools = {bools, 3}},
                      {.kind = TB_VALUE_RNG, .as.rng = {7, 64, NULL}},
                      {.kind = TB_VALUE_NONE},
                      {.kind = TB_VALUE_TENSOR_LIST, .as.tensors = {NULL, 0}}};
  tb_kernel_call other = {.struct_size = sizeof other, .args = more, .num_args = 6};
  tb_dtype dtype = TB_DTYPE_INT8;
  CHECK(tbk_arg_dtype(&other, 0, &dtype) && dtype == TB_DTYPE_BFLOAT16);
  CHECK(!tbk_arg_dtype(&other, 4, &dtype) && !tbk_arg_dtype(&other, 6, &dtype));
  CHECK(dtype == TB_DTYPE_BFLOAT16);
  CHECK(tbk_arg_string(&other, 1) != NULL && strcmp(tbk_arg_string(&other, 1), "tanh") == 0);
  CHECK(tbk_arg_string(&other, 0) == NULL && tbk_arg_string(&other, -1) == NULL);
  count = -1;
  CHECK(tbk_arg_bools(&other, 2, &count) == bools && count == 3);
  CHECK(tbk_arg_bools(&other, 4, &count) == NULL && count == 3);
  CHECK(tbk_arg_rng(&other, 3) == &more[3].as.rng && tbk_arg_rng(&other, 3)->offset == 64);
  CHECK(tbk_arg_rng(&other, 4) == NULL);
  CHECK(tbk_arg_is_none(&other, 4) && !tbk_arg_is_none(&other, 0) && !tbk_arg_is_none(&other, 6));
  /* An empty list: a count of 0 and the caller's pointer, here NULL. */
  count = -1;
  CHECK(tbk_arg_tensors(&other, 5, &count) == NULL && count == 0);
}

/* ---- reductions and rows ---- */

/* sum/amax of a [2, 3, 4] float32 tensor (values i * 0.5 - 3) over dims, against loops. */
static void test_reductions(void) {
  char msg[256];
  float x[24];
  for (int i = 0; i < 24; i++) x[i] = (float)i * 0.5f - 3.0f;
  const int64_t sizes[3] = {2, 3, 4}, strides[3] = {12, 4, 1};
  tb_tensor in = tensor(x, TB_DTYPE_FLOAT32, 3, sizes, strides);
  tbk_reduce r;

  context = "sum over dims [0, 2], keepdim";
  float out[3] = {0};
  const int64_t keep_sizes[3] = {1, 3, 1}, keep_strides[3] = {3, 1, 1};
  tb_tensor o = tensor(out, TB_DTYPE_FLOAT32, 3, keep_sizes, keep_strides);
  CHECK(tbk_reduce_init(&r, &o, &in, DIMS(0, -1), 2, true, msg, sizeof msg) == TB_OK);
  CHECK_STR(msg, "");
  CHECK(r.ndim == 2 && r.numel == 8); /* dims 2 and 0 do not merge */
  CHECK(tbk_reduce_run(&r, TBK_REDUCE_SUM) == TB_OK);
  for (int j = 0; j < 3; j++) {
    double want = 0;
    for (int i = 0; i < 2; i++) {
      for (int k = 0; k < 4; k++) want += x[i * 12 + j * 4 + k];
    }
    CHECK_EQ(out[j], want);
  }

  context = "mean over dims [1, 2] (they merge), no keepdim, into a float64 output";
  double mean[2] = {0};
  const int64_t two[1] = {2}, unit[1] = {1};
  tb_tensor m = tensor(mean, TB_DTYPE_FLOAT64, 1, two, unit);
  CHECK(tbk_reduce_init(&r, &m, &in, DIMS(2, 1), 2, false, msg, sizeof msg) == TB_OK);
  CHECK(r.ndim == 1 && r.sizes[0] == 12 && r.strides[1][0] == 4 && r.strides[0][0] == 0);
  CHECK(tbk_reduce_run(&r, TBK_REDUCE_MEAN) == TB_OK);
  CHECK_EQ(mean[0], (-3.0 + 2.5) / 2);
  CHECK_EQ(mean[1], (3.0 + 8.5) / 2);

  context = "amax of everything (dim None), with a NaN, into a 0-dim output";
  float max = 0;
  tb_tensor scalar = tensor(&max, TB_DTYPE_FLOAT32, 0, NULL, NULL);
  CHECK(tbk_reduce_init(&r, &scalar, &in, NULL, 0, false, msg, sizeof msg) == TB_OK);
  CHECK(tbk_reduce_run(&r, TBK_REDUCE_AMAX) == TB_OK && max == 8.5f);
  x[5] = NAN;
  CHECK(tbk_reduce_run(&r, TBK_REDUCE_AMAX) == TB_OK && isnan(max));
  CHECK(tbk_reduce_run(&r, TBK_REDUCE_AMIN) == TB_OK && isnan(max));
  x[5] = -0.5f;
  CHECK(tbk_reduce_run(&r, TBK_REDUCE_AMIN) == TB_OK && max == -3.0f);

  context = "integer sums are exact int64 (beyond 2^53), a transposed input";
  int64_t big[4] = {(int64_t)1 << 60, 3, 1, -((int64_t)1 << 60)}, total[2] = {0};
  const int64_t sq[2] = {2, 2}, transposed[2] = {1, 2};
  tb_tensor ints = tensor(big, TB_DTYPE_INT64, 2, sq, transposed);
  tb_tensor sums = tensor(total, TB_DTYPE_INT64, 1, two, unit);
  CHECK(tbk_reduce_init(&r, &sums, &ints, DIMS(1), 1, false, msg, sizeof msg) == TB_OK);
  CHECK(tbk_reduce_run(&r, TBK_REDUCE_SUM) == TB_OK);
  CHECK(total[0] == ((int64_t)1 << 60) + 1 && total[1] == 3 - ((int64_t)1 << 60));
  CHECK(tbk_reduce_dtype(TBK_REDUCE_SUM, TB_DTYPE_BOOL, NULL) == TB_DTYPE_INT64);
  CHECK(tbk_reduce_dtype(TBK_REDUCE_AMAX, TB_DTYPE_INT8, NULL) == TB_DTYPE_INT8);
  tb_value none = {.kind = TB_VALUE_NONE},
           f64 = {.kind = TB_VALUE_DTYPE, .as.dtype = TB_DTYPE_FLOAT64};
  CHECK(tbk_reduce_dtype(TBK_REDUCE_PROD, TB_DTYPE_INT32, &none) == TB_DTYPE_INT64);
  CHECK(tbk_reduce_dtype(TBK_REDUCE_SUM, TB_DTYPE_INT32, &f64) == TB_DTYPE_FLOAT64);
  CHECK(tbk_reduce_dtype(TBK_REDUCE_MEAN, TB_DTYPE_FLOAT16, NULL) == TB_DTYPE_FLOAT16);

  context = "over no elements: the identity; mean NaN";
  const int64_t empty_sizes[2] = {2, 0}, empty_strides[2] = {0, 1};
  tb_tensor empty = tensor(NULL, TB_DTYPE_FLOAT32, 2, empty_sizes, empty_strides);
  float two_out[2] = {5, 5};
  tb_tensor o2 = tensor(two_out, TB_DTYPE_FLOAT32, 1, two, unit);
  CHECK(tbk_reduce_init(&r, &o2, &empty, DIMS(1), 1, false, msg, sizeof msg) == TB_OK);
  CHECK(r.numel == 0 && tbk_reduce_run(&r, TBK_REDUCE_SUM) == TB_OK);
  CHECK(two_out[0] == 0 && two_out[1] == 0);
  CHECK(tbk_reduce_run(&r, TBK_REDUCE_PROD) == TB_OK && two_out[1] == 1);
  CHECK(tbk_reduce_run(&r, TBK_REDUCE_MEAN) == TB_OK && isnan(two_out[0]));
  CHECK(isinf(tbk_reduce_identity(TBK_REDUCE_AMIN)) && tbk_reduce_identity(TBK_REDUCE_AMIN) > 0);
  CHECK(tbk_reduce_run(&r, (tbk_reduce_op)9) == TB_ERROR_INVALID_ARGUMENT);

  context = "reduction errors";
  CHECK(tbk_reduce_init(&r, &o, &in, DIMS(3), 1, true, msg, sizeof msg) ==
        TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "dim 3 is out of range for a tensor of 3 dimensions (expected [-3, 2])");
  CHECK(tbk_reduce_init(&r, &o, &in, DIMS(1, -2), 2, true, msg, sizeof msg) ==
        TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "dim 1 appears more than once in [1, -2]");
  CHECK(tbk_reduce_init(&r, &o, &in, DIMS(0, 2), 2, false, msg, sizeof msg) ==
        TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg,
            "the output's sizes [1, 3, 1] are not [3], the input's [2, 3, 4] reduced over "
            "dims [0, 2]");
  CHECK(tbk_reduce_init(&r, &o, NULL, NULL, 0, false, msg, sizeof msg) ==
        TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "the input is NULL");
  uint64_t mask = 0;
  CHECK(tbk_reduce_dims(0, DIMS(-1), 1, &mask, msg, sizeof msg) == TB_OK && mask == 0);
  CHECK(tbk_reduce_dims(0, DIMS(1), 1, &mask, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK(tbk_reduce_dims(3, NULL, 0, &mask, msg, sizeof msg) == TB_OK && mask == 7);
}

/* Rows: a log-softmax along dim 0 of a [3, 2] matrix, through tbk_slices_run. */
static void log_softmax_row(char **data, const int64_t *strides, int64_t n, void *user) {
  (void)user;
  double max = -INFINITY, sum = 0;
  for (int64_t i = 0; i < n; i++) max = fmax(max, *(const float *)(data[1] + i * strides[1]));
  for (int64_t i = 0; i < n; i++) sum += exp(*(const float *)(data[1] + i * strides[1]) - max);
  for (int64_t i = 0; i < n; i++) {
    *(float *)(data[0] + i * strides[0]) =
        (float)(*(const float *)(data[1] + i * strides[1]) - max - log(sum));
  }
}

static void test_slices(void) {
  char msg[256];
  context = "rows along dim 0";
  float x[6] = {1, 2, 3, 4, 5, 7}, y[6] = {0};
  const int64_t sizes[2] = {3, 2}, strides[2] = {2, 1};
  tb_tensor in = tensor(x, TB_DTYPE_FLOAT32, 2, sizes, strides);
  tb_tensor out = tensor(y, TB_DTYPE_FLOAT32, 2, sizes, strides);
  const tb_tensor *both[2] = {&out, &in};
  tbk_reduce r;
  CHECK(tbk_slices_init(&r, both, 2, -2, msg, sizeof msg) == TB_OK);
  CHECK(r.ndim == 1 && r.sizes[0] == 3 && r.strides[1][0] == 8 && r.outer.numel == 2);
  CHECK(tbk_slices_run(&r, log_softmax_row, NULL) == TB_OK);
  for (int j = 0; j < 2; j++) {
    double sum = 0;
    for (int i = 0; i < 3; i++) sum += exp(x[i * 2 + j]);
    for (int i = 0; i < 3; i++) CHECK_EQ(y[i * 2 + j], (float)(x[i * 2 + j] - log(sum)));
  }

  context = "row errors";
  const int64_t other_sizes[2] = {2, 3};
  tb_tensor other = tensor(x, TB_DTYPE_FLOAT32, 2, other_sizes, strides);
  const tb_tensor *mismatched[2] = {&out, &other};
  CHECK(tbk_slices_init(&r, mismatched, 2, 1, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "tensor 1 has sizes [2, 3], not the output's [3, 2]");
  CHECK(tbk_slices_init(&r, both, 2, 2, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK(tbk_slices_run(&r, NULL, NULL) == TB_ERROR_INVALID_ARGUMENT);
}

/* ---- the kernel table ---- */

static tb_status kernel_a(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx, (void)call;
  return TB_OK;
}

static tb_status kernel_b(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx, (void)call;
  return TB_ERROR_NOT_SUPPORTED;
}

static int marker;

TBK_KERNEL_TABLE(good_kernels,
                 TBK_KERNEL("add.out",
                            "add.out(Tensor self, Tensor other, *, Scalar alpha=1, "
                            "Tensor(a!) out) -> Tensor(a!)",
                            kernel_a, TBK_DTYPES_ALL),
                 TBK_KERNEL("neg.out", NULL, kernel_b, TBK_DTYPES_FLOATING),
                 TBK_KERNEL_DATA("abs.out", NULL, kernel_b, TB_DTYPE_BIT(TB_DTYPE_FLOAT32),
                                 &marker));

TBK_KERNEL_TABLE(bad_kernels, TBK_KERNEL("add.out", NULL, kernel_a, TBK_DTYPES_ALL),
                 TBK_KERNEL("mul.out", NULL, NULL, TBK_DTYPES_FLOATING),
                 TBK_KERNEL("add.out", NULL, kernel_b, TBK_DTYPES_INTEGRAL),
                 TBK_KERNEL("div.out", NULL, kernel_b, (uint64_t)1 << 40));

static void test_table(void) {
  char msg[512];
  context = "table macros";
  const tb_kernel_api *api = &good_kernels;
  CHECK(api->struct_size == sizeof(tb_kernel_api) && api->count == 3);
  CHECK(api->kernels == good_kernels_list);
  const tb_kernel *add = api->kernels[0], *data = api->kernels[2];
  CHECK(add->struct_size == sizeof(tb_kernel) && strcmp(add->name, "add.out") == 0);
  CHECK(add->fn == kernel_a && add->dtypes == TBK_DTYPES_ALL && add->flags == 0);
  CHECK(strncmp(add->schema, "add.out(Tensor self", 19) == 0 && add->data == NULL);
  CHECK(data->data == &marker && data->schema == NULL && data->fn == kernel_b);
  CHECK(data->dtypes == TB_DTYPE_BIT(TB_DTYPE_FLOAT32));

  context = "tbk_kernels_validate";
  CHECK(tbk_kernels_validate(api, msg, sizeof msg) == TB_OK);
  CHECK_STR(msg, "");
  CHECK(tbk_kernels_validate(&bad_kernels, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg,
            "kernel 1 (\"mul.out\"): fn is NULL; "
            "kernel 2 (\"add.out\"): duplicate name of kernel 0; "
            "kernel 3 (\"div.out\"): unknown dtype bits 0x10000000000");
  CHECK(tbk_kernels_validate(NULL, msg, sizeof msg) == TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "the table is NULL");
  const tb_kernel *list[2] = {NULL, add};
  tb_kernel_api odd = {sizeof odd, 2, list};
  CHECK(tbk_kernels_validate(&odd, NULL, 0) == TB_ERROR_INVALID_ARGUMENT);
  CHECK(tbk_kernels_validate(&odd, msg, 12) == TB_ERROR_INVALID_ARGUMENT);
  CHECK_STR(msg, "kernel 0 is");
}

int main(void) {
  test_dtypes();
  test_half();
  test_bfloat16();
  test_broadcasting();
  test_strides();
  test_coalescing();
  test_ranges_and_empty();
  test_errors();
  test_maps();
  test_values();
  test_args();
  test_reductions();
  test_slices();
  test_table();
  printf("kit.iter: %d checks, %d failed (sizeof(tbk_iter) = %zu)\n", checks, failures,
         sizeof(tbk_iter));
  return failures ? 1 : 0;
}
