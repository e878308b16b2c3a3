"""ember.nn.layers: the Layer base class and the built-in layers (channels last)."""

from ._symbolic import Input, SymbolicTensor
from .attention import MultiHeadAttention
from .base import InputSpec, Layer, current_training
from .conv import Conv1D, Conv2D, Conv2DTranspose
from .conv_depthwise import DepthwiseConv2D, SeparableConv2D
from .core import (
    Activation,
    Dropout,
    Flatten,
    Lambda,
    LeakyReLU,
    Permute,
    ReLU,
    RepeatVector,
    Reshape,
    Softmax,
)
from .dense import Dense
from .embedding import Embedding
from .input_layer import InputLayer
from .masking import Masking, get_mask, set_mask
from .merging import (
    Add,
    Average,
    Concatenate,
    Dot,
    Maximum,
    Minimum,
    Multiply,
    Subtract,
    add,
    average,
    concatenate,
    dot,
    maximum,
    minimum,
    multiply,
    subtract,
)
from .normalization import BatchNormalization, LayerNormalization
from .pooling import (
    AveragePooling1D,
    AveragePooling2D,
    AvgPool1D,
    AvgPool2D,
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalAvgPool1D,
    GlobalAvgPool2D,
    GlobalMaxPool1D,
    GlobalMaxPool2D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    MaxPool1D,
    MaxPool2D,
    MaxPooling1D,
    MaxPooling2D,
)
from .preprocessing_affine import RandomRotation, RandomTranslation, RandomZoom
from .preprocessing_categorical import CategoryEncoding, Discretization, Hashing
from .preprocessing_image import (
    CenterCrop,
    RandomContrast,
    RandomCrop,
    RandomFlip,
    Resizing,
)
from .preprocessing_lookup import IntegerLookup, StringLookup
from .preprocessing_numeric import Normalization, Rescaling
from .preprocessing_text import TextVectorization
from .recurrent import GRU, LSTM, RNN, SimpleRNN
from .reshaping import Cropping2D, UpSampling2D, ZeroPadding2D
from .rnn_cells import GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells
from .wrappers import Bidirectional, TimeDistributed

Convolution2D = Conv2D
SeparableConvolution2D = SeparableConv2D

__all__ = [
    "GRU", "LSTM", "Activation", "AveragePooling2D", "AvgPool2D", "BatchNormalization",
    "Conv1D", "Conv2D", "Conv2DTranspose", "Convolution2D", "Dense", "Dropout", "Embedding",
    "Flatten", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling2D",
    "InputSpec", "Lambda", "Layer", "LayerNormalization", "MaxPool2D", "MaxPooling2D",
    "MultiHeadAttention", "Permute", "Reshape", "SimpleRNN", "current_training",
    "RNN", "GRUCell", "LSTMCell", "SimpleRNNCell", "StackedRNNCells", "Masking", "get_mask",
    "set_mask", "Bidirectional", "AveragePooling1D", "AvgPool1D", "GlobalAvgPool1D",
    "GlobalAvgPool2D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPooling1D", "MaxPool1D",
    "MaxPooling1D", "TimeDistributed",
]
__all__ += ["LeakyReLU", "ReLU", "Softmax", "Input", "InputLayer", "SymbolicTensor", "RepeatVector"]
__all__ += ["Add", "Average", "Concatenate", "Dot", "Maximum", "Minimum", "Multiply",
            "Subtract", "add", "average", "concatenate", "dot", "maximum", "minimum",
            "multiply", "subtract", "Cropping2D", "UpSampling2D", "ZeroPadding2D"]
__all__ += ["CategoryEncoding", "CenterCrop", "Discretization", "Hashing", "IntegerLookup",
            "Normalization", "RandomContrast", "RandomCrop", "RandomFlip", "RandomRotation",
            "RandomTranslation", "RandomZoom", "Rescaling", "Resizing", "StringLookup",
            "TextVectorization"]
__all__ += ["DepthwiseConv2D", "SeparableConv2D", "SeparableConvolution2D"]
