"""``keras.preprocessing.image``: the image helpers of ``nn.utils`` under their older name."""

from ..utils import array_to_img, img_to_array, load_img, save_img

__all__ = ["array_to_img", "img_to_array", "load_img", "save_img"]
