"""``ember.nn.ops`` against ``keras.ops``: every function on a table of cases, checked
against numpy (or a numpy formula written here) and for the neural-network functions
against Keras itself; dtypes checked; refused arguments checked by their messages; Keras's
names and signatures checked against Keras 3.15's.

Every test runs on each test backend (``cpu`` and the strict GPU double, see conftest): the
inputs are made on the test's device and every result must be there too.

KERAS below holds Keras 3.15.1's own results (``keras.ops`` on its torch backend, CPU) for
the inputs named in ``_keras_case``: (shape, dtype, values).
"""

import ast
import inspect

import numpy as np
import pytest

import ember.core as em
from ember import tape
from ember.nn import ops

# --- the Keras side, as data -------------------------------------------------------------
# ``inspect.signature`` of every public name of keras 3.15.1's ``keras.ops`` (the functions
# of keras/src/ops/{numpy,nn,core,math,linalg,image}.py that keras/ops/__init__.py exports;
# "?" marks the submodules), then of ``keras.ops.image.resize`` and ``extract_patches``.
# A line starting with spaces continues the one before.
KERAS_3_15_SIGNATURES = """
abs (x)
absolute (x)
adaptive_average_pool (inputs, output_size, data_format=None)
adaptive_max_pool (inputs, output_size, data_format=None)
add (x1, x2)
all (x, axis=None, keepdims=False)
allclose (x1, x2, rtol=1e-05, atol=1e-08, equal_nan=False)
amax (x, axis=None, keepdims=False)
amin (x, axis=None, keepdims=False)
angle (x)
any (x, axis=None, keepdims=False)
append (x1, x2, axis=None)
arange (start, stop=None, step=None, dtype=None)
arccos (x)
arccosh (x)
arcsin (x)
arcsinh (x)
arctan (x)
arctan2 (x1, x2)
arctanh (x)
argmax (x, axis=None, keepdims=False)
argmin (x, axis=None, keepdims=False)
argpartition (x, kth, axis=-1)
argsort (x, axis=-1)
array (x, dtype=None)
array_split (x, indices_or_sections, axis=0)
associative_scan (f, elems, reverse=False, axis=0)
average (x, axis=None, weights=None)
average_pool (inputs, pool_size, strides=None, padding='valid', data_format=None)
bartlett (x)
batch_normalization (x, mean, variance, axis, offset=None, scale=None, epsilon=0.001)
binary_crossentropy (target, output, from_logits=False)
bincount (x, weights=None, minlength=0, sparse=False)
bitwise_and (x, y)
bitwise_invert (x)
bitwise_left_shift (x, y)
bitwise_not (x)
bitwise_or (x, y)
bitwise_right_shift (x, y)
bitwise_xor (x, y)
blackman (x)
broadcast_to (x, shape)
cast (x, dtype)
categorical_crossentropy (target, output, from_logits=False, axis=-1)
cbrt (x)
cdist (x, y)
ceil (x)
celu (x, alpha=1.0)
cholesky (x, upper=False)
cholesky_inverse (x, upper=False)
clip (x, x_min, x_max)
concatenate (xs, axis=0)
cond (pred, true_fn, false_fn)
conj (x)
conjugate (x)
conv (inputs, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1)
conv_transpose (inputs, kernel, strides=1, padding='valid', output_padding=None, data_format=None,
    dilation_rate=1)
convert_to_numpy (x)
convert_to_tensor (x, dtype=None, sparse=None, ragged=None)
copy (x)
corrcoef (x)
correlate (x1, x2, mode='valid')
cos (x)
cosh (x)
count_nonzero (x, axis=None)
cross (x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None)
ctc_decode (inputs, sequence_lengths, strategy='greedy', beam_width=100, top_paths=1,
    merge_repeated=True, mask_index=0)
ctc_loss (target, output, target_length, output_length, mask_index=0)
cumprod (x, axis=None, dtype=None)
cumsum (x, axis=None, dtype=None)
custom_gradient (f)
deg2rad (x)
depth_to_space (x, block_size, data_format='channels_last')
depthwise_conv (inputs, kernel, strides=1, padding='valid', data_format=None, dilation_rate=1)
det (x)
diag (x, k=0)
diagflat (x, k=0)
diagonal (x, offset=0, axis1=0, axis2=1)
diff (a, n=1, axis=-1)
digitize (x, bins)
divide (x1, x2)
divide_no_nan (x1, x2)
dot (x1, x2)
dot_product_attention (query, key, value, bias=None, mask=None, scale=None, is_causal=False,
    flash_attention=None, attn_logits_soft_cap=None)
dsplit (x, indices_or_sections)
dstack (xs)
dtype (x)
eig (x)
eigh (x)
einsum (subscripts, *operands, **kwargs)
elu (x, alpha=1.0)
empty (shape, dtype=None)
empty_like (x, dtype=None)
equal (x1, x2)
erf (x)
erfc (x)
erfinv (x)
exp (x)
exp2 (x)
expand_dims (x, axis)
expm1 (x)
extract_sequences (x, sequence_length, sequence_stride)
eye (N, M=None, k=0, dtype=None)
fabs (x)
fft (x)
fft2 (x)
flip (x, axis=None)
fliplr (x)
flipud (x)
floor (x)
floor_divide (x1, x2)
fmax (x1, x2)
fmin (x1, x2)
fmod (x1, x2)
fold (x, output_size, kernel_size, dilation=1, padding=0, stride=1)
fori_loop (lower, upper, body_fun, init_val)
full (shape, fill_value, dtype=None)
full_like (x, fill_value, dtype=None)
gcd (x1, x2)
gelu (x, approximate=True)
geomspace (start, stop, num=50, endpoint=True, dtype=None, axis=0)
get_item (x, key)
glu (x, axis=-1)
greater (x1, x2)
greater_equal (x1, x2)
hamming (x)
hanning (x)
hard_shrink (x, threshold=0.5)
hard_sigmoid (x)
hard_silu (x)
hard_swish (x)
hard_tanh (x)
heaviside (x1, x2)
histogram (x, bins=10, range=None)
hsplit (x, indices_or_sections)
hstack (xs)
hypot (x1, x2)
i0 (x)
identity (n, dtype=None)
ifft2 (x)
imag (x)
image ? <class 'module'>
in_top_k (targets, predictions, k)
inner (x1, x2)
inv (x)
irfft (x, fft_length=None)
is_tensor (x)
isclose (x1, x2, rtol=1e-05, atol=1e-08, equal_nan=False)
isfinite (x)
isin (x1, x2, assume_unique=False, invert=False)
isinf (x)
isnan (x)
isneginf (x)
isposinf (x)
isreal (x)
istft (x, sequence_length, sequence_stride, fft_length, length=None, window='hann', center=True)
jvp (fun, primals, tangents, has_aux=False)
kaiser (x, beta)
kron (x1, x2)
layer_normalization (x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs)
lcm (x1, x2)
ldexp (x1, x2)
leaky_relu (x, negative_slope=0.2)
left_shift (x, y)
less (x1, x2)
less_equal (x1, x2)
linalg ? <class 'module'>
linspace (start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0)
log (x)
log10 (x)
log1p (x)
log2 (x)
log_sigmoid (x)
log_softmax (x, axis=-1)
logaddexp (x1, x2)
logaddexp2 (x1, x2)
logdet (x)
logical_and (x1, x2)
logical_not (x)
logical_or (x1, x2)
logical_xor (x1, x2)
logspace (start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0)
logsumexp (x, axis=None, keepdims=False)
lstsq (a, b, rcond=None)
lu_factor (x)
map (f, xs)
matmul (x1, x2)
matrix_rank (x, tol=None)
max (x, axis=None, keepdims=False, initial=None)
max_pool (inputs, pool_size, strides=None, padding='valid', data_format=None)
maximum (x1, x2)
mean (x, axis=None, keepdims=False)
median (x, axis=None, keepdims=False)
meshgrid (*x, indexing='xy')
min (x, axis=None, keepdims=False, initial=None)
minimum (x1, x2)
mod (x1, x2)
moments (x, axes, keepdims=False, synchronized=False)
moveaxis (x, source, destination)
multi_hot (inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs)
multiply (x1, x2)
nan_to_num (x, nan=0.0, posinf=None, neginf=None)
nanargmax (x, axis=None, keepdims=False)
nanargmin (x, axis=None, keepdims=False)
nancumprod (x, axis=None, dtype=None)
nancumsum (x, axis=None, dtype=None)
nanmax (x, axis=None, keepdims=False)
nanmean (x, axis=None, keepdims=False)
nanmedian (x, axis=None, keepdims=False)
nanmin (x, axis=None, keepdims=False)
nanpercentile (x, q, axis=None, method='linear', keepdims=False)
nanprod (x, axis=None, keepdims=False)
nanquantile (x, q, axis=None, method='linear', keepdims=False)
nanstd (x, axis=None, keepdims=False)
nansum (x, axis=None, keepdims=False)
nanvar (x, axis=None, keepdims=False)
ndim (x)
negative (x)
nextafter (x1, x2)
nn ? <class 'module'>
nonzero (x)
norm (x, ord=None, axis=None, keepdims=False)
normalize (x, axis=-1, order=2, epsilon=None)
not_equal (x1, x2)
numpy ? <class 'module'>
one_hot (x, num_classes, axis=-1, dtype=None, sparse=False)
ones (shape, dtype=None)
ones_like (x, dtype=None)
outer (x1, x2)
pad (x, pad_width, mode='constant', constant_values=None)
percentile (x, q, axis=None, method='linear', keepdims=False)
pinv (x, rcond=None)
polar (abs_, angle)
power (x1, x2)
prod (x, axis=None, keepdims=False, dtype=None)
psnr (x1, x2, max_val)
ptp (x, axis=None, keepdims=False)
qr (x, mode='reduced')
quantile (x, q, axis=None, method='linear', keepdims=False)
rad2deg (x)
ravel (x)
real (x)
rearrange (tensor, pattern, **axes_lengths)
reciprocal (x)
relu (x)
relu6 (x)
repeat (x, repeats, axis=None)
reshape (x, newshape)
rfft (x, fft_length=None)
right_shift (x, y)
rms_normalization (x, scale=None, axis=-1, epsilon=None)
roll (x, shift, axis=None)
rot90 (array, k=1, axes=(0, 1))
round (x, decimals=0)
rsqrt (x)
saturate_cast (x, dtype)
scan (f, init, xs=None, length=None, reverse=False, unroll=1)
scatter (indices, values, shape)
scatter_update (inputs, indices, updates, reduction=None)
searchsorted (sorted_sequence, values, side='left')
segment_max (data, segment_ids, num_segments=None, sorted=False)
segment_min (data, segment_ids, num_segments=None, sorted=False)
segment_prod (data, segment_ids, num_segments=None, sorted=False)
segment_sum (data, segment_ids, num_segments=None, sorted=False)
select (condlist, choicelist, default=0)
selu (x)
separable_conv (inputs, depthwise_kernel, pointwise_kernel, strides=1, padding='valid',
    data_format=None, dilation_rate=1)
shape (x)
sigmoid (x)
sign (x)
signbit (x)
silu (x)
sin (x)
sinc (x)
sinh (x)
size (x)
slice (inputs, start_indices, shape)
slice_update (inputs, start_indices, updates)
slogdet (x)
soft_shrink (x, threshold=0.5)
softmax (x, axis=-1)
softplus (x)
softsign (x)
solve (a, b)
solve_triangular (a, b, lower=False)
sort (x, axis=-1)
space_to_depth (x, block_size, data_format='channels_last')
sparse_categorical_crossentropy (target, output, from_logits=False, axis=-1)
sparse_plus (x)
sparse_sigmoid (x)
sparsemax (x, axis=-1)
split (x, indices_or_sections, axis=0)
sqrt (x)
square (x)
squareplus (x, b=4)
squeeze (x, axis=None)
stack (x, axis=0)
std (x, axis=None, keepdims=False)
stft (x, sequence_length, sequence_stride, fft_length, window='hann', center=True)
stop_gradient (variable)
subtract (x1, x2)
sum (x, axis=None, keepdims=False)
svd (x, full_matrices=True, compute_uv=True)
swapaxes (x, axis1, axis2)
swish (x)
switch (index, branches, *operands)
take (x, indices, axis=None)
take_along_axis (x, indices, axis=None)
tan (x)
tanh (x)
tanh_shrink (x)
tensordot (x1, x2, axes=2)
threshold (x, threshold, default_value)
tile (x, repeats)
top_k (x, k, sorted=True)
trace (x, offset=0, axis1=0, axis2=1)
transpose (x, axes=None)
trapezoid (y, x=None, dx=1.0, axis=-1)
tri (N, M=None, k=0, dtype=None)
tril (x, k=0)
triu (x, k=0)
true_divide (x1, x2)
trunc (x)
unfold (x, kernel_size, dilation=1, padding=0, stride=1)
unique (x, sorted=True, return_index=False, return_inverse=False, return_counts=False, axis=None,
    size=None, fill_value=None)
unravel_index (indices, shape)
unstack (x, num=None, axis=0)
vander (x, N=None, increasing=False)
var (x, axis=None, keepdims=False)
vdot (x1, x2)
vectorize (pyfunc, *, excluded=None, signature=None)
vectorized_map (function, elements)
view (x, dtype=None)
view_as_complex (x)
view_as_real (x)
vsplit (x, indices_or_sections)
vstack (xs)
where (condition, x1=None, x2=None)
while_loop (cond, body, loop_vars, maximum_iterations=None)
zeros (shape, dtype=None)
zeros_like (x, dtype=None)
image.resize (images, size, interpolation='bilinear', antialias=False, crop_to_aspect_ratio=False,
    pad_to_aspect_ratio=False, fill_mode='constant', fill_value=0.0, data_format=None)
image.extract_patches (images, size, strides=None, dilation_rate=1, padding='valid', data_format=None)
"""


def _keras_signatures():
    text = KERAS_3_15_SIGNATURES.strip().replace("\n    ", " ")
    out = {}
    for line in text.splitlines():
        name, sig = line.split(" ", 1)
        out[name] = sig
    return out


KERAS_SIGNATURES = _keras_signatures()
KERAS_OPS_NAMES = sorted(n for n in KERAS_SIGNATURES if not n.startswith("image."))

KERAS = {
    "relu": ((7,), "float32", [0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 2.5]),
    "relu6": ((7,), "float32", [0.0, 0.0, 0.0, 0.0, 1.5, 3.0, 6.0]),
    "sigmoid": ((7,), "float32",
        [0.04742587357759476, 0.2689414322376251, 0.43782350420951843, 0.5, 0.622459352016449,
         0.7310585975646973, 0.9241418242454529]),
    "softplus": ((7,), "float32",
        [0.04858735203742981, 0.3132616877555847, 0.575939416885376, 0.6931471824645996,
         0.9740769863128662, 1.31326162815094, 2.578889846801758]),
    "softsign": ((7,), "float32",
        [-0.75, -0.5, -0.20000000298023224, 0.0, 0.3333333432674408, 0.5, 0.7142857313156128]),
    "silu": ((7,), "float32",
        [-0.14227761328220367, -0.2689414322376251, -0.10945587605237961, 0.0, 0.3112296760082245,
         0.7310585975646973, 2.310354471206665]),
    "swish": ((7,), "float32",
        [-0.14227761328220367, -0.2689414322376251, -0.10945587605237961, 0.0, 0.3112296760082245,
         0.7310585975646973, 2.310354471206665]),
    "log_sigmoid": ((7,), "float32",
        [-3.0485873222351074, -1.3132617473602295, -0.825939416885376, -0.6931471824645996,
         -0.4740769863128662, -0.3132616877555847, -0.07888973504304886]),
    "leaky_relu": ((7,), "float32",
        [-0.6000000238418579, -0.20000000298023224, -0.05000000074505806, 0.0, 0.5, 1.0, 2.5]),
    "hard_sigmoid": ((7,), "float32",
        [0.0, 0.3333333432674408, 0.4583333432674408, 0.5, 0.5833333134651184, 0.6666666865348816,
         0.9166666865348816]),
    "hard_silu": ((7,), "float32",
        [-0.0, -0.3333333432674408, -0.1145833358168602, 0.0, 0.2916666567325592,
         0.6666666865348816, 2.2916667461395264]),
    "hard_swish": ((7,), "float32",
        [-0.0, -0.3333333432674408, -0.1145833358168602, 0.0, 0.2916666567325592,
         0.6666666865348816, 2.2916667461395264]),
    "elu": ((7,), "float32",
        [-0.47510647773742676, -0.31606027483940125, -0.11059960722923279, 0.0, 0.5, 1.0, 2.5]),
    "selu": ((7,), "float32",
        [-1.6705687046051025, -1.1113307476043701, -0.38889017701148987, 0.0, 0.5253505110740662,
         1.0507010221481323, 2.6267526149749756]),
    "gelu": ((7,), "float32",
        [-0.0036374330520629883, -0.15880799293518066, -0.10032464563846588, 0.0,
         0.3457140028476715, 0.8411920070648193, 2.4849157333374023]),
    "gelu_exact": ((7,), "float32",
        [-0.004050225019454956, -0.15865525603294373, -0.10032341629266739, 0.0,
         0.3457312285900116, 0.8413447141647339, 2.48447585105896]),
    "celu": ((7,), "float32",
        [-1.5537396669387817, -0.7869386672973633, -0.2350061982870102, 0.0, 0.5, 1.0, 2.5]),
    "glu": ((2, 2), "float32",
        [0.44039851427078247, -0.5, 0.5663110017776489, 0.23814353346824646]),
    "tanh_shrink": ((7,), "float32",
        [-2.0049452781677246, -0.23840582370758057, -0.005081340670585632, 0.0,
         0.037882834672927856, 0.23840582370758057, 1.5133857727050781]),
    "hard_tanh": ((7,), "float32", [-1.0, -1.0, -0.25, 0.0, 0.5, 1.0, 1.0]),
    "hard_shrink": ((7,), "float32", [-3.0, -1.0, 0.0, 0.0, 0.0, 1.0, 2.5]),
    "soft_shrink": ((7,), "float32", [-2.5, -0.5, -0.0, 0.0, 0.0, 0.5, 2.0]),
    "squareplus": ((7,), "float32",
        [0.30277562141418457, 0.6180340051651001, 0.8827822208404541, 1.0, 1.2807763814926147,
         1.6180340051651, 2.850780963897705]),
    "sparse_plus": ((7,), "float32", [0.0, 0.0, 0.140625, 0.25, 0.5625, 1.0, 2.5]),
    "sparse_sigmoid": ((7,), "float32", [0.0, 0.0, 0.375, 0.5, 0.75, 1.0, 1.0]),
    "threshold": ((7,), "float32", [-9.0, -9.0, -9.0, -9.0, 0.5, 1.0, 2.5]),
    "softmax": ((2, 4), "float32",
        [0.15844470262527466, 0.03535379096865654, 0.7100998759269714, 0.09610156714916229,
         0.1693902164697647, 0.04853110760450363, 0.022924473509192467, 0.7591542601585388]),
    "softmax0": ((2, 4), "float32",
        [0.2689414322376251, 0.22270014882087708, 0.9241418242454529, 0.04742587357759476,
         0.7310585975646973, 0.7772998809814453, 0.07585817575454712, 0.9525741338729858]),
    "log_softmax": ((2, 4), "float32",
        [-1.842349648475647, -3.3423495292663574, -0.342349648475647, -2.3423495292663574,
         -1.775550365447998, -3.025550365447998, -3.775550365447998, -0.27555030584335327]),
    "normalize": ((2, 4), "float32",
        [0.2182178795337677, -0.4364357590675354, 0.8728715181350708, 0.0, 0.4411287307739258,
         0.0735214576125145, -0.147042915225029, 0.8822574615478516]),
    "normalize1": ((2, 4), "float32",
        [0.25, -0.800000011920929, 0.800000011920929, 0.0, 0.75, 0.20000000298023224,
         -0.20000000298023224, 1.0]),
    "cce": ((2,), "float32", [0.5108255743980408, 1.406705379486084]),
    "cce_logits": ((2,), "float32", [3.3423495292663574, 2.775550365447998]),
    "scce": ((2,), "float32", [0.5108255743980408, 1.6094379425048828]),
    "scce_logits": ((2,), "float32", [3.3423495292663574, 0.27555030584335327]),
    "bce": ((7,), "float32",
        [0.10536051541566849, 0.10536054521799088, 1.1920928955078125e-07, 1.000000082740371e-07,
         0.6931471824645996, 0.3566749691963196, 0.2231435626745224]),
    "bce_logits": ((7,), "float32",
        [0.04858732223510742, 1.3132617473602295, 0.825939416885376, 0.6931471824645996,
         0.7240769863128662, 0.3132616877555847, 2.578889846801758]),
    "moments_mean": ((2,), "float32", [0.375, 1.0625]),
    "moments_var": ((2,), "float32", [1.171875, 1.76171875]),
    "batch_norm": ((2, 4), "float32",
        [0.10000000149011612, -2.0207903385162354, 2.220790147781372, -0.6069300770759583,
         2.01920223236084, -3.2788031101226807, -6.457606315612793, 8.376808166503906]),
    "conv_same_s2": ((1, 2, 3, 3), "float32",
        [3.8239998817443848, 2.215900182723999, 3.2097997665405273, 4.832799911499023,
         0.8288998007774353, 1.8489998579025269, 0.3073999881744385, -0.6693998575210571,
         -0.352199912071228, 0.18919986486434937, -0.7390000820159912, -1.273400068283081,
         -2.2955000400543213, 0.09699994325637817, 1.3004000186920166, 1.3471999168395996,
         0.5181000828742981, -0.652400016784668]),
    "conv_groups": ((1, 2, 2, 4), "float32",
        [-0.34769999980926514, 1.3302000761032104, -0.20340000092983246, -0.1444000005722046,
         0.08879997581243515, 0.8500000834465027, 1.4850000143051147, 1.0364000797271729,
         -0.6791999936103821, 2.2558000087738037, 2.154100179672241, 1.665600061416626,
         -0.6536999940872192, 1.622399926185608, -1.4601000547409058, -1.3028000593185425]),
    "conv1d_same": ((1, 3, 2), "float32",
        [1.0848000049591064, 4.076399803161621, -0.9643000960350037, -3.4797000885009766,
         -1.9963001012802124, 0.38590002059936523]),
    "depthwise": ((1, 2, 3, 4), "float32",
        [0.928399920463562, -1.543299913406372, 0.5590000152587891, 0.038700003176927567,
         -1.2935999631881714, -1.373499870300293, 0.6174999475479126, 1.5377000570297241,
         -0.24059998989105225, -1.1596999168395996, 0.7015999555587769, -0.5819000005722046,
         1.1405000686645508, 1.7856000661849976, -1.003499984741211, 0.01760004088282585,
         1.6445000171661377, 1.3352999687194824, 0.16009999811649323, -1.4753999710083008,
         -0.23979999125003815, -1.30840003490448, 1.3315000534057617, -2.0369999408721924]),
    "attn_causal": ((1, 2, 2, 3), "float32",
        [0.27000001072883606, 0.36000001430511475, 1.3200000524520874, 0.27000001072883606,
         0.36000001430511475, 1.3200000524520874, 0.16420026123523712, 0.6169422268867493,
         1.3502285480499268, 0.15565700829029083, 0.6376901268959045, 1.3526694774627686]),
    "attn_bias": ((1, 2, 2, 3), "float32",
        [0.5782819986343384, -0.623242974281311, 1.2957870960235596, 0.6749373078346252,
         -0.9097440838813782, 1.2822667360305786, 0.3943118453025818, -0.04266132414340973,
         1.3119186162948608, 0.4062958359718323, -0.08193464577198029, 1.3112635612487793]),
    "resize_bilinear": ((1, 3, 2, 1), "float32",
        [2.927964925765991, 8.86768913269043, 24.54281997680664, 35.98524475097656,
         57.98105239868164, 73.02533721923828]),
    "resize_nearest_up": ((1, 3, 4, 1), "float32",
        [0.0, 1.0, 1.0, 2.8284270763397217, 11.180339813232422, 14.696938514709473,
         14.696938514709473, 18.5202579498291, 11.180339813232422, 14.696938514709473,
         14.696938514709473, 18.5202579498291]),
    "resize_aa": ((1, 2, 2, 1), "float32",
        [12.121618270874023, 18.74297523498535, 45.243629455566406, 56.1236572265625]),
    "resize_crop": ((1, 2, 2, 1), "float32",
        [6.7193193435668945, 12.29306411743164, 47.55010223388672, 58.725425720214844]),
    "resize_pad": ((2, 2, 1), "float32",
        [7.2838945388793945, 14.808838844299316, 48.89576721191406, 63.11517333984375]),
    "resize_uint8": ((3, 2, 1), "uint8", [64.0, 69.0, 70.0, 129.0, 76.0, 188.0]),
}

# --- inputs ------------------------------------------------------------------------------
F = np.array([[1.5, -2.5, 3.0], [4.0, 0.5, -6.25]], np.float32)
G = np.array([[0.5, 2.0, -1.0], [3.0, -0.5, 2.5]], np.float32)
I = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
BOOL = np.array([True, False, True])
V = np.array([0.25, -0.5, 0.75], np.float32)
P = np.array([[0.2, 0.7, 0.1], [0.5, 0.1, 0.4]], np.float32)  # positive
X = np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 1.0, 2.5], np.float32)  # the activations' input
M = np.array([[0.5, -1.0, 2.0, 0.0], [1.5, 0.25, -0.5, 3.0]], np.float32)
T3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 4 - 2
R = np.random.default_rng(0)


class Raw:
    """An argument given as it is (a numpy array or list, not made a tensor first)."""

    def __init__(self, value):
        self.value = value


def _to_em(a):
    if isinstance(a, Raw):
        return a.value
    if isinstance(a, np.ndarray):
        return em.constant(a)
    if isinstance(a, (list, tuple)) and a and all(isinstance(v, np.ndarray) for v in a):
        return type(a)(em.constant(v) for v in a)
    return a


def _to_np(a):
    return a.value if isinstance(a, Raw) else a


class Case:
    """``ops.<name>(*args, **kwargs)`` should give ``want`` (a numpy function of the same
    arguments, or an array) with dtype ``dt`` (a tuple: one per output)."""

    def __init__(self, name, *args, want, dt=None, id="", atol=1e-5, rtol=1e-5, **kwargs):
        self.name, self.args, self.kwargs, self.want, self.dt = name, args, kwargs, want, dt
        self.id, self.atol, self.rtol = f"{name}-{id}" if id else name, atol, rtol


def _keras_case(name, key, *args, **kwargs):
    shape, dtype, values = KERAS[key]
    return Case(name, *args, want=np.array(values).reshape(shape), dt=dtype, id=key,
                atol=2e-5, **kwargs)


def _np_dot_attention(q, k, v, bias=None, mask=None, scale=None, causal=False):
    logits = np.einsum("btnh,bsnh->bnts", q, k) * (1 / np.sqrt(q.shape[-1]) if scale is None
                                                   else scale)
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep &= mask
    if causal:
        keep &= np.tril(np.ones(logits.shape[-2:], bool))
    logits = np.where(keep, logits, -0.7 * 3.38953e38)
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return np.einsum("bnts,bsnh->btnh", e / e.sum(-1, keepdims=True), v)


def _np_conv2d(x, w, stride=(1, 1), pads=((0, 0), (0, 0)), dil=(1, 1)):
    x = np.pad(x, ((0, 0),) + tuple(pads) + ((0, 0),))
    kh, kw = w.shape[:2]
    oh = (x.shape[1] - (kh - 1) * dil[0] - 1) // stride[0] + 1
    ow = (x.shape[2] - (kw - 1) * dil[1] - 1) // stride[1] + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, i * dil[0]: i * dil[0] + stride[0] * (oh - 1) + 1: stride[0],
                      j * dil[1]: j * dil[1] + stride[1] * (ow - 1) + 1: stride[1], :]
            out += patch @ w[i, j]
    return out


def _np_patches(x, k, s, d=(1, 1), nan_mean=False):
    n, h, w, c = x.shape
    oh, ow = (h - (k[0] - 1) * d[0] - 1) // s[0] + 1, (w - (k[1] - 1) * d[1] - 1) // s[1] + 1
    out = np.zeros((n, oh, ow, k[0], k[1], c), x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, i, j] = x[:, i * s[0]: i * s[0] + (k[0] - 1) * d[0] + 1: d[0],
                             j * s[1]: j * s[1] + (k[1] - 1) * d[1] + 1: d[1]]
    if nan_mean:  # the mean of each window's numbers (NaN marks padding)
        return np.nanmean(out, axis=(3, 4))
    return out.reshape(n, oh, ow, -1)


def _np_max_pool(x, k, s):
    n, h, w, c = x.shape
    oh, ow = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
    return np.array([[[x[b, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]].max((0, 1))
                       for j in range(ow)] for i in range(oh)] for b in range(n)])


IMG = np.round(R.standard_normal((2, 5, 6, 3)), 2).astype(np.float32)
KER = np.round(R.standard_normal((3, 2, 3, 4)), 2).astype(np.float32)
SEQ = np.round(R.standard_normal((2, 7, 3)), 2).astype(np.float32)
Q = R.standard_normal((2, 3, 4, 5)).astype(np.float32)
KV = R.standard_normal((2, 4, 2, 5)).astype(np.float32)
MASK = R.random((2, 1, 3, 4)) > 0.3
# the inputs of KERAS's cases (the script that made them used these, rounded as here)
KR = np.random.default_rng(0)
K_IMG = np.round(KR.standard_normal((1, 4, 5, 2)), 2).astype(np.float32)
K_KER = np.round(KR.standard_normal((2, 2, 2, 3)), 2).astype(np.float32)
K_KG = np.round(KR.standard_normal((2, 1, 1, 4)), 2).astype(np.float32)
K_SEQ = np.round(KR.standard_normal((1, 5, 2)), 2).astype(np.float32)
K_K1 = np.round(KR.standard_normal((3, 2, 2)), 2).astype(np.float32)
K_DK = np.round(KR.standard_normal((2, 2, 2, 2)), 2).astype(np.float32)
K_Q = np.round(KR.standard_normal((1, 2, 2, 3)), 2).astype(np.float32)
K_K = np.round(KR.standard_normal((1, 3, 1, 3)), 2).astype(np.float32)
K_V = np.round(KR.standard_normal((1, 3, 1, 3)), 2).astype(np.float32)
SMALL = np.arange(20, dtype=np.float32).reshape(1, 4, 5, 1) ** 1.5
U8 = np.array([[[0], [255], [7]], [[100], [3], [250]]], np.uint8)
T_CCE = np.array([[0., 1., 0., 0.], [0.5, 0., 0.5, 0.]], np.float32)
P_CCE = np.array([[0.1, 0.6, 0.2, 0.1], [0.3, 0.3, 0.2, 0.2]], np.float32)
T_BCE = np.array([0., 1., 1., 0., 0.5, 1., 0.], np.float32)
P_BCE = np.array([0.1, 0.9, 1.0, 0.0, 0.5, 0.7, 0.2], np.float32)


def _split_at(x, idx, axis=0):
    return np.split(x, idx, axis)


# --- the table ---------------------------------------------------------------------------
_ELEMENTWISE_FLOAT = {  # name -> numpy function, on F (and on the int32 I: float32 out)
    "abs": np.abs, "absolute": np.abs, "negative": np.negative, "sign": np.sign,
    "square": np.square, "exp": np.exp, "expm1": np.expm1, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "ceil": np.ceil,
    "floor": np.floor, "round": np.round, "reciprocal": np.reciprocal, "isnan": np.isnan,
    "isinf": np.isinf, "isfinite": np.isfinite, "logical_not": np.logical_not,
    "arctan": np.arctan, "arcsinh": np.arcsinh, "fabs": np.fabs, "trunc": np.trunc,
    "deg2rad": np.deg2rad, "rad2deg": np.rad2deg, "exp2": np.exp2, "copy": np.copy,
    "erf": None,
}
_ON_POSITIVE = {"sqrt": np.sqrt, "log": np.log, "log1p": np.log1p, "log2": np.log2,
                "log10": np.log10, "rsqrt": lambda a: 1 / np.sqrt(a), "arcsin": np.arcsin,
                "arccos": np.arccos, "arctanh": np.arctanh}
_BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
           "divide": np.divide, "true_divide": np.true_divide, "maximum": np.maximum,
           "minimum": np.minimum, "power": np.power, "mod": np.mod,
           "floor_divide": np.floor_divide, "equal": np.equal, "not_equal": np.not_equal,
           "greater": np.greater, "greater_equal": np.greater_equal, "less": np.less,
           "less_equal": np.less_equal, "logical_and": np.logical_and,
           "logical_or": np.logical_or, "logical_xor": np.logical_xor,
           "arctan2": np.arctan2, "logaddexp": np.logaddexp, "hypot": np.hypot}
_BOOL_OUT = {"isnan", "isinf", "isfinite", "logical_not", "equal", "not_equal", "greater",
             "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_xor"}


def _erf(a):
    import math
    return np.vectorize(math.erf)(a.astype(np.float64)).astype(np.float32)


def _elementwise_cases():
    out = []
    for name, f in _ELEMENTWISE_FLOAT.items():
        f = f or _erf
        dt = "bool" if name in _BOOL_OUT else "float32"
        out.append(Case(name, F, want=f, dt=dt, id="f32"))
        int_dt = dt if name in _BOOL_OUT else "int32" if name in (
            "abs", "absolute", "negative", "sign", "square", "round", "copy", "trunc") \
            else "float32"
        out.append(Case(name, I, want=lambda a, f=f: f(a.astype(np.float64)), dt=int_dt,
                        id="int32"))
    for name, f in _ON_POSITIVE.items():
        out.append(Case(name, P, want=f, dt="float32", id="f32"))
    for name, f in _BINARY.items():
        dt = "bool" if name in _BOOL_OUT else "float32"
        if name == "power":
            out.append(Case(name, P, G, want=f, dt=dt, id="f32"))
        else:
            out.append(Case(name, F, G, want=f, dt=dt, id="f32"))
        out.append(Case(name, F, 2, want=lambda a, b, f=f: f(a, np.float32(b)), dt=dt,
                        id="weak_int"))
    out += [
        Case("add", I, 2, want=np.add, dt="int32", id="int_weak_int"),
        Case("add", I, 1.5, want=lambda a, b: a + np.float32(b), dt="float32",
             id="int_weak_float"),
        Case("add", Raw([1.0, 2.0]), Raw(np.float32(1)), want=np.array([2.0, 3.0]),
             dt="float32", id="python_lists"),
        Case("divide", I, I, want=lambda a, b: a / b, dt="float32", id="int_int"),
        Case("floor_divide", I, 4, want=np.floor_divide, dt="int32", id="int"),
        Case("mod", I, 4, want=np.mod, dt="int32", id="int"),
        Case("power", I, 2, want=np.power, dt="int32", id="int"),
        Case("divide_no_nan", F, np.array([[2.0, 0.0, 1.0], [0.0, 4.0, -1.0]], np.float32),
             want=lambda a, b: np.where(b == 0, 0, a / np.where(b == 0, 1, b)),
             dt="float32"),
        Case("divide_no_nan", I, np.zeros_like(I), want=np.zeros(I.shape), dt="float32",
             id="int_zero"),
        Case("round", F * 1.37, 1, want=lambda a, d: np.round(a, d), dt="float32",
             id="decimals"),
        Case("clip", F, -1.0, 2.0, want=np.clip, dt="float32"),
        Case("clip", I, 0, 2.5, want=lambda a, lo, hi: np.clip(a, lo, hi), dt="float32",
             id="int_float_bounds"),
        Case("clip", BOOL, 0, 1, want=lambda a, lo, hi: a.astype(np.int32), dt="int32",
             id="bool"),
        Case("isposinf", np.array([np.inf, -np.inf, 1.0, np.nan], np.float32),
             want=np.isposinf, dt="bool"),
        Case("isneginf", np.array([np.inf, -np.inf, 1.0, np.nan], np.float32),
             want=np.isneginf, dt="bool"),
        Case("nan_to_num", np.array([np.inf, -np.inf, 1.0, np.nan], np.float32),
             want=np.nan_to_num, dt="float32"),
        Case("nan_to_num", np.array([np.inf, -np.inf, np.nan], np.float32), nan=1.0,
             posinf=9.0, neginf=-9.0, want=lambda a, **kw: np.nan_to_num(a, **kw),
             dt="float32", id="values"),
        Case("arccosh", P + 1, want=np.arccosh, dt="float32"),
        Case("bitwise_and", I, 6, want=np.bitwise_and, dt="int32"),
        Case("bitwise_or", I, 6, want=np.bitwise_or, dt="int32"),
        Case("bitwise_xor", I, 6, want=np.bitwise_xor, dt="int32"),
        Case("bitwise_invert", I, want=np.invert, dt="int32"),
        Case("bitwise_not", I, want=np.invert, dt="int32"),
        Case("left_shift", I, 2, want=np.left_shift, dt="int32"),
        Case("right_shift", I, 1, want=np.right_shift, dt="int32"),
        Case("bitwise_left_shift", I, 2, want=np.left_shift, dt="int32"),
        Case("bitwise_right_shift", I, 1, want=np.right_shift, dt="int32"),
        Case("where", BOOL, V, -V, want=np.where, dt="float32"),
        Case("where", BOOL, 1, 0, want=lambda c, a, b: np.where(c, a, b), dt="int32",
             id="python_scalars"),
        Case("where", BOOL, 1.0, np.array([1, 2, 3], np.int32),
             want=lambda c, a, b: np.where(c, a, b), dt="float32", id="promotes"),
        Case("where", I > 0, want=lambda c: np.nonzero(c), dt=("int32", "int32"),
             id="one_argument"),
        Case("nonzero", I > 0, want=np.nonzero, dt=("int32", "int32")),
    ]
    return out


def _reduction_cases():
    out = []
    for name, f in (("sum", np.sum), ("prod", np.prod), ("mean", np.mean), ("var", np.var),
                    ("std", np.std), ("max", np.max), ("min", np.min), ("amax", np.amax),
                    ("amin", np.amin), ("ptp", np.ptp)):
        out.append(Case(name, F, want=f, dt="float32", id="all"))
        out.append(Case(name, T3, axis=(0, 2), keepdims=True,
                        want=lambda a, f=f, **kw: f(a, **kw), dt="float32", id="axes"))
    for name, f in (("all", np.all), ("any", np.any)):
        out.append(Case(name, F > 0, axis=1, want=lambda a, f=f, **kw: f(a, **kw),
                        dt="bool"))
        out.append(Case(name, F, want=lambda a, f=f: f(a != 0), dt="bool", id="float"))
    out += [
        Case("sum", I, want=np.sum, dt="int32", id="int32"),
        Case("sum", BOOL, want=lambda a: np.sum(a), dt="int32", id="bool"),
        Case("sum", I.astype(np.int8), want=lambda a: np.sum(a), dt="int32", id="int8"),
        Case("sum", I.astype(np.uint8), want=lambda a: np.sum(a), dt="uint32", id="uint8"),
        Case("prod", BOOL, want=lambda a: np.prod(a), dt="int32", id="bool"),
        Case("prod", I, dtype="float32", want=lambda a, **kw: np.prod(a), dt="float32",
             id="dtype"),
        Case("mean", I, axis=0, want=lambda a, axis: np.mean(a, axis), dt="float32",
             id="int32"),
        Case("var", I, want=np.var, dt="float32", id="int32"),
        Case("std", I, want=np.std, dt="float32", id="int32"),
        Case("max", F, initial=10.0, want=lambda a, initial: np.max(a, initial=initial),
             dt="float32", id="initial"),
        Case("min", F, axis=1, initial=-3.0, want=lambda a, **kw: np.min(a, **kw),
             dt="float32", id="initial"),
        Case("max", I, want=np.max, dt="int32", id="int32"),
        Case("argmax", F, want=np.argmax, dt="int32", id="flattens"),
        Case("argmax", F, axis=1, keepdims=True,
             want=lambda a, **kw: np.argmax(a, **kw), dt="int32", id="keepdims"),
        Case("argmax", F, axis=None, keepdims=True,
             want=lambda a, **kw: np.argmax(a, **kw), dt="int32", id="none_keepdims"),
        Case("argmin", F, want=np.argmin, dt="int32", id="flattens"),
        Case("argmin", T3, axis=-2, want=lambda a, axis: np.argmin(a, axis), dt="int32",
             id="axis"),
        Case("count_nonzero", I - 1, want=lambda a: np.count_nonzero(a), dt="int32"),
        Case("count_nonzero", I - 1, axis=1, want=lambda a, axis: np.count_nonzero(a, axis),
             dt="int32", id="axis"),
        Case("cumsum", I, want=np.cumsum, dt="int32", id="flattens"),
        Case("cumsum", F, axis=1, want=lambda a, axis: np.cumsum(a, axis), dt="float32",
             id="axis"),
        Case("cumsum", BOOL, want=lambda a: np.cumsum(a), dt="int32", id="bool"),
        Case("cumsum", I, axis=0, dtype="float32", dt="float32", id="dtype",
             want=lambda a, **kw: np.cumsum(a, axis=0)),
        Case("cumprod", F, axis=1, want=lambda a, axis: np.cumprod(a, axis), dt="float32"),
        Case("cumprod", np.arange(1, 12, dtype=np.float32) / 4,
             want=np.cumprod, dt="float32", id="long", rtol=1e-5),
        Case("cumprod", I, want=np.cumprod, dt="int32", id="int_flattens"),
        Case("average", F, want=np.average, dt="float32"),
        Case("average", I, want=np.average, dt="float32", id="int32"),
        Case("average", F, axis=1, weights=np.array([1.0, 2.0, 3.0], np.float32),
             want=lambda a, **kw: np.average(a, **kw), dt="float32", id="weights_1d"),
        Case("average", F, axis=0, weights=P, want=lambda a, **kw: np.average(a, **kw),
             dt="float32", id="weights_full"),
        Case("logsumexp", F, axis=1, want=lambda a, axis: np.log(np.exp(a).sum(axis)),
             dt="float32"),
        Case("logsumexp", F * 100, want=lambda a: a.max() + np.log(np.exp(a - a.max()).sum()),
             dt="float32", id="large", rtol=1e-5),
    ]
    return out


def _creation_and_product_cases():
    return [
        Case("arange", 5, want=np.arange(5), dt="int32", id="stop"),
        Case("arange", 2, 9, 3, want=np.arange(2, 9, 3), dt="int32", id="step"),
        Case("arange", 0.0, 1, 0.25, want=np.arange(0, 1, 0.25), dt="float32", id="float"),
        Case("arange", 4, dtype="float32", want=np.arange(4.0), dt="float32", id="dtype"),
        Case("linspace", 0, 1, 5, want=np.linspace(0, 1, 5), dt="float32"),
        Case("linspace", -1.0, 2.0, 4, endpoint=False, want=np.linspace(-1, 2, 4, endpoint=False),
             dt="float32", id="no_endpoint"),
        Case("linspace", 0, 10, 4, dtype="int32", want=np.array([0, 3, 6, 10]), dt="int32",
             id="int"),
        Case("linspace", V, 2 * V, 3, axis=1, want=lambda a, b, n, axis: np.linspace(a, b, n,
                                                                                  axis=axis),
             dt="float32", id="arrays_axis"),
        Case("zeros", (2, 3), want=np.zeros((2, 3)), dt="float32"),
        Case("ones", 3, dtype="int32", want=np.ones(3), dt="int32"),
        Case("empty", (2,), want=np.zeros(2), dt="float32"),
        Case("empty_like", I, want=np.zeros(I.shape), dt="int32"),
        Case("full", (2, 2), 3, want=np.full((2, 2), 3.0), dt="float32"),
        Case("full", (2, 3), V, dtype="float16", want=np.broadcast_to(V, (2, 3)), dt="float16",
             id="tensor_value", atol=1e-3),
        Case("full_like", I, 2.5, want=np.full(I.shape, 2), dt="int32"),
        Case("full_like", I, 2.5, dtype="float32", want=np.full(I.shape, 2.5), dt="float32",
             id="dtype"),
        Case("zeros_like", F, want=np.zeros_like, dt="float32"),
        Case("ones_like", I, dtype="float32", want=np.ones(I.shape), dt="float32"),
        Case("eye", 3, want=np.eye(3), dt="float32"),
        Case("eye", 3, 4, k=1, want=np.eye(3, 4, k=1), dt="float32", id="k"),
        Case("eye", 4, 2, k=-1, dtype="int32", want=np.eye(4, 2, k=-1), dt="int32",
             id="below"),
        Case("identity", 2, want=np.identity(2), dt="float32"),
        Case("tri", 3, 4, k=1, want=np.tri(3, 4, k=1), dt="float32"),
        Case("tril", T3, want=np.tril, dt="float32"),
        Case("tril", T3, k=-1, want=lambda a, k: np.tril(a, k), dt="float32", id="k"),
        Case("triu", T3, k=1, want=lambda a, k: np.triu(a, k), dt="float32"),
        Case("array", Raw([1, 2]), want=np.array([1, 2]), dt="int32"),
        Case("array", Raw([1, 2]), dtype="float32", want=np.array([1.0, 2.0]), dt="float32",
             id="dtype"),
        Case("matmul", F, G.T, want=np.matmul, dt="float32"),
        Case("matmul", V, G.T, want=np.matmul, dt="float32", id="vector"),
        Case("matmul", T3, T3.transpose(0, 2, 1), want=np.matmul, dt="float32", id="batch"),
        Case("dot", V, V, want=np.dot, dt="float32", id="1d_1d"),
        Case("dot", F, V, want=np.dot, dt="float32", id="2d_1d"),
        Case("dot", V, F.T, want=np.dot, dt="float32", id="1d_2d"),
        Case("dot", F, G.T, want=np.dot, dt="float32", id="2d_2d"),
        Case("dot", T3, T3[0].T, want=np.dot, dt="float32", id="3d_2d"),
        Case("dot", T3, T3.transpose(1, 2, 0), want=np.dot, dt="float32", id="3d_3d"),
        Case("dot", F, 2.0, want=lambda a, b: a * np.float32(b), dt="float32", id="scalar"),
        Case("dot", I, I.T, want=np.dot, dt="int32", id="int"),
        Case("tensordot", T3, T3, axes=([1, 2], [1, 2]),
             want=lambda a, b, axes: np.tensordot(a, b, axes), dt="float32"),
        Case("tensordot", F, G, axes=(0, 0), want=lambda a, b, axes: np.tensordot(a, b, axes),
             dt="float32", id="int_pair"),
        Case("tensordot", F, G.T, axes=1, want=lambda a, b, axes: np.tensordot(a, b, axes),
             dt="float32", id="int"),
        Case("outer", V, np.array([1.0, 2.0], np.float32), want=np.outer, dt="float32"),
        Case("inner", F, G, want=np.inner, dt="float32"),
        Case("vdot", F, G, want=np.vdot, dt="float32"),
        Case("einsum", "ij,kj->ik", F, G, want=np.einsum, dt="float32"),
        Case("einsum", "ij,jk", F, G.T, want=np.einsum, dt="float32", id="implicit"),
        Case("einsum", "...j,kj", T3, np.ones((2, 4), np.float32), want=np.einsum,
             dt="float32", id="implicit_ellipsis"),
        Case("trace", T3, offset=1, axis1=1, axis2=2,
             want=lambda a, **kw: np.trace(a, **kw), dt="float32"),
    ]


def _shape_cases():
    x10 = np.arange(10, dtype=np.float32)
    return [
        Case("reshape", F, (3, -1), want=np.reshape, dt="float32"),
        Case("ravel", F, want=np.ravel, dt="float32"),
        Case("transpose", T3, want=np.transpose, dt="float32"),
        Case("transpose", T3, axes=(1, 0, 2), want=lambda a, axes: np.transpose(a, axes),
             dt="float32", id="axes"),
        Case("swapaxes", T3, 0, 2, want=np.swapaxes, dt="float32"),
        Case("moveaxis", T3, 0, -1, want=np.moveaxis, dt="float32"),
        Case("moveaxis", T3, [0, 1], [-1, -2], want=np.moveaxis, dt="float32", id="lists"),
        Case("expand_dims", F, 1, want=np.expand_dims, dt="float32"),
        Case("expand_dims", F, (0, -1), want=np.expand_dims, dt="float32", id="tuple"),
        Case("squeeze", np.zeros((1, 3, 1), np.float32), want=np.squeeze, dt="float32"),
        Case("squeeze", np.zeros((1, 3, 1), np.float32), axis=-1,
             want=lambda a, axis: np.squeeze(a, axis), dt="float32", id="axis"),
        Case("broadcast_to", V, (2, 3), want=np.broadcast_to, dt="float32"),
        Case("flip", T3, want=np.flip, dt="float32"),
        Case("flip", T3, axis=(0, 2), want=lambda a, axis: np.flip(a, axis), dt="float32",
             id="axes"),
        Case("flipud", F, want=np.flipud, dt="float32"),
        Case("fliplr", F, want=np.fliplr, dt="float32"),
        Case("roll", T3, 2, axis=1, want=lambda a, s, axis: np.roll(a, s, axis), dt="float32"),
        Case("roll", T3, -5, want=np.roll, dt="float32", id="flat"),
        Case("concatenate", [F, G], want=np.concatenate, dt="float32"),
        Case("concatenate", [F, G], axis=None, want=lambda xs, axis: np.concatenate(xs, axis),
             dt="float32", id="flatten"),
        Case("concatenate", [I, F], axis=1, want=lambda xs, axis: np.concatenate(xs, axis),
             dt="float32", id="promotes"),
        Case("stack", [F, G], axis=1, want=lambda xs, axis: np.stack(xs, axis), dt="float32"),
        Case("hstack", [V, V], want=np.hstack, dt="float32", id="1d"),
        Case("hstack", [F, G], want=np.hstack, dt="float32", id="2d"),
        Case("vstack", [V, V], want=np.vstack, dt="float32"),
        Case("tile", V, (2, 2), want=np.tile, dt="float32"),
        Case("tile", F, 2, want=np.tile, dt="float32", id="int"),
        Case("repeat", F, 2, want=np.repeat, dt="float32", id="flattens"),
        Case("repeat", F, 3, axis=1, want=lambda a, r, axis: np.repeat(a, r, axis),
             dt="float32", id="axis"),
        Case("repeat", F, [1, 3], axis=0, want=lambda a, r, axis: np.repeat(a, r, axis),
             dt="float32", id="per_element"),
        Case("split", x10, 2, want=np.split, dt=("float32",) * 2, id="sections"),
        Case("split", x10, [3, 7], want=_split_at, dt=("float32",) * 3, id="indices"),
        Case("split", F, [1], axis=1, want=lambda a, i, axis: np.split(a, i, axis),
             dt=("float32",) * 2, id="axis"),
        Case("split", x10, [3, 12], want=_split_at, dt=("float32",) * 3, id="past_end"),
        Case("diff", F, want=np.diff, dt="float32"),
        Case("diff", T3, n=2, axis=1, want=lambda a, **kw: np.diff(a, **kw), dt="float32",
             id="n"),
        Case("get_item", T3, (1, slice(None, None, 2)), want=lambda a, k: a[k], dt="float32"),
        Case("take", F, np.array([-1, 0, 4]), want=np.take, dt="float32", id="flattens"),
        Case("take", F, np.array([[-1, 0]]), axis=1,
             want=lambda a, i, axis: np.take(a, i, axis), dt="float32", id="axis"),
        Case("take", F, Raw([1, 0]), axis=0, want=lambda a, i, axis: np.take(a, i, axis),
             dt="float32", id="list"),
        Case("take", F, Raw(-2), want=np.take, dt="float32", id="scalar"),
        Case("take_along_axis", F, np.array([[2, 0], [-1, 1]]), axis=1,
             want=lambda a, i, axis: np.take_along_axis(a, i, axis), dt="float32"),
        Case("take_along_axis", F, np.array([0, 5]), axis=None,
             want=lambda a, i, axis: np.take_along_axis(a, i, axis), dt="float32",
             id="flattens"),
        Case("sort", F, want=np.sort, dt="float32"),
        Case("sort", I, axis=0, want=lambda a, axis: np.sort(a, axis), dt="int32", id="axis"),
        Case("sort", F, axis=None, want=lambda a, axis: np.sort(a, axis), dt="float32",
             id="flattens"),
        Case("argsort", F, want=lambda a: np.argsort(a, kind="stable"), dt="int32"),
        Case("argsort", np.array([2, 1, 2, 1]), axis=None,
             want=lambda a, axis: np.argsort(a, axis, kind="stable"), dt="int32", id="ties"),
        Case("meshgrid", V, np.array([1.0, 2.0], np.float32), want=np.meshgrid,
             dt=("float32", "float32")),
        Case("meshgrid", V, np.array([1.0, 2.0], np.float32), indexing="ij",
             want=lambda a, b, indexing: np.meshgrid(a, b, indexing=indexing),
             dt=("float32", "float32"), id="ij"),
        Case("diagonal", T3, want=np.diagonal, dt="float32"),
        Case("diagonal", T3, offset=1, axis1=1, axis2=2,
             want=lambda a, **kw: np.diagonal(a, **kw), dt="float32", id="offset"),
        Case("diagonal", T3, offset=-1, axis1=2, axis2=1,
             want=lambda a, **kw: np.diagonal(a, **kw), dt="float32", id="below"),
        Case("diag", V, want=np.diag, dt="float32"),
        Case("diag", V, k=-1, want=lambda a, k: np.diag(a, k), dt="float32", id="k_vector"),
        Case("diag", T3[0], k=1, want=lambda a, k: np.diag(a, k), dt="float32", id="k_matrix"),
        Case("pad", F, 1, want=np.pad, dt="float32", id="int"),
        Case("pad", F, ((1, 0), (0, 2)), constant_values=7,
             want=lambda a, w, constant_values: np.pad(a, w, constant_values=constant_values),
             dt="float32", id="pairs"),
        Case("pad", V, (1, 2), want=np.pad, dt="float32", id="pair"),
        Case("pad", T3, ((1, 2),), want=np.pad, dt="float32", id="one_pair"),
        *[Case("pad", T3, ((0, 0), (2, 1), (3, 2)), mode=mode,
               want=lambda a, w, mode: np.pad(a, w, mode=mode), dt="float32", id=mode)
          for mode in ("reflect", "symmetric", "edge", "wrap")],
        Case("pad", V, 2, mode="circular", want=lambda a, w, mode: np.pad(a, w, mode="wrap"),
             dt="float32", id="circular"),
        *[Case("pad", V, (4, 7), mode=mode, want=lambda a, w, mode: np.pad(a, w, mode=mode),
               dt="float32", id=f"{mode}_wide") for mode in ("reflect", "symmetric", "wrap",
                                                            "edge")],
        Case("pad", I, ((0, 0), (1, 1)), mode="reflect",
             want=lambda a, w, mode: np.pad(a, w, mode=mode), dt="int32", id="int_reflect"),
    ]


_ACTIVATIONS = ["relu", "sigmoid", "softplus", "softsign", "silu", "swish", "log_sigmoid",
                "leaky_relu", "hard_sigmoid", "hard_silu", "hard_swish", "selu", "gelu",
                "tanh_shrink", "hard_tanh", "hard_shrink", "soft_shrink", "squareplus",
                "sparse_plus", "sparse_sigmoid"]


def _nn_cases():
    out = [_keras_case(name, name, X) for name in _ACTIVATIONS]
    out += [
        _keras_case("relu6", "relu6", X * 3),
        _keras_case("elu", "elu", X, alpha=0.5),
        _keras_case("gelu", "gelu_exact", X, approximate=False),
        _keras_case("celu", "celu", X, alpha=2.0),
        _keras_case("glu", "glu", M),
        _keras_case("threshold", "threshold", X, 0.25, -9.0),
        _keras_case("softmax", "softmax", M),
        _keras_case("softmax", "softmax0", M, axis=0),
        _keras_case("log_softmax", "log_softmax", M),
        _keras_case("normalize", "normalize", M),
        _keras_case("normalize", "normalize1", M, axis=0, order=1),
        _keras_case("categorical_crossentropy", "cce", T_CCE, P_CCE),
        _keras_case("categorical_crossentropy", "cce_logits", T_CCE, M, from_logits=True),
        _keras_case("sparse_categorical_crossentropy", "scce", np.array([1, 3]), P_CCE),
        _keras_case("sparse_categorical_crossentropy", "scce_logits", np.array([[1], [3]]), M,
                    from_logits=True),
        _keras_case("binary_crossentropy", "bce", T_BCE, P_BCE),
        _keras_case("binary_crossentropy", "bce_logits", T_BCE, X, from_logits=True),
        _keras_case("batch_normalization", "batch_norm", M, np.array([0.5, 1.0], np.float32),
                    np.array([2.0, 0.5], np.float32), axis=0,
                    offset=np.array([0.1, -0.1], np.float32),
                    scale=np.array([2.0, 3.0], np.float32)),
        _keras_case("conv", "conv_same_s2", K_IMG, K_KER, strides=2, padding="same"),
        _keras_case("conv", "conv_groups", K_IMG, K_KG, strides=(2, 3)),
        _keras_case("conv", "conv1d_same", K_SEQ, K_K1, padding="same", strides=2),
        _keras_case("depthwise_conv", "depthwise", K_IMG, K_DK, strides=(2, 2), padding="same"),
        # (Keras's torch backend pads "same" windows otherwise: these are its TensorFlow and
        # JAX backends' numbers, the mean of the real elements of each window)
        Case("average_pool", IMG, (3, 2), strides=(2, 3), padding="same",
             want=lambda x, k, **kw: _np_patches(np.pad(x, ((0, 0), (1, 1), (0, 0), (0, 0)),
                                                        constant_values=np.nan),
                                                 (3, 2), (2, 3), nan_mean=True),
             dt="float32", id="same"),
        _keras_case("dot_product_attention", "attn_causal", K_Q, np.repeat(K_K, 2, axis=2),
                    np.repeat(K_V, 2, axis=2), is_causal=True),
        _keras_case("dot_product_attention", "attn_bias", K_Q, K_K, K_V,
                    bias=np.array([[0.5, -1.0, 0.0]], np.float32), scale=0.7),
        Case("relu", I, want=lambda a: np.maximum(a, 0), dt="int32", id="int32"),
        Case("sigmoid", I, want=lambda a: 1 / (1 + np.exp(-a.astype(np.float64))),
             dt="float32", id="int32"),
        Case("leaky_relu", X, negative_slope=0.5,
             want=lambda a, negative_slope: np.where(a > 0, a, a * negative_slope),
             dt="float32", id="slope"),
        Case("one_hot", np.array([0, 2, -1, 5]), 3, want=np.eye(4, 3)[[0, 2, 3, 3]],
             dt="float32"),
        Case("one_hot", np.array([[0, 2]]), 3, axis=1, dtype="int32",
             want=np.eye(3)[[0, 2]].T[None], dt="int32", id="axis_dtype"),
        Case("one_hot", np.array([0.0, 2.0], np.float32), 3, want=np.eye(3)[[0, 2]],
             dt="float32", id="float_indices"),
        Case("multi_hot", np.array([[0, 2], [1, 1]]), 3,
             want=np.array([[1, 0, 1], [0, 1, 0]]), dt="float32"),
        Case("multi_hot", np.array([0, 2]), num_tokens=3, want=np.array([1, 0, 1]),
             dt="float32", id="num_tokens"),
        Case("moments", M, axes=[1], want=(np.array(KERAS["moments_mean"][2]),
                                           np.array(KERAS["moments_var"][2])),
             dt=("float32", "float32"), id="keras"),
        Case("moments", T3, (0, 2), want=lambda a, ax: (a.mean(ax), a.var(ax)),
             dt=("float32", "float32")),
        Case("moments", T3, [1], keepdims=True,
             want=lambda a, ax, keepdims: (a.mean(1, keepdims=True), a.var(1, keepdims=True)),
             dt=("float32", "float32"), id="keepdims"),
        Case("moments", T3.astype(np.float16), [1],
             want=lambda a, ax: (a.astype(np.float32).mean(1), a.astype(np.float32).var(1)),
             dt=("float16", "float16"), id="float16", atol=2e-3, rtol=2e-3),
        Case("batch_normalization", T3, np.array([0.5, 1.0, -1.0, 0.0], np.float32),
             np.array([1.0, 2.0, 0.5, 4.0], np.float32), -1,
             want=lambda x, m, v, a: (x - m) / np.sqrt(v + 1e-3), dt="float32", id="last"),
        Case("conv", IMG, KER, strides=(2, 1), padding="valid", dilation_rate=1,
             want=lambda x, w, **kw: _np_conv2d(x, w, (2, 1)), dt="float32", atol=1e-4,
             id="valid_strides"),
        Case("conv", IMG, KER, dilation_rate=(2, 1),
             want=lambda x, w, **kw: _np_conv2d(x, w, dil=(2, 1)), dt="float32", atol=1e-4,
             id="dilated"),
        Case("conv", IMG.transpose(0, 3, 1, 2), KER, padding="same",
             data_format="channels_first",
             want=lambda x, w, **kw: _np_conv2d(x.transpose(0, 2, 3, 1), w,
                                                pads=((1, 1), (0, 1))).transpose(0, 3, 1, 2),
             dt="float32", atol=1e-4, id="channels_first"),
        Case("conv", SEQ, KER[0], strides=2,
             want=lambda x, w, **kw: _np_conv2d(x[:, None], w[None], (1, 2))[:, 0],
             dt="float32", atol=1e-4, id="1d"),
        Case("depthwise_conv", SEQ, KER[0, :, :, :2],
             want=lambda x, w: np.stack([_np_conv2d(x[:, None, :, c:c + 1],
                                                    w[None, :, c:c + 1, :])[:, 0]
                                         for c in range(3)], -2).reshape(2, 6, 6),
             dt="float32", atol=1e-4, id="1d"),
        Case("max_pool", IMG, 2, want=lambda x, k: _np_max_pool(x, (2, 2), (2, 2)),
             dt="float32"),
        Case("max_pool", IMG, (3, 2), strides=1,
             want=lambda x, k, strides: _np_max_pool(x, (3, 2), (1, 1)), dt="float32",
             id="strides"),
        Case("max_pool", SEQ, 2, strides=1,
             want=lambda x, k, strides: _np_max_pool(x[:, None], (1, 2), (1, 1))[:, 0],
             dt="float32", id="1d"),
        Case("max_pool", IMG.transpose(0, 3, 1, 2), 2, data_format="channels_first",
             want=lambda x, k, **kw: _np_max_pool(x.transpose(0, 2, 3, 1), (2, 2),
                                                  (2, 2)).transpose(0, 3, 1, 2),
             dt="float32", id="channels_first"),
        Case("average_pool", IMG, 2, want=lambda x, k: _np_patches(x, (2, 2), (2, 2)).reshape(
            2, 2, 3, 4, 3).mean(3), dt="float32", id="valid"),
        Case("dot_product_attention", Q, KV, KV,
             want=lambda q, k, v: _np_dot_attention(q, np.repeat(k, 2, 2), np.repeat(v, 2, 2)),
             dt="float32", atol=1e-5, id="gqa"),
        Case("dot_product_attention", Q, np.repeat(KV, 2, 2), np.repeat(KV, 2, 2), mask=MASK,
             scale=0.5, bias=R.standard_normal((1, 4, 3, 4)).astype(np.float32) * 0,
             want=lambda q, k, v, **kw: _np_dot_attention(q, k, v, mask=MASK, scale=0.5),
             dt="float32", atol=1e-5, id="mask_bias_scale"),
        Case("dot_product_attention", Q, np.repeat(KV, 2, 2), np.repeat(KV, 2, 2),
             is_causal=True, mask=MASK,
             want=lambda q, k, v, **kw: _np_dot_attention(q, k, v, mask=MASK, causal=True),
             dt="float32", atol=1e-5, id="causal_and_mask"),
    ]
    return out


def _core_and_math_cases():
    return [
        Case("cast", F, "int32", want=lambda a, d: a.astype(np.int32), dt="int32"),
        Case("convert_to_tensor", Raw([1.0, 2.0]), want=np.array([1.0, 2.0]), dt="float32"),
        Case("convert_to_tensor", Raw([1, 2]), want=np.array([1, 2]), dt="int32", id="int"),
        Case("convert_to_tensor", Raw(np.array([1.0])), want=np.array([1.0]), dt="float64",
             id="numpy_float64"),
        Case("convert_to_tensor", I, dtype="float32", want=I, dt="float32", id="cast"),
        Case("stop_gradient", F, want=F, dt="float32"),
        Case("unstack", F, want=list, dt=("float32",) * 2),
        Case("unstack", F, axis=1, want=lambda a, axis: list(a.T), dt=("float32",) * 3,
             id="axis"),
        Case("scatter", np.array([[0, 1], [1, 2], [0, 1]]), np.array([1.0, 2.0, 3.0],
                                                                      np.float32), (2, 3),
             want=np.array([[0, 4, 0], [0, 0, 2]]), dt="float32"),
        Case("scatter_update", F, np.array([[0, 0], [1, 2]]), np.array([9.0, 8.0], np.float32),
             want=np.array([[9.0, -2.5, 3.0], [4.0, 0.5, 8.0]]), dt="float32"),
        Case("scatter_update", F, np.array([[0, 0], [0, 0]]), np.array([1.0, 2.0], np.float32),
             reduction="add", want=np.array([[4.5, -2.5, 3.0], [4.0, 0.5, -6.25]]),
             dt="float32", id="add"),
        Case("slice", T3, (1, 0, 1), (1, 2, 2), want=T3[1:2, 0:2, 1:3], dt="float32"),
        Case("slice_update", F, (0, 1), np.ones((2, 2), np.float32),
             want=np.array([[1.5, 1, 1], [4.0, 1, 1]]), dt="float32"),
        Case("top_k", F, 2, want=lambda a, k: (-np.sort(-a)[:, :k], np.argsort(-a)[:, :k]),
             dt=("float32", "int32")),
        Case("in_top_k", np.array([2, 0]), F, 1, want=np.array([True, True]), dt="bool"),
        Case("in_top_k", np.array([0, 1]), np.array([[1.0, 1.0, 0.0], [3.0, 1.0, 2.0]],
                                                    np.float32), 1,
             want=np.array([True, False]), dt="bool", id="ties"),
        Case("segment_sum", F, np.array([1, 1]), 3,
             want=np.array([[0, 0, 0], F.sum(0), [0, 0, 0]]), dt="float32"),
        Case("segment_sum", I, np.array([2, -1]), want=np.array([[0] * 3, [0] * 3, I[0]]),
             dt="int32", id="drops_negative_infers_count"),
        Case("segment_max", F, np.array([0, 2]), 3,
             want=np.array([F[0], [-np.inf] * 3, F[1]]), dt="float32"),
        Case("segment_max", I, np.array([0, 0]), 2,
             want=np.array([I.max(0), [np.iinfo(np.int32).min] * 3]), dt="int32", id="int"),
        Case("segment_min", F, np.array([1, 1]), 2,
             want=np.array([[np.inf] * 3, F.min(0)]), dt="float32"),
    ]


def _image_cases():
    return [
        _keras_case("image.resize", "resize_bilinear", SMALL, (3, 2)),
        _keras_case("image.resize", "resize_nearest_up", SMALL[:, :2, :3], (3, 4),
                    interpolation="nearest"),
        _keras_case("image.resize", "resize_crop", SMALL, (2, 2), crop_to_aspect_ratio=True),
        _keras_case("image.resize", "resize_aa", SMALL, (2, 2), antialias=True),
        _keras_case("image.resize", "resize_pad", SMALL[0], (2, 2), pad_to_aspect_ratio=True,
                    fill_value=0.5),
        _keras_case("image.resize", "resize_uint8", U8, (3, 2)),
        Case("image.resize", SMALL.transpose(0, 3, 1, 2), (3, 2), data_format="channels_first",
             want=np.array(KERAS["resize_bilinear"][2]).reshape(1, 1, 3, 2), dt="float32",
             id="channels_first", atol=2e-5),
        Case("image.extract_patches", IMG, 2,
             want=lambda x, k: _np_patches(x, (2, 2), (2, 2)), dt="float32"),
        Case("image.extract_patches", IMG[0], (2, 3), (1, 2),
             want=lambda x, k, s: _np_patches(x[None], k, s)[0], dt="float32", id="unbatched"),
        Case("image.extract_patches", IMG, 2, strides=1, dilation_rate=2,
             want=lambda x, k, **kw: _np_patches(x, (2, 2), (1, 1), (2, 2)), dt="float32",
             id="dilated"),
        Case("image.extract_patches", IMG, 2, padding="same",
             want=lambda x, k, **kw: _np_patches(np.pad(x, ((0, 0), (0, 1), (0, 0), (0, 0))),
                                                 (2, 2), (2, 2)),
             dt="float32", id="same"),
        Case("image.extract_patches", IMG.transpose(0, 3, 1, 2), 2,
             data_format="channels_first",
             want=lambda x, k, **kw: _np_patches(x.transpose(0, 2, 3, 1), (2, 2),
                                                 (2, 2)).transpose(0, 3, 1, 2),
             dt="float32", id="channels_first"),
    ]


CASES = (_elementwise_cases() + _reduction_cases() + _creation_and_product_cases()
         + _shape_cases() + _nn_cases() + _core_and_math_cases() + _image_cases())


def _fn(name):
    obj = ops
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _outputs(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_matches_numpy_and_keras(case, backend):
    got = _fn(case.name)(*[_to_em(a) for a in case.args],
                         **{k: _to_em(v) for k, v in case.kwargs.items()})
    want = case.want
    if callable(want):
        want = want(*[_to_np(a) for a in case.args],
                    **{k: _to_np(v) for k, v in case.kwargs.items()})
    got, want = _outputs(got), _outputs(want) if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want), (len(got), len(want))
    dts = case.dt if isinstance(case.dt, tuple) else (case.dt,) * len(got)
    for g, w, dt in zip(got, want, dts):
        assert isinstance(g, em.Tensor), type(g)
        assert g.device == backend, (g.device, backend)
        assert ops.dtype(g) == dt, (ops.dtype(g), dt)
        w = np.asarray(w)
        assert ops.shape(g) == w.shape, (ops.shape(g), w.shape)
        np.testing.assert_allclose(ops.convert_to_numpy(g).astype(np.float64),
                                   w.astype(np.float64), rtol=case.rtol, atol=case.atol)


# --- refused arguments -------------------------------------------------------------------
ERRORS = [
    ("convert_to_tensor", (F,), {"sparse": True}, r"convert_to_tensor: sparse=True is not supp"),
    ("convert_to_tensor", (F,), {"ragged": True}, r"convert_to_tensor: ragged=True is not supp"),
    ("one_hot", (np.array([1]), 3), {"sparse": True}, r"one_hot: sparse=True is not supported"),
    ("multi_hot", (np.array([1]), 3), {"sparse": True}, r"multi_hot: sparse=True is not supp"),
    ("multi_hot", (np.array([1]), 3), {"num_token": 3}, r"multi_hot: num_token=3 is not supp"),
    ("multi_hot", (np.array([1]),), {}, r"multi_hot: num_classes must be given"),
    ("moments", (F, [0]), {"synchronized": True}, r"moments: synchronized=True is not supp"),
    ("dot_product_attention", (Q, KV, KV), {"flash_attention": True},
     r"dot_product_attention: flash_attention=True is not supported"),
    ("dot_product_attention", (Q, KV, KV), {"attn_logits_soft_cap": 50.0},
     r"dot_product_attention: attn_logits_soft_cap=50.0 is not supported"),
    ("dot_product_attention", (Q[0], KV[0], KV[0]), {}, r"dot_product_attention: .* 4-D"),
    ("dot_product_attention", (Q, KV[:, :, :1].repeat(3, 2), KV[:, :, :1].repeat(3, 2)), {},
     r"query has 4 heads, which key's 3 heads do not divide"),
    ("scatter_update", (F, np.array([[0, 0]]), np.array([1.0], np.float32)),
     {"reduction": "max"}, r"scatter_update: reduction='max' is not supported"),
    ("pad", (F, 1), {"mode": "median"}, r"pad: mode='median' is not supported"),
    ("pad", (F, 1), {"mode": "reflect", "constant_values": 1},
     r"pad: constant_values can only be given with mode='constant'"),
    ("pad", (F, 1), {"constant_values": [1, 2]}, r"pad: constant_values=\[1, 2\] is not supp"),
    ("round", (I, -1), {}, r"round: decimals=-1 is not supported"),
    ("einsum", ("ij->i", F), {"optimize": True}, r"einsum: optimize=True is not supported"),
    ("where", (BOOL, V), {}, r"where: give both x1 and x2, or neither"),
    ("split", (np.arange(10), 3), {}, r"split: axis 0 of length 10 does not split into 3"),
    ("normalize", (F,), {"order": 0}, r"normalize: order must be an int >= 1"),
    ("glu", (F,), {}, r"glu: axis 1 of shape \(2, 3\) must have an even length"),
    ("depthwise_conv", (np.zeros((1, 2, 2, 2, 1), np.float32),
                        np.zeros((1, 1, 1, 1, 1), np.float32)),
     {}, r"depthwise_conv: inputs=.* is not supported \(ember has 1-D and 2-D windows"),
    ("conv", (IMG, KER), {"padding": "causal"}, r"conv: padding='causal' is not supported"),
    ("conv", (IMG, KER), {"data_format": "NHWC"}, r"conv: data_format must be 'channels_last'"),
    ("conv", (IMG, np.zeros((2, 2, 2, 4), np.float32)), {}, r"conv: inputs have 3 channels"),
    ("max_pool", (IMG, 2), {"padding": "full"}, r"max_pool: padding='full' is not supported"),
    ("average_pool", (np.zeros((1, 1, 2, 2, 2, 1), np.float32), 2), {},
     r"average_pool: inputs must have rank 3, 4 or 5"),
    ("depthwise_conv", (IMG, KER), {"padding": "causal"},
     r"depthwise_conv: padding='causal' is not supported"),
    ("linspace", (0, 1, -1), {}, r"linspace: num must be >= 0"),
    ("average", (F,), {"axis": 1, "weights": np.ones(2, np.float32)},
     r"average: weights of shape \(2,\) must have the shape of x"),
    ("repeat", (F, [1, 2, 3]), {"axis": 0}, r"repeat: 3 repeats for axis 0 of length 2"),
    ("tril", (V,), {}, r"tril: x must have rank >= 2"),
    ("diag", (T3,), {}, r"diag: x must be 1-D or 2-D"),
    ("expand_dims", (F, (0, 0)), {}, r"expand_dims: repeated axis"),
    ("slice", (F, (0, 0), (1,)), {}, r"slice: start_indices \[0, 0\] and shape \[1\] must"),
    ("scan", (lambda c, x: (c, x), 0.0), {}, r"scan: give xs or length"),
    ("scan", (lambda c, x: (c, x), 0.0), {"length": 2, "unroll": 0},
     r"scan: unroll must be a positive int"),
    ("image.resize", (IMG, (2, 2)), {"interpolation": "box"},
     r"image\.resize: interpolation='box' is not supported"),
    ("image.resize", (IMG, (2, 2)), {"fill_mode": "reflect"},
     r"image\.resize: fill_mode must be 'constant'"),
    ("image.resize", (IMG, (2, 2)), {"crop_to_aspect_ratio": True, "pad_to_aspect_ratio": True},
     r"give crop_to_aspect_ratio or pad_to_aspect_ratio, not both"),
    ("image.resize", (IMG, (2, 2, 2)), {}, r"image\.resize: size must be \(height, width\)"),
    ("image.resize", (V, (2, 2)), {}, r"image\.resize: images must have rank 3"),
    ("image.extract_patches", (IMG, (2, 2, 2)), {},
     r"image\.extract_patches: size=\(2, 2, 2\) is not supported \(ember extracts 2-D"),
    ("image.extract_patches", (IMG, 2), {"padding": "causal"},
     r"image\.extract_patches: padding='causal' is not supported"),
    ("image.extract_patches", (IMG, 2), {"data_format": "NCHW"},
     r"image\.extract_patches: data_format must be"),
]


@pytest.mark.parametrize("name,args,kwargs,match", ERRORS,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_refuses_by_name(name, args, kwargs, match):
    with pytest.raises(em.InvalidArgumentError, match=match):
        _fn(name)(*[_to_em(a) for a in args], **kwargs)


# --- gradients (finite differences, float64) --------------------------------------------
def _grad_cases():
    idx = np.array([2, -1, 0, 2])
    img = R.standard_normal((1, 4, 5, 2))
    seq = R.standard_normal((2, 6, 2))
    q, kv = R.standard_normal((1, 3, 2, 4)), R.standard_normal((1, 4, 1, 4))
    return {
        "take": (lambda x: ops.take(x, idx, axis=1), [R.standard_normal((2, 3))]),
        "take_flat": (lambda x: ops.take(x, np.array([[5, -6]])), [R.standard_normal((2, 3))]),
        "take_along_axis": (lambda x: ops.take_along_axis(x, np.array([[2, 0], [1, 1]]), 1),
                            [R.standard_normal((2, 3))]),
        "repeat": (lambda x: ops.repeat(x, [2, 1, 3], axis=1), [R.standard_normal((2, 3))]),
        "repeat_int": (lambda x: ops.repeat(x, 2), [R.standard_normal((2, 3))]),
        "tile": (lambda x: ops.tile(x, (2, 1, 2)), [R.standard_normal((2, 3))]),
        "pad_edge": (lambda x: ops.pad(x, ((1, 2), (2, 0)), mode="edge"),
                     [R.standard_normal((2, 3))]),
        "pad_wrap": (lambda x: ops.pad(x, 2, mode="wrap"), [R.standard_normal((2, 3))]),
        "pad_symmetric": (lambda x: ops.pad(x, 1, mode="symmetric"), [R.standard_normal((2, 3))]),
        "cumprod": (lambda x: ops.cumprod(x, axis=1), [R.standard_normal((2, 5))]),
        "cumsum": (lambda x: ops.cumsum(x), [R.standard_normal((2, 3))]),
        "diag": (lambda x: ops.diag(x, k=-1), [R.standard_normal(3)]),
        "diagonal": (lambda x: ops.diagonal(x, 1, 2, 0), [R.standard_normal((3, 2, 4))]),
        "tril": (lambda x: ops.tril(x, -1), [R.standard_normal((3, 4))]),
        "roll": (lambda x: ops.roll(x, 1, axis=0), [R.standard_normal((3, 2))]),
        "dot": (ops.dot, [R.standard_normal((2, 3, 4)), R.standard_normal((2, 4, 3))]),
        "einsum_implicit": (lambda a, b: ops.einsum("ij,jk", a, b),
                            [R.standard_normal((2, 3)), R.standard_normal((3, 2))]),
        "sinh_cosh": (lambda x: ops.sinh(x) + ops.cosh(x), [R.standard_normal(4)]),
        "arcsinh_arctan": (lambda x: ops.arcsinh(x) * ops.arctan(x), [R.standard_normal(4)]),
        "logaddexp": (ops.logaddexp, [R.standard_normal(4), R.standard_normal(4)]),
        "hypot": (ops.hypot, [R.standard_normal(4), R.standard_normal(4)]),
        "divide_no_nan": (lambda a: ops.divide_no_nan(a, np.array([2.0, 0.0, -1.0])),
                          [R.standard_normal(3)]),
        "std_var_mean": (lambda x: ops.std(x, 0) + ops.var(x, 1, True) + ops.mean(x),
                         [R.standard_normal((3, 4))]),
        "average": (lambda x, w: ops.average(x, axis=1, weights=w),
                    [R.standard_normal((2, 3)), R.random(3) + 0.5]),
        "where": (lambda a, b: ops.where(BOOL, a, b), [R.standard_normal(3), R.standard_normal(3)]),
        "moveaxis_expand": (lambda x: ops.expand_dims(ops.moveaxis(x, 0, -1), (0, 2)),
                            [R.standard_normal((2, 3))]),
        "split": (lambda x: ops.split(x, [1, 3], axis=1)[1], [R.standard_normal((2, 4))]),
        "slice_update": (lambda x, u: ops.slice_update(x, (1, 0), u),
                         [R.standard_normal((3, 3)), R.standard_normal((2, 2))]),
        "scatter_update": (lambda x: ops.scatter_update(x, np.array([[0, 1]]), np.array([5.0])),
                           [R.standard_normal((2, 2))]),
        "segment_sum": (lambda x: ops.segment_sum(x, np.array([1, 0, 1]), 3),
                        [R.standard_normal((3, 2))]),
        "segment_max": (lambda x: ops.segment_max(x, np.array([1, 0, 1]), 2),
                        [R.standard_normal((3, 2))]),
        "softmax_axis0": (lambda x: ops.softmax(x, axis=0), [R.standard_normal((3, 2))]),
        "log_sigmoid_celu_glu": (lambda x: ops.log_sigmoid(x) + ops.celu(x, 0.5) + ops.glu(
            ops.concatenate([x, x * 2], -1)), [R.standard_normal((2, 3))]),
        "normalize": (lambda x: ops.normalize(x, axis=0), [R.standard_normal((3, 2))]),
        "normalize_l1": (lambda x: ops.normalize(x, order=1), [R.standard_normal((3, 2))]),
        "binary_crossentropy": (lambda t, o: ops.binary_crossentropy(t, o, from_logits=True),
                                [R.random(4), R.standard_normal(4)]),
        "categorical_crossentropy": (lambda o: ops.categorical_crossentropy(
            np.array([[0.2, 0.8, 0.0]]), o), [R.random((1, 3)) + 0.1]),
        "sparse_categorical_crossentropy": (lambda o: ops.sparse_categorical_crossentropy(
            np.array([2, 0]), o, from_logits=True), [R.standard_normal((2, 3))]),
        "conv_groups": (lambda x, w: ops.conv(x, w, padding="same"),
                        [img, R.standard_normal((2, 2, 1, 4))]),
        "conv_1d": (lambda x, w: ops.conv(x, w, strides=2), [seq, R.standard_normal((3, 2, 3))]),
        "depthwise_conv": (lambda x, w: ops.depthwise_conv(x, w, padding="same"),
                           [seq, R.standard_normal((3, 2, 2))]),
        "average_pool_same": (lambda x: ops.average_pool(x, 3, strides=2, padding="same"),
                              [img]),
        "max_pool_1d": (lambda x: ops.max_pool(x, 2), [seq]),
        "batch_normalization": (lambda x, m, v: ops.batch_normalization(x, m, v, axis=1),
                                [R.standard_normal((2, 3)), R.standard_normal(3),
                                 R.random(3) + 0.5]),
        "dot_product_attention": (lambda q, k, v: ops.dot_product_attention(
            q, k, v, is_causal=True, mask=np.array([True, True, False, True])),
            [q, kv, kv * 0.5]),
        "resize": (lambda x: ops.image.resize(x, (3, 7)), [img]),
        "resize_antialias": (lambda x: ops.image.resize(x, (2, 3), antialias=True), [img]),
        "extract_patches": (lambda x: ops.image.extract_patches(x, (2, 3), 1, padding="same"),
                            [img]),
        "map": (lambda x: ops.map(lambda r: ops.sum(r * r), x), [R.standard_normal((3, 2))]),
        "scan": (lambda x: ops.scan(lambda c, r: (c * r, c + r), ops.ones(2, "float64"), x)[1],
                 [R.standard_normal((3, 2))]),
        "vectorized_map": (lambda x: ops.vectorized_map(lambda r: ops.outer(r, r), x),
                           [R.standard_normal((2, 3))]),
    }


GRADS = _grad_cases()


@pytest.mark.parametrize("name", sorted(GRADS))
def test_differentiable(name):
    f, args = GRADS[name]
    tape.check_gradients(f, args, order=1)


# --- keras.ops' names --------------------------------------------------------------------
# The names of keras 3.15's keras.ops (KERAS_3_15_SIGNATURES) that ember.nn.ops does not
# have: each is answered by ember.nn.ops' module __getattr__ with an AttributeError that
# names it. Implementing one means taking it off this list.
NOT_IN_EMBER = [
    "adaptive_average_pool", "adaptive_max_pool", "allclose", "angle", "append", "argpartition",
    "array_split", "associative_scan", "bartlett", "bincount", "blackman", "cbrt", "cdist",
    "cholesky", "cholesky_inverse", "conj", "conjugate", "conv_transpose", "corrcoef",
    "correlate", "cross", "depth_to_space", "det", "diagflat",
    "digitize", "dsplit", "dstack", "eig", "eigh", "erfc", "erfinv", "extract_sequences",
    "fmax", "fmin", "fmod", "fold", "gcd", "geomspace", "hamming", "hanning",
    "heaviside", "histogram", "hsplit", "i0", "imag", "inv", "isclose",
    "isin", "isreal", "jvp", "kaiser", "kron", "layer_normalization", "lcm", "ldexp",
    "linalg", "logaddexp2", "logdet", "logspace", "lstsq", "lu_factor", "matrix_rank", "median",
    "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian",
    "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar",
    "nextafter", "nn", "numpy", "percentile", "pinv", "polar", "psnr", "qr", "quantile",
    "real", "rearrange", "rms_normalization", "rot90", "saturate_cast", "searchsorted",
    "segment_prod", "select", "separable_conv", "signbit", "sinc", "slogdet", "solve",
    "solve_triangular", "space_to_depth", "sparsemax", "svd", "switch", "trapezoid",
    "unfold", "unique", "unravel_index", "vander", "vectorize", "view", "view_as_complex",
    "view_as_real", "vsplit",
]
KERAS_IMAGE_NOT_IN_EMBER = [
    "affine_transform", "elastic_transform", "extract_patches_3d", "gaussian_blur",
    "map_coordinates", "perspective_transform", "scale_and_translate", "sobel_edges", "ssim",
]


@pytest.mark.parametrize("name", NOT_IN_EMBER)
def test_missing_keras_name_is_refused_by_name(name):
    assert name in KERAS_OPS_NAMES
    with pytest.raises(AttributeError, match=rf"^ember\.nn\.ops has no {name} "
                                             rf"\(keras\.ops\.{name}\)"):
        getattr(ops, name)
    assert not hasattr(ops, name)


@pytest.mark.parametrize("name", KERAS_IMAGE_NOT_IN_EMBER)
def test_missing_keras_image_name_is_refused_by_name(name):
    with pytest.raises(AttributeError, match=rf"^ember\.nn\.ops\.image has no {name} "
                                             rf"\(keras\.ops\.image\.{name}\)"):
        getattr(ops.image, name)


def test_every_other_keras_name_is_there_and_nothing_more():
    present = [n for n in KERAS_OPS_NAMES if n not in NOT_IN_EMBER]
    assert all(callable(getattr(ops, n)) or n == "image" for n in present)
    assert sorted(ops.__all__) == sorted(present)
    assert len(KERAS_OPS_NAMES) == 341 and len(NOT_IN_EMBER) == len(set(NOT_IN_EMBER))


def test_refusal_names_the_nearest_ember_function_and_unknown_names_are_plain():
    with pytest.raises(AttributeError, match=r"has no det \(keras\.ops\.det\); nearest in "
                                             r"ember: em\.linalg\.det"):
        ops.det
    with pytest.raises(AttributeError, match=r"module 'ember\.nn\.ops' has no attribute "
                                             r"'not_a_keras_op'"):
        ops.not_a_keras_op


def _params(sig):
    """(name, kind, default) of each parameter of a signature written as Python."""
    a = ast.parse(f"def f{sig}: pass").body[0].args
    kinds = inspect.Parameter
    out = []
    defaults = [None] * (len(a.args) - len(a.defaults)) + list(a.defaults)
    for p, d in zip(a.args, defaults):
        out.append((p.arg, kinds.POSITIONAL_OR_KEYWORD,
                    "-" if d is None else ast.literal_eval(d)))
    if a.vararg:
        out.append((a.vararg.arg, kinds.VAR_POSITIONAL, "-"))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((p.arg, kinds.KEYWORD_ONLY, "-" if d is None else ast.literal_eval(d)))
    if a.kwarg:
        out.append((a.kwarg.arg, kinds.VAR_KEYWORD, "-"))
    return out


IMPLEMENTED = [n for n, s in KERAS_SIGNATURES.items()
               if not s.startswith("?") and n.split(".")[-1] not in NOT_IN_EMBER
               and n.split(".")[-1] not in KERAS_IMAGE_NOT_IN_EMBER]


@pytest.mark.parametrize("name", IMPLEMENTED)
def test_signature_is_keras(name):
    ours = [(p.name, p.kind, "-" if p.default is inspect.Parameter.empty else p.default)
            for p in inspect.signature(_fn(name)).parameters.values()]
    assert ours == _params(KERAS_SIGNATURES[name])


# --- core behaviour ----------------------------------------------------------------------
def test_shape_dtype_size_ndim_are_python_values():
    x = em.zeros((2, 3), em.int32)
    assert ops.shape(x) == (2, 3) and all(type(d) is int for d in ops.shape(x))
    assert ops.shape([[1, 2, 3]]) == (1, 3) and ops.shape(np.zeros((4,))) == (4,)
    assert ops.dtype(x) == "int32" and ops.dtype(em.ones(2)) == "float32"
    assert ops.dtype(1.5) == "float32" and ops.dtype([True]) == "bool"
    assert ops.size(x) == 6 and ops.ndim(x) == 2 and ops.ndim(3.0) == 0


def test_convert_to_numpy_is_a_host_copy_and_is_tensor(backend):
    x = em.constant([1.0, 2.0])
    a = ops.convert_to_numpy(x)
    assert type(a) is np.ndarray and a.dtype == np.float32
    a[0] = 7.0
    assert ops.convert_to_numpy(x)[0] == 1.0  # the tensor is unchanged
    assert ops.convert_to_numpy([1, 2]).tolist() == [1, 2]
    assert ops.is_tensor(x) and not ops.is_tensor(a) and not ops.is_tensor(1.0)
    assert ops.convert_to_tensor(a).device == backend


def test_variables_are_read_and_python_inputs_land_on_the_current_device(backend):
    v = em.Variable([[1.0, 2.0], [3.0, 4.0]])
    assert ops.convert_to_numpy(ops.sum(v, axis=0)).tolist() == [4.0, 6.0]
    assert ops.convert_to_numpy(ops.matmul(v, v)).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    for out in (ops.add([1.0], [2.0]), ops.arange(3), ops.eye(2), ops.linspace(0, 1, 3),
                ops.take(np.arange(4.0), [1])):
        assert out.device == backend


def test_float32_is_never_promoted_to_float64():
    x = em.constant([1.0, 2.0, 3.0])
    outs = [ops.mean(x), ops.std(x), ops.power(x, 2.5), ops.divide(x, 3), ops.cosh(x),
            ops.log10(x), ops.arctan2(x, 2.0), ops.linspace(x, 2.0, 4), ops.average(x),
            ops.normalize(x), ops.softmax(x), ops.logaddexp(x, 1.0), ops.exp2(x),
            ops.round(x, 2), ops.hypot(x, 1), ops.full_like(x, 0.5)]
    assert {ops.dtype(o) for o in outs} == {"float32"}


def test_control_flow():
    assert ops.convert_to_numpy(ops.cond(em.constant(True), lambda: 1.0, lambda: 2.0)) == 1.0
    assert ops.cond(False, lambda: "a", lambda: "b") == "b"
    i, total = ops.while_loop(lambda i, t: i < 5, lambda i, t: (i + 1, t + i), (0, 0))
    assert (int(i), int(total)) == (5, 10)
    assert int(ops.while_loop(lambda i: i < 100, lambda i: i + 1, 0, maximum_iterations=7)) == 7
    assert int(ops.fori_loop(0, em.constant(4), lambda i, v: v + i, 0)) == 6
    carry, ys = ops.scan(lambda c, x: (c + x, c * x), em.constant(0.0), em.constant([1., 2, 3]))
    assert float(carry) == 6.0 and ops.convert_to_numpy(ys).tolist() == [0.0, 2.0, 9.0]
    carry, ys = ops.scan(lambda c, x: (c + 1, None), 0, length=3, reverse=True)
    assert int(carry) == 3 and ops.shape(ys) == (3,)
    pairs = ops.map(lambda xy: xy[0] * xy[1], (em.constant([1., 2.]), em.constant([3., 4.])))
    assert ops.convert_to_numpy(pairs).tolist() == [3.0, 8.0]
    nested = ops.map(lambda x: {"a": x, "b": (x * 2,)}, em.constant([1., 2.]))
    assert ops.convert_to_numpy(nested["b"][0]).tolist() == [2.0, 4.0]
    out = ops.vectorized_map(lambda ab: ab[0] + ab[1], (em.ones((2, 3)), em.ones((2, 3))))
    assert ops.shape(out) == (2, 3) and float(ops.sum(out)) == 12.0


def test_custom_gradient_written_for_keras():
    @ops.custom_gradient
    def log1pexp(x):
        e = ops.exp(x)

        def grad(*args, upstream=None):  # keras.ops.custom_gradient's documented form
            if upstream is None:
                (upstream,) = args
            return ops.multiply(upstream, 1.0 - 1.0 / ops.add(1, e))

        return ops.log(1 + e), grad

    x = em.constant([0.0, 2.0])
    with tape.GradientTape() as t:
        t.watch(x)
        y = log1pexp(x)
    np.testing.assert_allclose(ops.convert_to_numpy(t.gradient(y, x)),
                               1 / (1 + np.exp(-np.array([0.0, 2.0]))), rtol=1e-6)


def test_stop_gradient_stops():
    x = em.constant(2.0)
    with tape.GradientTape() as t:
        t.watch(x)
        y = ops.add(ops.stop_gradient(x * x), x)
    assert float(t.gradient(y, x)) == 1.0


def test_bicubic_and_lanczos_resize_as_the_resizing_layer():
    from ember import nn
    for method in ("bicubic", "lanczos3", "lanczos5"):
        want = nn.layers.Resizing(5, 7, interpolation=method)(IMG)
        got = ops.image.resize(IMG, (5, 7), interpolation=method)
        np.testing.assert_allclose(ops.convert_to_numpy(got), ops.convert_to_numpy(want))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_numpy_inputs_as_keras_takes_them(case, backend):
    """The same calls with numpy arrays where the table passes tensors: the same values
    and dtypes, on the current device."""
    as_numpy = _outputs(_fn(case.name)(*[_to_np(a) for a in case.args],
                                       **{k: _to_np(v) for k, v in case.kwargs.items()}))
    as_tensors = _outputs(_fn(case.name)(*[_to_em(a) for a in case.args],
                                         **{k: _to_em(v) for k, v in case.kwargs.items()}))
    for a, t in zip(as_numpy, as_tensors):
        assert a.device == backend and ops.dtype(a) == ops.dtype(t)
        np.testing.assert_array_equal(ops.convert_to_numpy(a), ops.convert_to_numpy(t))
