"""Plain helper modules shared by the test suites.

Test modules import helpers from here, never from one another (see
tests/unit_tests/test_layout_of_tests.py).
"""
