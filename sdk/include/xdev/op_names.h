/* xdev/op_names.h: the names of the ops of xdev's op table and of their
 * attributes, for plugins in C or C++: what a kernel registers under
 * (xdev_kernel_info_t::op) and what it finds in xdev_attr_t::name.
 *
 * Generated from core/opdefs/op_table.cpp by
 *   build/tools/op-table/xdev-op-table --update-header sdk/include/xdev/op_names.h
 * (the meson test op_names_header fails when it is stale); do not edit.
 *
 * An op is XDEV_OP_<name> ("MatMul": XDEV_OP_MatMul), an attribute
 * XDEV_ATTR_NAME_<name> ("transpose_a": XDEV_ATTR_NAME_transpose_a),
 * each a string literal spelled as the op table spells it. A misspelled
 * macro is a compile error; a misspelled string is a kernel the core never
 * calls (a load warning, and a conformance failure) or an attribute never
 * found. docs/ops.md says what each op computes and takes.
 */
#ifndef XDEV_OP_NAMES_H_
#define XDEV_OP_NAMES_H_

/* The ops, in the op table's order. */
#define XDEV_OP_MatMul "MatMul" /* matrix product op(a) · op(b), op(x) = x or xᵀ */
#define XDEV_OP_Add "Add" /* x + y (bool: logical or) */
#define XDEV_OP_Sub "Sub" /* x - y */
#define XDEV_OP_Mul "Mul" /* x · y */
#define XDEV_OP_Div "Div" /* x / y (integers: toward zero; a zero divisor is an error) */
#define XDEV_OP_Neg "Neg" /* -x */
#define XDEV_OP_Relu "Relu" /* x > 0 ? x : 0 */
#define XDEV_OP_AddN "AddN" /* x0 + x1 + … */
#define XDEV_OP_Cast "Cast" /* x converted to `dtype` (see below) */
#define XDEV_OP_Sum "Sum" /* sum over `axes` */
#define XDEV_OP_Mean "Mean" /* mean over `axes` */
#define XDEV_OP_Copy "Copy" /* a contiguous copy of x (any strides) */
#define XDEV_OP_Fill "Fill" /* every element `value` */
#define XDEV_OP_RandomUniform "RandomUniform" /* uniform in [minval, maxval), bit-exact (see below) */
#define XDEV_OP_Abs "Abs" /* |x| (integers: MIN stays MIN) */
#define XDEV_OP_Sign "Sign" /* -1, 0 or 1 by the sign of x (floats: ±0 and NaN stay) */
#define XDEV_OP_Square "Square" /* x · x (integers wrap) */
#define XDEV_OP_Exp "Exp" /* eˣ */
#define XDEV_OP_Expm1 "Expm1" /* eˣ - 1, accurate near 0 */
#define XDEV_OP_Log "Log" /* ln x (x < 0: NaN, 0: -inf) */
#define XDEV_OP_Log1p "Log1p" /* ln(1 + x), accurate near 0 */
#define XDEV_OP_Sqrt "Sqrt" /* √x (x < 0: NaN) */
#define XDEV_OP_Rsqrt "Rsqrt" /* 1 / √x */
#define XDEV_OP_Reciprocal "Reciprocal" /* 1 / x */
#define XDEV_OP_Sin "Sin" /* sin x */
#define XDEV_OP_Cos "Cos" /* cos x */
#define XDEV_OP_Tanh "Tanh" /* tanh x */
#define XDEV_OP_Sigmoid "Sigmoid" /* 1 / (1 + e⁻ˣ) */
#define XDEV_OP_Erf "Erf" /* the error function erf x */
#define XDEV_OP_Softplus "Softplus" /* ln(1 + eˣ), without overflow for large x */
#define XDEV_OP_Floor "Floor" /* the largest integer ≤ x */
#define XDEV_OP_Ceil "Ceil" /* the smallest integer ≥ x */
#define XDEV_OP_Round "Round" /* x rounded to the nearest integer, halves to even */
#define XDEV_OP_LeakyRelu "LeakyRelu" /* x > 0 ? x : alpha · x */
#define XDEV_OP_Gelu "Gelu" /* x · Φ(x) (erf form, or its tanh approximation) */
#define XDEV_OP_Pow "Pow" /* xʸ (C pow: a negative x to a non-integer y is NaN) */
#define XDEV_OP_Maximum "Maximum" /* max(x, y), NaN if either is NaN */
#define XDEV_OP_Minimum "Minimum" /* min(x, y), NaN if either is NaN */
#define XDEV_OP_FloorDiv "FloorDiv" /* ⌊x / y⌋ (integers: a zero divisor is an error) */
#define XDEV_OP_FloorMod "FloorMod" /* x - ⌊x / y⌋ · y, the sign of y (integers: a zero divisor is an error) */
#define XDEV_OP_SquaredDifference "SquaredDifference" /* (x - y)² */
#define XDEV_OP_Equal "Equal" /* x == y (NaN: false) */
#define XDEV_OP_NotEqual "NotEqual" /* x != y (NaN: true) */
#define XDEV_OP_Less "Less" /* x < y (NaN: false) */
#define XDEV_OP_LessEqual "LessEqual" /* x <= y (NaN: false) */
#define XDEV_OP_Greater "Greater" /* x > y (NaN: false) */
#define XDEV_OP_GreaterEqual "GreaterEqual" /* x >= y (NaN: false) */
#define XDEV_OP_LogicalAnd "LogicalAnd" /* x and y */
#define XDEV_OP_LogicalOr "LogicalOr" /* x or y */
#define XDEV_OP_LogicalNot "LogicalNot" /* not x */
#define XDEV_OP_IsNan "IsNan" /* x is NaN */
#define XDEV_OP_IsFinite "IsFinite" /* x is neither infinite nor NaN */
#define XDEV_OP_Select "Select" /* condition ? x : y, element by element (TF SelectV2) */
#define XDEV_OP_ClipByValue "ClipByValue" /* min(max(x, clip_value_min), clip_value_max) (NaN x stays NaN) */
#define XDEV_OP_Max "Max" /* maximum over `axes` (NaN if any is NaN) */
#define XDEV_OP_Min "Min" /* minimum over `axes` (NaN if any is NaN) */
#define XDEV_OP_Prod "Prod" /* product over `axes` */
#define XDEV_OP_Any "Any" /* logical or over `axes` */
#define XDEV_OP_All "All" /* logical and over `axes` */
#define XDEV_OP_LogSumExp "LogSumExp" /* ln Σ eˣ over `axes`, computed stably */
#define XDEV_OP_ArgMax "ArgMax" /* index of the largest element along `axis` (the first; NaN wins) */
#define XDEV_OP_ArgMin "ArgMin" /* index of the smallest element along `axis` (the first; NaN wins) */
#define XDEV_OP_CumSum "CumSum" /* running sum along `axis` (TF: `exclusive`, `reverse`) */
#define XDEV_OP_Softmax "Softmax" /* eˣ / Σ eˣ along `axis`, computed stably */
#define XDEV_OP_LogSoftmax "LogSoftmax" /* x − ln Σ eˣ along `axis`, computed stably */
#define XDEV_OP_ConcatV2 "ConcatV2" /* x0, x1, … joined along `axis` (tf.concat) */
#define XDEV_OP_Pack "Pack" /* x0, x1, … stacked along a new `axis` (tf.stack) */
#define XDEV_OP_Identity "Identity" /* x, copied (any strides; a new tensor) */
#define XDEV_OP_Tile "Tile" /* x repeated `multiples[k]` times along each axis k */
#define XDEV_OP_PadV2 "PadV2" /* x with `constant_values` added before and after each axis (tf.pad, mode CONSTANT) */
#define XDEV_OP_GatherV2 "GatherV2" /* slices of params along `axis` picked by indices (tf.gather; an index out of range is an error) */
#define XDEV_OP_BiasAdd "BiasAdd" /* value + bias along the channel axis (tf.nn.bias_add) */
#define XDEV_OP_SoftmaxCrossEntropyWithLogits "SoftmaxCrossEntropyWithLogits" /* loss = −Σ labels · log softmax(features) per row; backprop = softmax(features) − labels */
#define XDEV_OP_LayerNorm "LayerNorm" /* (x − mean) / √(variance + epsilon) · gamma + beta over the axes from `begin_norm_axis` */
#define XDEV_OP_Slice "Slice" /* the window of x at `begin` of `size` (tf.slice) */
#define XDEV_OP_StridedSlice "StridedSlice" /* x[begin:end:strides] with TF's masks (tf.strided_slice; negative strides reverse) */
#define XDEV_OP_Range "Range" /* start, start + delta, … up to limit, not included (tf.range) */
#define XDEV_OP_OneHot "OneHot" /* on_value where the index equals the position along `axis`, else off_value (tf.one_hot; an index out of [0, depth) gives a row of off_value) */
#define XDEV_OP_BroadcastTo "BroadcastTo" /* x broadcast to `shape`, copied into a dense tensor (tf.broadcast_to) */
#define XDEV_OP_Conv2D "Conv2D" /* 2-d convolution (cross-correlation) of input with filter [KH, KW, Cin, Cout] (tf.nn.conv2d) */
#define XDEV_OP_Conv2DBackpropInput "Conv2DBackpropInput" /* the gradient of Conv2D with respect to its input */
#define XDEV_OP_Conv2DBackpropFilter "Conv2DBackpropFilter" /* the gradient of Conv2D with respect to its filter */
#define XDEV_OP_MaxPool "MaxPool" /* the maximum of each window (NaN if the window has one) */
#define XDEV_OP_AvgPool "AvgPool" /* the mean of each window's elements inside the input (padding not counted) */
#define XDEV_OP_MaxPoolGrad "MaxPoolGrad" /* grad routed to the first maximum of orig_input in each window (row-major window order) */
#define XDEV_OP_AvgPoolGrad "AvgPoolGrad" /* grad spread evenly over each window's elements inside the input */
#define XDEV_OP_BatchMatMulV2 "BatchMatMulV2" /* matrix product of the last two axes, batch axes broadcast (tf.linalg.matmul) */
#define XDEV_OP_TensorScatterAdd "TensorScatterAdd" /* tensor with each slice of updates added at its index (tf.tensor_scatter_nd_add; duplicates accumulate, an index out of range is an error) */
#define XDEV_OP_COUNT 88

/* The attributes kernels receive, by name; the comment lists the ops
 * that take each. (Attributes the core alone reads are not here.) */
#define XDEV_ATTR_NAME_adj_x "adj_x" /* BatchMatMulV2 */
#define XDEV_ATTR_NAME_adj_y "adj_y" /* BatchMatMulV2 */
#define XDEV_ATTR_NAME_alpha "alpha" /* LeakyRelu */
#define XDEV_ATTR_NAME_approximate "approximate" /* Gelu */
#define XDEV_ATTR_NAME_axes "axes" /* All, Any, LogSumExp, Max, Mean, Min, Prod, Sum */
#define XDEV_ATTR_NAME_axis "axis" /* ArgMax, ArgMin, ConcatV2, CumSum, GatherV2, LogSoftmax, OneHot, Pack, Softmax */
#define XDEV_ATTR_NAME_begin "begin" /* Slice, StridedSlice */
#define XDEV_ATTR_NAME_begin_mask "begin_mask" /* StridedSlice */
#define XDEV_ATTR_NAME_begin_norm_axis "begin_norm_axis" /* LayerNorm */
#define XDEV_ATTR_NAME_constant_values "constant_values" /* PadV2 */
#define XDEV_ATTR_NAME_data_format "data_format" /* AvgPool, AvgPoolGrad, BiasAdd, Conv2D, Conv2DBackpropFilter, Conv2DBackpropInput, MaxPool, MaxPoolGrad */
#define XDEV_ATTR_NAME_delta "delta" /* Range */
#define XDEV_ATTR_NAME_depth "depth" /* OneHot */
#define XDEV_ATTR_NAME_dilations "dilations" /* Conv2D, Conv2DBackpropFilter, Conv2DBackpropInput */
#define XDEV_ATTR_NAME_dtype "dtype" /* Cast */
#define XDEV_ATTR_NAME_ellipsis_mask "ellipsis_mask" /* StridedSlice */
#define XDEV_ATTR_NAME_end "end" /* StridedSlice */
#define XDEV_ATTR_NAME_end_mask "end_mask" /* StridedSlice */
#define XDEV_ATTR_NAME_epsilon "epsilon" /* LayerNorm */
#define XDEV_ATTR_NAME_exclusive "exclusive" /* CumSum */
#define XDEV_ATTR_NAME_filter_sizes "filter_sizes" /* Conv2DBackpropFilter */
#define XDEV_ATTR_NAME_input_sizes "input_sizes" /* Conv2DBackpropInput */
#define XDEV_ATTR_NAME_keepdims "keepdims" /* All, Any, LogSumExp, Max, Mean, Min, Prod, Sum */
#define XDEV_ATTR_NAME_ksize "ksize" /* AvgPool, AvgPoolGrad, MaxPool, MaxPoolGrad */
#define XDEV_ATTR_NAME_limit "limit" /* Range */
#define XDEV_ATTR_NAME_maxval "maxval" /* RandomUniform */
#define XDEV_ATTR_NAME_minval "minval" /* RandomUniform */
#define XDEV_ATTR_NAME_multiples "multiples" /* Tile */
#define XDEV_ATTR_NAME_new_axis_mask "new_axis_mask" /* StridedSlice */
#define XDEV_ATTR_NAME_off_value "off_value" /* OneHot */
#define XDEV_ATTR_NAME_on_value "on_value" /* OneHot */
#define XDEV_ATTR_NAME_orig_input_shape "orig_input_shape" /* AvgPoolGrad */
#define XDEV_ATTR_NAME_padding "padding" /* AvgPool, AvgPoolGrad, Conv2D, Conv2DBackpropFilter, Conv2DBackpropInput, MaxPool, MaxPoolGrad */
#define XDEV_ATTR_NAME_paddings "paddings" /* PadV2 */
#define XDEV_ATTR_NAME_reverse "reverse" /* CumSum */
#define XDEV_ATTR_NAME_seed "seed" /* RandomUniform */
#define XDEV_ATTR_NAME_shrink_axis_mask "shrink_axis_mask" /* StridedSlice */
#define XDEV_ATTR_NAME_size "size" /* Slice */
#define XDEV_ATTR_NAME_start "start" /* Range */
#define XDEV_ATTR_NAME_strides "strides" /* AvgPool, AvgPoolGrad, Conv2D, Conv2DBackpropFilter, Conv2DBackpropInput, MaxPool, MaxPoolGrad, StridedSlice */
#define XDEV_ATTR_NAME_transpose_a "transpose_a" /* MatMul */
#define XDEV_ATTR_NAME_transpose_b "transpose_b" /* MatMul */
#define XDEV_ATTR_NAME_value "value" /* Fill */

#endif /* XDEV_OP_NAMES_H_ */
