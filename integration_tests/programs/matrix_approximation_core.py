"""Port of tensorflow/docs site/en/guide/core/matrix_core.ipynb ("Matrix approximation with
Core APIs"): the SVD of a random 40 x 30 matrix with tf.linalg.svd (s, U, V), its
reconstruction as U @ diag(s) @ V^T and with tf.einsum, rank-r approximations
(rank_r_approx: the first r singular values and vectors, and the approximation's size) of
rank 15 and 3, an RGB image compressed channel by channel (the image as a batch of three
matrices) at ranks 100, 50 and 10, at a compression factor (15% of the original size) and
at an energy factor (75% of the cumulative sum of the singular values, tf.map_fn of
tf.cumsum), and the squared Frobenius error of a rank-10 approximation against the sum of
the squared singular values left out.

Upstream: https://github.com/tensorflow/docs/blob/0d3481d58b496b33ef70b993958a64b02172bf04/site/en/guide/core/matrix_core.ipynb
Changed: names only (tf.__version__, tf.random.uniform, tf.linalg.svd/diag, tf.transpose,
tf.einsum, tf.size, tf.reduce_max/reduce_sum/reduce_mean, tf.convert_to_tensor,
tf.clip_by_value, tf.map_fn, tf.cumsum, tf.argmin, tf.abs, tf.norm -> em.*), except the
GAPs below. The photo (a 1024 x 1024 JPEG from the Imagen gallery, fetched with requests and
decoded by matplotlib's imread into a uint8 (1024, 1024, 3) array) cannot be downloaded
here: this program GENERATES a photo-like RGB image in the decoded layout (uint8, (height,
width, 3)): a sky gradient, nine buildings with grids of lit windows, a glow, a road with
stripes in perspective, a bike's two wheels and a dog, plus sensor noise (std 1 of 255)
rounded to 8 bits, so its singular values fall off as a photo's do (a few large ones for the
smooth parts, a long tail for the edges and the noise). The `requests` and `imread` calls
get stand-ins that hand that array over from the upstream URL. matplotlib: every plot (the
bar graph of singular values, the pcolormesh panels, imshow, the compression-factor and the
energy curves) is left out; what each would show is asserted. A numpy seed and
em.random.set_seed(0) are added (upstream draws A unseeded).
Reduced: the image is 512 x 512 x 3 (EMBER_PROGRAMS_FULL=1: upstream's 1024 x 1024 x 3;
EMBER_PROGRAMS_SHORT=1, the strict-GPU run: 256 x 256 x 3, and no thresholds on the
approximation quality). The 40 x 30 matrix and the ranks (15, 3, 10 for A; 100, 50, 10 for
the image; factor 0.15; energy 0.75) are upstream's.
Added: the SVD of A against numpy's (float64, of the same float32 values): singular values
descending and equal to numpy's, U and V orthonormal (U^T U = V^T V = I), A = U diag(s) V^T,
the einsum reconstruction equal to the matmul one; each rank-r approximation equal to
numpy's truncated SVD (float64) and of rank r (numpy's matrix_rank), its size r(m + n + 1)
(1065 for rank 15, 213 for rank 3), its squared Frobenius error equal to the sum of the
left-out squared singular values (Eckart-Young), and the panels viz_approx would draw (A, A_r,
|A - A_r| and vmax = max A); the generated image (shape, uint8) and what show_img is handed
(clipped to [0, 1]); for each compressed image: its shape and dtype, each channel equal to
numpy's truncated SVD of the rescaled channel, the proportion r(m + n + 1)/(mn) exact, the
error image 0.5 + |I - I_r| clipped; the errors falling with the rank and each equal to the
left-out singular values; the compression factor's rank int(0.15 mn / (m + n + 1)) and its
proportion at most 0.15; the cumulative proportions (each channel's cumsum / sum, against
numpy: increasing, ending at 1) and their RGB mean; the energy factor's r (the argmin of
|props - 0.75|, plus 1) equal to numpy's and actual_ef = props[r] (upstream indexes with r,
one past the r-th value; kept); the rank-10 squared norm equal to the sum of the squared
singular values left out, both against numpy. Thresholds (CPU runs, not the short run;
justified by what a wrong SVD gives): the relative Frobenius error of the image at rank 100
below 0.03 and at rank 10 above 0.05 and below 0.2 (this run: 0.017, 0.117; 0.023 and 0.117
at 1024 x 1024), the first 100 singular values carry over 0.8 of their sum (upstream: "over
90%" for its photo; here 0.917; 0.855 at 1024 x 1024), and the rank-r error of A falls below
a random rank-r approximation's (its projection onto r random directions): singular values
in the wrong order, U and V swapped or the wrong vectors would miss these, and an untruncated
"approximation" would have error 0.
Found (each a `# GAP n:` comment holding upstream's line, with the stand-in after it;
"silent" = a different value or behaviour and no error):
1. FIXED in ember since (upstream's lines run as they are): (silent, printed text) an
f-string of a tensor with no format spec, f"{t}", gave
ember's str(t), "ember.Tensor(1065, shape=(), dtype=int32)"; TF's EagerTensor.__format__
formats the numpy value, "1065" (tensorflow/python/framework/ops.py: `return
self._numpy().__format__(format_spec)`). Upstream prints tf.size results and the rank r (an
int64 tensor in compress_image_with_energy) this way; `.numpy()` (and int(r)) stands in.
2. (silent, by design: docs/guide/dtypes.md rule 9, as cutmix.py notes) I_r_size / I_size of
two int32 tensors is float32 in ember; TF's truediv gives float64. The proportion is printed
to 3 decimals only, so harmless here; upstream's line runs as it is.
"""

import os
import types

import numpy as np

import ember.core as em

FULL = os.environ.get("EMBER_PROGRAMS_FULL") == "1"
SHORT = os.environ.get("EMBER_PROGRAMS_SHORT") == "1" and not FULL  # the strict-GPU run
SIZE = 1024 if FULL else 256 if SHORT else 512  # the image's height and width (upstream: 1024)
np.random.seed(0)
em.random.set_seed(0)


# ---------------------------------------------------------------------------------------
# The stand-in for the download: a photo-like image in imread's layout (see the header).
def _synthetic_photo(m, n, seed=0):
  rng = np.random.default_rng(seed)
  y, x = np.meshgrid((np.arange(m) + 0.5) / m, (np.arange(n) + 0.5) / n, indexing='ij')
  img = np.empty((m, n, 3))
  for c, (top, bottom) in enumerate(((70, 170), (120, 200), (200, 235))):  # the sky
    img[..., c] = top + (bottom - top) * y
  for _ in range(9):  # buildings, each with a grid of lit windows
    x0, w, top = rng.uniform(-0.05, 0.95), rng.uniform(0.08, 0.2), rng.uniform(0.05, 0.45)
    inside = (x >= x0) & (x < x0 + w) & (y >= top) & (y < 0.75)
    img[inside] = rng.uniform(40, 140, 3)
    px, py = rng.uniform(0.015, 0.03, 2)
    windows = inside & ((x - x0) % px < px * 0.55) & ((y - top) % py < py * 0.5)
    img[windows] = rng.uniform(150, 255, 3) * rng.uniform(0.7, 1.0)
  cx, cy = rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.4)  # a billboard's glow
  img += np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / 0.01)[..., None] * np.array([120., 40., 90.])
  road = y >= 0.75  # the road, its stripes in perspective
  img[road] = (90, 90, 95)
  img[road & (np.abs(((x - 0.5) / (y - 0.55)) % 0.9 - 0.45) < 0.05)] = (230, 220, 120)
  for wx in (0.38, 0.62):  # the bike's wheels
    rr = np.hypot(x - wx, y - 0.8)
    img[(rr > 0.07) & (rr < 0.085)] = (25, 25, 30)
  img[((x - 0.5) / 0.12) ** 2 + ((y - 0.66) / 0.07) ** 2 < 1] = (200, 130, 60)  # the dog
  img[((x - 0.6) / 0.05) ** 2 + ((y - 0.56) / 0.05) ** 2 < 1] = (215, 145, 70)  # its head
  img += rng.normal(0, 1, img.shape)  # sensor noise, then 8 bits, as the decoded JPEG
  return np.clip(np.round(img), 0, 255).astype(np.uint8)


PHOTO = _synthetic_photo(SIZE, SIZE)
DOWNLOADS = {"https://imagen.research.google/main_gallery_images/"
             "a-photo-of-a-corgi-dog-riding-a-bike-in-times-square.jpg": PHOTO}
# requests.get(url, stream=True).raw and matplotlib.image.imread(fname, format): the
# generated array stands in for the response's stream and its decoding
requests = types.SimpleNamespace(
    get=lambda url, stream=False: types.SimpleNamespace(raw=DOWNLOADS[url]))


def imread(fname, format=None):
  return np.array(fname)  # a new uint8 (height, width, 3) array, as imread decodes a JPEG


shown = []  # Added: what show_img is handed (plt.imshow is left out with the plots)


def np_rank_r(a, r):  # Added: numpy's rank-r truncated SVD of the last two axes, in float64
  u, s, vh = np.linalg.svd(np.asarray(a, np.float64), full_matrices=False)
  return (u[..., :, :r] * s[..., None, :r]) @ vh[..., :r, :], s


# ---------------------------------------------------------------------------------------
# ## Setup
# (import matplotlib, imread, pyplot, requests; rcParams['figure.figsize']: left out with
# the plots; requests and imread: the stand-ins above)

print(em.__version__)

# ## SVD fundamentals

A = em.random.uniform(shape=[40,30])
# Compute the SVD factorization
s, U, V = em.linalg.svd(A)
# Define Sigma and V Transpose
S = em.linalg.diag(s)
V_T = em.transpose(V)
# Reconstruct the original matrix
A_svd = U@S@V_T
# Visualize (plt.bar(range(len(s)), s) with its labels and title: left out; what it shows,
# the singular values in descending order, is asserted below)

# Added: the factors against numpy's SVD of the same values (float64)
A_np = A.numpy().astype(np.float64)
assert A.shape == (40, 30) and A.dtype == em.float32
assert 0 <= A_np.min() and A_np.max() < 1 and A_np.std() > 0.2
assert s.shape == (30,) and U.shape == (40, 30) and V.shape == (30, 30) and S.shape == (30, 30)
assert s.dtype == U.dtype == V.dtype == em.float32
_s_np = np.linalg.svd(A_np, compute_uv=False)
np.testing.assert_allclose(s.numpy(), _s_np, rtol=1e-5, atol=1e-6)
assert np.all(np.diff(s.numpy()) <= 0) and s.numpy()[-1] > 0
np.testing.assert_allclose(U.numpy().T @ U.numpy(), np.eye(30), atol=2e-6)
np.testing.assert_allclose(V.numpy().T @ V.numpy(), np.eye(30), atol=2e-6)
np.testing.assert_array_equal(S.numpy(), np.diag(s.numpy()))
np.testing.assert_allclose(A_svd.numpy(), A_np, atol=2e-6)
# the first singular value of a uniform [0, 1) matrix is near its mean times sqrt(40 * 30)
assert abs(s.numpy()[0] / (0.5 * np.sqrt(1200)) - 1) < 0.05, s.numpy()[0]

_A_svd_matmul = A_svd
A_svd = em.einsum('s,us,vs -> uv',s,U,V)
print('\nReconstructed Matrix, A_svd', A_svd)
# Added: the einsum reconstruction
assert A_svd.shape == (40, 30) and A_svd.dtype == em.float32
np.testing.assert_allclose(A_svd.numpy(), _A_svd_matmul.numpy(), atol=1e-6)
np.testing.assert_allclose(A_svd.numpy(), A_np, atol=2e-6)

# ## Low rank approximation with the SVD


def rank_r_approx(s, U, V, r, verbose=False):
  # Compute the matrices necessary for a rank-r approximation
  s_r, U_r, V_r = s[..., :r], U[..., :, :r], V[..., :, :r] # ... implies any number of extra batch axes
  # Compute the low-rank approximation and its size
  A_r = em.einsum('...s,...us,...vs->...uv',s_r,U_r,V_r)
  A_r_size = em.size(U_r) + em.size(s_r) + em.size(V_r)
  if verbose:
    print(f"Approximation Size: {A_r_size}")
  return A_r, A_r_size


def viz_approx(A, A_r):
  # Plot A, A_r, and A - A_r
  vmin, vmax = 0, em.reduce_max(A)
  # fig, ax = plt.subplots(1,3)  (left out with the plots)
  mats = [A, A_r, abs(A - A_r)]
  titles = ['Original A', 'Approximated A_r', 'Error |A - A_r|']
  for i, (mat, title) in enumerate(zip(mats, titles)):  # noqa: B007 (its body is a plot)
    # ax[i].pcolormesh(mat, vmin=vmin, vmax=vmax); ax[i].set_title(title); ax[i].axis('off')
    # (left out with the plots)
    pass
  return mats, titles, (vmin, vmax)  # Added: what the three panels would show


print(f"Original Size of A: {em.size(A)}")
s, U, V = em.linalg.svd(A)

# Added: f"{t}" of a tensor formats its value, as TF's (formerly GAP 1)
assert f"{em.size(A)}" == "1200", f"{em.size(A)}"
assert f"{em.size(A):d}" == "1200"
assert em.size(A).dtype == em.int32 and int(em.size(A)) == 1200


def _check_rank_r(A_r, A_r_size, r, panels):  # Added: a rank-r approximation of A
  assert A_r.shape == (40, 30) and A_r.dtype == em.float32
  assert A_r_size.shape == () and A_r_size.dtype == em.int32
  assert int(A_r_size) == 40 * r + r + 30 * r
  expected, s_np = np_rank_r(A_np, r)
  np.testing.assert_allclose(A_r.numpy(), expected, atol=2e-6)
  assert np.linalg.matrix_rank(A_r.numpy().astype(np.float64), tol=1e-4) == r
  error2 = np.sum((A_np - A_r.numpy()) ** 2)  # Eckart-Young: the left-out singular values
  np.testing.assert_allclose(error2, np.sum(s_np[r:] ** 2), rtol=1e-4)
  # the best rank-r approximation: a projection onto r random directions does worse
  q, _ = np.linalg.qr(np.random.normal(size=(30, r)))
  assert error2 < np.sum((A_np - A_np @ q @ q.T) ** 2)
  mats, titles, (vmin, vmax) = panels
  assert titles == ['Original A', 'Approximated A_r', 'Error |A - A_r|']
  assert vmin == 0 and vmax.dtype == em.float32 and float(vmax) == A_np.max().astype(np.float32)
  assert mats[0] is A and mats[1] is A_r and mats[2].shape == (40, 30)
  np.testing.assert_allclose(mats[2].numpy(), np.abs(A_np - A_r.numpy()), atol=1e-6)
  return np.sqrt(error2 / np.sum(A_np ** 2))


# Rank-15 approximation
A_15, A_15_size = rank_r_approx(s, U, V, 15, verbose = True)
_panels = viz_approx(A, A_15)
_err_15 = _check_rank_r(A_15, A_15_size, 15, _panels)  # Added
assert int(A_15_size) == 1065

# Rank-3 approximation
A_3, A_3_size = rank_r_approx(s, U, V, 3, verbose = True)
_panels = viz_approx(A, A_3)
_err_3 = _check_rank_r(A_3, A_3_size, 3, _panels)  # Added
assert int(A_3_size) == 213
# Added: lower ranks give less accurate approximations (uniform noise: the first singular
# value, the mean, carries most of A; the rest fall slowly)
print(f'relative Frobenius error: rank 15 {_err_15:.3f}, rank 3 {_err_3:.3f}')
assert 0 < _err_15 < _err_3 < 0.5

# ## Image loading

img_link = "https://imagen.research.google/main_gallery_images/a-photo-of-a-corgi-dog-riding-a-bike-in-times-square.jpg"
img_path = requests.get(img_link, stream=True).raw
I = imread(img_path, 0)
print("Input Image Shape:", I.shape)

# Added: the image in imread's layout
assert I.shape == (SIZE, SIZE, 3) and I.dtype == np.uint8
np.testing.assert_array_equal(I, PHOTO)
assert I.min() < 40 and I.max() > 220 and I.std() > 30  # not flat


def show_img(I):
  # Display the image in matplotlib
  # img = plt.imshow(I); plt.axis('off')  (left out with the plots)
  shown.append(I)  # Added
  return


show_img(I)
assert shown[-1] is I  # Added

# ## The image compression algorithm


def compress_image(I, r, verbose=False):
  # Compress an image with the SVD given a rank
  I_size = em.size(I)
  print(f"Original size of image: {I_size}")
  # Compute SVD of image
  I = em.convert_to_tensor(I)/255
  I_batched = em.transpose(I, [2, 0, 1]) # einops.rearrange(I, 'h w c -> c h w')
  s, U, V = em.linalg.svd(I_batched)
  # Compute low-rank approximation of image across each RGB channel
  I_r, I_r_size = rank_r_approx(s, U, V, r)
  I_r = em.transpose(I_r, [1, 2, 0]) # einops.rearrange(I_r, 'c h w -> h w c')
  # GAP 2 (silent): TF's I_r_prop is float64 (int32 / int32); ember's float32
  I_r_prop = (I_r_size / I_size)
  if verbose:
    # Display compressed image and attributes
    print(f"Number of singular values used in compression: {r}")
    print(f"Compressed image size: {I_r_size}")
    print(f"Proportion of original size: {I_r_prop:.3f}")
    # ax_1 = plt.subplot(1,2,1)  (left out with the plots)
    show_img(em.clip_by_value(I_r,0.,1.))
    # ax_1.set_title("Approximated image")
    # ax_2 = plt.subplot(1,2,2)
    show_img(em.clip_by_value(0.5+abs(I-I_r),0.,1.))
    # ax_2.set_title("Error")
  return I_r, I_r_prop


M, N = PHOTO.shape[:2]
_I_np = (PHOTO.astype(np.float32) / 255).astype(np.float64).transpose(2, 0, 1)  # c h w
_S_NP = np.linalg.svd(_I_np, compute_uv=False)  # each channel's singular values (float64)
_I_NORM2 = np.sum(_I_np ** 2)


def _check_compressed(I_r, I_r_prop, r, verbose=True):  # Added: against numpy
  assert I_r.shape == (M, N, 3) and I_r.dtype == em.float32
  if I_r_prop is not None:  # (compress_image_with_factor returns I_r only)
    assert I_r_prop.shape == () and I_r_prop.dtype == em.float32  # GAP 2: TF's is float64
    np.testing.assert_allclose(float(I_r_prop), r * (M + N + 1) / (M * N), rtol=1e-6)
  expected, s_np = np_rank_r(_I_np, r)
  got = I_r.numpy().astype(np.float64).transpose(2, 0, 1)
  np.testing.assert_allclose(got, expected, atol=1e-4)
  np.testing.assert_allclose(s_np, _S_NP)
  error2 = np.sum((got - _I_np) ** 2)
  np.testing.assert_allclose(error2, np.sum(s_np[:, r:] ** 2), rtol=1e-3)
  if verbose:  # what show_img was handed: the clipped approximation and error images
    approx, error = shown[-2], shown[-1]
    assert approx.shape == error.shape == (M, N, 3) and approx.dtype == em.float32
    np.testing.assert_allclose(approx.numpy(), np.clip(I_r.numpy(), 0, 1))
    np.testing.assert_allclose(error.numpy(), np.clip(
        0.5 + np.abs(_I_np.transpose(1, 2, 0) - I_r.numpy()), 0, 1), atol=1e-6)
    assert 0 <= approx.numpy().min() and approx.numpy().max() <= 1
    assert 0.5 <= error.numpy().min() and error.numpy().max() <= 1
  return np.sqrt(error2 / _I_NORM2)


I_100, I_100_prop = compress_image(I, 100, verbose=True)
_err_100 = _check_compressed(I_100, I_100_prop, 100)  # Added

I_50, I_50_prop = compress_image(I, 50, verbose=True)
_err_50 = _check_compressed(I_50, I_50_prop, 50)  # Added

I_10, I_10_prop = compress_image(I, 10, verbose=True)
_err_10 = _check_compressed(I_10, I_10_prop, 10)  # Added

# Added: the error falls with the rank; what a working SVD reaches (see the header)
print(f'relative Frobenius error: rank 100 {_err_100:.4f}, rank 50 {_err_50:.4f}, '
      f'rank 10 {_err_10:.4f}')
assert 0 < _err_100 < _err_50 < _err_10
if not SHORT:
  assert _err_100 < 0.03 and 0.05 < _err_10 < 0.2

# ## Evaluating approximations

# ### Compression factor vs rank
# (plt.figure; plt.plot([100, 50, 10], [I_100_prop, I_50_prop, I_10_prop]) and its labels:
# left out; what it shows, a straight line through the origin, is asserted)
_props = np.array([float(I_100_prop), float(I_50_prop), float(I_10_prop)])
np.testing.assert_allclose(_props / np.array([100, 50, 10]), (M + N + 1) / (M * N), rtol=1e-6)


def compress_image_with_factor(I, compression_factor, verbose=False):
  # Returns a compressed image based on a desired compression factor
  m,n,o = I.shape
  r = int((compression_factor * m * n)/(m + n + 1))
  I_r, I_r_prop = compress_image(I, r, verbose=verbose)
  return I_r


compression_factor = 0.15
I_r_img = compress_image_with_factor(I, compression_factor, verbose=True)

# Added: the rank the factor gives, and a proportion at most the factor
_r_factor = int(0.15 * M * N / (M + N + 1))  # 38 at 512 x 512 (76 at 1024, 19 at 256)
_err_factor = _check_compressed(I_r_img, None, _r_factor)
assert _r_factor * (M + N + 1) / (M * N) <= 0.15 < (_r_factor + 1) * (M + N + 1) / (M * N)
assert _err_100 < _err_factor < _err_10

# ### Cumulative sum of singular values


def viz_energy(I):
  # Visualize the energy captured based on rank
  # Computing SVD
  I = em.convert_to_tensor(I)/255
  I_batched = em.transpose(I, [2, 0, 1])
  s, U, V = em.linalg.svd(I_batched)
  # Plotting average proportion across RGB channels
  props_rgb = em.map_fn(lambda x: em.cumsum(x)/em.reduce_sum(x), s)
  props_rgb_mean = em.reduce_mean(props_rgb, axis=0)
  # plt.figure(figsize=(11,6)); plt.plot(range(len(I)), props_rgb_mean, color='k') and its
  # labels and title: left out with the plots
  return range(len(I)), props_rgb, props_rgb_mean  # Added: what the curve would show


_xs, _props_rgb, _props_mean = viz_energy(I)

# Added: the cumulative proportions against numpy's
_P_NP = np.cumsum(_S_NP, axis=-1) / _S_NP.sum(-1, keepdims=True)
assert len(_xs) == M and _props_mean.shape == (min(M, N),) and _props_rgb.shape == (3, min(M, N))
assert _props_rgb.dtype == _props_mean.dtype == em.float32
np.testing.assert_allclose(_props_rgb.numpy(), _P_NP, atol=2e-5)
np.testing.assert_allclose(_props_mean.numpy(), _P_NP.mean(0), atol=2e-5)
assert np.all(np.diff(_props_mean.numpy()) >= -1e-6)
np.testing.assert_allclose(_props_mean.numpy()[-1], 1, atol=2e-6)
print(f'energy captured by the first 100 singular values: {_props_mean.numpy()[99]:.3f}')
if not SHORT:
  assert _props_mean.numpy()[99] > 0.8  # (upstream: "over 90%" for its photo)


def compress_image_with_energy(I, energy_factor, verbose=False):
  # Returns a compressed image based on a desired energy factor
  # Computing SVD
  I_rescaled = em.convert_to_tensor(I)/255
  I_batched = em.transpose(I_rescaled, [2, 0, 1])
  s, U, V = em.linalg.svd(I_batched)
  # Extracting singular values
  props_rgb = em.map_fn(lambda x: em.cumsum(x)/em.reduce_sum(x), s)
  props_rgb_mean = em.reduce_mean(props_rgb, axis=0)
  # Find closest r that corresponds to the energy factor
  r = em.argmin(em.abs(props_rgb_mean - energy_factor)) + 1
  actual_ef = props_rgb_mean[r]
  I_r, I_r_prop = compress_image(I, r, verbose=verbose)
  print(f"Proportion of energy captured by the first {r} singular values: {actual_ef:.3f}")
  energy_seen.update(r=r, actual_ef=actual_ef, I_r_prop=I_r_prop)  # Added
  return I_r


energy_seen = {}  # Added: compress_image_with_energy's r, actual_ef and proportion
energy_factor = 0.75
I_r_img = compress_image_with_energy(I, energy_factor, verbose=True)

# Added: r and actual_ef against numpy's, the image against numpy's truncated SVD
_r_energy = int(np.argmin(np.abs(_P_NP.mean(0) - 0.75))) + 1
r, actual_ef = energy_seen['r'], energy_seen['actual_ef']
assert r.shape == () and r.dtype == em.int64 and int(r) == _r_energy, (r, _r_energy)
assert actual_ef.shape == () and actual_ef.dtype == em.float32
np.testing.assert_allclose(float(actual_ef), _P_NP.mean(0)[_r_energy], atol=2e-5)
assert abs(float(actual_ef) - 0.75) < 0.01
_err_energy = _check_compressed(I_r_img, energy_seen['I_r_prop'], _r_energy)
assert f"{r}" == f"{r.numpy()}" != str(r)  # Added: formerly GAP 1

# ### Error and singular values

s, U, V = em.linalg.svd(A)
A_10, A_10_size = rank_r_approx(s, U, V, 10)
squared_norm = em.norm(A - A_10)**2
s_squared_sum = em.reduce_sum(s[10:]**2)
print(f"Squared Frobenius norm: {squared_norm:.3f}")
print(f"Sum of squared singular values left out: {s_squared_sum:.3f}")

# Added: the two agree, and each agrees with numpy's
assert squared_norm.shape == s_squared_sum.shape == () and squared_norm.dtype == em.float32
np.testing.assert_allclose(float(squared_norm), float(s_squared_sum), rtol=1e-4)
np.testing.assert_allclose(float(s_squared_sum), np.sum(_s_np[10:] ** 2), rtol=1e-5)
np.testing.assert_allclose(float(squared_norm), np.sum((A_np - np_rank_r(A_np, 10)[0]) ** 2),
                           rtol=1e-4)
assert int(A_10_size) == 710 and _err_3 > np.sqrt(float(squared_norm) / np.sum(A_np ** 2))
print('matrix_approximation_core: all checks passed')
