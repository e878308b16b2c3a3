import subprocess
import sys

import ember.checkpoint


def test_imports_no_other_ember_package_and_no_pickle():
    code = ("import sys, ember.checkpoint as c; "
            "bad = sorted(m for m in sys.modules if m.startswith('ember.') "
            "and not m.startswith('ember.checkpoint')); "
            "print(bad, 'pickle' in sys.modules and 'safetensors' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=None, cwd=None).stdout
    assert out.startswith("[]"), out


def test_sources_never_mention_pickle_loading():
    import pathlib

    src = pathlib.Path(ember.checkpoint.__file__).parent
    for path in src.glob("*.py"):
        text = path.read_text()
        assert "import pickle" not in text and "pickle.load" not in text, path
        assert "eval(" not in text.replace("_eval(", ""), path
