"""The seed guides' tensor examples, in ember's names."""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_array_equal

import ember.core as em


def test_executing_eagerly():
    assert em.executing_eagerly() is True


def test_constant_prints():
    assert str(em.constant(5)) == "ember.Tensor(5, shape=(), dtype=int32)"


def test_multiply_formats_as_int():
    c = em.constant(5)
    assert "result is %d" % em.multiply(c, c) == "result is 25"  # noqa: UP031


def test_matmul_example():
    m = em.matmul([[2.0]], [[2.0]])
    assert repr(m) == "ember.Tensor([[4.]], shape=(1, 1), dtype=float32)"


def test_broadcasting_example():
    a = em.constant([[1, 2], [3, 4]])
    b = em.add(a, 1)
    assert_array_equal(b.numpy(), [[2, 3], [4, 5]])
    assert_array_equal((a * b).numpy(), [[2, 6], [12, 20]])
    c = np.multiply(a, b)
    assert_array_equal(c, [[2, 6], [12, 20]])
    assert_array_equal(a.numpy(), [[1, 2], [3, 4]])


def fizzbuzz(max_num):
    out = []
    counter = em.constant(0)
    for num in em.range(1, max_num + 1):
        num = em.constant(num)
        if int(num % 3) == 0 and int(num % 5) == 0:
            out.append("FizzBuzz")
        elif int(num % 3) == 0:
            out.append("Fizz")
        elif int(num % 5) == 0:
            out.append("Buzz")
        else:
            out.append(str(int(num)))
        counter += 1
    return out, counter


def test_fizzbuzz():
    out, counter = fizzbuzz(15)
    assert out == ["1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "Fizz", "Buzz", "11",
                   "Fizz", "13", "14", "FizzBuzz"]
    assert int(counter) == 15


def test_fizzbuzz_with_tensor_conditions():
    out = []
    for num in em.range(1, 16):
        if em.equal(num % 15, 0):
            out.append("FizzBuzz")
        elif em.equal(num % 3, 0):
            out.append("Fizz")
        elif em.equal(num % 5, 0):
            out.append("Buzz")
        else:
            out.append(int(num))
    assert out == [1, 2, "Fizz", 4, "Buzz", "Fizz", 7, 8, "Fizz", "Buzz", 11, "Fizz", 13, 14,
                   "FizzBuzz"]


def test_collatz():
    a = em.constant(12)
    counter = 0
    while not em.equal(a, 1):
        if em.equal(a % 2, 0):
            a = a / 2
        else:
            a = 3 * a + 1
        counter += 1
    assert counter == 9
    assert float(a) == 1.0


def test_variable_examples():
    v = em.Variable(10)
    v.assign(5)
    v.assign_add(5)
    assert int(v) == 10
    w = em.Variable(5.0, name="weight")
    assert w.name == "weight:0"
    assert float(w * 2.0) == 10.0


def test_numpy_conversion_and_back():
    t = em.random.uniform([4, 4], maxval=255, dtype=em.int32)
    arr = t.numpy().astype(np.uint8)
    assert arr.shape == (4, 4) and arr.dtype == np.uint8
    assert em.constant(arr).dtype == em.uint8
