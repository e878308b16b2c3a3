import importlib


def test_imports_as_namespace_subpackage():
    mod = importlib.import_module("ember.nn")
    assert mod.__name__ == "ember.nn"
    ember = importlib.import_module("ember")
    # PEP 420: the namespace has no __init__.py, so no __file__.
    assert getattr(ember, "__file__", None) is None
