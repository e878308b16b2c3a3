"""ember.nn.layers: the Layer base class and the built-in layers (channels last)."""

from ._symbolic import Input, SymbolicTensor
from .attention import MultiHeadAttention
from .attention_dot import AdditiveAttention, Attention
from .base import InputSpec, Layer, current_training
from .conv import Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D, Conv3DTranspose
from .conv_depthwise import (
    DepthwiseConv1D,
    DepthwiseConv2D,
    SeparableConv1D,
    SeparableConv2D,
)
from .conv_lstm import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D
from .core import (
    ELU,
    Activation,
    ActivityRegularization,
    Dropout,
    Flatten,
    Identity,
    Lambda,
    LeakyReLU,
    Permute,
    PReLU,
    ReLU,
    RepeatVector,
    Reshape,
    Softmax,
)
from .dense import Dense
from .einsum_dense import EinsumDense
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
from .noise import (
    AlphaDropout,
    GaussianDropout,
    GaussianNoise,
    SpatialDropout1D,
    SpatialDropout2D,
)
from .normalization import (
    BatchNormalization,
    GroupNormalization,
    LayerNormalization,
    RMSNormalization,
    UnitNormalization,
)
from .pooling import (
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalAveragePooling3D,
    GlobalAvgPool1D,
    GlobalAvgPool2D,
    GlobalAvgPool3D,
    GlobalMaxPool1D,
    GlobalMaxPool2D,
    GlobalMaxPool3D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
    GlobalMaxPooling3D,
    MaxPool1D,
    MaxPool2D,
    MaxPool3D,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
)
from .preprocessing_affine import RandomRotation, RandomTranslation, RandomZoom
from .preprocessing_categorical import CategoryEncoding, Discretization, Hashing
from .preprocessing_color import (
    RandomBrightness,
    RandomErasing,
    RandomGrayscale,
    RandomInvert,
)
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
from .reshaping import (
    Cropping1D,
    Cropping2D,
    Cropping3D,
    UpSampling1D,
    UpSampling2D,
    UpSampling3D,
    ZeroPadding1D,
    ZeroPadding2D,
    ZeroPadding3D,
)
from .rnn_cells import GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells
from .wrappers import Bidirectional, SpectralNormalization, TimeDistributed, Wrapper

Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution1DTranspose = Conv1DTranspose
Convolution2DTranspose = Conv2DTranspose
Convolution3D = Conv3D
Convolution3DTranspose = Conv3DTranspose
SeparableConvolution1D = SeparableConv1D
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
__all__ += ["ELU", "ActivityRegularization", "AdditiveAttention", "AlphaDropout", "Attention",
            "Conv1DTranspose", "Convolution1D", "Convolution1DTranspose",
            "Convolution2DTranspose", "Cropping1D", "DepthwiseConv1D", "EinsumDense",
            "GaussianDropout", "GaussianNoise", "GroupNormalization", "Identity", "PReLU",
            "RMSNormalization", "SeparableConv1D", "SeparableConvolution1D",
            "SpatialDropout1D", "SpatialDropout2D", "UnitNormalization", "UpSampling1D",
            "ZeroPadding1D", "RandomBrightness", "RandomErasing", "RandomGrayscale",
            "RandomInvert", "SpectralNormalization", "Wrapper"]
__all__ += ["Conv3D", "Conv3DTranspose", "Convolution3D", "Convolution3DTranspose",
            "MaxPooling3D", "MaxPool3D", "AveragePooling3D", "AvgPool3D",
            "GlobalAveragePooling3D", "GlobalAvgPool3D", "GlobalMaxPooling3D",
            "GlobalMaxPool3D", "UpSampling3D", "ZeroPadding3D", "Cropping3D"]
__all__ += ["ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"]
