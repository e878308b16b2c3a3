import ember.core as em
from ember import tape


def test_every_differentiable_core_op_has_a_gradient_rule():
    missing = sorted(n for n, op in em.REGISTRY.items() if op.differentiable and n not in tape.RULES)
    assert missing == [], f"differentiable ops without a gradient rule: {missing}"


def test_no_rule_for_an_op_core_does_not_have():
    extra = sorted(set(tape.RULES) - set(em.REGISTRY))
    assert extra == []


def test_duplicate_rule_registration_raises():
    import pytest

    with pytest.raises(KeyError, match="already registered"):
        tape.register_gradient("add")(lambda op, dy: (dy, dy))
