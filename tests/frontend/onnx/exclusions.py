"""The ONNX backend-test cases graphc does not run, each with its reason.

One list, read by tests/frontend/onnx/test_backend.py and benchmarks/onnx_conformance.py
(which prints it and counts these cases as failures).
"""

EXCLUDED: dict[str, str] = {}
