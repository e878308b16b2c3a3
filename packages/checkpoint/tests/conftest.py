import os
import sys

# The fakes module sits next to the tests; --import-mode=importlib does not add this dir.
sys.path.insert(0, os.path.dirname(__file__))
