/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 */

/**
 * @file vendor_kit_kernels.h
 * @brief tb_vendor_kit's kernel half: dtypes, a strided iterator with broadcasting, elementwise
 * maps, reductions and rows, kernel arguments and a kernel-table builder.
 *
 * Before a vendor's kernel computes anything it needs the same machinery as every other
 * vendor's: reading and writing elements of each ::tb_dtype (float16 and bfloat16 rounded as
 * PyTorch rounds them), walking strided tensors with broadcasting, checking the kinds of its
 * arguments, and publishing a ::tb_kernel_api.  This header is that machinery, in plain C11
 * with no global state: every function is reentrant and may be called from any thread.
 *
 * The iterator, ::tbk_iter, is a self-contained value: it holds no pointer into the kernel
 * call's descriptors, which die when the kernel returns (vendor.h, "Execution").  A kernel
 * builds it during the call, copies it into its stream work, and runs it later on a worker:
 *
 * @code
 * typedef struct add_work {
 *   tbk_iter it;
 *   double alpha;
 * } add_work;
 *
 * static double add(double x, double y, const void *alpha) {
 *   return x + *(const double *)alpha * y;
 * }
 *
 * static tb_status add_run(void *args, char *message, size_t message_size) {  // on the worker
 *   add_work *w = args;
 *   (void)message, (void)message_size;
 *   return tbk_map_binary(&w->it, add, &w->alpha);  // &w->alpha: inside the copy
 * }
 *
 * // add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)
 * static tb_status add_out(tb_context ctx, const tb_kernel_call *call) {
 *   add_work w;
 *   char msg[256];
 *   const tb_tensor *out = tbk_arg_tensor(call, 3);
 *   const tb_value *in[2] = {tbk_arg(call, 0), tbk_arg(call, 1)};  // tensors or numbers
 *   if (out == NULL || !tbk_arg_number(call, 2, &w.alpha)) {
 *     return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "acme: add.out: unexpected arguments");
 *   }
 *   tb_status status = tbk_iter_init_values(&w.it, out, in, 2, out->dtype, msg, sizeof msg);
 *   if (status != TB_OK) return tbk_fail(status, "acme: add.out: %s", msg);
 *   return tbk_launch(ctx, call->stream, "add.out", add_run, &w, sizeof w);
 * }
 *
 * TBK_KERNEL_TABLE(acme_kernels,
 *                  TBK_KERNEL("add.out",
 *                             "add.out(Tensor self, Tensor other, *, Scalar alpha=1, "
 *                             "Tensor(a!) out) -> Tensor(a!)",
 *                             add_out, TBK_DTYPES_ALL));
 * // tb_vendor::kernels = &acme_kernels;
 * @endcode
 *
 * The iterator dereferences nothing: it computes addresses from tb_tensor::data, and only the
 * loop a vendor gives it reads or writes them.  The maps (tbk_map_unary(), tbk_map_binary()) and
 * loops that read elements with tbk_load() are for devices whose memory the host addresses
 * directly (::TB_DEVICE_HOST_ACCESS, emulators); a vendor with another address space either
 * rewrites tbk_iter::data after tbk_iter_init() or hands the iterator's sizes and byte strides
 * to its own device kernel.
 */
#ifndef TORCH_BACKEND_VENDOR_KIT_KERNELS_H_
#define TORCH_BACKEND_VENDOR_KIT_KERNELS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <torch_backend/vendor.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup tbk_dtype_group Kit: dtypes
 *
 * Every element value passes through a `double`, which holds every value of every ::tb_dtype
 * exactly except int64 magnitudes above 2^53 (they round to the nearest double); kernels that
 * must be exact on such integers use their own typed loops.
 *
 * Stores convert as PyTorch's CPU `Tensor.to()` does, assuming IEEE 754 arithmetic (C11 Annex
 * F, true of every compiler the project supports):
 *
 * - float32: rounded to nearest, ties to even; beyond float32's range, infinity.
 * - float16 and bfloat16: rounded first to float32, then to 16 bits, to nearest with ties to
 *   even -- PyTorch's `c10::Half(float(x))` and `c10::BFloat16(float(x))`, double rounding
 *   included.  Values beyond the format's range become infinities, NaN stays NaN: float16 keeps
 *   the NaN's sign and upper payload bits and sets the quiet bit (as PyTorch on x86-64 with F16C
 *   and on ARM; its portable C++ path gives `sign | 0x7E00`); bfloat16 gives 0x7FC0, as
 *   `c10::BFloat16` does (PyTorch's vectorized CPU loops give 0xFFFF, another NaN).
 * - bool: 0 for zero (either sign), 1 for anything else, NaN included.
 * - integers: truncated toward zero, exactly as C and PyTorch do for values the type holds.
 *   Other values (out of range, infinite, NaN) are undefined behaviour in C and C++ alike, and
 *   PyTorch's results for them vary across platforms; the kit gives what PyTorch's scalar CPU
 *   code gives on x86-64: uint8 and int64 through a conversion to int64, int8, int16 and int32
 *   through a conversion to int32 (a value outside the intermediate type, or NaN, becomes its
 *   minimum), then the low bits.  So `-1.0` stores 255 as uint8, `300.0` stores 44 as int8, and
 *   `3e9` stores INT32_MIN as int32.
 *  @{ */

/** The float16, bfloat16, float32 and float64 bits of tb_kernel::dtypes. */
#define TBK_DTYPES_FLOATING                                           \
  (TB_DTYPE_BIT(TB_DTYPE_FLOAT16) | TB_DTYPE_BIT(TB_DTYPE_BFLOAT16) | \
   TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64))
/** The uint8, int8, int16, int32 and int64 bits of tb_kernel::dtypes (bool excluded). */
#define TBK_DTYPES_INTEGRAL                                                                    \
  (TB_DTYPE_BIT(TB_DTYPE_UINT8) | TB_DTYPE_BIT(TB_DTYPE_INT8) | TB_DTYPE_BIT(TB_DTYPE_INT16) | \
   TB_DTYPE_BIT(TB_DTYPE_INT32) | TB_DTYPE_BIT(TB_DTYPE_INT64))
/** Every dtype of this ABI version. */
#define TBK_DTYPES_ALL (TB_DTYPE_BIT(TB_DTYPE_COUNT) - 1)

/** Bytes per element of @p dtype; 0 for a value that is not a dtype of this ABI version. */
size_t tbk_dtype_size(tb_dtype dtype);

/** Whether @p dtype is float16, bfloat16, float32 or float64. */
bool tbk_dtype_is_floating(tb_dtype dtype);

/** The element of @p dtype at @p p as a double; 0 for an unknown dtype. */
double tbk_load(tb_dtype dtype, const void *p);

/** Stores @p value at @p p as an element of @p dtype, converted as this group's introduction
 *  says; does nothing for an unknown dtype. */
void tbk_store(tb_dtype dtype, void *p, double value);

/** The float16 bit pattern @p bits as a float (exact). */
float tbk_half_to_float(uint16_t bits);

/** @p value rounded to float16, as PyTorch rounds (see this group's introduction). */
uint16_t tbk_float_to_half(float value);

/** The bfloat16 bit pattern @p bits as a float (exact). */
float tbk_bfloat16_to_float(uint16_t bits);

/** @p value rounded to bfloat16, as PyTorch rounds (see this group's introduction). */
uint16_t tbk_float_to_bfloat16(float value);

/** @} */

/** @defgroup tbk_args_group Kit: kernel arguments
 *  Accessors of tb_kernel_call::args by index (vendor.h, "Arguments"), which check the index
 *  and the kind, so that a kernel validates its arguments in one expression each.
 *  @{ */

/** Argument @p i of @p call; NULL when @p i is not in [0, tb_kernel_call::num_args). */
const tb_value *tbk_arg(const tb_kernel_call *call, int i);

/** The tensor of argument @p i; NULL when there is no such argument or it is not a
 *  ::TB_VALUE_TENSOR (an omitted `Tensor?` is ::TB_VALUE_NONE, hence NULL). */
const tb_tensor *tbk_arg_tensor(const tb_kernel_call *call, int i);

/** Whether @p value is a number (::TB_VALUE_INT, ::TB_VALUE_DOUBLE or ::TB_VALUE_BOOL); if so,
 *  stores it in @p out as a double.  False (and @p out unchanged) for NULL or another kind. */
bool tbk_value_number(const tb_value *value, double *out);

/** tbk_value_number() of argument @p i. */
bool tbk_arg_number(const tb_kernel_call *call, int i, double *out);

/** Whether argument @p i is a ::TB_VALUE_INT; if so, stores it in @p out (unchanged
 *  otherwise). */
bool tbk_arg_int(const tb_kernel_call *call, int i, int64_t *out);

/** Whether argument @p i is a ::TB_VALUE_BOOL; if so, stores it in @p out (unchanged
 *  otherwise). */
bool tbk_arg_bool(const tb_kernel_call *call, int i, bool *out);

/** The integers of argument @p i when it is a ::TB_VALUE_INT_LIST (`int[]`, `SymInt[]`), their
 *  number in @p count; NULL (and @p count unchanged) for another kind -- an omitted `int[]?`
 *  is ::TB_VALUE_NONE -- or an index out of range.  An empty list gives a non-NULL pointer only
 *  if the caller's array was one: test @p count, not the pointer, for emptiness. */
const int64_t *tbk_arg_ints(const tb_kernel_call *call, int i, int64_t *count);

/** The elements of argument @p i when it is a ::TB_VALUE_TENSOR_LIST (`Tensor[]`, `Tensor?[]`:
 *  an absent element is NULL), their number in @p count; NULL (and @p count unchanged)
 *  otherwise.  An empty list (a fused optimizer's `momentum_buffer_list` without momentum)
 *  sets @p count to 0 and gives the caller's pointer, which may be NULL: test @p count, not
 *  the pointer, as for tbk_arg_ints(). */
const tb_tensor *const *tbk_arg_tensors(const tb_kernel_call *call, int i, int64_t *count);

/** Whether argument @p i is ::TB_VALUE_NONE: an omitted optional argument (`Tensor? weight`,
 *  `int[1]? dim`, `ScalarType? dtype`, `Generator?`).  False for an index out of range. */
bool tbk_arg_is_none(const tb_kernel_call *call, int i);

/** Whether argument @p i is a ::TB_VALUE_DTYPE (`ScalarType`, a given `ScalarType?`); if so,
 *  stores it in @p out (unchanged otherwise).  The dtype may be one this ABI version does not
 *  know (::TB_DTYPE_COUNT or above): check it before use. */
bool tbk_arg_dtype(const tb_kernel_call *call, int i, tb_dtype *out);

/** The NUL-terminated text of argument @p i when it is a ::TB_VALUE_STRING (`str`, such as
 *  gelu's `approximate`); NULL otherwise. */
const char *tbk_arg_string(const tb_kernel_call *call, int i);

/** The values (each 0 or 1) of argument @p i when it is a ::TB_VALUE_BOOL_LIST (`bool[]`, such
 *  as convolution_backward's `output_mask`), their number in @p count; NULL (and @p count
 *  unchanged) otherwise.  As with tbk_arg_ints(), test @p count for emptiness. */
const int *tbk_arg_bools(const tb_kernel_call *call, int i, int64_t *count);

/** The key of argument @p i when it is a ::TB_VALUE_RNG (`Generator?` of a random kernel, see
 *  @ref tb_kernel_rng); NULL otherwise. */
const tb_rng_key *tbk_arg_rng(const tb_kernel_call *call, int i);

/** @} */

/** @defgroup tbk_iter_group Kit: the strided iterator
 *
 * A ::tbk_iter walks one output and up to ::TBK_ITER_MAX_INPUTS inputs element by element, in
 * the row-major order of the output's indices, calling a ::tbk_loop_fn for each run of
 * elements along the innermost dimension, as PyTorch's TensorIterator does:
 *
 * - each input is broadcast to the output's shape as `Tensor.expand` would: dimensions aligned
 *   from the right, an input's missing leading dimensions and its size-1 dimensions repeated
 *   (stride 0);
 * - strides become byte strides; dimensions of size 1 are dropped, and neighbouring dimensions
 *   that every operand steps through as one are merged, so a contiguous (or uniformly strided)
 *   layout is one run of all its elements;
 * - a 0-dim output is one element; an output with no elements runs no loop.
 *
 * Strides may take any value (those of vendor.h's tensors are >= 0, 0 for expanded
 * dimensions).  The output may be one of the inputs (in-place operators), with the same data
 * and strides; otherwise it must not overlap them.
 *  @{ */

/** The most inputs of a ::tbk_iter. */
#define TBK_ITER_MAX_INPUTS 7
/** The most operands of a ::tbk_iter: the output and its inputs. */
#define TBK_ITER_MAX_OPERANDS (TBK_ITER_MAX_INPUTS + 1)
/** The most dimensions a ::tbk_iter keeps after dropping size-1 dimensions and merging; the
 *  tensors themselves may have more. */
#define TBK_ITER_MAX_DIMS TB_SHAPE_MAX_DIMS

/**
 * An iteration over an output and its inputs, made by tbk_iter_init() or
 * tbk_iter_init_values().  A plain value (about 1.3 KiB): copy it anywhere (into a task's
 * payload) and run the copy later, on any thread.  Operand 0 is the output, operand k + 1 is
 * input k.  The fields may be read (to pick a fast path, or to pass the layout to a device
 * kernel); only `data` may be changed, to translate device addresses.
 */
typedef struct tbk_iter {
  /** Number of operands: 1 + the number of inputs. */
  int32_t num_operands;
  /** Number of dimensions after dropping and merging, at least 1. */
  int32_t ndim;
  /** Number of elements of the output. */
  int64_t numel;
  /** `ndim` sizes, innermost dimension first. */
  int64_t sizes[TBK_ITER_MAX_DIMS];
  /** `strides[k][d]`: the byte stride of operand k along dimension d (innermost first); 0 for
   *  broadcast dimensions and number operands. */
  int64_t strides[TBK_ITER_MAX_OPERANDS][TBK_ITER_MAX_DIMS];
  /** Address of each operand's first element: tb_tensor::data; NULL for number operands,
   *  whose element is `constants[k]`. */
  char *data[TBK_ITER_MAX_OPERANDS];
  /** Element type of each operand. */
  tb_dtype dtypes[TBK_ITER_MAX_OPERANDS];
  /** Bit k set: operand k is a number, stored in `constants[k]` (tbk_iter_init_values()). */
  uint32_t constant_mask;
  /** The elements of number operands, each of its operand's dtype. */
  union {
    double f64;
    float f32;
    int64_t i64;
    int32_t i32;
    int16_t i16;
    uint16_t u16;
    int8_t i8;
    uint8_t u8;
  } constants[TBK_ITER_MAX_OPERANDS];
} tbk_iter;

/**
 * The inner loop: @p n elements, operand k's first at `data[k]` and the next ones
 * `byte_strides[k]` bytes apart.  @p user is the pointer given to tbk_iter_run().  The loop may
 * change the entries of @p data (they are a copy).
 */
typedef void (*tbk_loop_fn)(char **data, const int64_t *byte_strides, int64_t n, void *user);

/**
 * Makes @p it iterate over @p out and @p num_inputs tensors @p inputs (operands 1 to
 * @p num_inputs), each broadcast to @p out's shape.
 *
 * @param it          The iterator to fill.
 * @param out         The output (operand 0); its shape is the iteration's.
 * @param inputs      @p num_inputs input tensors (operands 1 to @p num_inputs).
 * @param num_inputs  In [0, ::TBK_ITER_MAX_INPUTS].
 * @param msg         Receives a NUL-terminated message on failure ("" on success), truncated to
 *                    @p msg_size bytes; may be NULL.
 * @param msg_size    Size of @p msg in bytes.
 * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT for a NULL pointer, @p num_inputs outside
 *         [0, ::TBK_ITER_MAX_INPUTS], a negative size or ndim, or an input that does not
 *         broadcast to the output, with a message such as "input 1 with sizes [2, 3] does not
 *         broadcast to the output's sizes [4, 3]"; ::TB_ERROR_NOT_SUPPORTED for a dtype this
 *         header does not know or more than ::TBK_ITER_MAX_DIMS dimensions left after merging.
 *         On failure @p it is unspecified.
 */
tb_status tbk_iter_init(tbk_iter *it, const tb_tensor *out, const tb_tensor *const *inputs,
                        int num_inputs, char *msg, size_t msg_size);

/**
 * tbk_iter_init() with inputs that are kernel arguments: a ::TB_VALUE_TENSOR is that tensor; a
 * ::TB_VALUE_INT, ::TB_VALUE_DOUBLE or ::TB_VALUE_BOOL (a CPU scalar operand, vendor.h
 * "Elementwise operators") stands for a tensor of that constant, held in the iterator itself
 * (tbk_iter::constants) converted to @p scalar_dtype -- usually the operation's compute dtype;
 * ::TB_DTYPE_FLOAT64 keeps any double exactly, and an int stored as int64 stays exact.  Another
 * kind, or a NULL value, fails with ::TB_ERROR_INVALID_ARGUMENT.
 */
tb_status tbk_iter_init_values(tbk_iter *it, const tb_tensor *out, const tb_value *const *inputs,
                               int num_inputs, tb_dtype scalar_dtype, char *msg, size_t msg_size);

/** Calls @p loop over every element of @p it, in runs along the innermost dimension. */
void tbk_iter_run(const tbk_iter *it, tbk_loop_fn loop, void *user);

/** Calls @p loop over the elements of @p it whose row-major index in the output lies in
 *  [@p begin, @p end) (clamped to [0, numel)): split [0, numel) into ranges to share the work
 *  among threads, or number elements (a random-number kernel's counter). */
void tbk_iter_run_range(const tbk_iter *it, int64_t begin, int64_t end, tbk_loop_fn loop,
                        void *user);

/** @} */

/** @defgroup tbk_map_group Kit: elementwise maps
 *  The most common kernel: `out = f(x)` or `out = f(x, y)` computed in double, each operand
 *  of any dtype, loaded and stored through tbk_load() and tbk_store() (directly, when every
 *  operand is float32).  Standard functions that take a params pointer fit through a one-line
 *  wrapper.  @p params is passed to @p fn as given: for deferred work it must point into the
 *  task's own copy (as in the file's example).
 *  @{ */

/** A unary function, with the map's @p params. */
typedef double (*tbk_unary_fn)(double x, const void *params);
/** A binary function, with the map's @p params. */
typedef double (*tbk_binary_fn)(double x, double y, const void *params);

/** Runs `out = fn(in0)` over @p it; ::TB_ERROR_INVALID_ARGUMENT (nothing done) when @p it does
 *  not have exactly one input or @p fn is NULL. */
tb_status tbk_map_unary(const tbk_iter *it, tbk_unary_fn fn, const void *params);

/** Runs `out = fn(in0, in1)` over @p it; ::TB_ERROR_INVALID_ARGUMENT (nothing done) when @p it
 *  does not have exactly two inputs or @p fn is NULL. */
tb_status tbk_map_binary(const tbk_iter *it, tbk_binary_fn fn, const void *params);

/** @} */

/** @defgroup tbk_reduce_group Kit: reductions and slices
 *
 * Kernels that combine elements along dimensions -- `sum`, `mean`, `amax`, a Linear's bias
 * gradient -- and kernels that work on whole rows along one dimension -- `_log_softmax`,
 * `_softmax` and their backwards, `cumsum` -- share one layout, the ::tbk_reduce: an outer
 * ::tbk_iter over the output's elements (or the rows), and the sizes and byte strides of the
 * dimensions walked for each of them.  Like ::tbk_iter it is a plain value that a kernel builds
 * during the call and copies into its stream work.
 *
 * ATen's rules, which tbk_reduce_init() applies as `torch.sum(x, dim, keepdim)` does:
 *
 * - `dim` is a list (`int[1]? dim`); negative entries count from the end; an entry out of range
 *   or repeated is an error; an omitted or empty list reduces every dimension (`x.sum()`
 *   reaches `sum.IntList_out` with `dim` None or `[]`).  A 0-dim tensor accepts dim 0 and -1.
 * - the output has the input's shape with the reduced dimensions removed, or kept with size 1
 *   when `keepdim` is true; ATen has already allocated it so, of the result dtype
 *   (tbk_reduce_dtype()).
 * - over no elements (a reduced dimension of size 0), a reduction gives its identity
 *   (tbk_reduce_identity()): 0 for sum, 1 for prod; mean gives NaN (0/0); amax and amin have
 *   none, and ATen refuses them before any kernel runs.
 *
 * tbk_reduce_run() and tbk_slices_run() read and write through the tensors' addresses: they
 * are for devices the host addresses (::TB_DEVICE_HOST_ACCESS); another device hands the
 * layout to its own kernel, as with ::tbk_iter.
 *  @{ */

/** What tbk_reduce_run() computes from the elements of each output element. */
typedef enum tbk_reduce_op {
  TBK_REDUCE_SUM = 0,  /**< their sum (identity 0) */
  TBK_REDUCE_MEAN = 1, /**< their sum divided by their number (NaN for none) */
  TBK_REDUCE_PROD = 2, /**< their product (identity 1) */
  TBK_REDUCE_AMAX = 3, /**< their maximum; a NaN among them gives NaN, as ATen */
  TBK_REDUCE_AMIN = 4  /**< their minimum; a NaN among them gives NaN, as ATen */
} tbk_reduce_op;

/**
 * A reduction or a set of rows, made by tbk_reduce_init() or tbk_slices_init().  Operand 0 is
 * the output, operand k + 1 input k, as in ::tbk_iter.
 */
typedef struct tbk_reduce {
  /** Over the output's elements (a reduction) or the rows (slices): each operand's address is
   *  that of its first element along the walked dimensions. */
  tbk_iter outer;
  /** Number of walked dimensions, at least 1: after dropping size-1 dimensions and merging for
   *  a reduction; exactly 1 for slices. */
  int32_t ndim;
  /** Elements walked per output element (per row): the product of `sizes`. */
  int64_t numel;
  /** `ndim` sizes of the walked dimensions, innermost first. */
  int64_t sizes[TBK_ITER_MAX_DIMS];
  /** `strides[k][d]`: operand k's byte stride along walked dimension d; 0 for the output of a
   *  reduction. */
  int64_t strides[TBK_ITER_MAX_OPERANDS][TBK_ITER_MAX_DIMS];
} tbk_reduce;

/**
 * The dimensions of a tensor with @p ndim dimensions that the ATen dim list @p dims (@p count
 * entries; NULL or 0 entries: all of them) names, as bits of @p mask (bit d: dimension d).
 *
 * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT for an entry out of [-ndim, ndim) ([-1, 0] for
 *         a 0-dim tensor), with a message such as "dim 2 is out of range for a tensor of 2
 *         dimensions", or a repeated one ("dim 1 appears more than once in [1, -1]");
 *         ::TB_ERROR_NOT_SUPPORTED for more than ::TB_SHAPE_MAX_DIMS dimensions.
 */
tb_status tbk_reduce_dims(int32_t ndim, const int64_t *dims, int64_t count, uint64_t *mask,
                          char *msg, size_t msg_size);

/**
 * Makes @p r reduce @p in over the dimensions @p dims names (tbk_reduce_dims()) into @p out,
 * whose shape must be the reduced one (with the reduced dimensions kept as size 1 when
 * @p keepdim is true).
 *
 * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT for a NULL pointer, a bad dim list, or an
 *         output whose sizes are not the reduced ones ("the output's sizes [3] are not [3, 1],
 *         the input's [3, 4] reduced over dims [1] with keepdim"); ::TB_ERROR_NOT_SUPPORTED as
 *         tbk_iter_init().  On failure @p r is unspecified.
 */
tb_status tbk_reduce_init(tbk_reduce *r, const tb_tensor *out, const tb_tensor *in,
                          const int64_t *dims, int64_t count, bool keepdim, char *msg,
                          size_t msg_size);

/**
 * Makes @p r walk the rows along dimension @p dim (negative: from the end) of @p count tensors
 * of one shape, `tensors[0]` the output: one row of each per index of the other dimensions, as
 * `_log_softmax` and its backward need.
 *
 * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT for a NULL pointer, @p count outside
 *         [1, ::TBK_ITER_MAX_OPERANDS], a dim out of range, or a tensor whose sizes differ from
 *         the output's; ::TB_ERROR_NOT_SUPPORTED as tbk_iter_init().
 */
tb_status tbk_slices_init(tbk_reduce *r, const tb_tensor *const *tensors, int count, int64_t dim,
                          char *msg, size_t msg_size);

/** The dtype of ATen's result of @p op over @p self when the call's `dtype=` argument is
 *  @p dtype_arg (a ::TB_VALUE_DTYPE, or ::TB_VALUE_NONE / NULL when omitted): the given dtype;
 *  else int64 for a sum or product of bool or integers; else @p self.  (ATen allocates `out`
 *  of this dtype; a kernel checks it to decline what it does not compute.) */
tb_dtype tbk_reduce_dtype(tbk_reduce_op op, tb_dtype self, const tb_value *dtype_arg);

/** The value of @p op over no elements: 0 (sum), 1 (prod), NaN (mean), -infinity (amax),
 *  +infinity (amin). */
double tbk_reduce_identity(tbk_reduce_op op);

/**
 * Runs the reduction @p r (from tbk_reduce_init()), writing @p op of each output element's
 * input elements into it, converted to the output's dtype as tbk_store() does.  Floating
 * values accumulate in double, in the input's order; a sum or product of integers (or bool)
 * into an integral output accumulates in int64, wrapping as ATen does.
 *
 * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT (nothing done) when @p r is not a reduction of
 *         one input or @p op is not a ::tbk_reduce_op.
 */
tb_status tbk_reduce_run(const tbk_reduce *r, tbk_reduce_op op);

/**
 * Calls @p fn once per row of @p r (from tbk_slices_init(), or a tbk_reduce_init() whose
 * reduced dimensions merged into one, `r->ndim == 1`): `data[k]` is operand k's first element
 * of the row, `byte_strides[k]` its step along the row, and `n` the row's length
 * (`r->sizes[0]`, which may be 0).  @p user is passed on.
 *
 * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT (nothing done) for NULL, or `r->ndim != 1`.
 */
tb_status tbk_slices_run(const tbk_reduce *r, tbk_loop_fn fn, void *user);

/** @} */

/** @defgroup tbk_table_group Kit: the kernel table
 *  A vendor declares its table at file scope, one line per kernel, and points
 *  tb_vendor::kernels at it:
 *
 *  @code
 *  TBK_KERNEL_TABLE(acme_kernels,
 *                   TBK_KERNEL("add.out", ADD_OUT_SCHEMA, acme_add, TBK_DTYPES_ALL),
 *                   TBK_KERNEL("mm.out", MM_OUT_SCHEMA, acme_mm, TBK_DTYPES_FLOATING));
 *  ...
 *  .kernels = &acme_kernels,
 *  @endcode
 *
 *  The macros are C (compound literals), for file scope, where their objects are static.
 *  @{ */

/** A pointer to a static ::tb_kernel for operator @p opname (tb_kernel::name), written for the
 *  ATen schema @p aten_schema (tb_kernel::schema; NULL: unchecked), running @p kernel_fn for
 *  the dtypes in @p dtype_mask (::TB_DTYPE_BIT, ::TBK_DTYPES_FLOATING, ...). */
#define TBK_KERNEL(opname, aten_schema, kernel_fn, dtype_mask) \
  TBK_KERNEL_DATA(opname, aten_schema, kernel_fn, dtype_mask, NULL)

/** TBK_KERNEL() with tb_kernel::data set to @p data_ptr. */
#define TBK_KERNEL_DATA(opname, aten_schema, kernel_fn, dtype_mask, data_ptr) \
  (&(const tb_kernel){.struct_size = sizeof(tb_kernel),                       \
                      .name = (opname),                                       \
                      .fn = (kernel_fn),                                      \
                      .dtypes = (dtype_mask),                                 \
                      .flags = 0,                                             \
                      .schema = (aten_schema),                                \
                      .data = (data_ptr)})

/** Defines `const tb_kernel_api table` (external linkage: tb_vendor::kernels may point to it
 *  from another file, which declares `extern const tb_kernel_api table;`) holding the kernels
 *  listed after it (at least one, each a TBK_KERNEL()), and the static array `table##_list` it
 *  points to. */
#define TBK_KERNEL_TABLE(table, ...)                                                    \
  static const tb_kernel *const table##_list[] = {__VA_ARGS__};                         \
  const tb_kernel_api table = {sizeof(tb_kernel_api),                                   \
                               (int64_t)(sizeof table##_list / sizeof table##_list[0]), \
                               table##_list}

/**
 * Checks a kernel table for a vendor's own tests: what torch_backend's loader refuses (a NULL
 * kernel, a struct_size below ABI 2.0's, a negative count, a kernel without a name or function,
 * flags other than 0, a name that repeats an earlier kernel's), and tb_kernel::dtypes bits of
 * no dtype of this ABI version.
 *
 * @param api   The table (what tb_vendor::kernels points to).
 * @param msg   Receives every problem found, separated by "; " ("" when none), truncated to
 *              @p msg_size bytes; may be NULL.
 * @param msg_size  Size of @p msg in bytes.
 * @return ::TB_OK, or ::TB_ERROR_INVALID_ARGUMENT when a problem was found.
 */
tb_status tbk_kernels_validate(const tb_kernel_api *api, char *msg, size_t msg_size);

/** @} */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORCH_BACKEND_VENDOR_KIT_KERNELS_H_ */
