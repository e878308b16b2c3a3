import ember.core as em
from ember import tape


def test_every_differentiable_core_op_has_a_gradient_rule():
    missing = sorted(n for n, op in em.REGISTRY.items() if op.differentiable and n not in tape.RULES)
    assert missing == [], f"differentiable ops without a gradient rule: {missing}"


def test_no_rule_for_an_op_core_does_not_have():
    extra = sorted(set(tape.RULES) - set(em.REGISTRY))
    assert extra == []


def test_each_rule_lives_in_the_file_of_its_ops_family():
    """A core op of family F has its forward in core's ``_ops/F.py`` (core's
    tests/test_op_families.py) and its rule in ``ember/tape/_rules/F.py``."""
    core = {n: op for n, op in em.REGISTRY.items()
            if getattr(op.forward, "__module__", "").startswith("ember.core.")}
    wrong = {n: tape.RULES[n].__module__ for n, op in core.items() if n in tape.RULES
             and tape.RULES[n].__module__ != f"ember.tape._rules.{op.family}"}
    assert wrong == {}


def test_custom_gradient_is_a_registered_op_with_a_rule():
    op = em.REGISTRY["custom_gradient"]
    assert op.differentiable and "custom_gradient" in tape.RULES


def test_duplicate_rule_registration_raises():
    import pytest

    with pytest.raises(KeyError, match="already registered"):
        tape.register_gradient("add")(lambda op, dy: (dy, dy))
